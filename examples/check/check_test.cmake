# ctest driver for the README's `check` example: export a suite, let the
# "kernel elsewhere" (tanh_bwd_elsewhere.py) compute its outputs, check them.
# It rounds every operation to binary32, so it follows mulsub bit for bit and
# not the fused model. Variables: ULPGATE, PYTHON, KERNEL, WORK.
include("${CMAKE_CURRENT_LIST_DIR}/../../tools/cli_expect.cmake")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
ulpgate_expect(0 "wrote 20000 inputs" suite export --suite adversarial --n 20000 --out "${WORK}/inputs.txt")
execute_process(COMMAND "${PYTHON}" "${KERNEL}" "${WORK}/inputs.txt" "${WORK}/outputs.txt"
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${KERNEL}: exit ${status}")
endif()
ulpgate_expect(0 "follows bit for bit: mulsub\n.*check: PASS" check --inputs "${WORK}/inputs.txt"
  --outputs "${WORK}/outputs.txt" --require-model mulsub --quiet)
ulpgate_expect(1 "does not follow mulsub_fused \\([0-9]+ mismatches\\)" check --inputs "${WORK}/inputs.txt"
  --outputs "${WORK}/outputs.txt" --require-model mulsub_fused --quiet)
