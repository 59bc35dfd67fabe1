// tanh backward kernels: out[i] = grad[i] * (1 - t[i]^2), four ways.
//
// Contract, for every variant below:
//   lanes: float (binary32) in and out; any n, any alignment, in != out
//     (outputs may not alias inputs).
//   op sequence: kernels/tanh_bwd_spec.h, instantiated over Highway vectors.
//   model: the kernel must equal, bit for bit, the model named by
//     kTanhBwdVariants (tanh_bwd_spec.h) for the target's NegMulAdd: the fused
//     model on AVX2/AVX3/AVX3_DL, the two-rounding model on SSSE3/SSE4/SCALAR.
//   error: no bound is promised here; each variant's measured ULP budget lives
//     in golden/budgets.json.

#if defined(ULPGATE_KERNELS_TANH_BWD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_TANH_BWD_INL_H_
#undef ULPGATE_KERNELS_TANH_BWD_INL_H_
#else
#define ULPGATE_KERNELS_TANH_BWD_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/vector_arith-inl.h"
#ifdef ULPGATE_TEST_MUTANT_MULSUB
#include "kernels/test_mutant.h"
#endif

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

// The sequences, compiled for this target (see tanh_bwd_spec-inl.h).
namespace tanh_bwd_spec {
#include "kernels/tanh_bwd_spec-inl.h"
}  // namespace tanh_bwd_spec

HWY_NOINLINE void TanhBwdMac(const float* grad, const float* t, float* out,
                             size_t n) {
  impl::Elementwise2(hn::ScalableTag<float>(), grad, t, out, n,
                     [](const auto& a, auto g, auto x) HWY_ATTR {
                       return tanh_bwd_spec::Mac(a, g, x);
                     });
}

HWY_NOINLINE void TanhBwdMacUnfused(const float* grad, const float* t,
                                    float* out, size_t n) {
  impl::Elementwise2(hn::ScalableTag<float>(), grad, t, out, n,
                     [](const auto& a, auto g, auto x) HWY_ATTR {
                       return tanh_bwd_spec::MacUnfused(a, g, x);
                     });
}

#ifdef ULPGATE_TEST_MUTANT_MULSUB
// Test-only build (tools/CMakeLists.txt, ulpgate_mutant): mulsub with the bug
// kernels/test_mutant.h selects, so that golden check and the gate must name
// mulsub and the targets the bug shows on.
HWY_NOINLINE void TanhBwdMulSub(const float* grad, const float* t, float* out,
                                size_t n) {
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
#else
HWY_NOINLINE void TanhBwdMulSub(const float* grad, const float* t, float* out,
                                size_t n) {
  impl::Elementwise2(hn::ScalableTag<float>(), grad, t, out, n,
                     [](const auto& a, auto g, auto x) HWY_ATTR {
                       return tanh_bwd_spec::MulSub(a, g, x);
                     });
}
#endif

HWY_NOINLINE void TanhBwdMulSubFma(const float* grad, const float* t,
                                   float* out, size_t n) {
  impl::Elementwise2(hn::ScalableTag<float>(), grad, t, out, n,
                     [](const auto& a, auto g, auto x) HWY_ATTR {
                       return tanh_bwd_spec::MulSubFma(a, g, x);
                     });
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_TANH_BWD_INL_H_
