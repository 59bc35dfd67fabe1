# ulpgate_add_test(<name> LABELS <label>... SOURCES <file>... [LIBS <target>...]
#                  [TIMEOUT <seconds>])
# Builds one GoogleTest executable and registers every test in it with ctest,
# labelled so that `ctest -L smoke` and friends select tiers.
function(ulpgate_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "LABELS;SOURCES;LIBS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  gtest_discover_tests(${name}
    PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
    DISCOVERY_TIMEOUT 60)
endfunction()
