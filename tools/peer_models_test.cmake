# ctest driver: PyTorch's bf16/f16 tanh_backward outputs (suites/peer/) against
# ulpgate's variants: the archive's inputs through `ulpgate run --dump` (SSE4 and
# AVX2, models where this CPU lacks one), then tools/python/peer_models.py with the
# paths each variant must equal bit for bit.
# Variables: ULPGATE, PYTHON, SCRIPT, ARCHIVE, DTYPE, EXPECT ('|'-separated
# arguments for peer_models.py compare), WORK.
string(REPLACE "|" ";" EXPECT "${EXPECT}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${PYTHON}" "${SCRIPT}" inputs "${ARCHIVE}" "${WORK}/inputs.txt"
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "peer_models.py inputs ${ARCHIVE} failed (${status})")
endif()
execute_process(
  COMMAND "${ULPGATE}" run --kernel tanh_bwd --dtype ${DTYPE} --inputs "${WORK}/inputs.txt"
          --target SSE4,AVX2 --emulate-unsupported --quiet --dump "${WORK}/dump.jsonl"
  RESULT_VARIABLE status OUTPUT_QUIET ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "ulpgate run --dtype ${DTYPE} on the peer inputs failed (${status}): ${errors}")
endif()
execute_process(COMMAND "${PYTHON}" "${SCRIPT}" compare "${ARCHIVE}" "${WORK}/dump.jsonl" ${EXPECT}
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "PyTorch's ${DTYPE} paths do not follow the expected variants (${status})")
endif()
