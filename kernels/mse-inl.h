// MSE loss kernels: forward (a reduction to one scalar) and backward
// (elementwise).
//
// Contract:
//   lanes: float (binary32) in and out; any 1 <= N <= kMaxReductionLength
//     (so N is exact in binary32), any alignment; outputs may not alias inputs.
//   mse_fwd: mean of (y_i - t_i)^2, the difference rounded once, summed with
//     the variant's schedule (reduction_spec-inl.h), then RN(sum / N) or
//     RN(sum * RN(1/N)). The sequential and pairwise schedules have one output,
//     so they run in one-lane vectors of the target (its MulAdd, fused or not);
//     the lane-parallel schedule uses full vectors.
//   mse_bwd: dy_i = RN(RN(RN(2/N) * RN(y_i - t_i)) * grad_out).
//   model: as for the linear kernels (linear-inl.h): sequential_fma fused on
//     AVX2/AVX3/AVX3_DL and unfused elsewhere, lane_parallel with the target's
//     lane count; the others and mse_bwd one model on every target.
//   error: within the classical bound (oracles/reduction_bound.h); measured
//     budgets belong in golden/budgets.json.

#if defined(ULPGATE_KERNELS_MSE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_MSE_INL_H_
#undef ULPGATE_KERNELS_MSE_INL_H_
#else
#define ULPGATE_KERNELS_MSE_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/reduction-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

namespace impl {

template <MeanScaling kScaling, class A>
HWY_INLINE typename A::Value Mean(A& a, const typename A::Value& sum,
                                  const typename A::Value& count) {
  if constexpr (kScaling == MeanScaling::kReciprocal) {
    return reduction_spec::MeanByReciprocal(a, sum, count);
  } else {
    return reduction_spec::MeanByDivision(a, sum, count);
  }
}

}  // namespace impl

template <ReductionSchedule kSchedule, MeanScaling kScaling>
HWY_NOINLINE float MseFwd(const float* y, const float* target, size_t n) {
  using Term = reduction_spec::SquaredDifferenceTerm;
  const float count = static_cast<float>(n);  // exact: n <= 2^24
  if constexpr (kSchedule == ReductionSchedule::kLaneParallel) {
    const hn::ScalableTag<float> d;
    float loss;
    impl::LaneParallelOutputs<Term>(d, 1, 1, n, y, 0, target, 0, &loss, 0,
                                    [count](const ScalarArith& s, size_t, float sum) {
                                      return impl::Mean<kScaling>(s, sum, count);
                                    });
    return loss;
  } else {
    const hn::CappedTag<float, 1> d;
    const VectorArith<decltype(d)> arith{d};
    const impl::BroadcastRowTerms<decltype(d)> terms{d, y, 1, target, 1};
    const auto sum = impl::Schedule<kSchedule, Term>()(arith, terms, n);
    return hn::GetLane(impl::Mean<kScaling>(arith, sum, arith.Const(count)));
  }
}

HWY_NOINLINE void MseBwd(const float* y, const float* target, float grad_out, float* dy,
                         size_t n) {
  const hn::ScalableTag<float> d;
  const VectorArith<decltype(d)> arith{d};
  const auto scale = reduction_spec::MseBwdScale(arith, arith.Const(static_cast<float>(n)));
  const auto grad = arith.Const(grad_out);
  impl::Elementwise2(d, y, target, dy, n,
                     // By reference: SVE's sizeless vectors cannot be captured by copy.
                     [&scale, &grad](const auto& a, auto yv, auto tv) HWY_ATTR {
                       return reduction_spec::MseBwdElement(a, yv, tv, scale, grad);
                     });
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_MSE_INL_H_
