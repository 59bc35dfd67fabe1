// The reductions (linear layer, MSE loss) with 16-bit operands and outputs
// (bf16 or f16 bit patterns) and binary32 accumulation, as frameworks run them
// (PyTorch's CPU bf16 matmul and mse_loss accumulate in float): every operand
// promoted to binary32 (exact), the binary32 kernel of the same variant
// (linear-inl.h, mse-inl.h), every output rounded once to the format.
//
// Contract, for every op and variant:
//   operands[k]: operand k of the op (ReductionOpInfo::operands order) as the
//     format's bit patterns, row-major, shapes as in reduction_spec.h; out:
//     ReductionOutputCount(op, shape) patterns (mse_fwd: one).
//   model: the variant's binary32 model on the promoted operands, rounded to
//     nearest even in the format (suites/engine/reduction_oracle.h).

#if defined(ULPGATE_KERNELS_REDUCTION_NARROW_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_REDUCTION_NARROW_INL_H_
#undef ULPGATE_KERNELS_REDUCTION_NARROW_INL_H_
#else
#define ULPGATE_KERNELS_REDUCTION_NARROW_INL_H_
#endif

#include <vector>

#include "hwy/highway.h"
#include "kernels/linear-inl.h"
#include "kernels/mse-inl.h"
#include "kernels/narrow_convert-inl.h"
#include "kernels/reduction_spec.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {
namespace impl {

// out[i] = Conv::Promote(in[i]) for i < n; the tail through one full vector.
template <class Conv>
HWY_INLINE void PromoteAll(const uint16_t* in, float* out, size_t n) {
  const hn::ScalableTag<float> d;
  const narrow::U16<decltype(d)> du;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(Conv::Promote(d, hn::LoadU(du, in + i)), d, out + i);
  if (i == n) return;
  HWY_ALIGN uint16_t tail_in[hn::MaxLanes(d)] = {};
  HWY_ALIGN float tail_out[hn::MaxLanes(d)];
  for (size_t j = 0; j < n - i; ++j) tail_in[j] = in[i + j];
  hn::Store(Conv::Promote(d, hn::Load(du, tail_in)), d, tail_out);
  for (size_t j = 0; j < n - i; ++j) out[i + j] = tail_out[j];
}

// out[i] = Conv::Demote(in[i]) for i < n.
template <class Conv>
HWY_INLINE void DemoteAll(const float* in, uint16_t* out, size_t n) {
  const hn::ScalableTag<float> d;
  const narrow::U16<decltype(d)> du;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(Conv::Demote(d, hn::LoadU(d, in + i)), du, out + i);
  if (i == n) return;
  HWY_ALIGN float tail_in[hn::MaxLanes(d)] = {};
  HWY_ALIGN uint16_t tail_out[hn::MaxLanes(d)];
  for (size_t j = 0; j < n - i; ++j) tail_in[j] = in[i + j];
  hn::Store(Conv::Demote(d, hn::Load(d, tail_in)), du, tail_out);
  for (size_t j = 0; j < n - i; ++j) out[i + j] = tail_out[j];
}

}  // namespace impl

template <class Conv, ReductionOp kOp, ReductionSchedule kSchedule, MeanScaling kScaling>
HWY_NOINLINE void ReductionNarrow(const uint16_t* const* operands, uint16_t* out, size_t batch,
                                  size_t in, size_t out_features) {
  const ReductionShape shape{batch, in, out_features};
  const std::vector<std::vector<size_t>> shapes = ReductionOperandShapes(kOp, shape);
  std::vector<std::vector<float>> f(shapes.size());
  for (size_t k = 0; k < shapes.size(); ++k) {
    size_t count = 1;
    for (size_t extent : shapes[k]) count *= extent;
    f[k].resize(count + 1);  // +1: never empty
    impl::PromoteAll<Conv>(operands[k], f[k].data(), count);
  }
  std::vector<float> y(ReductionOutputCount(kOp, shape) + 1);
  if constexpr (kOp == ReductionOp::kLinearFwd) {
    LinearFwd<kSchedule>(f[0].data(), f[1].data(), f[2].data(), y.data(), batch, in, out_features);
  } else if constexpr (kOp == ReductionOp::kLinearBwdInput) {
    LinearBwdInput<kSchedule>(f[0].data(), f[1].data(), y.data(), batch, in, out_features);
  } else if constexpr (kOp == ReductionOp::kLinearBwdWeight) {
    LinearBwdWeight<kSchedule>(f[0].data(), f[1].data(), y.data(), batch, in, out_features);
  } else if constexpr (kOp == ReductionOp::kLinearBwdBias) {
    LinearBwdBias<kSchedule>(f[0].data(), y.data(), batch, out_features);
  } else if constexpr (kOp == ReductionOp::kMseFwd) {
    y[0] = MseFwd<kSchedule, kScaling>(f[0].data(), f[1].data(), batch);
  } else {
    static_assert(kOp == ReductionOp::kMseBwd, "an op without a narrow kernel");
    MseBwd(f[0].data(), f[1].data(), f[2][0], y.data(), batch);
  }
  impl::DemoteAll<Conv>(y.data(), out, ReductionOutputCount(kOp, shape));
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_REDUCTION_NARROW_INL_H_
