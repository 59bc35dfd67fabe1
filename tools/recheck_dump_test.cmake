# ctest driver: `ulpgate run --dump` for one op over several suites, then
# tools/python/recheck_dump.py on every dump (an independent exact recomputation).
# Variables: ULPGATE, PYTHON, CHECKER, OP, SUITES and RUN_ARGS ('|'-separated
# lists), WORK (a scratch folder).
string(REPLACE "|" ";" SUITES "${SUITES}")
string(REPLACE "|" ";" RUN_ARGS "${RUN_ARGS}")
file(MAKE_DIRECTORY "${WORK}")
set(dumps)
foreach(suite IN LISTS SUITES)
  set(dump "${WORK}/${OP}_${suite}.jsonl")
  execute_process(
    COMMAND "${ULPGATE}" run --kernel ${OP} --suite ${suite} ${RUN_ARGS} --quiet --dump "${dump}"
    RESULT_VARIABLE status
    OUTPUT_QUIET
    ERROR_VARIABLE errors)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "ulpgate run --kernel ${OP} --suite ${suite} failed (${status}): ${errors}")
  endif()
  list(APPEND dumps "${dump}")
endforeach()
execute_process(COMMAND "${PYTHON}" "${CHECKER}" ${dumps} RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "recheck_dump.py disagrees with the ${OP} dumps (${status})")
endif()
