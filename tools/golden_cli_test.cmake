# ctest driver for `ulpgate golden bless|check` end to end, on SCALAR and two
# ops to stay fast: deterministic bytes (twice, 1 vs 2 threads), exact
# comparison, bad files rejected with nothing overwritten, goldens written from
# the targets' models (the same bytes whatever the CPU runs), a target this CPU
# cannot run checked MODEL ONLY, visibly, a target without goldens failing the
# check, and an interrupted bless leaving the old file intact. Needs -DULPGATE=<binary> -DWORK=<scratch folder>.
set(ops tanh_bwd,mse_bwd)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# run(<status var> <output var> <arg>...): stdout and stderr together.
function(run status_var output_var)
  execute_process(COMMAND "${ULPGATE}" golden ${ARGN}
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${status_var} "${status}" PARENT_SCOPE)
  set(${output_var} "${out}${err}" PARENT_SCOPE)
endfunction()

# expect(<condition as if() takes it> <message> <output>)
function(expect condition message output)
  cmake_language(EVAL CODE "if(${condition})\nset(ok TRUE)\nendif()")
  if(NOT ok)
    message(FATAL_ERROR "${message}\n--- output:\n${output}")
  endif()
endfunction()

# Reads every golden under a folder into <var> (names and contents), to
# compare folders byte for byte.
function(snapshot dir var)
  file(GLOB_RECURSE files RELATIVE "${dir}" "${dir}/*.json")
  list(SORT files)
  set(all "")
  foreach(f IN LISTS files)
    file(READ "${dir}/${f}" text)
    string(APPEND all "== ${f}\n${text}")
  endforeach()
  set(${var} "${all}" PARENT_SCOPE)
endfunction()

# Bless checks budgets first: a small ledger that holds, and one that fails.
set(ledger "${WORK}/budgets.json")
set(ledger_text [=[{
  "format": "ulpgate-budgets-1",
  "about": "golden_cli_test: a small ledger",
  "runs": [{"op": "tanh_bwd", "suites": ["domain"], "n": 2000, "variants": ["mulsub"]}],
  "rules": [{"id": "small.mulsub", "match": {"op": "tanh_bwd", "variant": "mulsub"},
             "limits": {"max_ulp": @LIMIT@, "conformance_required": true}, "why": "test"}]
}
]=])
set(LIMIT 100000)
string(CONFIGURE "${ledger_text}" text @ONLY)
file(WRITE "${ledger}" "${text}")
set(LIMIT 0.5)
string(CONFIGURE "${ledger_text}" text @ONLY)
file(WRITE "${WORK}/failing_budgets.json" "${text}")

# Deterministic: bless twice, and with 1 and 2 threads: the same bytes.
run(status out bless --dir "${WORK}/a" --budgets "${ledger}" --target SCALAR --op ${ops} --threads 1)
expect("status EQUAL 0" "first bless failed (${status})" "${out}")
expect("out MATCHES \"new +[^\n]*SCALAR/tanh_bwd.json\"" "bless did not say new" "${out}")
snapshot("${WORK}/a" first)
run(status out bless --dir "${WORK}/a" --budgets "${ledger}" --target SCALAR --op ${ops} --threads 2)
expect("status EQUAL 0" "second bless failed (${status})" "${out}")
expect("out MATCHES \"unchanged [^\n]*SCALAR/mse_bwd.json\"" "bless did not say unchanged" "${out}")
snapshot("${WORK}/a" second)
run(status out bless --dir "${WORK}/b" --budgets "${ledger}" --target SCALAR --op ${ops} --threads 2)
snapshot("${WORK}/b" other)
expect("first STREQUAL second" "a second bless changed the bytes" "${out}")
expect("first STREQUAL other" "bless with 2 threads wrote other bytes than with 1" "${out}")

set(tanh "${WORK}/a/SCALAR/tanh_bwd.json")
file(READ "${tanh}" blessed)

# check: everything matches on SCALAR; the targets without goldens are not
# covered, which fails the check.
run(status out check --dir "${WORK}/a" --op ${ops} --target SCALAR)
expect("status EQUAL 0" "check of fresh goldens: status ${status}" "${out}")
expect("out MATCHES \"ok +RAN +[^\n]*SCALAR/tanh_bwd.json\"" "no RAN line for SCALAR" "${out}")
run(status out check --dir "${WORK}/a" --op ${ops})
expect("status EQUAL 1" "check with targets not covered: status ${status}" "${out}")
expect("out MATCHES \"NOT COVERED AVX2\" AND out MATCHES \"5 targets not covered\""
  "no NOT COVERED line for the other targets" "${out}")

# One output edited: exit 1, naming variant, target, old and new output.
string(FIND "${blessed}" "\"outputs\": [" at)
math(EXPR at "${at} + 12")
string(SUBSTRING "${blessed}" 0 ${at} head)
string(SUBSTRING "${blessed}" ${at} -1 tail)
string(REGEX MATCH "^[\n ]+\"([0-9a-f]+)" first_line "${tail}")
set(new_bits "${CMAKE_MATCH_1}")
set(old_bits "12345678")
string(REGEX REPLACE "^([\n ]+\")[0-9a-f]+" "\\1${old_bits}" tail "${tail}")
set(edited "${head}${tail}")
file(WRITE "${tanh}" "${edited}")
run(status out check --dir "${WORK}/a" --op ${ops} --target SCALAR)
expect("status EQUAL 1" "check of an edited output: status ${status}" "${out}")
expect("out MATCHES \"tanh_bwd mac SCALAR suite [a-z]+ seed 1 n [0-9]+: 1 output differs\""
  "the difference does not name op, variant and target" "${out}")
expect("out MATCHES \"0x${old_bits}\" AND out MATCHES \"0x${new_bits}\""
  "old and new output bits not shown" "${out}")

# A truncated golden: exit 2 naming the file, for check and for bless, and
# bless overwrites nothing (the edited tanh_bwd.json stays edited).
set(mse "${WORK}/a/SCALAR/mse_bwd.json")
file(READ "${mse}" mse_text)
string(LENGTH "${mse_text}" length)
math(EXPR half "${length} / 2")
string(SUBSTRING "${mse_text}" 0 ${half} truncated)
file(WRITE "${mse}" "${truncated}")
snapshot("${WORK}/a" before)
run(status out check --dir "${WORK}/a" --op ${ops} --target SCALAR)
expect("status EQUAL 2" "check of a truncated file: status ${status}" "${out}")
expect("out MATCHES \"^ulpgate: error: [^\n]*SCALAR/mse_bwd.json:[0-9]+:[0-9]+: malformed JSON[^\n]*truncated\""
  "the error does not name the truncated file" "${out}")
run(status out bless --dir "${WORK}/a" --budgets "${ledger}" --target SCALAR --op ${ops})
expect("status EQUAL 2" "bless over a truncated file: status ${status}" "${out}")
snapshot("${WORK}/a" after)
expect("before STREQUAL after" "bless with a malformed golden changed files" "${out}")
file(WRITE "${mse}" "${mse_text}")

# An interrupted bless (killed after writing its temporary file, before the
# rename) leaves the old file as it was; check ignores the leftover, and the
# next bless removes it.
execute_process(COMMAND "${CMAKE_COMMAND}" -E env ULPGATE_FAILPOINT=bless_before_rename
  "${ULPGATE}" golden bless --dir "${WORK}/a" --budgets "${ledger}" --target SCALAR --op tanh_bwd
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect("status EQUAL 3" "the fail point did not stop bless (status ${status})" "${out}${err}")
file(READ "${tanh}" now)
expect("now STREQUAL edited" "an interrupted bless changed the old file" "${out}")
file(GLOB leftovers "${WORK}/a/SCALAR/tanh_bwd.json.tmp.*")
expect("leftovers" "no temporary file left by the interrupted bless" "${out}")
run(status out check --dir "${WORK}/a" --op ${ops} --target SCALAR)
expect("status EQUAL 1" "check beside a leftover temporary file: status ${status}" "${out}")
run(status out bless --dir "${WORK}/a" --budgets "${ledger}" --target SCALAR --op ${ops})
expect("status EQUAL 0 AND out MATCHES \"removed [^\n]*tmp\" AND out MATCHES \"changed +[^\n]*tanh_bwd.json: 1 of\""
  "bless after an interruption: status ${status}" "${out}")
file(GLOB leftovers "${WORK}/a/SCALAR/tanh_bwd.json.tmp.*")
expect("NOT leftovers" "the stale temporary file is still there" "${out}")
file(READ "${tanh}" now)
expect("now STREQUAL blessed" "bless did not restore the blessed bytes" "${out}")

# Goldens come from the targets' models: blessing AVX3_DL and SSE4 on a CPU
# restricted to SCALAR writes the same bytes as on one that runs them.
run(status out bless --dir "${WORK}/m" --budgets "${ledger}" --target SSE4,AVX3_DL --op tanh_bwd)
expect("status EQUAL 0" "bless of SSE4 and AVX3_DL: status ${status}" "${out}")
snapshot("${WORK}/m" unrestricted)
run(status out bless --dir "${WORK}/r" --budgets "${ledger}" --target SSE4,AVX3_DL --op tanh_bwd
    --cpu-targets SCALAR)
expect("status EQUAL 0" "restricted bless of SSE4 and AVX3_DL: status ${status}" "${out}")
snapshot("${WORK}/r" restricted)
expect("unrestricted STREQUAL restricted" "the goldens depend on the CPU that blessed them" "${out}")

# A target this CPU cannot run is checked on its model: MODEL ONLY, visibly,
# saying that this cannot catch a kernel bug; an edited output still differs.
# --cpu-targets makes AVX3_DL unrunnable on any CPU.
run(status out check --dir "${WORK}/m" --op tanh_bwd --target SSE4,AVX3_DL --cpu-targets max:AVX3)
expect("status EQUAL 0" "check with an unrunnable target's golden: status ${status}" "${out}")
expect("out MATCHES \"ok +MODEL ONLY [^\n]*AVX3_DL/tanh_bwd.json\""
  "no MODEL ONLY line for AVX3_DL" "${out}")
expect("out MATCHES \"MODEL ONLY .models evaluated, kernels not run.: AVX3_DL .(not on this CPU|left out by --cpu-targets 'max:AVX3')\""
  "the summary does not name the MODEL ONLY target and why" "${out}")
expect("out MATCHES \"never a bug in\"" "the summary does not say what MODEL ONLY cannot catch" "${out}")
file(READ "${WORK}/m/AVX3_DL/tanh_bwd.json" model_text)
string(REGEX REPLACE "(\"outputs\": \\[[\n ]+\")[0-9a-f]+" "\\112345678" model_edited "${model_text}")
file(WRITE "${WORK}/m/AVX3_DL/tanh_bwd.json" "${model_edited}")
run(status out check --dir "${WORK}/m" --op tanh_bwd --target AVX3_DL --cpu-targets max:AVX3)
expect("status EQUAL 1 AND out MATCHES \"DIFFERS MODEL ONLY [^\n]*AVX3_DL/tanh_bwd.json\""
  "an edited MODEL ONLY golden does not differ: status ${status}" "${out}")

# A budget failing on the target: bless refuses and writes nothing; with
# --force REASON it writes, and the reason and the failing row are recorded.
snapshot("${WORK}/a" before)
run(status out bless --dir "${WORK}/a" --budgets "${WORK}/failing_budgets.json" --target SCALAR
    --op tanh_bwd)
expect("status EQUAL 1 AND out MATCHES \"FAIL small.mulsub.max_ulp\" AND out MATCHES \"refused\""
  "bless over a failing budget: status ${status}" "${out}")
snapshot("${WORK}/a" after)
expect("before STREQUAL after" "a refused bless changed files" "${out}")
run(status out bless --dir "${WORK}/a" --budgets "${WORK}/failing_budgets.json" --target SCALAR
    --op tanh_bwd --force "accepted for the test")
expect("status EQUAL 0" "forced bless: status ${status}" "${out}")
file(READ "${tanh}" forced)
string(FIND "${forced}" "\"reason\": \"accepted for the test\"" at_reason)
string(FIND "${forced}" "FAIL small.mulsub.max_ulp" at_row)
expect("NOT at_reason EQUAL -1 AND NOT at_row EQUAL -1"
  "the forced bless did not record its reason and the failing row" "${forced}")

# bless --op X checks only X's budgets: a ledger whose only failing rule is
# about mse_bwd refuses a bless of mse_bwd, not one of tanh_bwd.
file(WRITE "${WORK}/mse_failing.json" [=[{
  "format": "ulpgate-budgets-1",
  "about": "golden_cli_test: tanh_bwd holds, mse_bwd fails",
  "runs": [{"op": "tanh_bwd", "suites": ["domain"], "n": 2000, "variants": ["mulsub"]},
           {"op": "mse_bwd", "suites": ["training"], "n": 2}],
  "rules": [{"id": "ok.mulsub", "match": {"op": "tanh_bwd", "variant": "mulsub"},
             "limits": {"max_ulp": 100000}, "why": "test"},
            {"id": "tight.mse_bwd", "match": {"op": "mse_bwd"},
             "limits": {"max_ulp": 0}, "why": "test"}]
}
]=])
run(status out bless --dir "${WORK}/o" --budgets "${WORK}/mse_failing.json" --target SCALAR
    --op tanh_bwd)
expect("status EQUAL 0 AND NOT out MATCHES \"tight.mse_bwd\""
  "bless --op tanh_bwd was held up by an mse_bwd budget: status ${status}" "${out}")
run(status out bless --dir "${WORK}/o" --budgets "${WORK}/mse_failing.json" --target SCALAR
    --op mse_bwd)
expect("status EQUAL 1 AND out MATCHES \"FAIL tight.mse_bwd.max_ulp\" AND out MATCHES \"refused\""
  "bless --op mse_bwd went through a failing mse_bwd budget: status ${status}" "${out}")
