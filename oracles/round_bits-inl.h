// oracles/round_bits.h's rounding of binary32 values to a narrower format by
// their bits, on Highway vectors of floats: the same steps lane by lane (why
// they are one IEEE rounding: there). Generic over the format's traits
// (RoundingBits); where those are compile-time constants (a constexpr
// RoundingBitsOf(kBFloat16)), the branches on them fold away after
// inlining. Included inside a caller's per-target namespace setup, as any
// Highway -inl header.

#if defined(ULPGATE_ORACLES_ROUND_BITS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_ORACLES_ROUND_BITS_INL_H_
#undef ULPGATE_ORACLES_ROUND_BITS_INL_H_
#else
#define ULPGATE_ORACLES_ROUND_BITS_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "oracles/round_bits.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {
namespace round_bits {

namespace hn = hwy::HWY_NAMESPACE;

// a >= b for patterns below 2^31 (magnitudes, rounding sums of magnitudes).
template <class DU>
HWY_INLINE hn::Mask<DU> AtLeast(DU du, hn::Vec<DU> a, uint32_t b) {
  const hn::RebindToSigned<DU> di;
  return hn::RebindMask(du, hn::Gt(hn::BitCast(di, a), hn::Set(di, static_cast<int32_t>(b - 1))));
}

// v rounded to the format, to nearest even, lane by lane: kEncode, the
// format's encoding (the sign at its top bit, in u32 lanes); else the rounded
// value's binary32 pattern. Lanes holding a NaN get unspecified bits (the
// callers choose what a NaN becomes).
template <bool kEncode, class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> RoundBits(const RoundingBits& f, D d, hn::Vec<D> v) {
  const hn::RebindToUnsigned<D> du;
  const auto one = hn::Set(du, 1u);
  const auto bits = hn::BitCast(du, v);
  const int shift = static_cast<int>(f.shift);
  if (f.same_range) {
    const auto t = hn::Add(bits, hn::Add(hn::Set(du, f.half_minus_one),
                                         hn::And(hn::ShiftRightSame(bits, shift), one)));
    return kEncode ? hn::ShiftRightSame(t, shift) : hn::And(t, hn::Set(du, f.keep));
  }
  const auto sign = hn::And(bits, hn::Set(du, 0x80000000u));
  const auto magnitude = hn::Xor(bits, sign);
  const auto t = hn::Add(magnitude, hn::Add(hn::Set(du, f.half_minus_one),
                                            hn::And(hn::ShiftRightSame(magnitude, shift), one)));
  auto out = kEncode ? hn::ShiftRightSame(hn::Sub(t, hn::Set(du, f.rebias)), shift)
                     : hn::And(t, hn::Set(du, f.keep));
  if (f.narrower_range) {
    // |v| + M rounds to the subnormal grid; the encoding is the sum's pattern
    // less M's (the multiple of q), the value the sum less M.
    const auto magic = hn::Set(du, f.magic);
    const auto sum = hn::Add(hn::BitCast(d, magnitude), hn::BitCast(d, magic));
    const auto small = kEncode ? hn::Sub(hn::BitCast(du, sum), magic)
                               : hn::BitCast(du, hn::Sub(sum, hn::BitCast(d, magic)));
    out = hn::IfThenElse(AtLeast(du, magnitude, f.min_normal), out, small);
  }
  if (f.lower_emax) {
    // Past the overflow: the value rounds there from below it too; the
    // encoding only needs magnitudes at or past it (below, the carry of the
    // rounding addition makes the exponent field all ones and the mantissa
    // zero, the infinity's encoding), which compares before the addition.
    const auto past = kEncode ? AtLeast(du, magnitude, f.overflow) : AtLeast(du, t, f.overflow);
    out = hn::IfThenElse(past, hn::Set(du, kEncode ? f.infinity : 0x7f800000u), out);
  }
  return hn::Or(out, kEncode ? hn::ShiftRightSame(sign, static_cast<int>(f.sign_shift)) : sign);
}

// v rounded to the format, to nearest even, as binary32 values; NaN lanes as
// they are.
template <class D>
HWY_INLINE hn::Vec<D> RoundToFormat(const RoundingBits& f, D d, hn::Vec<D> v) {
  return hn::IfThenElse(hn::IsNaN(v), v, hn::BitCast(d, RoundBits<false>(f, d, v)));
}

// The same toward zero (TruncateBinary32ToFormat): past the largest finite
// value a finite lane becomes the largest, an infinity stays one; NaN lanes as
// they are.
template <class D>
HWY_INLINE hn::Vec<D> TruncateToFormat(const RoundingBits& f, D d, hn::Vec<D> v) {
  const hn::RebindToUnsigned<D> du;
  const auto bits = hn::BitCast(du, v);
  hn::Vec<decltype(du)> out;
  if (f.same_range) {
    out = hn::And(bits, hn::Set(du, f.keep));
  } else {
    const auto sign = hn::And(bits, hn::Set(du, 0x80000000u));
    const auto magnitude = hn::Xor(bits, sign);
    out = hn::And(magnitude, hn::Set(du, f.keep));
    if (f.narrower_range) {
      const auto a = hn::BitCast(d, magnitude);
      const auto magic = hn::BitCast(d, hn::Set(du, f.magic));
      auto n = hn::Sub(hn::Add(a, magic), magic);
      n = hn::IfThenElse(hn::Gt(n, a), hn::Sub(n, hn::BitCast(d, hn::Set(du, f.quantum))), n);
      out = hn::IfThenElse(AtLeast(du, magnitude, f.min_normal), out, hn::BitCast(du, n));
    }
    if (f.lower_emax) {
      const auto past = hn::AndNot(AtLeast(du, magnitude, 0x7f800000u), AtLeast(du, magnitude, f.overflow));
      out = hn::IfThenElse(past, hn::Set(du, f.largest), out);
    }
    out = hn::Or(out, sign);
  }
  return hn::IfThenElse(hn::IsNaN(v), v, hn::BitCast(d, out));
}

}  // namespace round_bits
}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_ORACLES_ROUND_BITS_INL_H_
