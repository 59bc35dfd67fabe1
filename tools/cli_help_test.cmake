# ctest driver: the help texts say what the commands do. Each text that once
# went stale stays corrected: --kernel-timeout reads "SECONDS" with its
# default, not CLI11's "FLOAT:FLOAT in [0.001 - 86400]"; run's --dtype names
# the ops that run in bf16 and f16 (linear_fwd among them); check's --inputs,
# run's --by and sweep's --range name no one op's operands as everyone's;
# --variant names kernels the same way on every command that takes it.
# -DULPGATE=<ulpgate>
include("${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake")

function(help_of command out)
  string(REPLACE "!" ";" args "${command}")
  execute_process(COMMAND "${ULPGATE}" ${args} --help RESULT_VARIABLE status OUTPUT_VARIABLE text
                  ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "ulpgate ${args} --help: exit ${status}\n${text}${err}")
  endif()
  # Wrapped lines joined, so that a phrase matches wherever the help breaks it.
  string(REGEX REPLACE "\n *" " " text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(expect_in command pattern why)
  help_of("${command}" text)
  if(NOT text MATCHES "${pattern}")
    message(FATAL_ERROR "ulpgate ${command} --help: ${why}: no match for '${pattern}' in\n${text}")
  endif()
endfunction()

function(expect_not_in command pattern why)
  help_of("${command}" text)
  if(text MATCHES "${pattern}")
    message(FATAL_ERROR "ulpgate ${command} --help: ${why}: '${CMAKE_MATCH_0}' in\n${text}")
  endif()
endfunction()

foreach(command run sweep check explain diverge matrix golden!check golden!bless gate)
  expect_not_in("${command}" "FLOAT:FLOAT|in \\[0\\.001 - 86400\\]" "--kernel-timeout's type as CLI11 writes it")
  expect_in("${command}" "--kernel-timeout SECONDS" "--kernel-timeout with a readable type")
endforeach()
expect_in(run "--dtype [^-]*(every op runs in each|bf16 and f16: [^;]*linear_fwd)"
  "run --dtype names the ops that run in bf16 and f16 (linear_fwd does)")
expect_not_in(run "elementwise ops also bf16" "run --dtype: bf16 and f16 are not for the elementwise ops only")
expect_not_in(run "\\(grad or t\\)" "run --by: not every op's operands are grad and t")
expect_not_in(check "arrays grad and t|'grad t' per line|\\.npy \\[2, n\\]" "check --inputs: ops have other operands")
expect_not_in(sweep "grad_bits << 16 \\| t_bits" "sweep --range: ops have other operands")
foreach(command run sweep explain)
  expect_in("${command}" "--variant [A-Z]+=all +Kernels: [^;]*NAME@TARGET" "--variant names a plugin's kernel as every command does")
endforeach()
# The timeout's limits, checked as every number option's are: one line.
ulpgate_expect(2 "--kernel-timeout: expected a kernel timeout: seconds from 0.001 to 86400, got '0'"
  run --op sigmoid_bwd --kernel-timeout 0)
