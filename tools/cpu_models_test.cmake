# ctest driver: ulpgate on emulated smaller CPUs (qemu-x86_64 -cpu MODEL, whose
# CPUID Highway reads). On each, `list` must report exactly the targets that
# CPU has as runnable, and `run --target all` and `drift` must finish: any
# instruction beyond the CPU, such as a registry accessor of a target it lacks
# using that target's instructions, ends the program with SIGILL.
# Needs -DULPGATE=<binary> -DQEMU=<qemu-x86_64 or empty> -DWORK=<scratch folder>;
# -DSKIP=<reason> skips it.

if(SKIP)
  message("SKIPPED: qemu: ${SKIP}")
  return()
endif()
if(NOT QEMU OR NOT EXISTS "${QEMU}")
  # SKIP_REGULAR_EXPRESSION marks the test skipped; ci/setup.sh installs qemu-user.
  message("SKIPPED: qemu-x86_64 not installed (Debian package qemu-user)")
  return()
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# The runnable targets per model follow Highway 1.0.3's requirements: SSSE3;
# SSE4 also needs SSE4.2, AES and PCLMULQDQ (Nehalem has SSE4.2 but not the
# other two); AVX2 needs AVX2, FMA, BMI2 and F16C; none of these models has
# AVX-512.
set(models qemu64 Nehalem Westmere Haswell)
set(expected_qemu64 SCALAR)
set(expected_Nehalem SCALAR SSSE3)
set(expected_Westmere SCALAR SSSE3 SSE4)
set(expected_Haswell SCALAR SSSE3 SSE4 AVX2)

# emulate(<model> <output var> <arg>...): fails unless the program exits 0.
function(emulate model output_var)
  # The variable would restrict the targets further; this test is about the CPU.
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -E env --unset=ULPGATE_CPU_TARGETS
      "${QEMU}" -cpu "${model}" "${ULPGATE}" ${ARGN}
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  # qemu warns about host features its emulator lacks (pcid, x2apic, ...).
  string(REGEX REPLACE "qemu-x86_64: warning: TCG doesn't support[^\n]*\n" "" err "${err}")
  if(NOT status EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "qemu -cpu ${model}: ulpgate ${command}: status ${status}\n${err}")
  endif()
  set(${output_var} "${out}" PARENT_SCOPE)
endfunction()

# runnable(<json> <output var>): the names of the targets `list --json` marks supported.
function(runnable json output_var)
  set(names "")
  string(JSON count LENGTH "${json}" targets)
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON name GET "${json}" targets ${i} name)
    string(JSON supported GET "${json}" targets ${i} supported)
    if(supported)
      list(APPEND names ${name})
    endif()
  endforeach()
  set(${output_var} "${names}" PARENT_SCOPE)
endfunction()

foreach(model IN LISTS models)
  emulate(${model} listing list --json)
  runnable("${listing}" got)
  if(NOT got STREQUAL "${expected_${model}}")
    message(FATAL_ERROR "qemu -cpu ${model}: runnable targets '${got}', expected '${expected_${model}}'")
  endif()

  emulate(${model} ignored run --kernel tanh_bwd --n 64 --target all --quiet
    --json "${WORK}/${model}.json")
  file(READ "${WORK}/${model}.json" report)
  string(JSON count LENGTH "${report}" results)
  math(EXPR last "${count} - 1")
  set(ran "")
  foreach(i RANGE ${last})
    string(JSON target GET "${report}" results ${i} target)
    list(APPEND ran ${target})
  endforeach()
  list(REMOVE_DUPLICATES ran)
  if(NOT ran STREQUAL "${expected_${model}}")
    message(FATAL_ERROR "qemu -cpu ${model}: run --target all ran '${ran}', expected '${expected_${model}}'")
  endif()

  emulate(${model} ignored drift --scenario seed --epochs 3 --target all)
  message(STATUS "qemu -cpu ${model}: list, run and drift on ${got}")
endforeach()

# A restriction naming a target the CPU lacks leaves it off and says so.
emulate(Westmere listing --cpu-targets max:AVX2 list --json)
runnable("${listing}" got)
string(JSON lacking GET "${listing}" cpu_targets_restriction lacking 0)
if(NOT got STREQUAL "SCALAR;SSSE3;SSE4" OR NOT lacking STREQUAL "AVX2")
  message(FATAL_ERROR "qemu -cpu Westmere --cpu-targets max:AVX2: runnable '${got}', lacking "
    "'${lacking}'; expected SCALAR;SSSE3;SSE4 and AVX2")
endif()
