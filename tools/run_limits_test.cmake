# ctest driver: `ulpgate run` can fail. --max-ulp and --require-conformance
# exit 1 listing the failing cases (tanh_bwd and a reduction), 0 within the
# limits; without them the same runs exit 0. --dump - and --json - leave
# nothing but their JSON on stdout.
# -DULPGATE=<ulpgate> -DMUTANT=<ulpgate_mutant> -DWORK=<scratch folder>
file(MAKE_DIRECTORY "${WORK}")
function(run_ulpgate binary expected)
  execute_process(COMMAND "${binary}" run ${ARGN}
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL expected)
    message(FATAL_ERROR "run ${ARGN}: status ${status}, expected ${expected}\n${out}${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

# mac on SCALAR has a large error on the domain suite (catastrophic cancellation).
run_ulpgate("${ULPGATE}" 1 --kernel tanh_bwd --variant mac --target SCALAR --n 5000 --max-ulp 0.5 --quiet)
if(NOT out MATCHES "FAIL mac@SCALAR domain: max_ulp [0-9.e+]+ > 0.5\n" OR NOT out MATCHES "run: FAIL \\(1 case ")
  message(FATAL_ERROR "--max-ulp 0.5: no failing row for mac@SCALAR\n${out}")
endif()
run_ulpgate("${ULPGATE}" 0 --kernel tanh_bwd --variant mac --target SCALAR --n 5000 --max-ulp 1e9 --quiet)
if(NOT out MATCHES "run: PASS")
  message(FATAL_ERROR "--max-ulp 1e9: no PASS\n${out}")
endif()
run_ulpgate("${ULPGATE}" 1 --kernel linear_fwd --variant pairwise --target SCALAR --n 2 --max-ulp 0 --quiet)
if(NOT out MATCHES "FAIL pairwise@SCALAR cancellation: max_ulp")
  message(FATAL_ERROR "--max-ulp 0 on linear_fwd: no failing row\n${out}")
endif()

# A kernel that follows no model (the test-only mutant): exit 0 without the
# flag, 1 with it, naming the case and its expected model.
set(ENV{ULPGATE_MUTANT} drifted)
run_ulpgate("${MUTANT}" 0 --kernel tanh_bwd --variant mulsub --target SCALAR --n 5000 --quiet)
run_ulpgate("${MUTANT}" 1 --kernel tanh_bwd --variant mulsub,mac --target SCALAR --n 5000
            --require-conformance --quiet)
if(NOT out MATCHES "FAIL mulsub@SCALAR domain: [0-9]+ outputs differ from its model mulsub \\(follows no model\\)")
  message(FATAL_ERROR "--require-conformance: no failing row for mulsub@SCALAR\n${out}")
endif()
if(out MATCHES "FAIL mac@")
  message(FATAL_ERROR "--require-conformance blames mac, which conforms\n${out}")
endif()
unset(ENV{ULPGATE_MUTANT})
run_ulpgate("${ULPGATE}" 0 --kernel tanh_bwd --variant mulsub --n 5000 --require-conformance --quiet)

# --dump -: every stdout line is a JSON record; the table went to stderr.
run_ulpgate("${ULPGATE}" 0 --kernel tanh_bwd --variant mac --target SCALAR --n 50 --dump -)
string(REPLACE "\n" ";" lines "${out}")
set(records 0)
foreach(line IN LISTS lines)
  if(line STREQUAL "")
    continue()
  endif()
  string(JSON type ERROR_VARIABLE bad TYPE "${line}")
  if(bad OR NOT type STREQUAL "OBJECT")
    message(FATAL_ERROR "--dump -: a stdout line is not a JSON object: ${line}")
  endif()
  math(EXPR records "${records} + 1")
endforeach()
if(records LESS 50 OR NOT err MATCHES "max_ulp")
  message(FATAL_ERROR "--dump -: ${records} records on stdout; stderr:\n${err}")
endif()

# --json -: stdout is the report, format and all.
run_ulpgate("${ULPGATE}" 0 --kernel mse_fwd --n 1 --target SCALAR --json -)
string(JSON format ERROR_VARIABLE bad GET "${out}" format)
if(bad OR NOT format STREQUAL "ulpgate-run-1")
  message(FATAL_ERROR "--json -: stdout is not the report (${bad})\n${out}")
endif()
run_ulpgate("${ULPGATE}" 2 --kernel tanh_bwd --n 5 --json - --dump -)

# --oracle mpfr sends every output through MPFR and gives the same report byte
# for byte; the fast tier decides tanh_bwd's f32 outputs in doubles, and says
# how much it left to MPFR.
run_ulpgate("${ULPGATE}" 0 --kernel tanh_bwd --suite adversarial --target SCALAR --n 3000
  --json "${WORK}/oracle_fast.json" --quiet)
if(NOT err MATCHES "exact values:[ \n]+(all[ \n]+from[ \n]+the[ \n]+fast[ \n]+tier|[0-9.e-]+%[ \n]+from[ \n]+MPFR,[ \n]+the[ \n]+rest)")
  message(FATAL_ERROR "run: no share of the fast tier\n${out}${err}")
endif()
run_ulpgate("${ULPGATE}" 0 --kernel tanh_bwd --suite adversarial --target SCALAR --n 3000
  --json "${WORK}/oracle_mpfr.json" --quiet --oracle mpfr)
if(NOT err MATCHES "exact values:[ \n]+all[ \n]+from[ \n]+MPFR")
  message(FATAL_ERROR "run --oracle mpfr: not every exact value from MPFR\n${out}${err}")
endif()
file(READ "${WORK}/oracle_fast.json" fast)
file(READ "${WORK}/oracle_mpfr.json" mpfr)
if(NOT fast STREQUAL mpfr)
  message(FATAL_ERROR "run --oracle mpfr and fast: the JSON reports differ")
endif()
run_ulpgate("${ULPGATE}" 2 --kernel tanh_bwd --n 10 --oracle exact)
if(NOT err MATCHES "--oracle: exact not in {fast,mpfr}")
  message(FATAL_ERROR "run --oracle exact: no error naming the choices\n${err}")
endif()
