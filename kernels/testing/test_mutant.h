// Test-only: which bug the kernels of build/bin/ulpgate_mutant carry, so that
// the golden and gate tests can show that each kind of kernel bug fails both.
// Only compiled into the mutant build (kernels/testing/tanh_bwd_mutant.cc);
// the environment variable ULPGATE_MUTANT picks the bug of tanh_bwd mulsub:
//   drifted     (default) 1 - t^2 as (1 - t)(1 + t) on every target
//   avx3        the same, on AVX3 only
//   tail        the remainder of a call (n mod lanes) computes 1 - t^2 with a
//               fused NegMulAdd: a bug only targets with FMA and lanes > 1 show
//   misaligned  drifted when the output does not start on a vector boundary
//   rare        on AVX2 only, 1 ULP too large (toward +inf) where the low 20
//               bits of t's pattern are 0x12345: one input in 2^20, which
//               sampled suites of 100,000 inputs miss and a sweep finds
//   overrun_tail  right outputs, but a call with a tail (n mod lanes > 0)
//               also writes one element past its output: an out-of-bounds
//               fault every command must report as the case's
#ifndef ULPGATE_KERNELS_TESTING_TEST_MUTANT_H_
#define ULPGATE_KERNELS_TESTING_TEST_MUTANT_H_

#include <cstdlib>
#include <cstring>

namespace ulpgate {

enum class TestMutant { kDrifted, kAvx3, kTail, kMisaligned, kRare, kOverrunTail };

inline TestMutant SelectedTestMutant() {
  static const TestMutant mutant = [] {
    const char* v = std::getenv("ULPGATE_MUTANT");
    if (v == nullptr || *v == '\0' || std::strcmp(v, "drifted") == 0) return TestMutant::kDrifted;
    if (std::strcmp(v, "avx3") == 0) return TestMutant::kAvx3;
    if (std::strcmp(v, "tail") == 0) return TestMutant::kTail;
    if (std::strcmp(v, "misaligned") == 0) return TestMutant::kMisaligned;
    if (std::strcmp(v, "rare") == 0) return TestMutant::kRare;
    if (std::strcmp(v, "overrun_tail") == 0) return TestMutant::kOverrunTail;
    std::abort();  // a typo must not silently test the default mutant
  }();
  return mutant;
}

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_TESTING_TEST_MUTANT_H_
