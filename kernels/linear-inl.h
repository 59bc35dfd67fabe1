// Linear layer kernels, forward and backward, one per (op, schedule).
//
// Contract, for every kernel below:
//   lanes: float (binary32) in and out; row-major tensors, any sizes >= 0
//     (reduction length <= kMaxReductionLength), any alignment; outputs may
//     not alias inputs.
//   ops: y = x W^T + b, dx = dy W, dW = dy^T x, db = column sums of dy, with
//     x [B, in], W [out, in], b [out], dy [B, out] (reduction_spec.h).
//   op sequence: the schedule's template in reduction_spec-inl.h, instantiated
//     over Highway vectors by reduction-inl.h; linear_fwd adds the bias once,
//     after the rounded dot product.
//   model: bit for bit the model ExpectedReductionModel names for the target:
//     sequential_fma follows the fused model where MulAdd is an FMA (AVX2,
//     AVX3, AVX3_DL) and the unfused one elsewhere (SCALAR, SSSE3, SSE4);
//     lane_parallel follows the model with the target's lane count (1, 4, 8
//     or 16) and fusion; sequential_unfused and pairwise follow one model on
//     every target.
//   error: any schedule stays within the classical bound gamma_n * sum|p_k q_k|
//     (plus underflow; oracles/reduction_bound.h); measured budgets belong in
//     golden/budgets.json.

#if defined(ULPGATE_KERNELS_LINEAR_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_LINEAR_INL_H_
#undef ULPGATE_KERNELS_LINEAR_INL_H_
#else
#define ULPGATE_KERNELS_LINEAR_INL_H_
#endif

#include <vector>

#include "hwy/highway.h"
#include "kernels/reduction-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

// y[b, o] = AddBias(sum_k x[b, k] w[o, k], bias[o]).
template <ReductionSchedule kSchedule>
HWY_NOINLINE void LinearFwd(const float* x, const float* w, const float* bias, float* y,
                            size_t batch, size_t in, size_t out) {
  using Term = reduction_spec::ProductTerm;
  const hn::ScalableTag<float> d;
  if constexpr (kSchedule == ReductionSchedule::kLaneParallel) {
    impl::LaneParallelOutputs<Term>(
        d, batch, out, in, x, in, w, in, y, out,
        [bias](const ScalarArith& s, size_t j, float dot) {
          return reduction_spec::AddBias(s, dot, bias[j]);
        });
  } else {
    // One output per lane: lane j needs w[j, k], so W^T's row k holds the
    // lanes' weights.
    const std::vector<float> wt = impl::Transposed(w, out, in);
    impl::AcrossOutputs(
        d, batch, out, in, wt.data(), out, y, out,
        [d, x, in](size_t m, const float* r, size_t r_step) HWY_ATTR {
          return impl::BroadcastRowTerms<decltype(d)>{d, x + m * in, 1, r, r_step};
        },
        impl::Schedule<kSchedule, Term>(),
        [d, bias](const auto& a, size_t j0, size_t count, auto dot) HWY_ATTR {
          return reduction_spec::AddBias(a, dot, impl::LoadPadded(d, bias + j0, count));
        });
  }
}

// dx[b, i] = sum_o dy[b, o] w[o, i].
template <ReductionSchedule kSchedule>
HWY_NOINLINE void LinearBwdInput(const float* dy, const float* w, float* dx, size_t batch,
                                 size_t in, size_t out) {
  using Term = reduction_spec::ProductTerm;
  const hn::ScalableTag<float> d;
  auto identity = [](const auto&, size_t, auto v) { return v; };
  if constexpr (kSchedule == ReductionSchedule::kLaneParallel) {
    const std::vector<float> wt = impl::Transposed(w, out, in);  // row i: w[., i]
    impl::LaneParallelOutputs<Term>(d, batch, in, out, dy, out, wt.data(), out, dx, in,
                                    identity);
  } else {
    impl::AcrossOutputs(
        d, batch, in, out, w, in, dx, in,
        [d, dy, out](size_t m, const float* r, size_t r_step) HWY_ATTR {
          return impl::BroadcastRowTerms<decltype(d)>{d, dy + m * out, 1, r, r_step};
        },
        impl::Schedule<kSchedule, Term>(),
        [](const auto&, size_t, size_t, auto v) HWY_ATTR { return v; });
  }
}

// dw[o, i] = sum_b dy[b, o] x[b, i].
template <ReductionSchedule kSchedule>
HWY_NOINLINE void LinearBwdWeight(const float* dy, const float* x, float* dw, size_t batch,
                                  size_t in, size_t out) {
  using Term = reduction_spec::ProductTerm;
  const hn::ScalableTag<float> d;
  auto identity = [](const auto&, size_t, auto v) { return v; };
  if constexpr (kSchedule == ReductionSchedule::kLaneParallel) {
    const std::vector<float> dyt = impl::Transposed(dy, batch, out);  // row o: dy[., o]
    const std::vector<float> xt = impl::Transposed(x, batch, in);     // row i: x[., i]
    impl::LaneParallelOutputs<Term>(d, out, in, batch, dyt.data(), batch, xt.data(), batch, dw,
                                    in, identity);
  } else {
    impl::AcrossOutputs(
        d, out, in, batch, x, in, dw, in,
        [d, dy, out](size_t m, const float* r, size_t r_step) HWY_ATTR {
          return impl::BroadcastRowTerms<decltype(d)>{d, dy + m, out, r, r_step};
        },
        impl::Schedule<kSchedule, Term>(),
        [](const auto&, size_t, size_t, auto v) HWY_ATTR { return v; });
  }
}

// db[o] = sum_b dy[b, o].
template <ReductionSchedule kSchedule>
HWY_NOINLINE void LinearBwdBias(const float* dy, float* db, size_t batch, size_t out) {
  using Term = reduction_spec::PlainTerm;
  const hn::ScalableTag<float> d;
  if constexpr (kSchedule == ReductionSchedule::kLaneParallel) {
    // Output o is row o of dy^T: `out` rows of one column each.
    const std::vector<float> dyt = impl::Transposed(dy, batch, out);
    impl::LaneParallelOutputs<Term>(d, out, 1, batch, dyt.data(), batch, nullptr, 0, db, 1,
                                    [](const auto&, size_t, float v) { return v; });
  } else {
    impl::AcrossOutputs(
        d, 1, out, batch, dy, out, db, 0,
        [d](size_t, const float* r, size_t r_step) HWY_ATTR {
          return impl::RowTerms<decltype(d)>{d, r, r_step};
        },
        impl::Schedule<kSchedule, Term>(),
        [](const auto&, size_t, size_t, auto v) HWY_ATTR { return v; });
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_LINEAR_INL_H_
