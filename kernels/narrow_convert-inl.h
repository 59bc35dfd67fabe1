// Conversions between binary32 lanes and the 16-bit formats (bf16, f16),
// lane by lane, as policies the narrow kernels are templated on:
//   ExactBf16 / ExactF16      promotion exact, demotion to nearest, ties to
//                             even (IEEE 754 convertFormat), written here;
//   HighwayBf16 / HighwayF16  Highway 1.0.3's PromoteTo / DemoteTo, as a
//                             kernel author gets them: its bf16 demotion
//                             truncates (drops the low 16 bits) on every
//                             target, and its f16 conversions are F16C
//                             instructions (round to nearest even) on
//                             AVX2/AVX3/AVX3_DL but bit manipulation on
//                             SCALAR/SSSE3/SSE4 that truncates, flushes values
//                             below 2^-24 to +0 and does not know inf or NaN
//                             (x86_128-inl.h, scalar-inl.h).
// Each policy: Promote(d, u16 lanes) -> f32 lanes, Demote(d, f32 lanes) -> u16
// lanes, for D a float tag; the u16 vector has the same lane count.
// ConversionsOf<&format> names a format's two policies.

#if defined(ULPGATE_KERNELS_NARROW_CONVERT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_NARROW_CONVERT_INL_H_
#undef ULPGATE_KERNELS_NARROW_CONVERT_INL_H_
#else
#define ULPGATE_KERNELS_NARROW_CONVERT_INL_H_
#endif

#include "hwy/highway.h"
#include "oracles/float_format.h"
#include "oracles/round_bits-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace narrow {

template <class D>
using U16 = hn::Rebind<uint16_t, D>;
template <class D>
using U32 = hn::RebindToUnsigned<D>;
template <class D>
using I32 = hn::RebindToSigned<D>;

template <class D>
HWY_INLINE hn::Vec<U32<D>> Widen(D /*d*/, hn::Vec<U16<D>> v) {
  return hn::PromoteTo(U32<D>(), v);
}
// Every lane must be below 2^16.
template <class D>
HWY_INLINE hn::Vec<U16<D>> Narrow(D /*d*/, hn::Vec<U32<D>> v) {
  return hn::DemoteTo(U16<D>(), hn::BitCast(narrow::I32<D>(), v));
}

}  // namespace narrow

struct ExactBf16 {
  // The format's traits as constants: RoundBits's branches on them fold.
  static constexpr RoundingBits kRounding = RoundingBitsOf(kBFloat16);
  template <class D>
  static HWY_INLINE hn::Vec<D> Promote(D d, hn::Vec<narrow::U16<D>> v) {
    return hn::BitCast(d, hn::ShiftLeft<16>(narrow::Widen(d, v)));
  }
  // To nearest even by the bits (oracles/round_bits-inl.h): bits + 0x7fff +
  // (bit 16) carries into the kept half exactly when the dropped half is above
  // a tie, or a tie with an odd kept half; a carry out of the largest finite
  // value gives infinity, as rounding must. A NaN keeps its sign and top
  // payload and is made quiet (its payload may lie in the dropped half only).
  template <class D>
  static HWY_INLINE hn::Vec<narrow::U16<D>> Demote(D d, hn::Vec<D> v) {
    const narrow::U32<D> du;
    const auto rounded = round_bits::RoundBits<true>(kRounding, d, v);
    const auto quiet_nan = hn::Or(hn::ShiftRight<16>(hn::BitCast(du, v)), hn::Set(du, 0x40));
    return narrow::Narrow(d, hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), quiet_nan, rounded));
  }
};

struct ExactF16 {
  static constexpr RoundingBits kRounding = RoundingBitsOf(kBinary16);
  // Normal: rebias the exponent; subnormal: mantissa * 2^-24, exact in
  // binary32; inf and NaN: the binary32 exponent field all ones.
  template <class D>
  static HWY_INLINE hn::Vec<D> Promote(D d, hn::Vec<narrow::U16<D>> v) {
    const narrow::U32<D> du;
    const narrow::I32<D> di;
    const auto bits = narrow::Widen(d, v);
    const auto sign = hn::ShiftLeft<16>(hn::And(bits, hn::Set(du, 0x8000)));
    const auto exponent = hn::And(hn::ShiftRight<10>(bits), hn::Set(du, 0x1f));
    const auto mantissa = hn::And(bits, hn::Set(du, 0x3ff));
    const auto normal = hn::Or(hn::ShiftLeft<23>(hn::Add(exponent, hn::Set(du, 127 - 15))),
                               hn::ShiftLeft<13>(mantissa));
    const auto special = hn::Or(hn::Set(du, 0x7f800000), hn::ShiftLeft<13>(mantissa));
    const auto subnormal = hn::BitCast(
        du, hn::Mul(hn::ConvertTo(d, hn::BitCast(di, mantissa)), hn::Set(d, 0x1p-24f)));
    auto magnitude = hn::IfThenElse(hn::Eq(exponent, hn::Zero(du)), subnormal, normal);
    magnitude = hn::IfThenElse(hn::Eq(exponent, hn::Set(du, 0x1f)), special, magnitude);
    return hn::BitCast(d, hn::Or(sign, magnitude));
  }
  // Round to nearest even by the bits (oracles/round_bits-inl.h, after F.
  // Giesen's float_to_half_fast3_rtne): below 2^-14 one binary32 addition of
  // 2^-1 (a magic number whose ulp is the f16 subnormal step) rounds to the
  // subnormal grid in the FPU's own rounding, to nearest even; normal values
  // add 0xfff plus the kept half's last bit (the tie breaker) to the rebiased
  // pattern and drop 13 bits; values that round to 2^16 or past it become
  // inf; NaN the quiet NaN of its sign.
  template <class D>
  static HWY_INLINE hn::Vec<narrow::U16<D>> Demote(D d, hn::Vec<D> v) {
    const narrow::U32<D> du;
    const auto rounded = round_bits::RoundBits<true>(kRounding, d, v);
    const auto quiet_nan =
        hn::Or(hn::ShiftRight<16>(hn::And(hn::BitCast(du, v), hn::Set(du, 0x80000000u))),
               hn::Set(du, 0x7e00));
    return narrow::Narrow(d, hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), quiet_nan, rounded));
  }
};

struct HighwayBf16 {
  template <class D>
  static HWY_INLINE hn::Vec<D> Promote(D d, hn::Vec<narrow::U16<D>> v) {
    return hn::PromoteTo(d, hn::BitCast(hn::Rebind<hwy::bfloat16_t, D>(), v));
  }
  template <class D>
  static HWY_INLINE hn::Vec<narrow::U16<D>> Demote(D /*d*/, hn::Vec<D> v) {
    return hn::BitCast(narrow::U16<D>(), hn::DemoteTo(hn::Rebind<hwy::bfloat16_t, D>(), v));
  }
};

struct HighwayF16 {
  template <class D>
  static HWY_INLINE hn::Vec<D> Promote(D d, hn::Vec<narrow::U16<D>> v) {
    return hn::PromoteTo(d, hn::BitCast(hn::Rebind<hwy::float16_t, D>(), v));
  }
  template <class D>
  static HWY_INLINE hn::Vec<narrow::U16<D>> Demote(D /*d*/, hn::Vec<D> v) {
    return hn::BitCast(narrow::U16<D>(), hn::DemoteTo(hn::Rebind<hwy::float16_t, D>(), v));
  }
};

// A format's conversions (one specialization per row of kNarrowFormats,
// kernels/narrow_formats.h): Exact rounds to nearest even, Highway is what
// Highway 1.0.3 itself does.
template <const FloatFormat* kFormat>
struct ConversionsOf;
template <>
struct ConversionsOf<&kBFloat16> {
  using Exact = ExactBf16;
  using Highway = HighwayBf16;
};
template <>
struct ConversionsOf<&kBinary16> {
  using Exact = ExactF16;
  using Highway = HighwayF16;
};

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_NARROW_CONVERT_INL_H_
