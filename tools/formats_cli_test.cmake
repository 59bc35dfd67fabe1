# ctest driver: the registered formats as `ulpgate list` shows them, each
# with its traits (the expected rows are worked from the OCP FP8 and MX
# specifications and IEEE 754, not from ulpgate), and an op asked to run in a
# format it has no kernels in refused by one error line, not run in another.
# Variables: ULPGATE.
include("${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake")

set(row "formats \\(each decodes")
foreach(expected
    "f32 +32 +24 +-126 +127 +127 +ieee +3.40282e\\+38 +2\\^-149 +4 bytes +all, cast from"
    "bf16 +16 +8 +-126 +127 +127 +ieee +3.38953e\\+38 +2\\^-133 +2 bytes +all, cast from"
    "f16 +16 +11 +-14 +15 +15 +ieee +65504 +2\\^-24 +2 bytes +all, cast from"
    "f64 +64 +53 +-1022 +1023 +1023 +ieee +1.79769e\\+308 +2\\^-1074 +8 bytes +none"
    "float8_e4m3fn +8 +4 +-6 +8 +7 +fn +448 +2\\^-9 +1 byte +cast to"
    "float8_e4m3fnuz +8 +4 +-7 +7 +8 +fnuz +240 +2\\^-10 +1 byte +cast to"
    "float8_e5m2 +8 +3 +-14 +15 +15 +ieee +57344 +2\\^-16 +1 byte +cast to"
    "float8_e5m2fnuz +8 +3 +-15 +15 +16 +fnuz +57344 +2\\^-17 +1 byte +cast to"
    "float6_e2m3fn +6 +4 +0 +2 +1 +fn +7.5 +2\\^-3 +1 byte \\(6 bits used\\) +cast to"
    "float6_e3m2fn +6 +3 +-2 +4 +3 +fn +28 +2\\^-4 +1 byte \\(6 bits used\\) +cast to"
    "float4_e2m1fn +4 +2 +0 +2 +1 +fn +6 +2\\^-1 +2 a byte, low first +cast to"
    "float8_e8m0fnu +8 +1 +-127 +127 +127 +e8m0 +1.70141e\\+38 +2\\^-127 +1 byte +cast to")
  ulpgate_expect(0 "${row}.*\n  ${expected}\n" list)
endforeach()
# Every format's one line of description follows the table.
ulpgate_expect(0 "\n  float8_e4m3fn: OCP FP8 E4M3: no infinity, NaN 0x7f/0xff, largest 448\n" list)

# A registered format without kernels: refused where the op's formats are
# decided, naming the ones it runs in.
ulpgate_expect(2 "--dtype float8_e4m3fn: tanh_bwd runs in f32, bf16, f16"
  run --kernel tanh_bwd --dtype float8_e4m3fn --n 10)
ulpgate_expect(2 "all pairs are swept in bf16 or f16, not float8_e5m2"
  sweep --op tanh_bwd --dtype float8_e5m2)
ulpgate_expect(2 "unknown --dtype 'f64' \\(f32, bf16, f16\\)" sweep --op tanh_bwd --dtype f64)
