# ctest driver: the rare mutant (ULPGATE_MUTANT=rare: mulsub on AVX2 wrong by
# 1 ULP on one t pattern in 2^20) fails the sweep the default run makes,
# which names an input that reproduces it; the real build passes the same
# sweep. Skipped (77) where this CPU does not run AVX2.
# Variables: ULPGATE, MUTANT.
include("${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake")
execute_process(COMMAND "${ULPGATE}" run --kernel tanh_bwd --target AVX2 --n 1 --quiet
  RESULT_VARIABLE status OUTPUT_QUIET ERROR_QUIET)
if(NOT status EQUAL 0)
  message("this CPU does not run AVX2: skipped")
  cmake_language(EXIT 77)
endif()
# 2^24 values of t in [0.5, 2) at grad = 1: 16 of them carry the pattern.
set(sweep sweep --dtype f32 --grad 1 --range 0x3f000000:0x40000000 --variant mulsub --target AVX2 --quiet)
set(ENV{ULPGATE_MUTANT} rare)
set(ULPGATE "${MUTANT}")
ulpgate_expect(1 "mulsub@AVX2 does not follow mulsub on 16 inputs; the first: grad = 0x1p\\+0 \\(0x3f800000\\), t = 0x1.02468ap-1 \\(0x3f012345\\).*replay: ulpgate explain --op tanh_bwd --input grad=0x1p\\+0 --input t=0x1.02468ap-1 --variant mulsub --target AVX2"
  ${sweep})
# What the replay shows on the mutant: the kernel left its model there.
ulpgate_expect(0 "mulsub on AVX2: matches NO model \\(traced: expected mulsub\\)" explain
  --kernel tanh_bwd --input grad=0x1p+0 --input t=0x1.02468ap-1 --variant mulsub --target AVX2)
