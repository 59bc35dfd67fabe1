// The cast kernels (kernels/cast.h says what each variant does) on Highway
// vectors, written once from the destination format's traits (precision,
// emin, emax, bias, NaN encoding, sign, subnormals), never from its name: one
// template gives every destination. Included inside a caller's per-target
// setup, as any Highway -inl header (kernels/cast.cc, the test-only mutants).
//
// How a binary32 pattern becomes a code, by integer operations on its bits.
// A finite nonzero |x| is sig * 2^(e - 23) with sig in [2^23, 2^24) and e its
// exponent (a binary32 subnormal is normalized first: multiplied by 2^32, an
// exact binary32 product, its exponent read less 32). The destination's
// values near x are the multiples of its quantum 2^q, q = max(e, emin) - m
// (m = p - 1 mantissa bits: below 2^emin the subnormals' fixed step), so the
// multiple below x is kept = sig >> s with s = q - (e - 23) = 23 - m +
// max(0, emin - e); s past 25 leaves nothing of sig (sig < 2^24 <= half a
// quantum), so it is clamped there, which keeps every shift below 32. To
// nearest even adds 2^(s-1) - 1 plus kept's last bit before the shift (a tie
// carries only from an odd kept); toward zero adds nothing. The rounded
// multiple n lies in [2^m, 2^(m+1)] at or above 2^emin, below 2^m under it,
// and the code of n 2^q is (max(e, emin) + bias - 1) 2^m + n: the exponent
// field's 2^m and the implicit bit are one and the same, so a carry to 2^(m+1)
// is the next binade's code, and under 2^emin (exponent field 0) the code is
// n. Codes grow with values, so a code past the largest finite one is an
// overflow, and an infinity (e = 128) is one too. A format without
// subnormals (E8M0, p = 1) has bias = -emin: below 2^emin the code is n - 1,
// and the -1 of n = 0 is its smallest value, where the model puts it.
// Sign, zero and NaN follow the format's encoding last.

#ifndef ULPGATE_KERNELS_CAST_INL_TYPES_
#define ULPGATE_KERNELS_CAST_INL_TYPES_
#include <cstdint>
namespace ulpgate {
// How a cast kernel rounds. The last three are bugs, for the test-only
// mutants (kernels/testing/cast_mutants.h): kernels must never use them.
enum class CastRoundingMode : uint8_t {
  kNearestEven,
  kTowardZero,
  kTiesAway,       // bug: a tie rounds away from zero
  kStickyDropped,  // bug: the bits below the rounding bit are ignored (every half up is a tie)
  kOverflowNan,    // bug: to nearest even, but an overflow gives NaN instead of saturating
};
}  // namespace ulpgate
#endif

#if defined(ULPGATE_KERNELS_CAST_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_CAST_INL_H_
#undef ULPGATE_KERNELS_CAST_INL_H_
#else
#define ULPGATE_KERNELS_CAST_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/narrow_convert-inl.h"
#include "oracles/float_format.h"
#include "oracles/round_bits-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {
namespace cast {

namespace hn = hwy::HWY_NAMESPACE;

// A destination's constants, from its traits.
struct CodeTraits {
  int m;           // mantissa bits
  int emin, bias;
  int32_t largest;   // the largest finite value's code (its magnitude's bits)
  int32_t sign_bit;  // 0 for an unsigned format
  bool has_subnormals;
  bool negative_zero;  // a zero result keeps its sign
  NanEncoding nan;
  int bits;
};

constexpr CodeTraits CodeTraitsOf(const FloatFormat& f) {
  CodeTraits t{};
  t.m = f.mantissa_bits();
  t.emin = f.emin;
  t.bias = f.bias();
  const int lost = f.largest_loses_top_mantissa() ? 1 : 0;
  t.largest = ((f.emax + f.bias()) << t.m) | ((1 << t.m) - 1 - lost);
  t.sign_bit = f.has_sign ? 1 << (f.bits - 1) : 0;
  t.has_subnormals = f.has_subnormals;
  t.negative_zero = f.has_negative_zero();
  t.nan = f.nan;
  t.bits = f.bits;
  return t;
}

// The code of each lane's binary32 value x (D a float tag), in int32 lanes.
template <const FloatFormat* kTo, CastRoundingMode kMode, class D>
HWY_INLINE hn::Vec<hn::RebindToSigned<D>> Encode(D d, hn::Vec<D> x) {
  constexpr CodeTraits t = CodeTraitsOf(*kTo);
  static_assert(t.has_subnormals || t.m == 0,
                "a format without subnormals must have p = 1 (E8M0): below 2^emin its "
                "only value is 2^emin");
  static_assert(t.m <= 22 && t.emin - t.m >= -126 + 1 - 24 && t.bits <= 8,
                "a destination narrower than binary32, with codes of a byte");
  const hn::RebindToSigned<D> di;
  using VI = hn::Vec<decltype(di)>;
  const VI bits = hn::BitCast(di, x);
  const VI a = hn::And(bits, hn::Set(di, 0x7fffffff));
  const auto negative = hn::Lt(bits, hn::Zero(di));
  const auto is_nan = hn::Gt(a, hn::Set(di, 0x7f800000));
  const auto is_zero = hn::Eq(a, hn::Zero(di));

  // Normalize: a binary32 subnormal times 2^32 is a normal binary32 number.
  const auto subnormal = hn::Eq(hn::ShiftRight<23>(a), hn::Zero(di));
  const VI scaled = hn::BitCast(di, hn::Mul(hn::BitCast(d, a), hn::Set(d, 4294967296.0f)));
  const VI normal = hn::IfThenElse(subnormal, scaled, a);
  const VI e = hn::Sub(hn::ShiftRight<23>(normal),
                       hn::IfThenElse(subnormal, hn::Set(di, 127 + 32), hn::Set(di, 127)));
  const VI sig = hn::IfThenZeroElse(
      is_zero, hn::Or(hn::And(normal, hn::Set(di, 0x7fffff)), hn::Set(di, 0x800000)));

  // s = 23 - m + max(0, emin - e), at most 25.
  const VI below_emin = hn::Max(hn::Sub(hn::Set(di, t.emin), e), hn::Zero(di));
  const VI s = hn::Min(hn::Add(below_emin, hn::Set(di, 23 - t.m)), hn::Set(di, 25));
  const hn::RebindToUnsigned<D> du;
  const auto su = hn::BitCast(du, s);
  const auto sigu = hn::BitCast(du, sig);
  const auto one = hn::Set(du, 1u);
  // Shr and Shl, not >> and <<: SVE's sizeless vectors have no operators.
  const auto kept = hn::Shr(sigu, su);
  const auto half = hn::Shl(one, hn::Sub(su, one));  // 2^(s-1)
  hn::Vec<decltype(du)> n;
  if constexpr (kMode == CastRoundingMode::kTowardZero) {
    n = kept;
  } else if constexpr (kMode == CastRoundingMode::kTiesAway) {
    n = hn::Shr(hn::Add(sigu, half), su);
  } else if constexpr (kMode == CastRoundingMode::kStickyDropped) {
    // Up when the rounding bit is set and kept is odd, as if every such
    // remainder were a tie.
    const auto round_bit = hn::And(hn::Shr(sigu, hn::Sub(su, one)), one);
    n = hn::Add(kept, hn::And(round_bit, hn::And(kept, one)));
  } else {
    n = hn::Shr(hn::Add(sigu, hn::Add(hn::Sub(half, one), hn::And(kept, one))), su);
  }
  const VI binade = hn::Add(hn::Max(e, hn::Set(di, t.emin)), hn::Set(di, t.bias - 1));
  VI code = hn::Add(hn::ShiftLeft<t.m>(binade), hn::BitCast(di, n));
  const auto overflow = hn::Gt(code, hn::Set(di, t.largest));
  code = hn::Min(code, hn::Set(di, t.largest));  // saturate: an infinity too
  if constexpr (!t.has_subnormals) code = hn::Max(code, hn::Zero(di));

  // Sign, zero and NaN, as the format encodes them.
  const VI sign = hn::IfThenElseZero(negative, hn::Set(di, t.sign_bit));
  VI nan_code;
  if constexpr (t.nan == NanEncoding::kIeee) {  // the quiet NaN of the source's sign
    constexpr int kM = t.m > 0 ? t.m : 1;
    nan_code = hn::Or(sign, hn::Set(di, (((1 << (t.bits - 1 - kM)) - 1) << kM) | (1 << (kM - 1))));
  } else if constexpr (t.nan == NanEncoding::kAllOnes) {  // E4M3FN by sign, E8M0 0xff
    nan_code = hn::Or(sign, hn::Set(di, t.sign_bit != 0 ? t.sign_bit - 1 : (1 << t.bits) - 1));
  } else {
    // kNegativeZero: the pattern of -0; kNone: the sign bit alone (-0), as
    // ml_dtypes gives it.
    nan_code = hn::Set(di, t.sign_bit);
  }
  VI out;
  if constexpr (t.sign_bit != 0) {
    out = hn::Or(code, sign);
    if constexpr (!t.negative_zero) out = hn::IfThenZeroElse(hn::Eq(code, hn::Zero(di)), out);
  } else {
    // Unsigned and without zero: a negative source or a zero has no value.
    out = hn::IfThenElse(hn::Or(negative, is_zero), nan_code, code);
  }
  if constexpr (kMode == CastRoundingMode::kOverflowNan) {
    out = hn::IfThenElse(overflow, nan_code, out);
  } else {
    (void)overflow;
  }
  return hn::IfThenElse(is_nan, nan_code, out);
}

// Each lane's code (int32 lanes, the code in the low bits) as its value.
template <const FloatFormat* kTo, class D>
HWY_INLINE hn::Vec<D> Decode(D d, hn::Vec<hn::RebindToSigned<D>> c) {
  constexpr CodeTraits t = CodeTraitsOf(*kTo);
  const hn::RebindToSigned<D> di;
  using VI = hn::Vec<decltype(di)>;
  constexpr int kMagnitudeMask = t.sign_bit != 0 ? t.sign_bit - 1 : (1 << t.bits) - 1;
  const VI magnitude = hn::And(c, hn::Set(di, kMagnitudeMask));
  const VI sign = t.sign_bit != 0 ? hn::ShiftLeft<31 - (t.bits - 1)>(hn::And(c, hn::Set(di, t.sign_bit)))
                                  : hn::Zero(di);
  const VI field = hn::ShiftRight<t.m>(magnitude);
  const VI mantissa = hn::And(magnitude, hn::Set(di, (1 << t.m) - 1));
  // A normal code: rebias the exponent field, move the mantissa up.
  const VI biased = hn::Add(field, hn::Set(di, 127 - t.bias));
  VI value = hn::Or(hn::ShiftLeft<23>(biased), hn::ShiftLeft<23 - t.m>(mantissa));
  if constexpr (t.has_subnormals) {
    // Field 0: mantissa * 2^(emin - m), an exact binary32 product (2^(emin -
    // m) is a normal binary32 number for every destination here).
    static_assert(t.emin - t.m >= -126, "the subnormal step is a normal binary32 number");
    const auto step = hn::BitCast(d, hn::Set(di, (t.emin - t.m + 127) << 23));
    const VI small = hn::BitCast(di, hn::Mul(hn::ConvertTo(d, mantissa), step));
    value = hn::IfThenElse(hn::Eq(field, hn::Zero(di)), small, value);
  } else if constexpr (127 - t.bias <= 0) {
    // Values below 2^-126 (E8M0's 2^-127) are binary32 subnormals: the
    // significand shifted right by 1 - biased.
    const hn::RebindToUnsigned<D> du;
    const VI significand = hn::ShiftLeft<23 - t.m>(hn::Or(mantissa, hn::Set(di, 1 << t.m)));
    // Lanes that keep their normal pattern shift too: kept within 0..31 (a
    // shift past the width is undefined in the scalar target's C++).
    const auto shift = hn::BitCast(
        du, hn::Min(hn::Max(hn::Sub(hn::Set(di, 1), biased), hn::Zero(di)), hn::Set(di, 31)));
    const VI tiny = hn::BitCast(di, hn::Shr(hn::BitCast(du, significand), shift));
    value = hn::IfThenElse(hn::Lt(biased, hn::Set(di, 1)), tiny, value);
  }
  constexpr int kFieldOnes = (1 << (t.bits - (t.sign_bit != 0 ? 1 : 0) - t.m)) - 1;
  switch (t.nan) {
    case NanEncoding::kIeee:  // infinities and NaNs keep their payload, as widening does
      value = hn::IfThenElse(hn::Eq(field, hn::Set(di, kFieldOnes)),
                             hn::Or(hn::Set(di, 0x7f800000), hn::ShiftLeft<23 - t.m>(mantissa)),
                             value);
      break;
    case NanEncoding::kAllOnes:
      value = hn::IfThenElse(hn::Eq(magnitude, hn::Set(di, kMagnitudeMask)),
                             hn::Set(di, 0x7fc00000), value);
      break;
    case NanEncoding::kNegativeZero:
      return hn::BitCast(
          d, hn::IfThenElse(hn::Eq(hn::And(c, hn::Set(di, (1 << t.bits) - 1)),
                                   hn::Set(di, t.sign_bit)),
                            hn::Set(di, 0x7fc00000), hn::Or(value, sign)));
    case NanEncoding::kNone:
      break;
  }
  return hn::BitCast(d, hn::Or(value, sign));
}

// A source's lanes as binary32 values, exactly.
template <const FloatFormat* kFrom>
struct Source;
template <>
struct Source<&kBinary32> {
  using T = float;
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const T* p) {
    return hn::LoadU(d, p);
  }
};
template <>
struct Source<&kBFloat16> {
  using T = uint16_t;
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const T* p) {
    return ExactBf16::Promote(d, hn::LoadU(narrow::U16<D>(), p));
  }
};
template <>
struct Source<&kBinary16> {
  using T = uint16_t;
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const T* p) {
    return ExactF16::Promote(d, hn::LoadU(narrow::U16<D>(), p));
  }
};

// One vector of codes from one vector of sources.
template <const FloatFormat* kFrom, const FloatFormat* kTo, CastRoundingMode kMode, bool kViaBf16,
          class D>
HWY_INLINE hn::Vec<hn::Rebind<uint8_t, D>> CastVector(D d, const typename Source<kFrom>::T* p) {
  hn::Vec<D> x = Source<kFrom>::Load(d, p);
  if constexpr (kViaBf16) {
    // To nearest even in bf16 (IEEE: past its range an infinity), a NaN as it
    // is: the first of the two roundings.
    static constexpr RoundingBits kBf16 = RoundingBitsOf(kBFloat16);
    x = round_bits::RoundToFormat(kBf16, d, x);
  }
  return hn::DemoteTo(hn::Rebind<uint8_t, D>(), Encode<kTo, kMode>(d, x));
}

// The kernel: whole vectors, then the tail through a vector-sized buffer
// (Highway 1.0.3 has no LoadN/StoreN), so no lane reads or writes past n.
template <const FloatFormat* kFrom, const FloatFormat* kTo, CastRoundingMode kMode,
          bool kViaBf16 = false>
HWY_NOINLINE void CastKernelOf(const void* in, uint8_t* out, size_t n) {
  using T = typename Source<kFrom>::T;
  const hn::ScalableTag<float> d;
  const hn::Rebind<uint8_t, decltype(d)> d8;
  const size_t lanes = hn::Lanes(d);
  const T* src = static_cast<const T*>(in);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(CastVector<kFrom, kTo, kMode, kViaBf16>(d, src + i), d8, out + i);
  }
  if (i < n) {
    HWY_ALIGN T buffer[hn::MaxLanes(d)] = {};
    HWY_ALIGN uint8_t codes[hn::MaxLanes(d)];
    std::memcpy(buffer, src + i, (n - i) * sizeof(T));
    hn::Store(CastVector<kFrom, kTo, kMode, kViaBf16>(d, buffer), d8, codes);
    std::memcpy(out + i, codes, n - i);
  }
}

template <const FloatFormat* kTo>
HWY_NOINLINE void DecodeKernelOf(const uint8_t* codes, float* out, size_t n) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Rebind<uint8_t, decltype(d)> d8;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(Decode<kTo>(d, hn::PromoteTo(di, hn::LoadU(d8, codes + i))), d, out + i);
  }
  if (i < n) {
    HWY_ALIGN uint8_t buffer[hn::MaxLanes(d)] = {};
    HWY_ALIGN float values[hn::MaxLanes(d)];
    std::memcpy(buffer, codes + i, n - i);
    hn::Store(Decode<kTo>(d, hn::PromoteTo(di, hn::Load(d8, buffer))), d, values);
    std::memcpy(out + i, values, (n - i) * sizeof(float));
  }
}

}  // namespace cast
}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_CAST_INL_H_
