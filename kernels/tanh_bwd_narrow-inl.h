// tanh backward in the 16-bit formats: out[i] = grad[i] * (1 - t[i]^2) with
// grad, t and out bf16 or f16 bit patterns, one kernel per entry of
// kTanhBwdNarrowVariants (tanh_bwd_spec.h), generated from that table.
//
// Contract, for every variant:
//   lanes: uint16_t bit patterns of the format in and out; any n, any
//     alignment, outputs may not alias inputs.
//   op sequence: the binary32 sequence the table names (tanh_bwd_spec-inl.h)
//     over f32 lanes promoted from the operands, rounded as the table says.
//   model: the kernel must equal, bit for bit, the model
//     suites/engine/tanh_bwd_oracle.h's ExpectedNarrowModel names for the target.

#if defined(ULPGATE_KERNELS_TANH_BWD_NARROW_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_TANH_BWD_NARROW_INL_H_
#undef ULPGATE_KERNELS_TANH_BWD_NARROW_INL_H_
#else
#define ULPGATE_KERNELS_TANH_BWD_NARROW_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/narrow_convert-inl.h"
#include "kernels/tanh_bwd-inl.h"
#include "kernels/vector_arith-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

// The arithmetic of an eager framework in a 16-bit format: each operation in
// binary32, its result rounded to the format and promoted back. One binary32
// rounding then one to the format equals one rounding of the exact result
// for +, - and * of format values: binary32's 24 bits are at least 2p + 2 for
// p = 8 (bf16) and p = 11 (f16), where double rounding is innocuous.
template <class D, class Conv>
struct RoundingArith {
  using Value = hn::Vec<D>;
  D d;

  HWY_INLINE Value Round(Value v) const { return Conv::Promote(d, Conv::Demote(d, v)); }
  HWY_INLINE Value Const(float c) const { return hn::Set(d, c); }  // a value of the format
  HWY_INLINE Value Sub(Value a, Value b) const { return Round(hn::Sub(a, b)); }
  HWY_INLINE Value Mul(Value a, Value b) const { return Round(hn::Mul(a, b)); }
};

// The kernel of kTanhBwdNarrowVariants[kVariant] in the format whose exact
// and Highway conversions are ExactConv and HighwayConv.
template <class ExactConv, class HighwayConv, size_t kVariant>
HWY_NOINLINE void TanhBwdNarrow(const uint16_t* grad, const uint16_t* t, uint16_t* out,
                                size_t n) {
  constexpr TanhBwdNarrowVariantInfo kInfo = kTanhBwdNarrowVariants[kVariant];
  constexpr int kSequence = TanhBwdSequenceIndex(kInfo.sequence);
  static_assert(kSequence >= 0, "a narrow variant names an unknown binary32 sequence");
  const hn::ScalableTag<float> d;
  const auto sequence = [](const auto& a, auto g, auto x) HWY_ATTR {
    return tanh_bwd_spec::SequenceAt<kSequence>(a, g, x);
  };
  if constexpr (kInfo.rounding == NarrowRounding::kPerOp) {
    impl::ElementwiseConverted2<ExactConv>(d, RoundingArith<decltype(d), ExactConv>{d}, grad, t,
                                        out, n, sequence);
  } else if constexpr (kInfo.rounding == NarrowRounding::kHighwayConvert) {
    impl::ElementwiseConverted2<HighwayConv>(d, VectorArith<decltype(d)>{d}, grad, t, out, n,
                                          sequence);
  } else {
    impl::ElementwiseConverted2<ExactConv>(d, VectorArith<decltype(d)>{d}, grad, t, out, n,
                                        sequence);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_TANH_BWD_NARROW_INL_H_
