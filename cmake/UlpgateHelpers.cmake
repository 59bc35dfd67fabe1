# ulpgate_test_program_labels(<target> <label>...): leaves the test program
# out of `all` where ULPGATE_BUILD_TEST_LABELS names none of its labels (its
# tests are then not in the tiers that build runs).
function(ulpgate_test_program_labels target)
  if(NOT ULPGATE_BUILD_TEST_LABELS)
    return()
  endif()
  foreach(label IN LISTS ARGN)
    if(label IN_LIST ULPGATE_BUILD_TEST_LABELS)
      return()
    endif()
  endforeach()
  set_target_properties(${target} PROPERTIES EXCLUDE_FROM_ALL TRUE)
endfunction()

# ulpgate_add_test(<name> LABELS <label>... SOURCES <file>... [LIBS <target>...]
#                  [TIMEOUT <seconds>] [FILTER <gtest filter>])
# Builds one GoogleTest executable and registers every test in it with ctest,
# labelled so that `ctest -L smoke` and friends select tiers.
function(ulpgate_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT;FILTER" "LABELS;SOURCES;LIBS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  ulpgate_test_program_labels(${name} ${ARG_LABELS})
  # FILTER: only the tests gtest's --gtest_filter selects (the others are
  # registered apart, under labels of their own).
  if(ARG_FILTER)
    gtest_discover_tests(${name}
      PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
      DISCOVERY_TIMEOUT 60 TEST_FILTER "${ARG_FILTER}")
  else()
    gtest_discover_tests(${name}
      PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
      DISCOVERY_TIMEOUT 60)
  endif()
endfunction()

# Inside a GitHub Actions job the gate appends to the job's summary page
# ($GITHUB_STEP_SUMMARY) and annotates the job ($GITHUB_ACTIONS); the gates
# that tests run (some fail on purpose) must do neither. Called at the end of
# a directory whose tests run the gate: its tests run without both variables.
function(ulpgate_tests_outside_github_actions)
  get_directory_property(tests TESTS)
  if(tests)
    set_property(TEST ${tests} APPEND PROPERTY ENVIRONMENT_MODIFICATION
      "GITHUB_ACTIONS=unset:" "GITHUB_STEP_SUMMARY=unset:")
  endif()
endfunction()

# ulpgate_registered_ops(<out_var> [<exact_var>]): the elementwise ops that
# kernels/ops/registered_ops.h registers (ULPGATE_ELEMENTWISE_OPS), by name, in
# its order; <exact_var>: those whose spec declares kExactDefinition = true (a
# ring expression: no exp, erf or tanh). Each entry X(Spec, <op>_spec) names
# the folder kernels/ops/<op>/, whose <op>_spec.h must declare kName = "<op>";
# anything else stops the configure. The configure runs again when that file
# changes, so that a newly registered op gets every test registered per op.
function(ulpgate_registered_ops out_var)
  set(registry ${PROJECT_SOURCE_DIR}/kernels/ops/registered_ops.h)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${registry})
  file(READ ${registry} text)
  string(REGEX MATCH "#define ULPGATE_ELEMENTWISE_OPS\\(X\\)([^\n]*\\\\\n)*[^\n]*" macro "${text}")
  string(REGEX MATCHALL "X\\([A-Za-z0-9_]+, *[A-Za-z0-9_]+\\)" entries "${macro}")
  if(NOT entries)
    message(FATAL_ERROR "${registry}: no entry X(Spec, namespace) in ULPGATE_ELEMENTWISE_OPS")
  endif()
  set(ops "")
  set(exact "")
  foreach(entry IN LISTS entries)
    string(REGEX REPLACE "X\\([A-Za-z0-9_]+, *([A-Za-z0-9_]+)\\)" "\\1" ns "${entry}")
    string(REGEX REPLACE "_spec$" "" op "${ns}")
    set(spec ${PROJECT_SOURCE_DIR}/kernels/ops/${op}/${op}_spec.h)
    if(op STREQUAL ns OR NOT EXISTS ${spec})
      message(FATAL_ERROR "${registry}: ${entry} names no op folder kernels/ops/<op>/ with "
        "<op>_spec.h (its namespace must be <op>_spec)")
    endif()
    file(STRINGS ${spec} name_line REGEX "kName = \"${op}\"")
    if(NOT name_line)
      message(FATAL_ERROR "${spec}: the spec registered as ${ns} must declare kName = \"${op}\"")
    endif()
    list(APPEND ops ${op})
    file(STRINGS ${spec} exact_line REGEX "kExactDefinition = true")
    if(exact_line)
      list(APPEND exact ${op})
    endif()
  endforeach()
  set(${out_var} ${ops} PARENT_SCOPE)
  if(ARGC GREATER 1)
    set(${ARGV1} ${exact} PARENT_SCOPE)
  endif()
endfunction()
