// Every registered reduction with 16-bit operands and outputs (bf16 or f16 bit
// patterns) and binary32 accumulation, as frameworks run them (PyTorch's CPU
// bf16 matmul and mse_loss accumulate in float): every operand promoted to
// binary32 (exact), the op's binary32 kernel of the same variant, every
// output rounded once to the format. Written once for every op: the shapes
// come from its spec's tables.
//
// Contract, for every op and variant:
//   operands[k]: operand k of the op (its spec's kOperands order) as the
//     format's bit patterns, row-major, shapes from the extents; out: the
//     output's patterns (a scalar output: one).
//   model: the variant's binary32 model on the promoted operands, rounded to
//     nearest even in the format (suites/engine/reduction_oracle.h).

#if defined(ULPGATE_KERNELS_REDUCTIONS_REDUCTION_NARROW_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_REDUCTIONS_REDUCTION_NARROW_INL_H_
#undef ULPGATE_KERNELS_REDUCTIONS_REDUCTION_NARROW_INL_H_
#else
#define ULPGATE_KERNELS_REDUCTIONS_REDUCTION_NARROW_INL_H_
#endif

#include <vector>

#include "hwy/highway.h"
#include "kernels/narrow_convert-inl.h"
#include "kernels/reductions/reduction_spec.h"

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

// The element count of a tensor of the spec's shapes.
HWY_INLINE size_t TensorCount(const TensorExtents& t, const size_t* extents) {
  size_t count = 1;
  for (size_t d = 0; d < t.rank; ++d) count *= extents[t.extent[d]];
  return count;
}

// Kernels::Kernel<kVariant> (the op's binary32 kernel) between promotions and
// a demotion.
template <class Conv, class Spec, class Kernels, size_t kVariant>
HWY_NOINLINE void ReductionNarrow(const void* const* operands, void* out, const size_t* extents) {
  constexpr size_t kArity = Spec::kOperands.size();
  std::vector<float> f[kArity];
  const void* promoted[kArity];
  for (size_t k = 0; k < kArity; ++k) {
    const size_t count = TensorCount(Spec::kOperands[k].shape, extents);
    f[k].resize(count + 1);  // +1: never empty
    impl::PromoteAll<Conv>(static_cast<const uint16_t*>(operands[k]), f[k].data(), count);
    promoted[k] = f[k].data();
  }
  const size_t outputs = TensorCount(Spec::kOutput.shape, extents);
  std::vector<float> y(outputs + 1);
  Kernels::template Kernel<kVariant>(promoted, y.data(), extents);
  impl::DemoteAll<Conv>(y.data(), static_cast<uint16_t*>(out), outputs);
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_REDUCTIONS_REDUCTION_NARROW_INL_H_
