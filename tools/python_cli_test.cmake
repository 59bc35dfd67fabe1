# ctest driver: every script in tools/python parses its arguments with
# argparse: --help prints the usage and exits 0 (it does not open a file named
# "--help"), no arguments or an unknown option exit 2 with a usage line.
# -DPYTHON=<python3> -DDIR=<tools/python>
file(GLOB scripts "${DIR}/recheck_*.py")
list(LENGTH scripts count)
if(count LESS 4)
  message(FATAL_ERROR "expected the recheck scripts in ${DIR}, found ${count}")
endif()
foreach(script IN LISTS scripts)
  get_filename_component(name "${script}" NAME)
  execute_process(COMMAND "${PYTHON}" "${script}" --help
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0 OR NOT out MATCHES "^usage: ${name}")
    message(FATAL_ERROR "${name} --help: status ${status}\n${out}${err}")
  endif()
  foreach(args "" "--no-such-option")
    execute_process(COMMAND "${PYTHON}" "${script}" ${args}
      RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT status EQUAL 2 OR NOT err MATCHES "usage: ${name}")
      message(FATAL_ERROR "${name} ${args}: status ${status}, expected 2 and a usage line\n${out}${err}")
    endif()
  endforeach()
endforeach()
