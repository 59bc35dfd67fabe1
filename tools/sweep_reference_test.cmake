# ctest driver: `sweep` and `sweep --reference` (every input through the engine,
# MPFR and the emulated models) write the same report byte for byte, for f16
# pairs around the overflow threshold and f32 t around 1 at a grad whose
# products are not exact in a double, on ranges cut inside blocks.
# Variables: ULPGATE, WORK.
include("${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
foreach(spec "f16;--dtype;f16;--range;0x7bff7000:0x7c001234"
             "f32;--dtype;f32;--grad;0x1.99999ap-3;--range;0x3f7ff123:0x3f801000")
  list(POP_FRONT spec name)
  ulpgate_expect(0 "" sweep ${spec} --quiet --json "${WORK}/${name}_fast.json")
  ulpgate_expect(0 "" sweep ${spec} --quiet --reference --json "${WORK}/${name}_reference.json")
  file(READ "${WORK}/${name}_fast.json" fast)
  file(READ "${WORK}/${name}_reference.json" reference)
  if(NOT fast STREQUAL reference)
    message(FATAL_ERROR "${name}: sweep and sweep --reference differ: diff ${WORK}/${name}_fast.json ${WORK}/${name}_reference.json")
  endif()
endforeach()
