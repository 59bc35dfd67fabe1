# ctest driver: `ulpgate blockquant` end to end. Each scale rule's kernel
# outputs, saved, are named by --check as that rule (rceil with its twin
# reciprocal); outputs checked against the wrong element format follow no
# model (exit 1, the nearest named); bad arguments are one error line.
# Variables: ULPGATE, WORK.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

include("${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake")

foreach(rule ocp_floor ceil even)
  ulpgate_expect(0 "AVX3_DL|SCALAR +follows the model bit for bit" blockquant --spec mxfp8_e4m3
    --rule ${rule} --rows 32 --cols 128 --out "${WORK}/${rule}.npz")
  ulpgate_expect(0 "scale rules: ${rule}\n.*element error: max [0-9.]+ ULP of float8_e4m3fn"
    blockquant --spec mxfp8_e4m3 --check "${WORK}/${rule}.npz")
endforeach()
# Ceil never clips: every element within half an ULP. Floor clips above
# 448 2^X: errors past it.
ulpgate_expect(0 "element error: max 0\\.[0-9]+ ULP" blockquant --spec mxfp8_e4m3 --check "${WORK}/ceil.npz")
ulpgate_expect(0 "element error: max 1.[0-9]+ ULP" blockquant --spec mxfp8_e4m3
  --check "${WORK}/ocp_floor.npz")
ulpgate_expect(0 "follows the model" blockquant --spec mxfp6_e3m2 --rule rceil --axis columns
  --rows 64 --cols 19 --out "${WORK}/rceil.npz")
ulpgate_expect(0 "scale rules: rceil, reciprocal\n" blockquant --spec mxfp6_e3m2 --axis columns
  --check "${WORK}/rceil.npz")
ulpgate_expect(1 "follows no model bit for bit; nearest: .* first broken: block 0" blockquant
  --spec mxfp6_e2m3 --axis columns --check "${WORK}/rceil.npz")
ulpgate_expect(0 "follows the model" blockquant --spec nvfp4 --rows 4 --cols 64
  --out "${WORK}/nvfp4.npz")
ulpgate_expect(0 "follows torchao's nvfp4_quantize" blockquant --spec nvfp4
  --check "${WORK}/nvfp4.npz")
ulpgate_expect(2 "unknown --spec 'mxfp8'" blockquant --spec mxfp8)
ulpgate_expect(2 "unknown --rule 'floor'" blockquant --rule floor)
ulpgate_expect(2 "not a multiple of the block size 32" blockquant --cols 48)
