# ctest driver: `ulpgate golden check` holds the reveal goldens of a golden
# directory (<dir>/reveal/*.json): the shipped ones pass (a kernel of a target
# this CPU cannot run is reported not checked, never as a pass); a golden
# written from one summation tree and pointed at a kernel whose split moved
# by one term fails golden check and the gate, each naming the first probe
# whose output changed.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/dir/SCALAR")
file(COPY "${SOURCE}/golden/SCALAR/linear_fwd.json" DESTINATION "${WORK}/dir/SCALAR")
file(COPY "${SOURCE}/golden/reveal" DESTINATION "${WORK}/dir")
execute_process(COMMAND "${ULPGATE}" golden check --dir "${WORK}/dir" --target SCALAR --op linear_fwd
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX REPLACE "\n *" " " flat "${out}")
if(NOT status EQUAL 0
   OR NOT flat MATCHES "ok      REVEAL     [^\n]*/reveal/linear_fwd-pairwise@SCALAR.json \\(linear_fwd/pairwise@SCALAR: [0-9]+ probes"
   OR out MATCHES "FAIL")
  message(FATAL_ERROR "golden check of the shipped reveal goldens: status ${status}\n${out}\n${err}")
endif()
# Without AVX-512 the AVX3 kernels' goldens are not checked, with the reason.
execute_process(COMMAND ${CMAKE_COMMAND} -E env ULPGATE_CPU_TARGETS=max:AVX2
    "${ULPGATE}" golden check --dir "${WORK}/dir" --target SCALAR --op linear_fwd
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX REPLACE "\n *" " " flat "${out}")
if(NOT status EQUAL 0
   OR NOT flat MATCHES "NOT CHECKED REVEAL [^\n]*/reveal/linear_fwd-pairwise@AVX3.json: linear_fwd/pairwise@AVX3 \\(its kernel[ \n]+does not run here: AVX3 [^)]*ULPGATE_CPU_TARGETS"
   OR NOT flat MATCHES "ok      REVEAL     [^\n]*linear_fwd-pairwise@AVX2.json"
   OR NOT out MATCHES ", [0-9]+ reveal goldens not checked here")
  message(FATAL_ERROR "golden check with max:AVX2: status ${status}\n${out}\n${err}")
endif()

# A golden of planted:f32_splitk3 (3 parts of 24, 16, 24 terms) held by the
# kernel whose split moved by one term.
execute_process(COMMAND "${ULPGATE}" reveal --door planted:f32_splitk3 --k 64 --m 4 --n 64
    --write-golden "${WORK}/splitk.json"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "ulpgate reveal --write-golden: status ${status}\n${out}\n${err}")
endif()
file(READ "${WORK}/splitk.json" golden)
string(REPLACE "\"kernel\": \"planted:f32_splitk3\"" "\"kernel\": \"planted:f32_splitk3_late\""
       moved "${golden}")
if(moved STREQUAL golden)
  message(FATAL_ERROR "no kernel field to point at another kernel:\n${golden}")
endif()
file(MAKE_DIRECTORY "${WORK}/moved/SCALAR")
file(COPY "${SOURCE}/golden/SCALAR/linear_fwd.json" DESTINATION "${WORK}/moved/SCALAR")
file(WRITE "${WORK}/moved/reveal/planted-f32_splitk3.json" "${moved}")
set(probe "probe [0-9]+ \\(lca [0-9]+ [0-9]+\\): kernel -?0x[0-9a-f.]+p[-+][0-9]+, golden -?0x[0-9a-f.]+p[-+][0-9]+")
execute_process(COMMAND "${ULPGATE}" golden check --dir "${WORK}/moved" --target SCALAR --op linear_fwd
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX REPLACE "\n *" " " flat "${out}")
if(NOT status EQUAL 1
   OR NOT flat MATCHES "FAIL    REVEAL     [^\n]*/moved/reveal/planted-f32_splitk3.json \\(planted:f32_splitk3_late\\): [0-9]+ of [0-9]+ probe outputs changed; first: ${probe}"
   OR NOT out MATCHES "golden check: [0-9]+ files match, 1 differ")
  message(FATAL_ERROR "golden check of a moved split: status ${status}\n${out}\n${err}")
endif()

# A check of an elementwise op leaves the summation probes alone: the moved
# split above is not run, so it neither fails nor costs that check anything.
execute_process(COMMAND "${ULPGATE}" golden check --dir "${WORK}/moved" --target SCALAR --op tanh_bwd
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(out MATCHES "REVEAL" OR NOT out MATCHES "golden check: 0 files match, 1 differ")
  message(FATAL_ERROR "golden check --op tanh_bwd ran reveal goldens (or differs beyond its missing tanh_bwd golden): status ${status}\n${out}\n${err}")
endif()

# The gate, on a small ledger beside the same goldens, fails its reveal row
# naming the file and the probe.
file(WRITE "${WORK}/moved/budgets.json" [=[{
  "format": "ulpgate-budgets-1",
  "about": "golden_reveal_test: a small ledger",
  "runs": [{"op": "linear_fwd", "suites": ["exact"], "shape": "4,8,4", "n": 2}],
  "rules": [{"id": "small.exact", "match": {"op": "linear_fwd", "suite": "exact"},
             "limits": {"max_ulp": 0}, "why": "test"}]
}
]=])
execute_process(COMMAND "${ULPGATE}" gate --quiet --budgets "${WORK}/moved/budgets.json" --target SCALAR
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX REPLACE "\n *" " " flat "${out}")
if(NOT status EQUAL 1
   OR NOT flat MATCHES "FAIL reveal_goldens.probes_match"
   OR NOT flat MATCHES "/moved/reveal/planted-f32_splitk3.json: [0-9]+ of [0-9]+ probe outputs changed; first: ${probe}")
  message(FATAL_ERROR "gate on a moved split: status ${status}\n${out}\n${err}")
endif()
# The same ledger beside the shipped goldens passes.
file(COPY "${WORK}/moved/budgets.json" DESTINATION "${WORK}/dir")
execute_process(COMMAND "${ULPGATE}" gate --quiet --verbose --budgets "${WORK}/dir/budgets.json" --target SCALAR
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX REPLACE "\n *" " " flat "${out}")
if(NOT status EQUAL 0 OR NOT flat MATCHES "reveal_goldens PASS +probes_match +[0-9]+ of [0-9]+")
  message(FATAL_ERROR "gate beside the shipped reveal goldens: status ${status}\n${out}\n${err}")
endif()
