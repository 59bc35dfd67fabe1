# ctest driver: bad `ulpgate run` arguments for the linear and MSE ops end with
# exit status 2 and exactly one line "ulpgate: error: ..." on stderr.
set(cases
  "--kernel|linear_fwd|--shape|0,1,2"
  "--kernel|linear_fwd|--shape|4,4"
  "--kernel|mse_fwd|--shape|3,4,5"
  "--kernel|linear_fwd|--shape|a,b,c"
  "--kernel|linear_fwd|--shape|65536,65536,1"
  "--kernel|linear_fwd|--suite|domain"
  "--kernel|linear_fwd|--inputs|x.txt"
  "--kernel|linear_bwd_bias|--variant|sequential_fma"
  "--kernel|tanh_bwd|--shape|3")
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
