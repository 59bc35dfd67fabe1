// tanh backward kernels: out[i] = grad[i] * (1 - t[i]^2), four ways.
//
// Contract, for every variant below:
//   lanes: float (binary32) in and out; any n, any alignment, in != out
//     (outputs may not alias inputs).
//   op sequence: kernels/tanh_bwd_spec.h, instantiated over Highway vectors.
//   model: the kernel must equal, bit for bit, the model named by its row of
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
#include "kernels/tanh_bwd_spec.h"
#include "kernels/vector_arith-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

// The sequences, compiled for this target (see tanh_bwd_spec-inl.h).
namespace tanh_bwd_spec {
#include "kernels/tanh_bwd_spec-inl.h"
}  // namespace tanh_bwd_spec

// The kernel of row kVariant of kTanhBwdVariants; the registry instantiates
// one per row.
template <size_t kVariant>
HWY_NOINLINE void TanhBwdF32(const float* grad, const float* t, float* out, size_t n) {
  impl::Elementwise2(hn::ScalableTag<float>(), grad, t, out, n,
                     [](const auto& a, auto g, auto x) HWY_ATTR {
                       return tanh_bwd_spec::SequenceAt<static_cast<int>(kVariant)>(a, g, x);
                     });
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_TANH_BWD_INL_H_
