# ctest driver: running as if the CPU had fewer targets, by ULPGATE_CPU_TARGETS
# and by --cpu-targets (which wins). The left-out targets are reported as not
# runnable by `list` and not run by `run --target all` or the per-target
# GoogleTest suites; bad restrictions end with exit status 2 and one line.
# Needs -DULPGATE=<binary> -DPER_TARGET_TEST=<a GoogleTest binary with
# ULPGATE_INSTANTIATE_PER_TARGET suites> -DWORK=<scratch folder>.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# ulpgate(<status var> <output var> <variable value or "-"> <arg>...): stdout
# and stderr together; "-" runs without the variable.
function(ulpgate status_var output_var variable)
  if(variable STREQUAL "-")
    set(env --unset=ULPGATE_CPU_TARGETS)
  else()
    set(env "ULPGATE_CPU_TARGETS=${variable}")
  endif()
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env ${env} "${ULPGATE}" ${ARGN}
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${status_var} "${status}" PARENT_SCOPE)
  set(${output_var} "${out}${err}" PARENT_SCOPE)
endfunction()

# expect(<condition as if() takes it> <message> <output>)
function(expect condition message output)
  cmake_language(EVAL CODE "if(${condition})\nset(ok TRUE)\nendif()")
  if(NOT ok)
    message(FATAL_ERROR "${message}\n--- output:\n${output}")
  endif()
endfunction()

# check_restricted(<variable value or "-"> <source> <spec> <left-out targets> <arg>...):
# `list`, `list --json` and `run --target all` under a restriction that leaves
# out the given targets (the others that this CPU has stay runnable).
function(check_restricted variable source spec left_out)
  string(REPLACE "," ";" left_out "${left_out}")
  ulpgate(status out "${variable}" ${ARGN} list)
  expect("status EQUAL 0" "list (${source} ${spec}): status ${status}" "${out}")
  expect("out MATCHES \"runnable: restricted by ${source} '${spec}'\""
    "list does not say that ${source} '${spec}' restricted the targets" "${out}")
  foreach(target IN LISTS left_out)
    expect("out MATCHES \"\\n  ${target} +no \\\\(\""
      "list (${source} ${spec}) does not show ${target} as not runnable" "${out}")
  endforeach()
  string(REGEX MATCH "best here: ([A-Z0-9_]+)" ignored "${out}")
  list(FIND left_out "${CMAKE_MATCH_1}" at)
  expect("at EQUAL -1" "list (${source} ${spec}): best target ${CMAKE_MATCH_1} is left out"
    "${out}")

  ulpgate(status json "${variable}" ${ARGN} list --json)
  expect("status EQUAL 0" "list --json (${source} ${spec}): status ${status}" "${json}")
  string(JSON recorded GET "${json}" cpu_targets_restriction source)
  expect("recorded STREQUAL \"${source}\"" "list --json names '${recorded}' as the source"
    "${json}")
  string(JSON count LENGTH "${json}" targets)
  math(EXPR last "${count} - 1")
  set(runnable "")
  foreach(i RANGE ${last})
    string(JSON name GET "${json}" targets ${i} name)
    string(JSON supported GET "${json}" targets ${i} supported)
    list(FIND left_out "${name}" at)
    expect("NOT (supported AND at GREATER -1)"
      "list --json (${source} ${spec}): ${name} is supported" "${json}")
    if(supported)
      list(APPEND runnable ${name})
    endif()
  endforeach()

  ulpgate(status out "${variable}" ${ARGN} run --kernel tanh_bwd --n 100 --target all
    --json "${WORK}/run.json")
  expect("status EQUAL 0" "run --target all (${source} ${spec}): status ${status}" "${out}")
  file(READ "${WORK}/run.json" report)
  string(JSON count LENGTH "${report}" results)
  math(EXPR last "${count} - 1")
  set(ran "")
  foreach(i RANGE ${last})
    string(JSON target GET "${report}" results ${i} target)
    list(APPEND ran ${target})
  endforeach()
  list(REMOVE_DUPLICATES ran)
  expect("ran STREQUAL runnable"
    "run --target all (${source} ${spec}) ran '${ran}', list says '${runnable}'" "${out}")
  foreach(target IN LISTS left_out)
    expect("out MATCHES \"skipped \\\\(compiled, not runnable here\\\\): [^\\n]*${target}\""
      "run --target all (${source} ${spec}) does not list ${target} as skipped" "${out}")
  endforeach()
endfunction()

# The variable; the flag, before and after the subcommand; the flag over the
# variable; `all` lifting the variable's restriction.
check_restricted("max:AVX2" ULPGATE_CPU_TARGETS "max:AVX2" "AVX3,AVX3_DL")
check_restricted("SCALAR,SSSE3,SSE4,AVX2" ULPGATE_CPU_TARGETS "SCALAR,SSSE3,SSE4,AVX2"
  "AVX3,AVX3_DL")
check_restricted("-" --cpu-targets "max:SSE4" "AVX2,AVX3,AVX3_DL" --cpu-targets max:SSE4)
check_restricted("max:AVX2" --cpu-targets "scalar,sse4" "SSSE3,AVX2,AVX3,AVX3_DL"
  --cpu-targets scalar,sse4)
ulpgate(status out "max:SSE4" list --cpu-targets max:AVX2)
expect("status EQUAL 0 AND out MATCHES \"restricted by --cpu-targets 'max:AVX2'\""
  "--cpu-targets after the subcommand: status ${status}" "${out}")
ulpgate(status out "max:SSE4" --cpu-targets all list)
expect("status EQUAL 0 AND out MATCHES \"runnable: every target this CPU has\""
  "--cpu-targets all does not lift the variable's restriction: status ${status}" "${out}")
# A target outside the restriction cannot be asked for by name.
ulpgate(status out "max:SSE4" run --kernel tanh_bwd --n 10 --target AVX2)
expect("status EQUAL 2 AND out MATCHES \"^ulpgate: error: target AVX2 is compiled but not runnable here \\\\((left out by ULPGATE_CPU_TARGETS 'max:SSE4'|not on this CPU)\\\\)\\n$\""
  "run --target AVX2 under max:SSE4: status ${status}" "${out}")

# Unknown or empty names: one line, status 2, before anything runs.
foreach(case "AVX9" "max:AVX9" "max:" "SSE4,,AVX2" "NEON")
  ulpgate(status out "${case}" list)
  string(REGEX MATCHALL "\n" newlines "${out}")
  list(LENGTH newlines lines)
  expect("status EQUAL 2 AND lines EQUAL 1 AND out MATCHES \"^ulpgate: error: [^\\n]* in ULPGATE_CPU_TARGETS\""
    "ULPGATE_CPU_TARGETS='${case}': status ${status}" "${out}")
  ulpgate(status out "-" --cpu-targets "${case}" list)
  string(REGEX MATCHALL "\n" newlines "${out}")
  list(LENGTH newlines lines)
  expect("status EQUAL 2 AND lines EQUAL 1 AND out MATCHES \"^ulpgate: error: [^\\n]* in --cpu-targets\""
    "--cpu-targets '${case}': status ${status}" "${out}")
endforeach()

# The per-target GoogleTest suites: every compiled target is a test, the
# left-out ones skipped with the reason; a bad variable stops the binary with
# the same message.
execute_process(COMMAND "${CMAKE_COMMAND}" -E env ULPGATE_CPU_TARGETS=max:AVX2
  "${PER_TARGET_TEST}" RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect("status EQUAL 0" "${PER_TARGET_TEST} under max:AVX2: status ${status}" "${out}${err}")
foreach(target AVX3 AVX3_DL)
  expect("out MATCHES \"${target} is (left out by ULPGATE_CPU_TARGETS 'max:AVX2'|not on this CPU)[^\\n]*\\n\\\\[  SKIPPED \\\\] [^\\n]*/${target} \""
    "${PER_TARGET_TEST} under max:AVX2 does not skip ${target}" "${out}")
endforeach()
expect("NOT out MATCHES \"\\\\[       OK \\\\] [^\\n]*/AVX3\""
  "${PER_TARGET_TEST} under max:AVX2 ran an AVX3 test" "${out}")
execute_process(COMMAND "${CMAKE_COMMAND}" -E env ULPGATE_CPU_TARGETS=AVX9
  "${PER_TARGET_TEST}" RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect("NOT status EQUAL 0 AND err MATCHES \"unknown target 'AVX9' in ULPGATE_CPU_TARGETS\""
  "${PER_TARGET_TEST} with ULPGATE_CPU_TARGETS=AVX9: status ${status}" "${out}${err}")
