# ctest driver: `ulpgate stochastic` passes the kernels as they are (exit 0,
# every target 0 outputs differing, the verdict's line), fails them when the
# claim is one random bit more than they show (exit 1: with 15 bits claimed, a
# fraction of 2^-16 must never round up, and does), and rejects a format no
# kernel casts to (exit 2, one line).
execute_process(COMMAND "${ULPGATE}" stochastic --draws 262144
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0 OR NOT out MATCHES "verdict: follows stochastic rounding"
   OR out MATCHES "verdict: FAILS" OR NOT out MATCHES "SCALAR +0 of [0-9]+ outputs differ")
  message(FATAL_ERROR "ulpgate stochastic: status ${status}\n${out}\n${err}")
endif()
execute_process(COMMAND "${ULPGATE}" stochastic --to bf16 --bits 15 --targets SCALAR
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 1 OR NOT out MATCHES "verdict: FAILS: input 1.0000001[0-9]* \\(f = 1.52587890625e-05\\) rounded up [1-9][0-9]* times")
  message(FATAL_ERROR "ulpgate stochastic --bits 15: status ${status}\n${out}\n${err}")
endif()
execute_process(COMMAND "${ULPGATE}" stochastic --to float8_e8m0fnu
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 2 OR NOT err MATCHES "^ulpgate: error: --to: no stochastic kernel casts to 'float8_e8m0fnu' \\(they cast to float8_e4m3fn, bf16\\)\n$")
  message(FATAL_ERROR "ulpgate stochastic --to float8_e8m0fnu: status ${status}\n${out}\n${err}")
endif()
