# ctest driver: bad `ulpgate` arguments end with exit status 2 and exactly one
# line "ulpgate: error: ..." on stderr: the linear and MSE ops, and counts.
set(cases
  "--kernel|linear_fwd|--shape|0,1,2"
  "--kernel|linear_fwd|--shape|4,4"
  "--kernel|mse_fwd|--shape|3,4,5"
  "--kernel|linear_fwd|--shape|a,b,c"
  "--kernel|linear_fwd|--shape|65536,65536,1"
  "--kernel|linear_fwd|--suite|domain"
  "--kernel|linear_fwd|--inputs|x.txt"
  "--kernel|linear_bwd_bias|--variant|sequential_fma"
  "--kernel|tanh_bwd|--shape|3"
  "--kernel|tanh_bwd|--dtype|f64"
  "--kernel|tanh_bwd|--dtype|fp8"
  "--kernel|linear_fwd|--dtype|f64"
  "--kernel|linear_fwd|--dtype|bf16|--variant|eigen"
  "--kernel|tanh_bwd|--dtype|bf16|--variant|mac")
foreach(case IN LISTS cases)
  string(REPLACE "|" ";" args "${case}")
  execute_process(COMMAND "${ULPGATE}" run ${args}
    RESULT_VARIABLE status OUTPUT_QUIET ERROR_VARIABLE errors)
  string(REGEX MATCHALL "\n" newlines "${errors}")
  list(LENGTH newlines lines)
  if(NOT status EQUAL 2 OR NOT lines EQUAL 1 OR NOT errors MATCHES "^ulpgate: error: ")
    message(FATAL_ERROR "ulpgate run ${args}: status ${status}, stderr:\n${errors}")
  endif()
endforeach()

# Counts: every count option of every subcommand rejects what is not a whole
# number in its range, naming the option and the limit (exit 2, one line),
# instead of a library error, an allocation of terabytes or a silent default.
# <subcommand args, separated by !>|<expected message>
set(count_cases
  "run!--kernel!tanh_bwd!--n!-5|--n: expected the number of inputs or instances: a whole number from 1 to 67108864 = 2\\^26, got '-5'"
  "run!--kernel!tanh_bwd!--n!99999999999999|--n: expected [^\n]* to 67108864 = 2\\^26, got 99999999999999"
  "run!--kernel!tanh_bwd!--n!0|--n: expected [^\n]* from 1 to 67108864"
  "run!--kernel!tanh_bwd!--n!1e3|--n: expected [^\n]*, got '1e3'"
  "run!--kernel!linear_fwd!--n!2000000|--n: expected the number of instances of linear_fwd: a whole number from 1 to 1048576 = 2\\^20"
  "run!--kernel!linear_fwd!--n!300000!--shape!64,64,64|--n 300000 with shape 64,64,64: 300000 instances of 8256 floats exceed 2\\^28 floats"
  "run!--kernel!tanh_bwd!--threads!0|--threads: expected a thread count: a whole number from 1 to 1024"
  "run!--kernel!tanh_bwd!--seed!-1|--seed: expected a seed: a whole number from 0 to 18446744073709551615, got '-1'"
  "run!--kernel!linear_fwd!--instance!-2|--instance: expected an instance index"
  "drift!--epochs!0|--epochs: expected the number of epochs: a whole number from 1 to 1000000, got 0"
  "drift!--epochs!-1|--epochs: expected the number of epochs"
  "matrix!--n!0|--n: expected the number of inputs"
  "diverge!--kernel!tanh_bwd!--a!mac!--b!exact!--evals!0|--evals: expected the number of evaluations"
  "diverge!--kernel!tanh_bwd!--a!mac!--b!exact!--keep!0|--keep: expected"
  "gate!--threads!0|--threads: expected a thread count"
  "golden!check!--threads!0|--threads: expected a thread count"
  "drift!--threads!2000|--threads: expected a thread count: a whole number from 1 to 1024"
  "matrix!--threads!0|--threads: expected a thread count"
  "sweep!--dtype!bf16!--threads!0|--threads: expected a thread count"
  "check!--threads!0|--threads: expected a thread count")
foreach(case IN LISTS count_cases)
  string(FIND "${case}" "|" bar)
  string(SUBSTRING "${case}" 0 ${bar} args)
  string(REPLACE "!" ";" args "${args}")
  math(EXPR bar "${bar} + 1")
  string(SUBSTRING "${case}" ${bar} -1 expected)
  execute_process(COMMAND "${ULPGATE}" ${args}
    RESULT_VARIABLE status OUTPUT_QUIET ERROR_VARIABLE errors)
  string(REGEX MATCHALL "\n" newlines "${errors}")
  list(LENGTH newlines lines)
  if(NOT status EQUAL 2 OR NOT lines EQUAL 1 OR NOT errors MATCHES "^ulpgate: error: ${expected}")
    message(FATAL_ERROR "ulpgate ${args}: status ${status}, expected 2 and '${expected}', stderr:\n${errors}")
  endif()
endforeach()

# Words for people: a mistyped command is named as one, and a ULP limit that is
# not a number says so (not "not in range 0 to" a 309-digit DBL_MAX).
foreach(case "frobnicate|unknown command 'frobnicate' \\(list, run, "
             "run|--max-ulp|abc|--max-ulp: expected a ULP limit: a number >= 0, such as 1.5, got 'abc'$"
             "sweep|--max-ulp|-1|expected a ULP limit: a number >= 0")
  string(REPLACE "|" ";" parts "${case}")
  list(POP_BACK parts expected)
  execute_process(COMMAND "${ULPGATE}" ${parts} RESULT_VARIABLE status OUTPUT_QUIET ERROR_VARIABLE errors)
  string(STRIP "${errors}" errors)
  string(REGEX REPLACE " \\(see 'ulpgate --help'\\)$" "" trimmed "${errors}")
  if(NOT status EQUAL 2 OR NOT trimmed MATCHES "${expected}" OR NOT errors MATCHES "^ulpgate: error: ")
    message(FATAL_ERROR "ulpgate ${parts}: status ${status}, stderr:\n${errors}\nexpected: ${expected}")
  endif()
endforeach()
