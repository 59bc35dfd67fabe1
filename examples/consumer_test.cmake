# ctest driver (label consumer): installs this build into a prefix, then builds
# examples/consumer as a separate project configured only with
# -DCMAKE_PREFIX_PATH=<prefix> and runs its tests: one that passes with the
# matchers, and one whose failure message is checked.
# Variables: BUILD (this build tree), SOURCE (examples/consumer), WORK.
file(REMOVE_RECURSE "${WORK}")
foreach(step
    "${CMAKE_COMMAND};--install;${BUILD};--prefix;${WORK}/prefix"
    "${CMAKE_COMMAND};-S;${SOURCE};-B;${WORK}/build;-DCMAKE_PREFIX_PATH=${WORK}/prefix;-DCMAKE_BUILD_TYPE=Release"
    "${CMAKE_COMMAND};--build;${WORK}/build;-j2"
    "${CMAKE_CTEST_COMMAND};--test-dir;${WORK}/build;--output-on-failure")
  execute_process(COMMAND ${step} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    string(REPLACE ";" " " shown "${step}")
    message(FATAL_ERROR "${shown}: status ${status}\n${out}${err}")
  endif()
endforeach()
if(NOT out MATCHES "100% tests passed, 0 tests failed out of ([0-9]+)" OR CMAKE_MATCH_1 LESS 3)
  message(FATAL_ERROR "the consumer's tests did not all run:\n${out}")
endif()
