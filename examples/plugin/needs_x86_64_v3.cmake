# The example plugins are compiled with -march=x86-64-v3: on a CPU without
# AVX2 and FMA they cannot run, and the test that loads them is skipped (77).
file(READ /proc/cpuinfo cpuinfo)
if(NOT cpuinfo MATCHES " avx2" OR NOT cpuinfo MATCHES " fma")
  message("this CPU cannot run x86-64-v3 code: skipped")
  cmake_language(EXIT 77)
endif()
