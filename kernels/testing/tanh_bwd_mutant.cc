// Test-only (linked into build/bin/ulpgate_mutant, never into ulpgate): tanh_bwd
// mulsub with the bug kernels/testing/test_mutant.h selects, compiled for every
// target and put in the registry's place of mulsub before main runs, so that
// the golden and gate tests can show that golden check and the gate name
// mulsub and the targets the bug shows on.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/ops/tanh_bwd/tanh_bwd_spec.h"
#include "kernels/registry.h"
#include "kernels/testing/test_mutant.h"

#ifndef ULPGATE_KERNELS_TESTING_MUTANT_TYPES_
#define ULPGATE_KERNELS_TESTING_MUTANT_TYPES_
namespace ulpgate {
namespace testing_detail {
struct MutantKernel {
  int64_t target;
  ElementwiseKernel mulsub;
};
}  // namespace testing_detail
}  // namespace ulpgate
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/testing/tanh_bwd_mutant.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/ops/tanh_bwd/tanh_bwd_spec.h"
#include "kernels/vector_arith-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

// The sequences, for this target (templates: the same definitions as the
// registry's; kernels/tanh_bwd-inl.h itself is not included, its kernels are
// the registry's to define).
namespace tanh_bwd_spec {
#include "kernels/ops/tanh_bwd/tanh_bwd_spec-inl.h"
}  // namespace tanh_bwd_spec

HWY_NOINLINE void TanhBwdMulSubMutant(const float* grad, const float* t, float* out, size_t n) {
  const hn::ScalableTag<float> d;
  const auto drifted = [](const auto& a, auto g, auto x) HWY_ATTR {
    const auto one = a.Const(1.0f);
    return a.Mul(g, a.Mul(a.Sub(one, x), a.Add(one, x)));
  };
  const auto right = [](const auto& a, auto g, auto x) HWY_ATTR {
    return tanh_bwd_spec::MulSub(a, g, x);
  };
  const size_t vector_bytes = hn::Lanes(d) * sizeof(float);
  switch (SelectedTestMutant()) {
    case TestMutant::kDrifted:
      return impl::Elementwise2(d, grad, t, out, n, drifted);
    case TestMutant::kAvx3:
      if (HWY_TARGET == HWY_AVX3) return impl::Elementwise2(d, grad, t, out, n, drifted);
      return impl::Elementwise2(d, grad, t, out, n, right);
    case TestMutant::kMisaligned:
      if (reinterpret_cast<uintptr_t>(out) % vector_bytes != 0) {
        return impl::Elementwise2(d, grad, t, out, n, drifted);
      }
      return impl::Elementwise2(d, grad, t, out, n, right);
    case TestMutant::kRare:
      impl::Elementwise2(d, grad, t, out, n, right);
      if (HWY_TARGET == HWY_AVX2) {
        for (size_t i = 0; i < n; ++i) {
          uint32_t bits;
          std::memcpy(&bits, &t[i], sizeof bits);
          if ((bits & 0xFFFFFu) == 0x12345u) out[i] = std::nextafter(out[i], HUGE_VALF);
        }
      }
      return;
    case TestMutant::kOverrunTail:
      impl::Elementwise2(d, grad, t, out, n, right);
      if (n % hn::Lanes(d) != 0) out[n] = out[n - 1];  // one past the output
      return;
    case TestMutant::kTail: {
      const size_t body = n - n % hn::Lanes(d);
      impl::Elementwise2(d, grad, t, out, body, right);
      impl::Elementwise2(d, grad + body, t + body, out + body, n - body,
                         [](const auto& a, auto g, auto x) HWY_ATTR {
                           return tanh_bwd_spec::MulSubFma(a, g, x);
                         });
      return;
    }
  }
}

// The registry's signature: operands and output as storage lanes.
HWY_NOINLINE void TanhBwdMulSubMutantKernel(const void* const* in, void* out, size_t n) {
  TanhBwdMulSubMutant(static_cast<const float*>(in[0]), static_cast<const float*>(in[1]),
                      static_cast<float*>(out), n);
}

// An address, no target-specific instruction (see kernels/registry.cc).
const ::ulpgate::testing_detail::MutantKernel* GetMutantKernel() {
  static constexpr ::ulpgate::testing_detail::MutantKernel kKernel{HWY_TARGET,
                                                                    &TanhBwdMulSubMutantKernel};
  return &kKernel;
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ulpgate {

HWY_EXPORT(GetMutantKernel);

namespace {

const bool kMutantInstalled = [] {
  for (const auto& entry : HWY_DISPATCH_TABLE(GetMutantKernel)) {
    if (entry == nullptr || entry == HWY_DISPATCH_TABLE(GetMutantKernel)[0]) continue;
    const testing_detail::MutantKernel& k = *entry();
    ReplaceElementwiseKernelForTesting(TanhBwdSpec::kName, "f32", "mulsub", k.target, k.mulsub);
  }
  return true;
}();

}  // namespace
}  // namespace ulpgate
#endif  // HWY_ONCE
