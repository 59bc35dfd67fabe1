// Stochastic rounding kernels: f32 to float8_e4m3fn and to bf16, the random
// bits an operand (kernels/stochastic_cast.h).
//
// Contract:
//   lanes: f32 in, u32 random words in (the low 16 bits used), one code per
//     storage unit out (u8 for E4M3FN, u16 for bf16); any n, any alignment.
//   model: "stochastic16.saturate" (E4M3FN) and "stochastic16.infinity"
//     (bf16) of oracles/cast_policy.h on every target: the magnitude's bits
//     below the code's quantum, scaled to 16 bits and truncated (floor(f 2^16)),
//     plus r; the carry out of those 16 bits rounds the magnitude up.
//   NaN: E4M3FN's 0x7f with the source's sign; bf16's quiet 0x7fc0 with it.
//   error: below one quantum of the format, unbiased up to 2^-16 quantum for
//     inputs with at most 16 bits below the quantum (f32 to bf16), since
//     the bits below the 16 are dropped before the random bits are added.

#if defined(ULPGATE_KERNELS_STOCHASTIC_CAST_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_STOCHASTIC_CAST_INL_H_
#undef ULPGATE_KERNELS_STOCHASTIC_CAST_INL_H_
#else
#define ULPGATE_KERNELS_STOCHASTIC_CAST_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace impl {

// E4M3FN codes of one vector of f32 bit patterns. For a binary32 magnitude
// with biased exponent E and significand m (24 bits with its implicit one),
// the code's quantum is 2^(E-127-3) for E >= 121 (a normal E4M3FN value,
// exponent >= -6) and 2^-9 below (its subnormals): m shifted right by
// 4 + max(121 - E, 0) is the magnitude in units of 2^-16 quantum, truncated,
// that is floor(f 2^16) above the code. The kept units then count from the
// binade's base code (E - 121) * 8, so that a carry to 16 units is the next
// binade's first code, and a code past 0x7e (448) saturates to it; inf too.
template <class DU>
HWY_INLINE hn::Vec<DU> StochasticE4M3Codes(DU du, hn::Vec<DU> bits, hn::Vec<DU> random) {
  const hn::RebindToSigned<DU> di;
  const auto sign = hn::And(bits, hn::Set(du, 0x80000000u));
  const auto magnitude = hn::AndNot(sign, bits);
  const auto biased = hn::BitCast(di, hn::ShiftRight<23>(magnitude));
  const auto implicit =
      hn::IfThenElseZero(hn::Gt(biased, hn::Zero(di)), hn::Set(di, 0x800000));
  const auto significand =
      hn::Or(hn::And(magnitude, hn::Set(du, 0x7fffffu)), hn::BitCast(du, implicit));
  const auto below = hn::Max(hn::Sub(hn::Set(di, 121), biased), hn::Zero(di));
  // Shifts past 31 would be undefined on some targets; m < 2^24 is gone by 24.
  const auto shift = hn::Min(hn::Add(below, hn::Set(di, 4)), hn::Set(di, 31));
  // Shr, not >>: SVE's sizeless vectors have no operators.
  const auto scaled = hn::Shr(significand, hn::BitCast(du, shift));
  const auto units =
      hn::ShiftRight<16>(hn::Add(scaled, hn::And(random, hn::Set(du, 0xffffu))));
  const auto base = hn::ShiftLeft<3>(hn::Max(hn::Sub(biased, hn::Set(di, 121)), hn::Zero(di)));
  const auto code = hn::BitCast(
      du, hn::Min(hn::Add(base, hn::BitCast(di, units)), hn::Set(di, 0x7e)));
  const auto is_nan = hn::Gt(hn::BitCast(di, magnitude), hn::Set(di, 0x7f800000));
  const auto finite_or_nan =
      hn::IfThenElse(hn::RebindMask(du, is_nan), hn::Set(du, 0x7fu), code);
  return hn::Or(finite_or_nan, hn::ShiftRight<24>(sign));
}

// bf16 codes: the random bits added to the 16 that truncation drops, so that
// their carry is the rounding up; in binary32's and bf16's common exponent
// range that is exact for subnormals as well, and a carry out of bf16's
// largest finite value reaches its infinity (0x7f80), an infinity stays one.
template <class DU>
HWY_INLINE hn::Vec<DU> StochasticBf16Codes(DU du, hn::Vec<DU> bits, hn::Vec<DU> random) {
  const hn::RebindToSigned<DU> di;
  const auto sum = hn::Add(bits, hn::And(random, hn::Set(du, 0xffffu)));
  const auto magnitude = hn::And(bits, hn::Set(du, 0x7fffffffu));
  const auto is_nan = hn::Gt(hn::BitCast(di, magnitude), hn::Set(di, 0x7f800000));
  const auto quiet = hn::Or(hn::ShiftRight<16>(hn::And(bits, hn::Set(du, 0x80000000u))),
                            hn::Set(du, 0x7fc0u));
  return hn::IfThenElse(hn::RebindMask(du, is_nan), quiet, hn::ShiftRight<16>(sum));
}

// One vector of codes stored as `Code` units: every code fits its unit, so
// the saturating demotion is a plain narrowing here.
template <class Code, class Codes>
HWY_INLINE void StoreStochastic(const float* in, const uint32_t* random, Code* out, size_t i,
                                Codes codes_of) {
  const hn::ScalableTag<uint32_t> du;
  const hn::RebindToSigned<decltype(du)> di;
  const hn::Rebind<Code, decltype(du)> dc;
  const auto bits = hn::BitCast(du, hn::LoadU(hn::ScalableTag<float>(), in + i));
  const auto codes = codes_of(du, bits, hn::LoadU(du, random + i));
  hn::StoreU(hn::DemoteTo(dc, hn::BitCast(di, codes)), dc, out + i);
}

// Whole vectors, then the tail through zero-padded copies (Highway 1.0.3
// has no LoadN/StoreN), so any n and alignment reads and writes only its own
// elements.
template <class Code, class Codes>
HWY_INLINE void StochasticCast(const float* in, const uint32_t* random, Code* out, size_t n,
                               Codes codes_of) {
  const hn::ScalableTag<float> df;
  const size_t lanes = hn::Lanes(df);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) StoreStochastic(in, random, out, i, codes_of);
  if (i == n) return;
  HWY_ALIGN float in_tail[hn::MaxLanes(df)] = {};
  HWY_ALIGN uint32_t random_tail[hn::MaxLanes(df)] = {};
  HWY_ALIGN Code out_tail[hn::MaxLanes(df)] = {};
  const size_t rest = n - i;
  std::memcpy(in_tail, in + i, rest * sizeof(float));
  std::memcpy(random_tail, random + i, rest * sizeof(uint32_t));
  StoreStochastic(in_tail, random_tail, out_tail, 0, codes_of);
  std::memcpy(out + i, out_tail, rest * sizeof(Code));
}

}  // namespace impl

HWY_NOINLINE void StochasticCastE4M3(const float* in, const uint32_t* random, void* out,
                                     size_t n) {
  impl::StochasticCast(in, random, static_cast<uint8_t*>(out), n,
                       [](auto du, auto bits, auto r) HWY_ATTR {
                         return impl::StochasticE4M3Codes(du, bits, r);
                       });
}

HWY_NOINLINE void StochasticCastBf16(const float* in, const uint32_t* random, void* out,
                                     size_t n) {
  impl::StochasticCast(in, random, static_cast<uint16_t*>(out), n,
                       [](auto du, auto bits, auto r) HWY_ATTR {
                         return impl::StochasticBf16Codes(du, bits, r);
                       });
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_STOCHASTIC_CAST_INL_H_
