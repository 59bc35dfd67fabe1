# ulpgate_expect(<status> <regex> args...): runs ${ULPGATE} args... (in
# ${ULPGATE_WORKDIR} when set) and fails the test unless it exits with <status>
# and its output (stdout and stderr) matches <regex>. An expected status 2 (bad
# input) must come as one "ulpgate: error: " line on stderr, nothing on stdout.
function(ulpgate_expect expected pattern)
  set(dir)
  if(ULPGATE_WORKDIR)
    set(dir WORKING_DIRECTORY "${ULPGATE_WORKDIR}")
  endif()
  execute_process(COMMAND "${ULPGATE}" ${ARGN} ${dir}
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL expected)
    message(FATAL_ERROR "ulpgate ${ARGN}: exit ${status}, expected ${expected}\n${out}${err}")
  endif()
  if(NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "ulpgate ${ARGN}: output does not match '${pattern}':\n${out}${err}")
  endif()
  if(expected EQUAL 2)
    string(REGEX MATCHALL "\n" lines "${err}")
    list(LENGTH lines count)
    if(NOT count EQUAL 1 OR NOT out STREQUAL "" OR NOT err MATCHES "^ulpgate: error: ")
      message(FATAL_ERROR "ulpgate ${ARGN}: expected one error line, got:\n${out}${err}")
    endif()
  endif()
endfunction()
