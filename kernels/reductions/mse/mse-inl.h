// MSE loss kernels: forward (a reduction to one scalar) and backward
// (elementwise).
//
// Contract:
//   lanes: float (binary32) in and out; any 1 <= N <= kMaxReductionLength
//     (so N is exact in binary32), any alignment; outputs may not alias inputs.
//   mse_fwd: mean of (y_i - t_i)^2, the difference rounded once, summed with
//     the variant's schedule (kernels/reductions/sum_of_terms-inl.h), then RN(sum / N) or
//     RN(sum * RN(1/N)). The sequential and pairwise schedules have one output,
//     so they run in one-lane vectors of the target (its MulAdd, fused or not);
//     the lane-parallel schedule uses full vectors.
//   mse_bwd: dy_i = RN(RN(RN(2/N) * RN(y_i - t_i)) * grad_out).
//   model: as for the linear kernels (kernels/reductions/linear/linear-inl.h):
//     sequential_fma fused on AVX2/AVX3/AVX3_DL and unfused elsewhere,
//     lane_parallel with the target's lane count; the others and mse_bwd one
//     model on every target.
//   signature: each op's Kernel<kVariant>, ReductionKernel's
//     (kernels/reductions/reduction_spec.h), extents {n}.
//   error: within the classical bound (oracles/reduction_bound.h); measured
//     budgets belong in golden/budgets.json.

#if defined(ULPGATE_KERNELS_REDUCTIONS_MSE_MSE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_REDUCTIONS_MSE_MSE_INL_H_
#undef ULPGATE_KERNELS_REDUCTIONS_MSE_MSE_INL_H_
#else
#define ULPGATE_KERNELS_REDUCTIONS_MSE_MSE_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/reductions/mse/mse_spec.h"
#include "kernels/reductions/sum_of_terms_kernels-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

// The sequences, compiled for this target (see mse_spec-inl.h).
namespace mse_spec {
#include "kernels/reductions/mse/mse_spec-inl.h"
}  // namespace mse_spec

namespace mse_kernels {

template <ReductionSchedule kSchedule, int kForm>
HWY_NOINLINE float MseFwdF32(const float* y, const float* target, size_t n) {
  using Term = mse_spec::SquaredDifferenceTerm;
  const float count = static_cast<float>(n);  // exact: n <= 2^24
  if constexpr (kSchedule == ReductionSchedule::kLaneParallel) {
    const hn::ScalableTag<float> d;
    float loss;
    impl::LaneParallelOutputs<Term>(d, 1, 1, n, y, 0, target, 0, &loss, 0,
                                    [count](const ScalarArith& s, size_t, float sum) {
                                      return mse_spec::Mean<kForm>(s, sum, count);
                                    });
    return loss;
  } else {
    const hn::CappedTag<float, 1> d;
    const VectorArith<decltype(d)> arith{d};
    const impl::BroadcastRowTerms<decltype(d)> terms{d, y, 1, target, 1};
    const auto sum = impl::Schedule<kSchedule, Term>()(arith, terms, n);
    return hn::GetLane(mse_spec::Mean<kForm>(arith, sum, arith.Const(count)));
  }
}

HWY_NOINLINE void MseBwdF32(const float* y, const float* target, float grad_out, float* dy,
                         size_t n) {
  const hn::ScalableTag<float> d;
  const VectorArith<decltype(d)> arith{d};
  const auto scale = mse_spec::MseBwdScale(arith, arith.Const(static_cast<float>(n)));
  const auto grad = arith.Const(grad_out);
  impl::Elementwise2(d, y, target, dy, n,
                     // By reference: SVE's sizeless vectors cannot be captured by copy.
                     [&scale, &grad](const auto& a, auto yv, auto tv) HWY_ATTR {
                       return mse_spec::MseBwdElement(a, yv, tv, scale, grad);
                     });
}

// The kernels by the generic signature, one per row of the spec's kVariants.
struct MseFwd {
  template <size_t kVariant>
  static void Kernel(const void* const* operands, void* out, const size_t* extents) {
    constexpr ReductionVariantInfo kRow = MseFwdSpec::kVariants[kVariant];
    *static_cast<float*>(out) = MseFwdF32<kRow.schedule, kRow.form>(
        static_cast<const float*>(operands[0]), static_cast<const float*>(operands[1]),
        extents[0]);
  }
};
struct MseBwd {
  template <size_t kVariant>
  static void Kernel(const void* const* operands, void* out, const size_t* extents) {
    static_assert(MseBwdSpec::kVariants[kVariant].schedule == ReductionSchedule::kElementwise);
    MseBwdF32(static_cast<const float*>(operands[0]), static_cast<const float*>(operands[1]),
              *static_cast<const float*>(operands[2]), static_cast<float*>(out), extents[0]);
  }
};

}  // namespace mse_kernels
}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_REDUCTIONS_MSE_MSE_INL_H_
