// Linear layer kernels, forward and backward, one per (op, variant).
//
// Contract, for every kernel below:
//   lanes: float (binary32) in and out; row-major tensors, any sizes >= 0
//     (reduction length <= kMaxReductionLength), any alignment; outputs may
//     not alias inputs.
//   ops: y = x W^T + b, dx = dy W, dW = dy^T x, db = column sums of dy, with
//     x [B, in], W [out, in], b [out], dy [B, out] (linear_spec.h).
//   op sequence: the schedule's template in
//     kernels/reductions/sum_of_terms-inl.h, instantiated over Highway vectors
//     by sum_of_terms_kernels-inl.h; linear_fwd adds the bias once, after the
//     rounded dot product (linear_spec-inl.h).
//   signature: each op's Kernel<kVariant>, ReductionKernel's
//     (kernels/reductions/reduction_spec.h), extents {batch, in, out}.
//   model: bit for bit the model ExpectedReductionModel names for the target:
//     sequential_fma follows the fused model where MulAdd is an FMA (AVX2,
//     AVX3, AVX3_DL) and the unfused one elsewhere (SCALAR, SSSE3, SSE4);
//     lane_parallel follows the model with the target's lane count (1, 4, 8
//     or 16) and fusion; sequential_unfused and pairwise follow one model on
//     every target.
//   error: any schedule stays within the classical bound gamma_n * sum|p_k q_k|
//     (plus underflow; oracles/reduction_bound.h); measured budgets belong in
//     golden/budgets.json.

#if defined(ULPGATE_KERNELS_REDUCTIONS_LINEAR_LINEAR_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_REDUCTIONS_LINEAR_LINEAR_INL_H_
#undef ULPGATE_KERNELS_REDUCTIONS_LINEAR_LINEAR_INL_H_
#else
#define ULPGATE_KERNELS_REDUCTIONS_LINEAR_LINEAR_INL_H_
#endif

#include <vector>

#include "hwy/highway.h"
#include "kernels/reductions/linear/linear_spec.h"
#include "kernels/reductions/sum_of_terms_kernels-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

// The sequences, compiled for this target (see linear_spec-inl.h).
namespace linear_spec {
#include "kernels/reductions/linear/linear_spec-inl.h"
}  // namespace linear_spec

namespace linear_kernels {

// y[b, o] = AddBias(sum_k x[b, k] w[o, k], bias[o]).
template <ReductionSchedule kSchedule>
HWY_NOINLINE void LinearFwdF32(const float* x, const float* w, const float* bias, float* y,
                            size_t batch, size_t in, size_t out) {
  using Term = sum_of_terms::ProductTerm;
  const hn::ScalableTag<float> d;
  if constexpr (kSchedule == ReductionSchedule::kLaneParallel) {
    impl::LaneParallelOutputs<Term>(
        d, batch, out, in, x, in, w, in, y, out,
        [bias](const ScalarArith& s, size_t j, float dot) {
          return linear_spec::AddBias(s, dot, bias[j]);
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
          return linear_spec::AddBias(a, dot, impl::LoadPadded(d, bias + j0, count));
        });
  }
}

// dx[b, i] = sum_o dy[b, o] w[o, i].
template <ReductionSchedule kSchedule>
HWY_NOINLINE void LinearBwdInputF32(const float* dy, const float* w, float* dx, size_t batch,
                                 size_t in, size_t out) {
  using Term = sum_of_terms::ProductTerm;
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
HWY_NOINLINE void LinearBwdWeightF32(const float* dy, const float* x, float* dw, size_t batch,
                                  size_t in, size_t out) {
  using Term = sum_of_terms::ProductTerm;
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
HWY_NOINLINE void LinearBwdBiasF32(const float* dy, float* db, size_t batch, size_t out) {
  using Term = sum_of_terms::PlainTerm;
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

// The kernels by the generic signature, one per row of the spec's kVariants.
struct LinearFwd {
  template <size_t kVariant>
  static void Kernel(const void* const* operands, void* out, const size_t* extents) {
    LinearFwdF32<LinearFwdSpec::kVariants[kVariant].schedule>(
        static_cast<const float*>(operands[0]), static_cast<const float*>(operands[1]),
        static_cast<const float*>(operands[2]), static_cast<float*>(out), extents[0],
        extents[1], extents[2]);
  }
};
struct LinearBwdInput {
  template <size_t kVariant>
  static void Kernel(const void* const* operands, void* out, const size_t* extents) {
    LinearBwdInputF32<LinearBwdInputSpec::kVariants[kVariant].schedule>(
        static_cast<const float*>(operands[0]), static_cast<const float*>(operands[1]),
        static_cast<float*>(out), extents[0], extents[1], extents[2]);
  }
};
struct LinearBwdWeight {
  template <size_t kVariant>
  static void Kernel(const void* const* operands, void* out, const size_t* extents) {
    LinearBwdWeightF32<LinearBwdWeightSpec::kVariants[kVariant].schedule>(
        static_cast<const float*>(operands[0]), static_cast<const float*>(operands[1]),
        static_cast<float*>(out), extents[0], extents[1], extents[2]);
  }
};
struct LinearBwdBias {
  template <size_t kVariant>
  static void Kernel(const void* const* operands, void* out, const size_t* extents) {
    LinearBwdBiasF32<LinearBwdBiasSpec::kVariants[kVariant].schedule>(
        static_cast<const float*>(operands[0]), static_cast<float*>(out), extents[0],
        extents[2]);
  }
};

}  // namespace linear_kernels
}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_REDUCTIONS_LINEAR_LINEAR_INL_H_
