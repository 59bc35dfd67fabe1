# ctest driver: the gate on the shipped ledger (golden/budgets.json) passes,
# and a passing gate reads in a screenful: at most 66 lines (its fold has a
# row per elementwise op and format, one per reduction over its formats, the
# casts and block quantizers one each; a CPU
# restricted to AVX2 adds the models-only note), none over 120
# columns, no PASS row listed (they are folded by op and format), every op
# and format of the ledger on its line of the fold, the limits held at
# exactly their measured value counted (blessed limits: some, not all).
# -DULPGATE=<binary> -DBUDGETS=<golden/budgets.json>
execute_process(COMMAND "${ULPGATE}" gate --quiet --budgets "${BUDGETS}"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "gate on ${BUDGETS}: status ${status}\n${out}${err}")
endif()
string(REGEX MATCHALL "\n" newlines "${out}")
list(LENGTH newlines lines)
if(lines GREATER 66)
  message(FATAL_ERROR "a passing gate on ${BUDGETS} prints ${lines} lines, more than 66:\n${out}")
endif()
string(REGEX MATCH "[^\n]{121}[^\n]*" long "${out}")
if(long)
  message(FATAL_ERROR "a line over 120 columns:\n${long}")
endif()
if(out MATCHES "\n +PASS +[a-z_0-9]+ ")
  message(FATAL_ERROR "a PASS row listed without --verbose:\n${out}")
endif()
foreach(group "tanh_bwd" "tanh_bwd bf16" "linear_fwd" "rmsnorm_bwd" "log_softmax_fwd"
        "drift mixed_bf16" "sweeps" "casts" "block quantizers")
  if(NOT out MATCHES "\n${group} +[0-9]+ +([0-9]+) of ([0-9]+) ")
    message(FATAL_ERROR "no line for ${group} in the fold:\n${out}")
  endif()
  if(NOT CMAKE_MATCH_1 EQUAL CMAKE_MATCH_2)
    message(FATAL_ERROR "${group}: ${CMAKE_MATCH_1} of ${CMAKE_MATCH_2} rows passed in a passing gate")
  endif()
endforeach()
if(NOT out MATCHES "\n  held at their value: ([0-9]+) of ([0-9]+) PASS rows ")
  message(FATAL_ERROR "no count of the limits held at their value:\n${out}")
endif()
if(CMAKE_MATCH_1 EQUAL 0 OR NOT CMAKE_MATCH_1 LESS CMAKE_MATCH_2)
  message(FATAL_ERROR "${CMAKE_MATCH_1} of ${CMAKE_MATCH_2} limits held at their value:\n${out}")
endif()
if(NOT out MATCHES "gate: PASS\n$")
  message(FATAL_ERROR "the verdict is not the last line:\n${out}")
endif()
