// The vectorized exact tier of `sweep` (suites/sweep/sweep_tier.h), compiled once
// per Highway target by suites/sweep/sweep_tier.cc.
//
// Contract: lanes are doubles (and as many floats or 32-bit patterns); every
// function reads and writes whole vectors, so the arrays hold kSweepTile
// elements (a multiple of every lane count) and lanes past n are computed on
// whatever they hold and never counted. Results are bit for bit those of the
// MPFR path (TanhBwdExact, MeasureUlpError, the emulated models) wherever
// they are not flagged for it: the comments say why each step is exact.
//
// No operation here can overflow or underflow: operands are values of
// binary32 or a narrower format, so |t^2| is in [2^-298, 2^256], |grad * t^2|
// in [2^-447, 2^384], every error term of a TwoSum or TwoProd of them at least
// 2^-600, and every scaling by a power of two stays within [2^-800, 2^800],
// far inside binary64's normal range.

#if defined(ULPGATE_SUITES_SWEEP_TIER_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_SUITES_SWEEP_TIER_INL_H_
#undef ULPGATE_SUITES_SWEEP_TIER_INL_H_
#else
#define ULPGATE_SUITES_SWEEP_TIER_INL_H_
#endif

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hwy/highway.h"
#include "kernels/narrow_formats.h"
#include "kernels/ops/tanh_bwd/tanh_bwd_spec.h"
#include "oracles/double_word-inl.h"
#include "oracles/round_bits-inl.h"
#include "suites/sweep/sweep_tier.h"
#include "suites/engine/tanh_bwd_oracle.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {
namespace sweep_tier {

namespace hn = hwy::HWY_NAMESPACE;

// The op sequences, compiled for this target.
namespace tanh_bwd_spec {
#include "kernels/ops/tanh_bwd/tanh_bwd_spec-inl.h"
}  // namespace tanh_bwd_spec

using DD = hn::ScalableTag<double>;
using DU = hn::RebindToUnsigned<DD>;
using DF = hn::Rebind<float, DD>;     // as many floats as doubles
using DU32 = hn::Rebind<uint32_t, DD>;
using DI32 = hn::Rebind<int32_t, DD>;
using DU16 = hn::Rebind<uint16_t, DD>;
using VD = hn::Vec<DD>;
using VU = hn::Vec<DU>;
using VF = hn::Vec<DF>;
using VU32 = hn::Vec<DU32>;
using MD = hn::Mask<DD>;

constexpr uint64_t kExponentBits = 0x7ff0000000000000ull;
constexpr uint64_t kMantissaBits = 0x000fffffffffffffull;

// ---- Error-free transformations: oracles/double_word-inl.h's (Knuth's
// TwoSum; TwoProd by FMA, or Dekker's product on targets without one, exact
// at the magnitudes above).
using double_word::TwoProd;
using double_word::TwoSum;

// ---- Powers of two from the bit patterns (exact by construction).

// 2^floor(log2 |v|) for a finite nonzero v; +0 for v = 0.
HWY_INLINE VD Binade(VD v) {
  const DD d;
  const DU du;
  return hn::BitCast(d, hn::And(hn::BitCast(du, v), hn::Set(du, kExponentBits)));
}

// |v| is a power of two (or zero).
HWY_INLINE MD PowerOfTwo(VD v) {
  const DD d;
  const DU du;
  return hn::RebindMask(d, hn::And(hn::BitCast(du, v), hn::Set(du, kMantissaBits)) == hn::Zero(du));
}

// 1 / p for a power of two p in [2^-1022, 2^1023]: the exponent field
// reflected about 1023, exactly.
HWY_INLINE VD ReciprocalOfPowerOfTwo(VD p) {
  const DD d;
  const DU du;
  return hn::BitCast(d, hn::Sub(hn::Set(du, uint64_t{2046} << 52), hn::BitCast(du, p)));
}

// The sign bits of a and b differ.
HWY_INLINE MD SignsDiffer(VD a, VD b) {
  const DD d;
  const DU du;
  const VU x = hn::Xor(hn::BitCast(du, a), hn::BitCast(du, b));
  return hn::RebindMask(d, hn::ShiftRight<63>(x) != hn::Zero(du));
}

// ---- Rounding to integers.

// n rounded to the nearest integer, ties to even: for |n| < 2^51, n + 1.5*2^52
// lies in [2^52, 2^53), where the doubles are the integers, so the addition
// is that rounding (1.5*2^52 is even, which keeps the parity), and the
// subtraction is exact; a larger |n| is an integer already, or far beyond
// where the callers round. The sign of n is kept (-0.3 -> -0).
HWY_INLINE VD RoundToEven(VD n) {
  const DD d;
  const VD magic = hn::Set(d, 0x1.8p52);
  const VD r = hn::Sub(hn::Add(n, magic), magic);
  return hn::IfThenElse(hn::Abs(n) < hn::Set(d, 0x1p51), hn::CopySign(r, n), n);
}

// n rounded toward zero (|n| < 2^51): the nearest integer, one less in
// magnitude when that is beyond n (both steps exact).
HWY_INLINE VD RoundTowardZero(VD n) {
  const DD d;
  const VD r = RoundToEven(n);
  const VD one_toward_zero = hn::CopySign(hn::Set(d, 1.0), n);
  return hn::CopySign(hn::IfThenElse(hn::Abs(r) > hn::Abs(n), hn::Sub(r, one_toward_zero), r), n);
}

// floor(v) for 0 <= v < 2^51.
HWY_INLINE VD FloorNonNegative(VD v) {
  const DD d;
  const VD r = RoundToEven(v);
  return hn::IfThenElse(r > v, hn::Sub(r, hn::Set(d, 1.0)), r);
}

// A double that is a float (a value of binary32 or a narrower format, +-inf
// and NaN included) as that float. Highway 1.0.3's DemoteTo on SCALAR clamps
// infinities to the largest finite float.
HWY_INLINE VF ToFloat(VD v) {
#if HWY_TARGET == HWY_SCALAR
  return hn::Set(DF(), static_cast<float>(hn::GetLane(v)));
#else
  return hn::DemoteTo(DF(), v);
#endif
}

// ---- A format's constants as doubles (powers of two, exact).

struct FormatConstants {
  // The constants of f32 or a row of kNarrowFormats, computed once; throws
  // for another format.
  static const FormatConstants& Of(const FloatFormat& format) {
    static const FormatConstants f32(kBinary32);
    static const auto narrow = [] {
      std::vector<FormatConstants> all;
      for (const NarrowFormat& f : kNarrowFormats) all.emplace_back(*f.format);
      return all;
    }();
    if (IsBinary32(format)) return f32;
    return narrow[NarrowRow(RequireNarrowFormat(format, "the sweep tier"))];
  }
  explicit FormatConstants(const FloatFormat& f)
      : min_normal(std::ldexp(1.0, f.emin)),
        top_binade(std::ldexp(1.0, f.emax)),
        ulp_of_one(std::ldexp(1.0, 1 - f.precision)),
        overflow(std::ldexp(1.0, f.emax + 1)),
        largest(std::ldexp(2.0 - std::ldexp(1.0, 1 - f.precision), f.emax)),
        top_bound(std::ldexp(1.0, f.precision)),
        overflow_threshold(std::ldexp(2.0 - std::ldexp(1.0, -f.precision), f.emax)) {}
  double min_normal;  // 2^emin
  double top_binade;  // 2^emax
  double ulp_of_one;  // 2^(1-p)
  double overflow;    // 2^(emax+1): at or beyond it, a rounding to nearest is infinite
  double largest;     // the largest finite value
  double top_bound;   // 2^p, the last histogram bound
  double overflow_threshold;  // max + ulp/2: from it on, RN is infinite
};

// One rounding of v to the format, to nearest even or toward zero, with its
// subnormals and overflow: oracles/format.cc's RoundDouble, lane by lane. The
// quantum 2^q = max(2^E, 2^emin) * 2^(1-p) is a power of two, so v / 2^q and
// back are exact and the one rounding is the integer rounding of v / 2^q
// (|v / 2^q| < 2^p). Non-finite v is returned as it is.
HWY_INLINE VD RoundToFormat(const FormatConstants& f, VD v, bool toward_zero) {
  const DD d;
  const VD quantum = hn::Mul(hn::Max(Binade(v), hn::Set(d, f.min_normal)), hn::Set(d, f.ulp_of_one));
  const VD scaled = hn::Mul(v, ReciprocalOfPowerOfTwo(quantum));
  const VD r = toward_zero ? RoundTowardZero(scaled) : RoundToEven(scaled);
  const VD y = hn::Mul(r, quantum);
  const VD past = hn::CopySign(hn::Set(d, toward_zero ? f.largest : HUGE_VAL), v);
  const VD rounded = hn::IfThenElse(hn::Abs(y) >= hn::Set(d, f.overflow), past, y);
  return hn::IfThenElse(hn::IsFinite(v), rounded, v);
}

// ---- The exact value.

// How far x1 may lie from x0 for x0 = RN53(x0 + x1 + ...) to hold: half an
// ulp of x0 (53 bits), a quarter where x0 is a power of two and x1 points
// below it (the ulp below a power of two is half the one above).
HWY_INLINE VD RoundingLimit(VD x0, VD x1) {
  const DD d;
  const MD below = hn::And(hn::And(PowerOfTwo(x0), x1 != hn::Zero(d)), SignsDiffer(x0, x1));
  const VD half_ulp = hn::Mul(Binade(x0), hn::Set(d, 0x1p-53));
  return hn::IfThenElse(below, hn::Mul(half_ulp, hn::Set(d, 0.5)), half_ulp);
}

// The ULP of x in the format from x0 = RN(x) and the tail's direction:
// 2^(min(max(E, emin), emax) - p + 1) with E = floor(log2 |x|), x0's binade,
// one lower when x0 is a power of two and the tail takes x below it (x0 =
// RN(x) keeps x within a quarter ulp of it). x = 0 has binade +0 here, so
// emin, as UlpExponent gives a zero.
HWY_INLINE VD Quantum(const FormatConstants& f, VD x0, VD x1) {
  const DD d;
  const MD below = hn::And(hn::And(PowerOfTwo(x0), x1 != hn::Zero(d)), SignsDiffer(x0, x1));
  const VD binade = hn::IfThenElse(below, hn::Mul(Binade(x0), hn::Set(d, 0.5)), Binade(x0));
  return hn::Mul(hn::Min(hn::Max(binade, hn::Set(d, f.min_normal)), hn::Set(d, f.top_binade)),
                 hn::Set(d, f.ulp_of_one));
}

// x = grad * (1 - t^2) for each lane:
//   u = t*t is exact (at most 48 bits);
//   p0 + p1 = grad * u exactly (TwoProd; p1 = 0 in bf16 and f16, where
//     grad * u has at most 33 bits, and for a power-of-two grad);
//   s0 + s1 = grad - p0 exactly (TwoSum), so x = s0 + s1 - p1;
//   a0 + a1 = s1 - p1, x0 + b = s0 + a0, x1 + x2 = b + a1 (TwoSums), so
//     x = x0 + x1 + x2 exactly and x1 = RN(x1 + x2).
// x0 = RN(x) holds when a1 = 0 (x = x0 + b is then the sum whose rounding
// TwoSum gave as x0), or when |x1| is below half an ulp of x0 (a quarter
// when x0 is a power of two and x1 points below it): |x1 + x2| <= |x1| +
// ulp(x1)/2 stays short of that bound because the bound is a power of two
// above |x1|. Otherwise the lane is left to MPFR (kSweepExactUndecided).
//
// An exact zero's sign, and the value at non-finite operands, come from the
// op's canonical sequence in doubles: with finite operands no step of it
// under- or overflows, so each step is zero exactly when its exact value is
// (and then with IEEE's sign, which is MPFR's), and nonzero with the exact
// sign otherwise; with an infinite or NaN operand its NaN or infinity is the
// extended-real value's. (p1 is NaN there, so such lanes never take the
// pair branch.)
void ExactValues(const FloatFormat& format, const float* grad, const float* t, size_t n,
                 SweepExactTile* out) {
  const DD d;
  const DF df;
  const DU du;
  const FormatConstants& f = FormatConstants::Of(format);
  const size_t lanes = hn::Lanes(d);
  const VD zero = hn::Zero(d);
  for (size_t i = 0; i < n; i += lanes) {
    const VD g = hn::PromoteTo(d, hn::LoadU(df, grad + i));
    const VD x = hn::PromoteTo(d, hn::LoadU(df, t + i));
    const VD u = hn::Mul(x, x);
    VD p0, p1, s0, s1;
    TwoProd(g, u, p0, p1);
    TwoSum(g, hn::Neg(p0), s0, s1);
    if (hn::AllTrue(d, p1 == zero)) {
      // grad * u exact in every lane: x = s0 + s1, TwoSum's pair.
      VD x0 = s0;
      if (!hn::AllFalse(d, x0 == zero)) {
        const VD canonical = hn::Mul(g, hn::Sub(hn::Set(d, 1.0), u));
        x0 = hn::IfThenElse(x0 == zero, hn::CopySign(zero, canonical), x0);
      }
      hn::Store(x0, d, out->x0 + i);
      hn::Store(s1, d, out->x1 + i);
      hn::Store(zero, d, out->x2 + i);
      hn::Store(ReciprocalOfPowerOfTwo(Quantum(f, x0, s1)), d, out->scale + i);
      hn::Store(hn::Set(du, kSweepExactPair), du, out->kind + i);
      hn::Store(zero, d, out->eta + i);
      continue;
    }
    VD a0, a1, b, x0, x1, x2;
    TwoSum(s1, hn::Neg(p1), a0, a1);
    TwoSum(s0, a0, x0, b);
    TwoSum(b, a1, x1, x2);
    const VD limit = RoundingLimit(x0, x1);
    const MD decided = hn::Or(a1 == zero, hn::Abs(x1) < limit);
    const VD canonical = hn::Mul(g, hn::Sub(hn::Set(d, 1.0), u));
    x0 = hn::IfThenElse(x0 == zero, hn::CopySign(zero, canonical), x0);
    const MD finite_operands = hn::And(hn::IsFinite(g), hn::IsFinite(x));
    const VU kind = hn::IfThenElse(
        hn::RebindMask(du, finite_operands),
        hn::IfThenElse(hn::RebindMask(du, decided),
                       hn::IfThenElse(hn::RebindMask(du, x2 == zero), hn::Set(du, kSweepExactPair),
                                      hn::Set(du, kSweepExactTriple)),
                       hn::Set(du, kSweepExactUndecided)),
        hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(canonical)), hn::Set(du, kSweepExactNaN),
                       hn::Set(du, kSweepExactInfinite)));
    x0 = hn::IfThenElse(finite_operands, x0, canonical);
    hn::Store(x0, d, out->x0 + i);
    hn::Store(x1, d, out->x1 + i);
    hn::Store(x2, d, out->x2 + i);
    hn::Store(ReciprocalOfPowerOfTwo(Quantum(f, x0, x1)), d, out->scale + i);
    hn::Store(kind, du, out->kind + i);
    hn::Store(zero, d, out->eta + i);
  }
}

// x = grad * f for a staged op (sweep_tier.h), f = f0 + f1 + f2 + r with
// |r| <= 2^-159 |f| and |f| in [2^-600, 2^600]:
//   p0 + e0 = grad * f0, p1 + e1 = grad * f1 (TwoProd: grad has at most 24
//     bits and |grad f| >= 2^-749, so every error term is far above the
//     double subnormals), p2 = RN(grad * f2);
//   a0 + a1 = e0 + p1, s0 + b = p0 + a0, c0 + c1 = b + a1 (TwoSums, exact);
//   rest = RN(c1 + RN(e1 + p2)), x0 + u = s0 + c0, x1 + x2 = u + rest.
// Three roundings (p2, e1 + p2, rest), each of a term below 2^-104 |x|, and
// r move x0 + x1 + x2 from grad * f by less than 2^-155 |x|; Exact's
// 320-bit roundings move the MPFR path's value by less than 2^-316 |x|: eta
// = 2^-150 |x0| bounds both. The lane is decided where x0 = RN53(x0 + x1 +
// x2) (as in ExactValues), x0 is not a power of two with a tail within eta
// (the binade of x, hence its ULP, unsettled), and x is farther than its
// tail and eta from a midpoint of the format (its rounding unsettled).
// Zeros, NaN and infinities follow IEEE's product of grad and f's class,
// which is MPFR's extended-real product; a tiny f with a small enough grad
// is a signed zero to every decision but one (kSweepExactTiny).
void ScaledExactValues(const FloatFormat& format, const float* grad, const SweepFactorColumns& fc,
                       size_t n, SweepExactTile* out) {
  const DD d;
  const DF df;
  const DU du;
  const FormatConstants& f = FormatConstants::Of(format);
  const size_t lanes = hn::Lanes(d);
  const VD zero = hn::Zero(d);
  const VD inf = hn::Set(d, HUGE_VAL);
  for (size_t i = 0; i < n; i += lanes) {
    const VD g = hn::PromoteTo(d, hn::LoadU(df, grad + i));
    const VD f0 = hn::LoadU(d, fc.f0 + i);
    const VD f1 = hn::LoadU(d, fc.f1 + i);
    const VD f2 = hn::LoadU(d, fc.f2 + i);
    const VD sign = hn::LoadU(d, fc.sign + i);
    const VU cls = hn::LoadU(du, fc.kind + i);
    const MD normal = hn::RebindMask(d, cls == hn::Set(du, kSweepFactorNormal));
    const MD fzero = hn::RebindMask(d, cls == hn::Set(du, kSweepFactorZero));
    const MD fnan = hn::RebindMask(d, cls == hn::Set(du, kSweepFactorNaN));
    const MD finf = hn::RebindMask(d, cls == hn::Set(du, kSweepFactorInfinite));
    const MD ftiny = hn::RebindMask(d, cls == hn::Set(du, kSweepFactorTiny));
    // f's class as a double: IEEE's product with grad gives x's zero sign,
    // NaN or infinity.
    const VD stand_in = hn::IfThenElse(
        fzero, hn::Mul(sign, zero),
        hn::IfThenElse(fnan, hn::Set(d, std::nan("")), hn::IfThenElse(finf, hn::Mul(sign, inf), sign)));
    const VD canonical = hn::Mul(g, stand_in);

    VD p0, e0, p1, e1, a0, a1, s0, b, c0, c1, x0, u, x1, x2;
    TwoProd(g, f0, p0, e0);
    TwoProd(g, f1, p1, e1);
    const VD p2 = hn::Mul(g, f2);
    TwoSum(e0, p1, a0, a1);
    TwoSum(p0, a0, s0, b);
    TwoSum(b, a1, c0, c1);
    const VD rest = hn::Add(c1, hn::Add(e1, p2));
    TwoSum(s0, c0, x0, u);
    TwoSum(u, rest, x1, x2);
    // The three roundings above, each at most 2^-53 of its result (itself
    // within 2^-52 of the terms added), f's error times |grad|, and the MPFR
    // path's distance; the sum and the factor (1 + 2^-40) cover the
    // roundings of this bound's own arithmetic.
    const VD roundings = hn::Mul(
        hn::Add(hn::Add(hn::Abs(e1), hn::Abs(p2)), hn::Add(hn::Abs(c1), hn::Abs(rest))),
        hn::Set(d, 0x1p-51));
    const VD eta = hn::Mul(
        hn::Add(hn::Add(roundings, hn::Mul(hn::Abs(g), hn::LoadU(d, fc.f_error + i))),
                hn::Mul(hn::Abs(x0), hn::LoadU(d, fc.path_error + i))),
        hn::Set(d, 1 + 0x1p-40));
    const MD exact = eta == zero;
    const VD tail = hn::Add(hn::Add(hn::Abs(x1), hn::Abs(x2)), eta);
    const VD limit = RoundingLimit(x0, x1);
    const MD binade_known = hn::Not(hn::And(PowerOfTwo(x0), tail <= hn::Add(eta, eta)));
    const VD scale = ReciprocalOfPowerOfTwo(Quantum(f, x0, x1));
    const VD scaled = hn::Abs(hn::Mul(x0, scale));
    const VD from_mid = hn::Abs(hn::Sub(hn::Abs(hn::Sub(scaled, RoundToEven(scaled))), hn::Set(d, 0.5)));
    const VD margin = hn::Mul(hn::Add(tail, tail), scale);
    // An exact x needs only x0 = RN53(x) (as in ExactValues).
    const MD decided = hn::And(
        hn::Abs(x1) < limit, hn::Or(exact, hn::And(binade_known, from_mid > margin)));

    const MD g_finite = hn::IsFinite(g);
    const MD is_zero = hn::And(g_finite, hn::Or(fzero, hn::And(g == zero, hn::Not(hn::Or(fnan, finf)))));
    const MD tiny_zero = hn::And(hn::And(g_finite, ftiny), hn::Abs(g) < hn::LoadU(d, fc.tiny_limit + i));
    const MD approx = hn::AndNot(is_zero, hn::And(hn::And(g_finite, normal), decided));
    // Kinds: NaN and infinities from the canonical product; zeros exact.
    VU kind = hn::Set(du, kSweepExactUndecided);
    kind = hn::IfThenElse(
        hn::RebindMask(du, approx),
        hn::IfThenElse(hn::RebindMask(du, exact),
                       hn::IfThenElse(hn::RebindMask(du, x2 == zero), hn::Set(du, kSweepExactPair),
                                      hn::Set(du, kSweepExactTriple)),
                       hn::Set(du, kSweepExactApprox)),
        kind);
    kind = hn::IfThenElse(hn::RebindMask(du, hn::AndNot(is_zero, tiny_zero)), hn::Set(du, kSweepExactTiny), kind);
    kind = hn::IfThenElse(hn::RebindMask(du, is_zero), hn::Set(du, kSweepExactPair), kind);
    const MD special = hn::Or(hn::IsNaN(canonical), hn::IsInf(canonical));
    kind = hn::IfThenElse(hn::RebindMask(du, special),
                          hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(canonical)), hn::Set(du, kSweepExactNaN),
                                         hn::Set(du, kSweepExactInfinite)),
                          kind);
    const VD signed_zero = hn::CopySign(zero, hn::Mul(g, sign));
    const VD out0 = hn::IfThenElse(special, canonical,
                                   hn::IfThenElse(is_zero, canonical,
                                                  hn::IfThenElse(tiny_zero, signed_zero, x0)));
    const MD exact_parts = hn::Not(approx);
    hn::Store(out0, d, out->x0 + i);
    hn::Store(hn::IfThenElseZero(approx, x1), d, out->x1 + i);
    hn::Store(hn::IfThenElseZero(approx, x2), d, out->x2 + i);
    hn::Store(hn::IfThenElse(exact_parts, ReciprocalOfPowerOfTwo(Quantum(f, out0, zero)), scale), d,
              out->scale + i);
    hn::Store(kind, du, out->kind + i);
    hn::Store(hn::IfThenElseZero(approx, eta), d, out->eta + i);
  }
}

// RN(x) to the format (to nearest even, +-inf past the largest finite value,
// a zero with x's sign) for a finite x = x0 + x1 + x2, x0 = RN(x): x0 / ulp(x)
// exactly, rounded to an integer. The format's midpoints are doubles (p + 1
// <= 25 bits), so x and x0 are on the same side of each except when x0 is
// one: then the tail decides (x1's sign, as x1 = RN(x1 + x2)), and with no
// tail x is the tie and goes to even. (A midpoint x0 with a tail needs x to
// carry more than 53 bits within 2^-29 of a midpoint of the format, which no
// input of these ops is known to do: a defensive step no test can tell from
// plain rounding to even.) Past the largest finite value (the ulp
// capped at emax) the integer reaches 2^p and the product 2^(emax+1):
// infinity, as IEEE rounding gives from max + ulp/2 up.
HWY_INLINE VD Rounded(const FormatConstants& f, VD x0, VD x1, VD scale) {
  const DD d;
  const VD quantum = ReciprocalOfPowerOfTwo(scale);
  const VD scaled = hn::Mul(x0, scale);
  VD r = RoundToEven(scaled);
  const MD tie = hn::And(hn::Abs(hn::Sub(scaled, r)) == hn::Set(d, 0.5), x1 != hn::Zero(d));
  r = hn::IfThenElse(tie, hn::Add(scaled, hn::CopySign(hn::Set(d, 0.5), x1)), r);
  const VD rounded = hn::CopySign(hn::Mul(r, quantum), x0);
  return hn::IfThenElse(hn::Abs(rounded) >= hn::Set(d, f.overflow),
                        hn::CopySign(hn::Set(d, HUGE_VAL), x0), rounded);
}

// ---- The error of an output.

// For y against x = x0 + x1 + x2 (ulp_metric.cc's MeasureUlpError):
//   d0 + d1 = y - x0, f0 + f1 = d1 - x1, g0 + g1 = d0 + f0 (TwoSums), so
//   y - x = g0 + g1 + (f1 - x2) exactly, g0 = RN(d0 + f0), |g1| <= ulp(g0)/2.
// RN(y - x) = g0 when
//   - f1 = x2 = 0 (y - x is g0 + g1, TwoSum's pair);
//   - y = x0 (then d = f1 = g1 = 0, g0 = -x1, and y - x = -(x1 + x2), whose
//     rounding is -x1);
//   - or the rest r = f1 - x2 is too small to move g0 + g1 across the
//     rounding boundary of g0: g1 is a multiple of the grid of d0 and f0 and
//     the boundary (ulp(g0)/2, or /4 on the side below a power of two) a
//     power of two above |g1|, so 2(|f1| + |x2|) < boundary - |g1| suffices
//     (the factor 2 covers the roundings of that test itself).
// Then e = |g0| / ulp(x), exact (a power of two), which is MeasureUlpError's
// RN(|y - x| / ulp(x)). Its histogram bin is the least bound at or above e
// except when e equals a bound and the exact |y - x| is above it: the sign
// of the residual y - x - g0 = g1 + (f1 - x2) says so (g1 when it dominates
// twice over, f1 - x2 when g1 = 0, whose RN has the exact sign); where
// neither settles it, MPFR does.
//
// The common lane takes a shorter road: x a pair (x2 = 0), y finite and
// nonzero with d1 = 0 (y - x0 exact, as Sterbenz's lemma makes it for y
// within a factor 2 of x0), so f0 = -x1, f1 = 0 and g0 = RN(d0 - x1); e
// neither a power of two at or above 1/2 (no bound's tie-break applies) nor
// 2^16 or more. Then y is RN(x) exactly when e < 1/2: an e below 1/2 is the
// rounding of an exact error below 1/2, and one above, of an exact error
// above it (a y past the largest finite value where x rounds to infinity is
// more than half an ulp from x). A vector of such lanes skips the rest.
struct MeasureSums {
  hn::Vec<DU> high, low, digest;
  VD best, best_at;
  hn::Vec<hn::RebindToSigned<DD>> fine_low, fine_high;
  uint64_t correctly_rounded = 0, signed_zero = 0, underflowed = 0;
  size_t slow = 0;
  // The tile's totals (digest, sums, maximum, fine counts) wanted: false
  // for a caller that reads only each output's ulp, fine bin and flags.
  bool totals = true;
};

// Counts each lane under `bin` in the copy of its lane mod 4 (kNowhere for
// lanes counted apart or out of range), and widens the range of bins seen.
template <bool kAll = false>
HWY_INLINE void CountFine(VU bin, MD counted, SweepFineCounts* counts, MeasureSums& s) {
  if (!s.totals) return;
  const DU du;
  const hn::RebindToSigned<DD> di;
  const VU where =
      kAll ? bin : hn::IfThenElse(hn::RebindMask(du, counted), bin, hn::Set(du, SweepFineCounts::kNowhere));
  HWY_ALIGN uint64_t lane[hn::MaxLanes(DU())];
  hn::Store(where, du, lane);
  for (size_t k = 0; k < hn::Lanes(du); ++k) {
    ++counts->counts[(k & 3) * SweepFineCounts::kStride + lane[k]];
  }
  s.fine_low = hn::Min(s.fine_low, hn::BitCast(di, where));
  s.fine_high = hn::Max(s.fine_high, hn::BitCast(di, kAll ? bin : hn::IfThenElseZero(hn::RebindMask(du, counted), bin)));
}

// Appends the lanes of `apart` to out->slow.
HWY_INLINE void NoteSlow(MD apart, size_t i, SweepErrorTile* out, MeasureSums& s) {
  const DD d;
  if (hn::AllFalse(d, apart)) return;
  HWY_ALIGN double lane[hn::MaxLanes(DD())];
  hn::Store(hn::VecFromMask(d, apart), d, lane);
  for (size_t k = 0; k < hn::Lanes(d); ++k) {
    if (std::signbit(lane[k])) out->slow[s.slow++] = static_cast<uint32_t>(i + k);
  }
}

// ErrorStatistics's fine bin, 1 + clamp(ceil(16 (log2 e + 64)) - 1, 0, 4095)
// (0 for e = 0), for e >= 0 finite, and the lanes where it is not settled
// here. For e = m 2^E (1 <= m < 2), ceil(16 log2 e) = 16 E + ceil(16 log2 m);
// for m > 1, 16 log2 m is never an integer (2^(k/16) is irrational for k =
// 1..15), so its ceil is floor(log2 m^16) + 1, the exponent of m^16 plus one.
// M = m^16 by four squarings carries a relative error below 2^-48, so its
// exponent is m^16's except where m^16 is within 2^-48 of a power of two;
// the engine's log2 (FineBinOf) is off the exact position by less than 2^-38,
// so it can only differ where m^16 is within 2^-38 of one. Lanes where M is
// within 2^-30 of a power of two are left to FineBinOf; m = 1 (e a power of
// two, whose log2 is exact) is ceil 0.
HWY_INLINE VU FineBin(VD e, MD* unsettled) {
  const DD d;
  const DU du;
  const hn::RebindToSigned<DD> di;
  const VU bits = hn::BitCast(du, e);
  const VU fraction = hn::And(bits, hn::Set(du, kMantissaBits));
  const VD m = hn::BitCast(d, hn::Or(fraction, hn::Set(du, uint64_t{0x3ff} << 52)));
  const VD m2 = hn::Mul(m, m);
  const VD m4 = hn::Mul(m2, m2);
  const VD m8 = hn::Mul(m4, m4);
  const VU m16 = hn::BitCast(du, hn::Mul(m8, m8));
  const VU m16_fraction = hn::And(m16, hn::Set(du, kMantissaBits));
  const MD power = hn::RebindMask(d, fraction == hn::Zero(du));
  const MD near = hn::RebindMask(
      d, hn::Or(hn::BitCast(di, m16_fraction) < hn::Set(di, int64_t{1} << 22),
                hn::BitCast(di, m16_fraction) > hn::Set(di, (int64_t{1} << 52) - (int64_t{1} << 22))));
  *unsettled = hn::AndNot(power, near);
  // 16 (E + 64) + ceil - 1 = 16 biased + 1024 - 16*1023 + (exponent(M) - 1023
  // + 1) - 1 for m > 1, and 16 biased + 1024 - 16*1023 - 1 for m = 1.
  const hn::Vec<decltype(di)> base =
      hn::Add(hn::BitCast(di, hn::ShiftLeft<4>(hn::ShiftRight<52>(bits))),
              hn::Set(di, int64_t{1024 - 16 * 1023}));
  const hn::Vec<decltype(di)> sub = hn::IfThenElse(
      hn::RebindMask(di, power), hn::Set(di, int64_t{-1}),
      hn::Sub(hn::BitCast(di, hn::ShiftRight<52>(m16)), hn::Set(di, int64_t{1023})));
  const hn::Vec<decltype(di)> clamped =
      hn::Min(hn::Max(hn::Add(base, sub), hn::Zero(di)), hn::Set(di, int64_t{4095}));
  return hn::IfThenElseZero(hn::RebindMask(du, e != hn::Zero(d)),
                            hn::BitCast(du, hn::Add(clamped, hn::Set(di, int64_t{1}))));
}

// keys * bits mod 2^64 with 32x32 -> 64-bit products (the low and high halves
// of each key times the output's 32 bits), which every target has.
HWY_INLINE VU DigestTerms(VU keys, VU bits) {
#if HWY_TARGET <= HWY_AVX3
  return hn::Mul(keys, bits);  // AVX-512DQ's 64-bit multiply: the same low 64 bits
#elif HWY_TARGET == HWY_SCALAR
  return hn::Set(DU(), hn::GetLane(keys) * hn::GetLane(bits));
#else
  const DU du;
  const hn::Repartition<uint32_t, DU> d32;
  const VU low = hn::MulEven(hn::BitCast(d32, keys), hn::BitCast(d32, bits));
  const VU high = hn::MulEven(hn::BitCast(d32, hn::ShiftRight<32>(keys)), hn::BitCast(d32, bits));
  (void)du;
  return hn::Add(low, hn::ShiftLeft<32>(high));
#endif
}

// Adds ulp (< 2^16 in the counted lanes) to the sums: floor(ulp * 2^64) =
// h 2^32 + l with h = floor(ulp * 2^32) < 2^48 and l = floor((ulp * 2^32 -
// h) * 2^32) < 2^32 (each scaling and the subtraction exact, a conversion to
// int64 truncating, which is floor here), so a lane's sums over a tile stay
// below 2^60 and 2^44, whatever the lane count (at most kSweepTile = 2^12
// outputs per lane). And the largest ulp with its first position: each lane
// keeps its first maximum (strictly greater replaces).
// kAll: every lane is counted (the common full vector), no masking.
template <bool kAll = false>
HWY_INLINE void Sum(VD ulp, MD counted, VD at, MeasureSums& s) {
  if (!s.totals) return;
  const DD d;
  const DU du;
  const hn::RebindToSigned<DD> di;
  const VD two32 = hn::Set(d, 0x1p32);
  const VD scaled = hn::Mul(ulp, two32);
  const auto h = hn::ConvertTo(di, scaled);
  const auto l = hn::ConvertTo(di, hn::Mul(hn::Sub(scaled, hn::ConvertTo(d, h)), two32));
  const auto mask = hn::RebindMask(du, counted);
  s.high = hn::Add(s.high, kAll ? hn::BitCast(du, h) : hn::IfThenElseZero(mask, hn::BitCast(du, h)));
  s.low = hn::Add(s.low, kAll ? hn::BitCast(du, l) : hn::IfThenElseZero(mask, hn::BitCast(du, l)));
  const MD better = kAll ? ulp > s.best : hn::And(counted, ulp > s.best);
  s.best = hn::IfThenElse(better, ulp, s.best);
  s.best_at = hn::IfThenElse(better, at, s.best_at);
}

// What both roads write for a vector of errors e: the sums of the `counted`
// lanes below 2^16 ulps and the largest at or above it, `flags` (each lane's
// so far) with kSweepLargeError where `measured` and kSweepFineBinExact
// where the fine bin is not settled, the fine bins counted for the lanes
// with no flag, and the stores. A large error's settled fine bin rides in
// its flags (kSweepFineInFlags), which spares the caller FineBinOf's log2.
HWY_INLINE void Record(VD e, MD counted, MD measured, MD in_range, VU flags, VD at, size_t i,
                       SweepErrorTile* out, SweepFineCounts* counts, MeasureSums& s) {
  const DD d;
  const DU du;
  const MD large = e >= hn::Set(d, 0x1p16);
  if (s.totals) {
    Sum(hn::IfThenElseZero(hn::Not(large), e), hn::AndNot(large, counted), at, s);
    const MD max_large = hn::And(hn::And(counted, large), e > s.best);
    s.best = hn::IfThenElse(max_large, e, s.best);
    s.best_at = hn::IfThenElse(max_large, at, s.best_at);
  }
  flags = hn::Or(flags, hn::IfThenElseZero(hn::RebindMask(du, hn::And(large, measured)),
                                           hn::Set(du, kSweepLargeError)));
  MD unsettled;
  const VU fine = FineBin(e, &unsettled);
  flags = hn::Or(flags, hn::IfThenElseZero(hn::RebindMask(du, unsettled),
                                           hn::Set(du, kSweepFineBinExact)));
  const MD plain = hn::RebindMask(d, flags == hn::Zero(du));
  CountFine(fine, hn::And(plain, in_range), counts, s);
  NoteSlow(hn::AndNot(plain, in_range), i, out, s);
  const VU large_only = hn::Set(du, kSweepLargeError);
  flags = hn::IfThenElse(flags == large_only,
                         hn::Or(flags, hn::Or(hn::ShiftLeft<32>(fine), hn::Set(du, kSweepFineInFlags))),
                         flags);
  hn::Store(hn::IfThenElse(hn::RebindMask(du, plain), fine, hn::Set(du, kSweepSeeFlags)), du,
            out->fine + i);
  hn::Store(e, d, out->ulp + i);
  hn::Store(flags, du, out->flags + i);
}

// y - x's parts for y against x = x0 + x1 + x2 (within eta where approx):
// d0 + d1 = y - x0, f0 + f1 = d1 - x1, g0 + g1 = d0 + f0, and whether the
// rest settles RN(y - x) = g0 by the bounds below (`settled`; the exact
// shortcuts, no rest at all or y = x0, are the caller's to add).
struct ErrorParts {
  VD d0, f1, g0, g1, rest_sum, signed_sum;
  MD settled;
};
HWY_INLINE ErrorParts ErrorOf(VD y, VD x0, VD x1, VD x2, VD eta, MD approx) {
  const DD d;
  const VD zero = hn::Zero(d);
  VD d0, d1, f0, f1, g0, g1;
  TwoSum(y, hn::Neg(x0), d0, d1);
  TwoSum(d1, hn::Neg(x1), f0, f1);
  TwoSum(d0, f0, g0, g1);
  const VD rest_bound = hn::Add(hn::Add(hn::Abs(f1), hn::Abs(x2)), eta);
  const VD half_ulp = hn::Mul(Binade(g0), hn::Set(d, 0x1p-53));
  const VD boundary = hn::IfThenElse(PowerOfTwo(g0), hn::Mul(half_ulp, hn::Set(d, 0.5)), half_ulp);
  const MD small_rest = hn::And(hn::Abs(g1) < boundary,
                                hn::Add(rest_bound, rest_bound) < hn::Sub(boundary, hn::Abs(g1)));
  // An approximate x with y = x0: y - x = -(x1 + x2) - delta, |delta| <=
  // eta, g0 = -x1 and g1 = f1 = 0, so RN(y - x) = g0 where |x2| + eta stays
  // below g0's boundary (RN of that sum below a double puts the sum below
  // it): the common case of a correctly rounded y next to a close x, which
  // the general test's factor 2 would leave to MPFR half the time.
  const MD approx_at_x0 = hn::And(hn::And(approx, d0 == zero), hn::And(g1 == zero, f1 == zero));
  const MD near_x0 = hn::And(approx_at_x0, hn::Add(hn::Abs(x2), eta) < boundary);
  // Sharper than small_rest: |g1| + |f1| + |x2| + eta below the boundary,
  // the sum's three roundings covered by the factor 1 + 2^-50 (a sum below a
  // power of two after rounding up that much is below it exactly).
  // And with the signs: |RN(g1 + RN(f1 - x2))| plus those two roundings
  // (each at most 2^-53 of a result below |g1| + |f1 - x2|) plus eta.
  const VD rest_sum = hn::Sub(f1, x2);
  const VD signed_sum = hn::Add(g1, rest_sum);
  const VD sum_bound =
      hn::Add(hn::Add(hn::Abs(signed_sum), eta),
              hn::Mul(hn::Add(hn::Abs(g1), hn::Abs(rest_sum)), hn::Set(d, 0x1p-51)));
  const MD tight_rest = hn::Or(
      hn::Mul(hn::Add(hn::Abs(g1), rest_bound), hn::Set(d, 1 + 0x1p-50)) < boundary,
      hn::Mul(sum_bound, hn::Set(d, 1 + 0x1p-50)) < boundary);
  return {d0, f1, g0, g1, rest_sum, signed_sum, hn::Or(hn::Or(small_rest, tight_rest), near_x0)};
}

// Every lane, the long road; counted lanes are those in range without a
// special mismatch or an undecided error.
HWY_INLINE void MeasureGeneral(const FormatConstants& f, const SweepExactTile& tile, size_t i,
                               VD y, MD in_range, VD at, SweepErrorTile* out,
                               SweepFineCounts* counts, MeasureSums& s) {
  const DD d;
  const DU du;
  const VD zero = hn::Zero(d);
  const VD x0 = hn::Load(d, tile.x0 + i);
  const VD x1 = hn::Load(d, tile.x1 + i);
  const VD x2 = hn::Load(d, tile.x2 + i);
  const VD scale = hn::Load(d, tile.scale + i);
  const VU kind = hn::Load(du, tile.kind + i);
  const VD eta = hn::Load(d, tile.eta + i);
  const MD approx = eta > zero;  // kSweepExactApprox (whose eta is never 0)
  const MD x_tiny = hn::RebindMask(d, kind == hn::Set(du, kSweepExactTiny));
  const MD x_finite = hn::Or(
      hn::RebindMask(d, hn::Or(hn::Or(kind == hn::Set(du, kSweepExactPair),
                                      kind == hn::Set(du, kSweepExactTriple)),
                               kind == hn::Set(du, kSweepExactApprox))),
      x_tiny);
  const MD x_nan = hn::RebindMask(d, kind == hn::Set(du, kSweepExactNaN));
  const MD x_inf = hn::RebindMask(d, kind == hn::Set(du, kSweepExactInfinite));
  const MD x_undecided = hn::RebindMask(d, kind == hn::Set(du, kSweepExactUndecided));
  const VD rounded = hn::IfThenElse(x_finite, Rounded(f, x0, x1, scale), x0);
  const MD y_nan = hn::IsNaN(y);
  const MD y_finite = hn::IsFinite(y);
  const MD y_is_rounded = y == rounded;  // false for NaN; +0 == -0

  // Specials (ulp_metric.cc): at a NaN x any NaN is right and anything else
  // a special mismatch; at an infinite x only that infinity is right; at a
  // finite x a NaN is a special mismatch and an infinity is right (0.5 ULP)
  // only where x rounds to it.
  const MD inf_rounded = hn::AndNot(y_finite, hn::And(x_finite, y_is_rounded));
  const MD special = hn::Or(
      hn::Or(hn::AndNot(y_nan, x_nan), hn::AndNot(y_is_rounded, x_inf)),
      hn::And(x_finite, hn::Or(y_nan, hn::AndNot(y_is_rounded, hn::Not(y_finite)))));
  const MD measured = hn::And(x_finite, y_finite);

  const ErrorParts p = ErrorOf(y, x0, x1, x2, eta, approx);
  const VD f1 = p.f1, g0 = p.g0, g1 = p.g1, rest_sum = p.rest_sum, signed_sum = p.signed_sum;
  // An approximate x (eta > 0) has a rest of up to eta beyond x2 whatever
  // the sums say: no exact shortcut, and eta joins the rest's bound.
  const MD no_rest = hn::AndNot(approx, hn::And(f1 == zero, x2 == zero));
  const MD y_is_x0 = hn::AndNot(approx, p.d0 == zero);
  const MD g0_known = hn::Or(no_rest, hn::Or(y_is_x0, p.settled));
  // An approximate x whose rest moves g0 (a correctly rounded y a few ulps
  // of a double from x0, say): y - x = h0 + h1 + r - delta with h0 + h1 =
  // g0 + signed_sum exactly (TwoSum), r the two roundings of signed_sum
  // (below sum_bound's 2^-51 term) and |delta| <= eta, so RN(y - x) = h0
  // where |h1| + |r| + eta stays below h0's boundary (the factor 1 + 2^-50
  // covering the sum's roundings), and the residual has h1's sign where
  // |h1| is beyond twice |r| + eta.
  VD h0, h1;
  TwoSum(g0, signed_sum, h0, h1);
  const VD h_half_ulp = hn::Mul(Binade(h0), hn::Set(d, 0x1p-53));
  const VD h_boundary =
      hn::IfThenElse(PowerOfTwo(h0), hn::Mul(h_half_ulp, hn::Set(d, 0.5)), h_half_ulp);
  const VD r_eta = hn::Add(
      hn::Mul(hn::Add(hn::Abs(g1), hn::Abs(rest_sum)), hn::Set(d, 0x1p-51)), eta);
  const MD use_h = hn::AndNot(
      g0_known, hn::And(approx, hn::Mul(hn::Add(hn::Abs(h1), r_eta), hn::Set(d, 1 + 0x1p-50)) <
                                    h_boundary));
  const MD rounding_known = hn::Or(g0_known, use_h);
  const VD e = hn::Mul(hn::Abs(hn::IfThenElse(use_h, h0, g0)), scale);

  // The residual's sign against g0's (h0's): away from zero, and whether known.
  const VD rest = hn::Sub(f1, x2);  // RN of f1 - x2: its sign is exact
  const VD rest_eta = hn::Add(hn::Abs(rest), eta);
  const MD g1_dominates = hn::Abs(g1) > hn::Add(rest_eta, rest_eta);
  // With eta: the rest's sign only where it is beyond 2 eta and g1 = 0.
  const MD rest_beyond_eta = hn::And(g1 == zero, hn::Abs(rest) > hn::Add(eta, eta));
  const MD g0_residual_known = hn::Or(
      hn::And(approx, hn::Or(g1_dominates, rest_beyond_eta)),
      hn::AndNot(approx, hn::Or(hn::Or(no_rest, g1 == zero), hn::Or(g1_dominates, rest == zero))));
  const MD residual_known = hn::Or(hn::And(use_h, hn::Abs(h1) > hn::Add(r_eta, r_eta)),
                                   hn::AndNot(use_h, g0_residual_known));
  const VD residual = hn::IfThenElse(
      use_h, h1,
      hn::IfThenElse(hn::Or(no_rest, hn::Or(g1_dominates, hn::AndNot(approx, rest == zero))), g1,
                     rest));
  const MD away =
      hn::And(residual != zero, hn::Not(SignsDiffer(residual, hn::IfThenElse(use_h, h0, g0))));
  const MD on_bound = hn::And(hn::And(PowerOfTwo(e), e >= hn::Set(d, 0.5)),
                              hn::And(e <= hn::Set(d, f.top_bound), e != zero));
  const MD above_bound = hn::And(hn::And(measured, on_bound), hn::And(residual_known, away));
  // Approximate: e must dwarf eta (2^-40 of it at most, far inside the fine
  // bins' 2^-30 margin); tiny: at a bound, x's side of it is MPFR's to say.
  const MD eta_unsettled =
      hn::And(approx, hn::Abs(hn::IfThenElse(use_h, h0, g0)) <= hn::Mul(eta, hn::Set(d, 0x1p40)));
  const MD tiny_on_bound = hn::And(hn::And(x_tiny, y != zero), on_bound);
  const MD undecided = hn::Or(
      hn::Or(x_undecided, hn::And(measured, hn::Or(eta_unsettled, tiny_on_bound))),
      hn::And(measured, hn::Or(hn::Not(rounding_known), hn::AndNot(residual_known, on_bound))));

  const VD ulp = hn::IfThenElse(measured, e, hn::IfThenElse(inf_rounded, hn::Set(d, 0.5), zero));
  const MD counted = hn::And(in_range, hn::Not(hn::Or(special, undecided)));
  const MD correct = hn::Or(hn::Or(hn::And(x_nan, y_nan), hn::And(x_inf, y_is_rounded)),
                            hn::And(x_finite, y_is_rounded));
  const MD zero_sign = hn::And(hn::And(measured, y == zero),
                               hn::And(rounded == zero, SignsDiffer(y, rounded)));
  s.correctly_rounded += hn::CountTrue(d, hn::And(counted, correct));
  s.signed_zero += hn::CountTrue(d, hn::And(counted, zero_sign));
  s.underflowed += hn::CountTrue(d, hn::And(hn::And(counted, x_tiny), y == zero));
  VU flags = hn::IfThenElseZero(hn::RebindMask(du, special), hn::Set(du, kSweepSpecialMismatch));
  flags = hn::Or(flags, hn::IfThenElseZero(hn::RebindMask(du, hn::AndNot(special, undecided)),
                                           hn::Set(du, kSweepUndecidedError)));
  flags = hn::Or(flags, hn::IfThenElseZero(hn::RebindMask(du, above_bound),
                                           hn::Set(du, kSweepAboveBound)));
  Record(ulp, counted, measured, in_range, flags, at, i, out, counts, s);
}

// The approximate x's short road: every lane in range an approximate x
// (kSweepExactApprox) against a finite nonzero y whose error MeasureGeneral
// would settle from g0 with no residual to read. Each value below is
// MeasureGeneral's own for such a lane: no special, not tiny, not undecided;
// g0_known (its four tests, the same operations) puts e = |g0| scale, and
// with e off the histogram's bounds (not a power of two at or above 1/2) the
// residual's side is never asked. Returns false, having written nothing,
// where any lane in range is not such a lane: MeasureGeneral takes the
// vector. (Errors of 2^16 ulps and more are common here, as for the
// cancelling sums of erf-based ops: flagged kSweepLargeError as there.)
template <bool kMasked>
HWY_INLINE bool MeasureApprox(const FormatConstants& f, const SweepExactTile& tile, size_t i,
                              VD y, MD in_range, VD at, SweepErrorTile* out,
                              SweepFineCounts* counts, MeasureSums& s) {
  const DD d;
  const DU du;
  const VD zero = hn::Zero(d);
  const VU kind = hn::Load(du, tile.kind + i);
  const MD approx_y = hn::And(hn::RebindMask(d, kind == hn::Set(du, kSweepExactApprox)),
                              hn::And(hn::IsFinite(y), y != zero));
  if (!hn::AllTrue(d, kMasked ? hn::Or(approx_y, hn::Not(in_range)) : approx_y)) return false;
  const VD x0 = hn::Load(d, tile.x0 + i);
  const VD x1 = hn::Load(d, tile.x1 + i);
  const VD x2 = hn::Load(d, tile.x2 + i);
  const VD eta = hn::Load(d, tile.eta + i);
  // MeasureGeneral's g0_known with approx true (no_rest and y_is_x0 false).
  const ErrorParts p = ErrorOf(y, x0, x1, x2, eta, eta > zero);  // every lane approximate
  const VD g0 = p.g0;
  const MD g0_known = p.settled;
  const VD scale = hn::Load(d, tile.scale + i);
  const VD e = hn::Mul(hn::Abs(g0), scale);
  const MD eta_settled = hn::Abs(g0) > hn::Mul(eta, hn::Set(d, 0x1p40));
  const MD on_bound = hn::And(hn::And(PowerOfTwo(e), e >= hn::Set(d, 0.5)),
                              hn::And(e <= hn::Set(d, f.top_bound), e != zero));
  const MD settled = hn::AndNot(on_bound, hn::And(g0_known, eta_settled));
  if (!hn::AllTrue(d, kMasked ? hn::Or(settled, hn::Not(in_range)) : settled)) return false;

  const MD correct = y == Rounded(f, x0, x1, scale);
  s.correctly_rounded += hn::CountTrue(d, hn::And(in_range, correct));
  Record(e, in_range, hn::FirstN(d, hn::Lanes(d)), in_range, hn::Zero(du), at, i, out, counts, s);
  return true;
}

// One vector of outputs at i; kMasked: some lanes are past n.
template <bool kMasked>
HWY_INLINE void MeasureVector(const FormatConstants& f, const SweepExactTile& tile,
                              const float* y_in, VU key_high, const uint64_t* key_low, size_t i,
                              size_t n,
                              SweepErrorTile* out, SweepFineCounts* counts, bool every_ulp,
                              MeasureSums& s) {
  const DD d;
  const DF df;
  const DU du;
  const DU32 du32;
  const VD zero = hn::Zero(d);
  const VD half = hn::Set(d, 0.5);
  const VF y_float = hn::LoadU(df, y_in + i);
  const VD y = hn::PromoteTo(d, y_float);
  const VD at = hn::Add(hn::Iota(d, 0.0), hn::Set(d, static_cast<double>(i)));  // exact below 2^53
  const MD in_range = kMasked ? at < hn::Set(d, static_cast<double>(n)) : (zero == zero);
  if (s.totals) {
    const VU keys = hn::Xor(key_high, hn::LoadU(du, key_low + i));
    // SweepDigestTerm: key * (bits ^ bits >> 16).
    const VU32 bits = hn::BitCast(du32, y_float);
    const VU terms = DigestTerms(keys, hn::PromoteTo(du, hn::Xor(bits, hn::ShiftRight<16>(bits))));
    s.digest = hn::Add(s.digest, kMasked ? hn::IfThenElseZero(hn::RebindMask(du, in_range), terms) : terms);
  }
  const VD x0 = hn::Load(d, tile.x0 + i);
  const VD x1 = hn::Load(d, tile.x1 + i);
  const VU kind = hn::Load(du, tile.kind + i);
  VD d0, d1;
  TwoSum(y, hn::Neg(x0), d0, d1);
  VD e = hn::Mul(hn::Abs(hn::Sub(d0, x1)), hn::Load(d, tile.scale + i));
  const MD common_finite = hn::And(
      hn::And(hn::RebindMask(d, kind == hn::Set(du, kSweepExactPair)), d1 == zero),
      hn::And(hn::And(hn::IsFinite(y), y != zero),
              hn::AndNot(hn::And(PowerOfTwo(e), e >= half), e < hn::Set(d, 0x1p16))));
  MD correct = e < half;
  if (!hn::AllTrue(d, kMasked ? hn::Or(common_finite, hn::Not(in_range)) : common_finite)) {
    // The other common lane: x beyond the overflow threshold T = (2 - 2^-p)
    // 2^emax (|x0| > T, a double, puts x above it too) and y the infinity of
    // its sign, which is RN(x): half an ulp by definition, correctly rounded.
    const MD common_infinite = hn::And(
        hn::And(hn::RebindMask(d, hn::Or(kind == hn::Set(du, kSweepExactPair),
                                         kind == hn::Set(du, kSweepExactTriple))),
                hn::IsInf(y)),
        hn::And(hn::Abs(x0) > hn::Set(d, f.overflow_threshold), hn::Not(SignsDiffer(y, x0))));
    if (!hn::AllTrue(d, hn::Or(hn::Or(common_finite, common_infinite), hn::Not(in_range)))) {
      if (MeasureApprox<kMasked>(f, tile, i, y, in_range, at, out, counts, s)) return;
      MeasureGeneral(f, tile, i, y, in_range, at, out, counts, s);
      return;
    }
    e = hn::IfThenElse(common_infinite, half, e);
    correct = hn::Or(correct, common_infinite);
  }
  s.correctly_rounded += hn::CountTrue(d, kMasked ? hn::And(in_range, correct) : correct);
  if (kMasked) {
    Sum(e, in_range, at, s);
  } else {
    Sum<true>(e, in_range, at, s);
  }
  MD unsettled;
  const VU fine = FineBin(e, &unsettled);
  if (!kMasked && hn::AllFalse(d, unsettled)) {
    CountFine<true>(fine, unsettled, counts, s);
  } else {
    CountFine(fine, kMasked ? hn::AndNot(unsettled, in_range) : hn::Not(unsettled), counts, s);
  }
  if (every_ulp) {
    hn::Store(e, d, out->ulp + i);
    hn::Store(hn::IfThenElse(hn::RebindMask(du, unsettled), hn::Set(du, kSweepSeeFlags), fine), du,
              out->fine + i);
  }
  if (hn::AllFalse(d, unsettled)) return;
  hn::Store(e, d, out->ulp + i);
  hn::Store(hn::IfThenElseZero(hn::RebindMask(du, unsettled), hn::Set(du, kSweepFineBinExact)), du,
            out->flags + i);
  hn::Store(hn::IfThenElse(hn::RebindMask(du, unsettled), hn::Set(du, kSweepSeeFlags), fine), du,
            out->fine + i);
  NoteSlow(hn::And(unsettled, in_range), i, out, s);
}

void Measure(const FloatFormat& format, const SweepExactTile& tile, const float* y_in,
             uint64_t key_high, const uint64_t* key_low, size_t n, SweepErrorTile* out,
             SweepErrorSums* sums, SweepFineCounts* counts, bool every_ulp, bool totals) {
  const DD d;
  const DU du;
  const FormatConstants& f = FormatConstants::Of(format);
  const size_t lanes = hn::Lanes(d);
  const hn::RebindToSigned<DD> di;
  MeasureSums s{hn::Zero(du),      hn::Zero(du),
                hn::Zero(du),      hn::Set(d, -1.0),
                hn::Set(d, -1.0),  hn::Set(di, static_cast<int64_t>(SweepFineCounts::kNowhere)),
                hn::Zero(di)};
  s.totals = totals;
  const VU high = hn::Set(du, key_high);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    MeasureVector<false>(f, tile, y_in, high, key_low, i, n, out, counts, every_ulp, s);
  }
  if (i < n) MeasureVector<true>(f, tile, y_in, high, key_low, i, n, out, counts, every_ulp, s);
  HWY_ALIGN double lane_best[hn::MaxLanes(DD())];
  HWY_ALIGN double lane_at[hn::MaxLanes(DD())];
  HWY_ALIGN uint64_t parts[3][hn::MaxLanes(DD())];
  hn::Store(s.best, d, lane_best);
  hn::Store(s.best_at, d, lane_at);
  hn::Store(s.high, du, parts[0]);
  hn::Store(s.low, du, parts[1]);
  hn::Store(s.digest, du, parts[2]);
  SweepErrorSums result;
  result.fine_low = static_cast<uint64_t>(hn::GetLane(hn::MinOfLanes(di, s.fine_low)));
  result.fine_high = static_cast<uint64_t>(hn::GetLane(hn::MaxOfLanes(di, s.fine_high)));
  result.slow_count = s.slow;
  result.correctly_rounded = s.correctly_rounded;
  result.signed_zero_mismatch = s.signed_zero;
  result.underflowed_errors = s.underflowed;
  for (size_t k = 0; k < lanes; ++k) {
    result.high += parts[0][k];
    result.low += parts[1][k];
    result.digest += parts[2][k];
    const int64_t where = static_cast<int64_t>(lane_at[k]);
    if (where >= 0 &&
        (lane_best[k] > result.max_ulp || (lane_best[k] == result.max_ulp && where < result.max_at))) {
      result.max_ulp = lane_best[k];
      result.max_at = where;
    }
  }
  *sums = result;
}

// ---- The models.

// Binary32 arithmetic on float lanes, NegMulAdd fused or two roundings as the
// model says (ieee_emulation.h's Binary32Arith): a fused one is the FMA
// instruction where the target has it, else fmaf lane by lane.
template <class D, bool kFused>
struct Binary32Lanes {
  using Value = hn::Vec<D>;
  static constexpr bool fused = kFused;
  HWY_INLINE Value Const(float c) const { return hn::Set(D(), c); }
  HWY_INLINE Value Mul(Value a, Value b) const { return hn::Mul(a, b); }
  HWY_INLINE Value Sub(Value a, Value b) const { return hn::Sub(a, b); }
  HWY_INLINE Value NegMulAdd(Value a, Value b, Value c) const {
    if (!fused) return hn::Sub(c, hn::Mul(a, b));
#if HWY_NATIVE_FMA
    return hn::NegMulAdd(a, b, c);
#else
    const D df;
    HWY_ALIGN float la[hn::MaxLanes(D())], lb[hn::MaxLanes(D())], lc[hn::MaxLanes(D())];
    hn::Store(a, df, la);
    hn::Store(b, df, lb);
    hn::Store(c, df, lc);
    for (size_t k = 0; k < hn::Lanes(df); ++k) lc[k] = std::fmaf(-la[k], lb[k], lc[k]);
    return hn::Load(df, lc);
#endif
  }
};

// A 16-bit format's arithmetic on double lanes, each operation rounded once
// to the format (tanh_bwd_oracle.cc's NativeFormatArith): a product of two
// values of p <= 11 bits is exact in a double, and a sum rounded to 53 bits
// and then to p bits is rounded correctly once (53 >= 2p + 2).
struct NarrowLanes {
  using Value = VD;
  const FormatConstants* format;
  HWY_INLINE VD Const(float c) const { return hn::Set(DD(), c); }
  HWY_INLINE VD Mul(VD a, VD b) const { return RoundToFormat(*format, hn::Mul(a, b), false); }
  HWY_INLINE VD Sub(VD a, VD b) const { return RoundToFormat(*format, hn::Sub(a, b), false); }
  HWY_INLINE VD NegMulAdd(VD a, VD b, VD c) const { return Sub(c, Mul(a, b)); }
};

template <class A, class V>
HWY_INLINE V Sequence(int index, const A& a, V g, V t) {
  switch (index) {
    case 0:
      return tanh_bwd_spec::SequenceAt<0>(a, g, t);
    case 1:
      return tanh_bwd_spec::SequenceAt<1>(a, g, t);
    case 2:
      return tanh_bwd_spec::SequenceAt<2>(a, g, t);
    default:
      return tanh_bwd_spec::SequenceAt<3>(a, g, t);
  }
}
static_assert(kTanhBwdVariants.size() == 4, "Sequence() names every row of kTanhBwdVariants");

// A binary32 model on float lanes (kTanhBwdModels[kModel]).
template <size_t kModel, class V>
HWY_INLINE V Binary32Model(V g, V t) {
  constexpr TanhBwdModelInfo kInfo = kTanhBwdModels[kModel];
  const Binary32Lanes<hn::DFromV<V>, kInfo.fused> a;
  return tanh_bwd_spec::SequenceAt<TanhBwdSequenceIndex(kInfo.sequence_of)>(a, g, t);
}

// Calls f with std::integral_constant<size_t, m>: a model chosen once, so
// that the loops inside f are compiled for it. Every row of kTanhBwdModels
// is one branch, so a model added to the table is computed here too.
template <class F, size_t... kModel>
HWY_INLINE void WithBinary32Model(size_t m, const F& f, std::index_sequence<kModel...>) {
  ((m == kModel ? (f(std::integral_constant<size_t, kModel>()), true) : false) || ...);
}
template <class F>
HWY_INLINE void WithBinary32Model(size_t m, const F& f) {
  if (m >= kTanhBwdModels.size()) HWY_ABORT("no binary32 tanh_bwd model %zu", m);
  WithBinary32Model(m, f, std::make_index_sequence<kTanhBwdModels.size()>());
}

template <class V>
HWY_INLINE V CanonicalNan(V v) {
  const hn::DFromV<V> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  return hn::IfThenElse(hn::IsNaN(v), hn::BitCast(df, hn::Set(du, 0x7fc00000u)), v);
}

// Highway 1.0.3's software f16 -> f32 (oracles/highway_f16.h): every
// exponent field but 0 read as a normal one.
HWY_INLINE VF HighwaySoftF16ToF32(VU32 h) {
  const DF df;
  const DU32 du;
  const DI32 di;
  const VU32 sign = hn::ShiftLeft<16>(hn::And(h, hn::Set(du, 0x8000u)));
  const VU32 exponent = hn::And(hn::ShiftRight<10>(h), hn::Set(du, 0x1fu));
  const VU32 mantissa = hn::And(h, hn::Set(du, 0x3ffu));
  const VU32 normal = hn::Or(hn::ShiftLeft<23>(hn::Add(exponent, hn::Set(du, 112u))),
                             hn::ShiftLeft<13>(mantissa));
  // m * 2^-24: m < 2^10 converts exactly and the scaling is a power of two.
  const VF subnormal = hn::Mul(hn::ConvertTo(df, hn::BitCast(di, mantissa)), hn::Set(df, 0x1p-24f));
  const VU32 magnitude = hn::IfThenElse(exponent == hn::Zero(du), hn::BitCast(du, subnormal), normal);
  return hn::BitCast(df, hn::Or(sign, magnitude));
}

// IEEE f16 -> f32 of a pattern (exact): as above but exponent 31 is an
// infinity or a NaN.
HWY_INLINE VF F16ToF32(VU32 h) {
  const DF df;
  const DU32 du;
  const VU32 bits = hn::BitCast(du, HighwaySoftF16ToF32(h));
  const VU32 exponent = hn::And(hn::ShiftRight<10>(h), hn::Set(du, 0x1fu));
  const VU32 special = hn::Or(hn::ShiftLeft<16>(hn::And(h, hn::Set(du, 0x8000u))),
                              hn::Or(hn::Set(du, 0x7f800000u),
                                     hn::ShiftLeft<13>(hn::And(h, hn::Set(du, 0x3ffu)))));
  return hn::BitCast(df, hn::IfThenElse(exponent == hn::Set(du, 31u), special, bits));
}

// Highway 1.0.3's software f32 -> f16 (oracles/highway_f16.h), as a pattern:
// truncation, |x| < 2^-24 to +0, exponents clamped to 15.
HWY_INLINE VU32 HighwaySoftF32ToF16(VF v) {
  const DU32 du;
  const DI32 di;
  const VU32 bits = hn::BitCast(du, v);
  const VU32 sign = hn::ShiftRight<31>(bits);
  const VU32 mantissa32 = hn::And(bits, hn::Set(du, 0x7fffffu));
  const hn::Vec<DI32> biased = hn::BitCast(di, hn::And(hn::ShiftRight<23>(bits), hn::Set(du, 0xffu)));
  const hn::Vec<DI32> exponent = hn::Min(hn::Sub(biased, hn::Set(di, 127)), hn::Set(di, 15));
  // Subnormal results (exponent -24..-15): shift = -14 - exponent in 1..10.
  const hn::Vec<DI32> shift = hn::Sub(hn::Set(di, -14), exponent);
  const hn::Vec<DI32> clamped_shift = hn::Min(hn::Max(shift, hn::Set(di, 1)), hn::Set(di, 10));
  const VU32 ushift = hn::BitCast(du, clamped_shift);
  const VU32 sub_mantissa =
      hn::Add((hn::Set(du, 1u) << hn::Sub(hn::Set(du, 10u), ushift)),
              (mantissa32 >> hn::Add(ushift, hn::Set(du, 13u))));
  const VU32 normal = hn::Or(hn::ShiftLeft<10>(hn::BitCast(du, hn::Add(exponent, hn::Set(di, 15)))),
                             hn::ShiftRight<13>(mantissa32));
  const auto is_sub = hn::RebindMask(du, exponent < hn::Set(di, -14));
  const auto is_zero = hn::RebindMask(du, exponent < hn::Set(di, -24));
  const VU32 magnitude = hn::IfThenElse(is_sub, sub_mantissa, normal);
  return hn::IfThenElseZero(hn::Not(is_zero), hn::Or(hn::ShiftLeft<15>(sign), magnitude));
}

void ModelOutputs(const FloatFormat& format, const float* grad, const float* t,
                  const uint16_t* grad_bits, const uint16_t* t_bits, size_t n,
                  float* const* models, const uint8_t* wanted) {
  const DD d;
  const DF df;
  const DU32 du32;
  const DU16 du16;
  const hn::ScalableTag<float> dfull;  // every float lane of a vector
  const size_t lanes = hn::Lanes(d);
  const size_t full_lanes = hn::Lanes(dfull);
  const bool binary32 = std::string_view(format.name) == kBinary32.name;
  // One tight loop per model (a model chosen once, not per vector).
  const auto full_loop = [&](float* out, auto model) {
    for (size_t i = 0; i < n; i += full_lanes) {
      hn::StoreU(CanonicalNan(model(hn::LoadU(dfull, grad + i), hn::LoadU(dfull, t + i))), dfull,
                 out + i);
    }
  };
  if (binary32) {
    for (size_t m = 0; m < kTanhBwdModels.size(); ++m) {
      if (wanted != nullptr && !wanted[m]) continue;
      WithBinary32Model(m, [&](auto model) HWY_ATTR {
        full_loop(models[m], [](auto g, auto x) HWY_ATTR {
          return Binary32Model<decltype(model)::value>(g, x);
        });
      });
    }
    return;
  }
  const FormatConstants& f = FormatConstants::Of(format);
  const NarrowLanes per_op{&f};
  const RoundingBits rounding = RoundingBitsOf(format);
  const std::vector<TanhBwdNarrowModelInfo>& infos = TanhBwdNarrowModelInfos(format);
  for (size_t m = 0; m < infos.size(); ++m) {
    if (wanted != nullptr && !wanted[m]) continue;
    const TanhBwdNarrowModelInfo& info = infos[m];
    const size_t f32_model = info.f32_model;
    const bool truncating = info.kind == TanhBwdNarrowModelInfo::kTruncating;
    float* out = models[m];
    switch (info.kind) {
      case TanhBwdNarrowModelInfo::kOpmath:
      case TanhBwdNarrowModelInfo::kTruncating:
        // The binary32 model rounded once to the format, by its bits
        // (oracles/round_bits-inl.h), on every float lane.
        WithBinary32Model(f32_model, [&](auto model) HWY_ATTR {
          constexpr size_t kModel = decltype(model)::value;
          if (truncating) {
            full_loop(out, [&rounding](auto g, auto x) HWY_ATTR {
              return round_bits::TruncateToFormat(rounding, hn::DFromV<decltype(g)>(),
                                                  Binary32Model<kModel>(g, x));
            });
          } else {
            full_loop(out, [&rounding](auto g, auto x) HWY_ATTR {
              return round_bits::RoundToFormat(rounding, hn::DFromV<decltype(g)>(),
                                               Binary32Model<kModel>(g, x));
            });
          }
        });
        break;
      case TanhBwdNarrowModelInfo::kPerOp: {
        const int sequence = TanhBwdSequenceIndex(info.sequence);
        for (size_t i = 0; i < n; i += lanes) {
          const VD g = hn::PromoteTo(d, hn::LoadU(df, grad + i));
          const VD x = hn::PromoteTo(d, hn::LoadU(df, t + i));
          hn::StoreU(CanonicalNan(ToFloat(Sequence(sequence, per_op, g, x))), df, out + i);
        }
        break;
      }
      case TanhBwdNarrowModelInfo::kHighwaySoft:
        WithBinary32Model(f32_model, [&](auto model) HWY_ATTR {
          for (size_t i = 0; i < n; i += lanes) {
            const VF sg = HighwaySoftF16ToF32(hn::PromoteTo(du32, hn::LoadU(du16, grad_bits + i)));
            const VF sx = HighwaySoftF16ToF32(hn::PromoteTo(du32, hn::LoadU(du16, t_bits + i)));
            const VF y = Binary32Model<decltype(model)::value>(sg, sx);
            hn::StoreU(CanonicalNan(F16ToF32(HighwaySoftF32ToF16(y))), df, out + i);
          }
        });
        break;
    }
  }
}

void CanonicalNans(float* y, size_t n) {
  const DF df;
  const size_t lanes = hn::Lanes(df);
  for (size_t i = 0; i < n; i += lanes) hn::StoreU(CanonicalNan(hn::LoadU(df, y + i)), df, y + i);
}

void DecodeNarrow(const FloatFormat& format, const uint16_t* bits, size_t n, float* out) {
  const DF df;
  const DU32 du32;
  const DU16 du16;
  const size_t lanes = hn::Lanes(df);
  // bf16 widens by a shift, f16 by F16ToF32; a row of kNarrowFormats that
  // is neither has no widening here.
  const FloatFormat& f = *RequireNarrowFormat(format, "sweep decoding").format;
  const bool bf16 = IsBinary32TopHalf(f);
  if (!bf16 && std::string_view(f.name) != kBinary16.name) {
    throw std::invalid_argument(std::string("sweep decoding: no widening of ") + f.name);
  }
  for (size_t i = 0; i < n; i += lanes) {
    const VU32 h = hn::PromoteTo(du32, hn::LoadU(du16, bits + i));
    const VF v = bf16 ? hn::BitCast(df, hn::ShiftLeft<16>(h)) : F16ToF32(h);
    hn::StoreU(CanonicalNan(v), df, out + i);
  }
}

uint64_t Mismatches(const float* a, const float* b, size_t n, int64_t* first) {
  const DU32 du;
  const size_t lanes = hn::Lanes(du);
  const auto* pa = reinterpret_cast<const uint32_t*>(a);
  const auto* pb = reinterpret_cast<const uint32_t*>(b);
  uint64_t count = 0;
  for (size_t i = 0; i < n; i += lanes) {
    auto differ = hn::LoadU(du, pa + i) != hn::LoadU(du, pb + i);
    if (i + lanes > n) {
      differ = hn::And(differ, hn::FirstN(du, n - i));
    }
    const size_t k = hn::CountTrue(du, differ);
    if (k != 0 && count == 0) *first = static_cast<int64_t>(i) + hn::FindFirstTrue(du, differ);
    count += k;
  }
  return count;
}

// ---- Scale reuse (SweepScaledFloats, SweepFactorsScale, SweepDigest).

bool ScaledFloats(const float* v, float p, size_t n, bool specials, float low, float high,
                  float* out) {
  const hn::ScalableTag<float> df;
  const size_t lanes = hn::Lanes(df);
  const auto vp = hn::Set(df, p);
  const auto vlow = hn::Set(df, low);
  const auto vhigh = hn::Set(df, high);
  const auto vmax = hn::Set(df, 3.40282347e+38f);
  const auto zero = hn::Zero(df);
  for (size_t i = 0; i < n; i += lanes) {
    const auto b = hn::LoadU(df, v + i);
    const auto a = hn::Abs(b);
    const auto scaled = hn::Mul(b, vp);
    const auto s = hn::Abs(scaled);
    auto keep = hn::IsNaN(b);
    if (specials) keep = hn::Or(keep, hn::Or(a == zero, a > vmax));
    const auto inside = hn::And(hn::And(a >= vlow, a < vhigh), hn::And(s >= vlow, s < vhigh));
    auto fail = hn::AndNot(keep, hn::Not(inside));
    if (i + lanes > n) fail = hn::And(fail, hn::FirstN(df, n - i));
    if (!hn::AllFalse(df, fail)) return false;
    hn::StoreU(hn::IfThenElse(keep, b, scaled), df, out + i);
  }
  return true;
}

bool FactorsScale(const uint64_t* kind, const double* f0, size_t n, double small, double large,
                  double low, double high) {
  const DD d;
  const DU du;
  const size_t lanes = hn::Lanes(d);
  const VD vsmall = hn::Set(d, small), vlarge = hn::Set(d, large);
  const VD vlow = hn::Set(d, low), vhigh = hn::Set(d, high);
  for (size_t i = 0; i < n; i += lanes) {
    const VU k = hn::LoadU(du, kind + i);
    const VD f = hn::Abs(hn::LoadU(d, f0 + i));
    const MD normal = hn::And(hn::RebindMask(d, k == hn::Set(du, kSweepFactorNormal)),
                              hn::And(hn::Mul(f, vsmall) >= vlow, hn::Mul(f, vlarge) < vhigh));
    const MD special = hn::RebindMask(
        d, hn::Or(k == hn::Set(du, kSweepFactorNaN), k == hn::Set(du, kSweepFactorInfinite)));
    MD fail = hn::Not(hn::Or(normal, special));
    if (i + lanes > n) fail = hn::And(fail, hn::FirstN(d, n - i));
    if (!hn::AllFalse(d, fail)) return false;
  }
  return true;
}

uint64_t Digest(const float* y, uint64_t key_high, const uint64_t* key_low, size_t n) {
  const DU du;
  const DU32 du32;
  const DF df;
  const size_t lanes = hn::Lanes(du);
  VU digest = hn::Zero(du);
  for (size_t i = 0; i < n; i += lanes) {
    const VU keys = hn::Xor(hn::Set(du, key_high), hn::LoadU(du, key_low + i));
    const VU32 bits = hn::BitCast(du32, hn::LoadU(df, y + i));
    VU terms = DigestTerms(keys, hn::PromoteTo(du, hn::Xor(bits, hn::ShiftRight<16>(bits))));
    if (i + lanes > n) terms = hn::IfThenElseZero(hn::FirstN(du, n - i), terms);
    digest = hn::Add(digest, terms);
  }
  alignas(64) uint64_t parts[hn::MaxLanes(du)];
  hn::Store(digest, du, parts);
  uint64_t sum = 0;
  for (size_t k = 0; k < lanes; ++k) sum += parts[k];
  return sum;
}

}  // namespace sweep_tier

// What suites/sweep/sweep_tier.cc exports per target.
void SweepTierScaledExactValues(const FloatFormat& format, const float* grad,
                                const SweepFactorColumns& f, size_t n, SweepExactTile* out) {
  sweep_tier::ScaledExactValues(format, grad, f, n, out);
}
void SweepTierExactValues(const FloatFormat& format, const float* grad, const float* t, size_t n,
                          SweepExactTile* out) {
  sweep_tier::ExactValues(format, grad, t, n, out);
}
void SweepTierMeasure(const FloatFormat& format, const SweepExactTile& tile, const float* y,
                      uint64_t key_high, const uint64_t* key_low, size_t n, SweepErrorTile* out,
                      SweepErrorSums* sums, SweepFineCounts* fine, bool every_ulp, bool totals) {
  sweep_tier::Measure(format, tile, y, key_high, key_low, n, out, sums, fine, every_ulp, totals);
}
void SweepTierModelOutputs(const FloatFormat& format, const float* grad, const float* t,
                           const uint16_t* grad_bits, const uint16_t* t_bits, size_t n,
                           float* const* models, const uint8_t* wanted) {
  sweep_tier::ModelOutputs(format, grad, t, grad_bits, t_bits, n, models, wanted);
}
void SweepTierCanonicalNans(float* y, size_t n) { sweep_tier::CanonicalNans(y, n); }
void SweepTierDecodeNarrow(const FloatFormat& format, const uint16_t* bits, size_t n, float* out) {
  sweep_tier::DecodeNarrow(format, bits, n, out);
}
bool SweepTierScaledFloats(const float* v, float p, size_t n, bool specials, float low, float high,
                           float* out) {
  return sweep_tier::ScaledFloats(v, p, n, specials, low, high, out);
}
bool SweepTierFactorsScale(const uint64_t* kind, const double* f0, size_t n, double small,
                           double large, double low, double high) {
  return sweep_tier::FactorsScale(kind, f0, n, small, large, low, high);
}
uint64_t SweepTierDigest(const float* y, uint64_t key_high, const uint64_t* key_low, size_t n) {
  return sweep_tier::Digest(y, key_high, key_low, n);
}
uint64_t SweepTierMismatches(const float* a, const float* b, size_t n, int64_t* first) {
  return sweep_tier::Mismatches(a, b, n, first);
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_SUITES_SWEEP_TIER_INL_H_
