// The kernels of every registered elementwise op (kernels/ops/registered_ops.h),
// generated from the op's spec: one per binary32 variant, one per 16-bit
// variant in each 16-bit format.
//
// Contract, for every kernel:
//   lanes: storage lanes of the format in and out (float for f32, the bit
//     patterns of bf16 or f16 as uint16_t), one pointer per operand in the
//     spec's operand order; any n, any alignment; outputs may not alias inputs.
//   op sequence: the variant's template (kernels/ops/<op>/<op>_spec-inl.h)
//     over Highway vectors (VectorArith), for the 16-bit variants over f32
//     lanes promoted from the operands and rounded as the variant's row says.
//   model: the kernel must equal, bit for bit, the model its row names for the
//     target (suites/engine/elementwise_oracle.h: ExpectedModel).
//   error: each variant's measured ULP budget lives in golden/budgets.json.

#if defined(ULPGATE_KERNELS_ELEMENTWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_ELEMENTWISE_INL_H_
#undef ULPGATE_KERNELS_ELEMENTWISE_INL_H_
#else
#define ULPGATE_KERNELS_ELEMENTWISE_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <utility>

#include "hwy/highway.h"
#include "kernels/narrow_convert-inl.h"
#include "kernels/ops/registered_ops-inl.h"
#include "kernels/vector_arith-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

// The arithmetic of an eager framework in a 16-bit format: each operation in
// binary32, its result rounded to the format and promoted back. One binary32
// rounding then one to the format equals one rounding of the exact result
// for +, - and * of format values: binary32's 24 bits are at least 2p + 2 for
// p = 8 (bf16) and p = 11 (f16), where double rounding is innocuous. A
// multiply-add is two operations here (eager frameworks have no fused op),
// and a function's binary32 result is rounded like any other operation's.
template <class D, class Conv>
struct RoundingArith {
  using Value = hn::Vec<D>;
  D d;
  VectorArith<D> base{d};

  HWY_INLINE Value Round(Value v) const { return Conv::Promote(d, Conv::Demote(d, v)); }
  // A constant is rounded to the format like any other value (PyTorch's
  // kernels in bf16 hold scalar_t(0.044715) as bf16).
  HWY_INLINE Value Const(float c) const { return Round(hn::Set(d, c)); }
  HWY_INLINE Value Add(Value a, Value b) const { return Round(hn::Add(a, b)); }
  HWY_INLINE Value Sub(Value a, Value b) const { return Round(hn::Sub(a, b)); }
  HWY_INLINE Value Mul(Value a, Value b) const { return Round(hn::Mul(a, b)); }
  HWY_INLINE Value Div(Value a, Value b) const { return Round(hn::Div(a, b)); }
  HWY_INLINE Value MulAdd(Value a, Value b, Value c) const { return Add(Mul(a, b), c); }
  HWY_INLINE Value NegMulAdd(Value a, Value b, Value c) const { return Sub(c, Mul(a, b)); }
  HWY_INLINE Value Exp(Value a) const { return Round(base.Exp(a)); }
  HWY_INLINE Value Tanh(Value a) const { return Round(base.Tanh(a)); }
  HWY_INLINE Value Erf(Value a) const { return Round(base.Erf(a)); }
};

namespace impl {

// out[i] = Conv::Demote(f(arith, Conv::Promote(in[0][i]), ...)) over the
// operands kOperand..., for any n and any (unaligned) pointers to storage
// lanes T. The tail goes through one full vector on the stack so that every
// lane of every call runs the same instruction sequence as in the body;
// padding lanes hold 0 (+0), which no op here traps on.
template <class Conv, class T, class D, class A, class F, size_t... kOperand>
HWY_INLINE void ElementwiseN(D d, const A& arith, const T* const* in, T* out, size_t n, F f,
                             std::index_sequence<kOperand...>) {
  const hn::Rebind<T, D> dt;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = f(arith, Conv::Promote(d, hn::LoadU(dt, in[kOperand] + i))...);
    hn::StoreU(Conv::Demote(d, v), dt, out + i);
  }
  if (i == n) return;
  constexpr size_t kArity = sizeof...(kOperand);
  HWY_ALIGN T tail[kArity][hn::MaxLanes(d)] = {};
  HWY_ALIGN T tail_out[hn::MaxLanes(d)];
  const size_t rest = n - i;
  for (size_t k = 0; k < kArity; ++k) {
    for (size_t j = 0; j < rest; ++j) tail[k][j] = in[k][i + j];
  }
  const auto v = f(arith, Conv::Promote(d, hn::Load(dt, tail[kOperand]))...);
  hn::Store(Conv::Demote(d, v), dt, tail_out);
  for (size_t j = 0; j < rest; ++j) out[i + j] = tail_out[j];
}

}  // namespace impl

// The kernel of row kVariant of Spec::kVariants; Seq is the op's templates
// compiled for this target.
template <class Spec, class Seq, size_t kVariant>
HWY_NOINLINE void ElementwiseF32(const void* const* in, void* out, size_t n) {
  const hn::ScalableTag<float> d;
  impl::ElementwiseN<impl::SameLanes>(
      d, VectorArith<decltype(d)>{d}, reinterpret_cast<const float* const*>(in),
      static_cast<float*>(out), n,
      [](const auto& a, auto... v) HWY_ATTR {
        return Seq::template At<static_cast<int>(kVariant)>(a, v...);
      },
      std::make_index_sequence<Spec::kOperands.size()>());
}

// The kernel of Spec::kNarrowVariants[kVariant] in the format whose exact and
// Highway conversions are ExactConv and HighwayConv.
template <class Spec, class Seq, class ExactConv, class HighwayConv, size_t kVariant>
HWY_NOINLINE void ElementwiseNarrow(const void* const* in, void* out, size_t n) {
  constexpr NarrowVariantInfo kInfo = Spec::kNarrowVariants[kVariant];
  constexpr int kSequence = RowIndex(Spec::kVariants, kInfo.sequence);
  static_assert(kSequence >= 0, "a narrow variant names an unknown binary32 sequence");
  const hn::ScalableTag<float> d;
  const auto sequence = [](const auto& a, auto... v) HWY_ATTR {
    return Seq::template At<kSequence>(a, v...);
  };
  const auto operands = reinterpret_cast<const uint16_t* const*>(in);
  uint16_t* const result = static_cast<uint16_t*>(out);
  constexpr auto kOperands = std::make_index_sequence<Spec::kOperands.size()>();
  if constexpr (kInfo.rounding == NarrowRounding::kPerOp) {
    impl::ElementwiseN<ExactConv>(d, RoundingArith<decltype(d), ExactConv>{d}, operands, result, n,
                                  sequence, kOperands);
  } else if constexpr (kInfo.rounding == NarrowRounding::kHighwayConvert) {
    impl::ElementwiseN<HighwayConv>(d, VectorArith<decltype(d)>{d}, operands, result, n, sequence,
                                    kOperands);
  } else {
    impl::ElementwiseN<ExactConv>(d, VectorArith<decltype(d)>{d}, operands, result, n, sequence,
                                  kOperands);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_ELEMENTWISE_INL_H_
