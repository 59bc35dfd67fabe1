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
//     suites/tanh_bwd_oracle.h's ExpectedNarrowModel names for the target.

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

namespace impl {

// out[i] = Demote(f(arith, Promote(a[i]), Promote(b[i]))) for any n and any
// pointers; the tail goes through one full vector on the stack, as in
// Elementwise2, padded with +0.
template <class Conv, class D, class A, class F>
HWY_INLINE void ElementwiseNarrow2(D d, const A& arith, const uint16_t* a, const uint16_t* b,
                                   uint16_t* out, size_t n, F f) {
  const narrow::U16<D> du16;
  const size_t lanes = hn::Lanes(d);
  auto one = [&](const uint16_t* pa, const uint16_t* pb, uint16_t* po) HWY_ATTR {
    const auto va = Conv::Promote(d, hn::LoadU(du16, pa));
    const auto vb = Conv::Promote(d, hn::LoadU(du16, pb));
    hn::StoreU(Conv::Demote(d, f(arith, va, vb)), du16, po);
  };
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) one(a + i, b + i, out + i);
  if (i == n) return;
  HWY_ALIGN uint16_t tail_a[hn::MaxLanes(d)] = {};
  HWY_ALIGN uint16_t tail_b[hn::MaxLanes(d)] = {};
  HWY_ALIGN uint16_t tail_out[hn::MaxLanes(d)];
  const size_t rest = n - i;
  for (size_t j = 0; j < rest; ++j) {
    tail_a[j] = a[i + j];
    tail_b[j] = b[i + j];
  }
  one(tail_a, tail_b, tail_out);
  for (size_t j = 0; j < rest; ++j) out[i + j] = tail_out[j];
}

}  // namespace impl

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
    impl::ElementwiseNarrow2<ExactConv>(d, RoundingArith<decltype(d), ExactConv>{d}, grad, t,
                                        out, n, sequence);
  } else if constexpr (kInfo.rounding == NarrowRounding::kHighwayConvert) {
    impl::ElementwiseNarrow2<HighwayConv>(d, VectorArith<decltype(d)>{d}, grad, t, out, n,
                                          sequence);
  } else {
    impl::ElementwiseNarrow2<ExactConv>(d, VectorArith<decltype(d)>{d}, grad, t, out, n,
                                        sequence);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_TANH_BWD_NARROW_INL_H_
