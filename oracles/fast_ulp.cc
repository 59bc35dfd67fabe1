#include "oracles/fast_ulp.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "oracles/double_word.h"

namespace ulpgate {
namespace {

// The exact sum of terms[0 .. n) as hi + lo with hi = RN(sum), if the errors
// of a TwoSum cascade (terms by increasing magnitude) add up without rounding;
// false otherwise. Every step is an error-free transformation, so true means
// hi + lo is the sum exactly. Reorders `terms`.
bool ExactPairOf(double* terms, size_t n, DoubleWord* out) {
  for (size_t i = 1; i < n; ++i) {  // insertion sort by magnitude
    for (size_t j = i; j > 0 && std::fabs(terms[j]) < std::fabs(terms[j - 1]); --j) {
      std::swap(terms[j], terms[j - 1]);
    }
  }
  double s = terms[0];
  double r = 0;
  // sum = s + the cascade's errors; add the errors as they come, demanding
  // each addition be exact.
  for (size_t i = 1; i < n; ++i) {
    const DoubleWord p = TwoSum(s, terms[i]);
    s = p.hi;
    const DoubleWord q = TwoSum(r, p.lo);
    if (q.lo != 0) return false;
    r = q.hi;
  }
  *out = TwoSum(s, r);
  return true;
}

template <size_t N>
bool ExactPair(std::array<double, N> terms, DoubleWord* out) {
  return ExactPairOf(terms.data(), N, out);
}

// What every output's measurement shares, from x = hi + lo exactly (hi =
// RN(x)); nullopt for an exact zero (its sign is MPFR's to give) or where
// rounding to the format might overflow.
std::optional<TwoDoubleExact> FromPair(const DoubleWord& x, const FloatFormat& format) {
  if (x.hi == 0) return std::nullopt;
  // E = floor(log2 |x|): hi's exponent, less one when |hi| is a power of two
  // and lo takes x below it (|lo| <= ulp(hi) / 2 keeps x in hi's binade
  // otherwise).
  int e = std::ilogb(x.hi);
  if (x.lo != 0 && std::fabs(x.hi) == (e >= -1022 ? Pow2(e) : std::ldexp(1.0, e)) &&
      std::signbit(x.lo) != std::signbit(x.hi)) {
    --e;
  }
  // Near the top of the format, rounding may overflow: MPFR's rules settle that.
  if (e >= format.emax) return std::nullopt;
  TwoDoubleExact out;
  out.hi = x.hi;
  out.lo = x.lo;
  out.ulp_exp = std::max(e, format.emin) - format.precision + 1;
  // RN to the format: n = x / ulp(x), exact scaling (powers of two, nothing
  // under- or overflows), rounded to an integer, ties to even. |nh| < 2^p, so
  // |nl| <= ulp(nh) / 2 < 2^-29 moves nh off a half-integer only when nh is
  // one, and then the sign of nl decides.
  // (The formats' ulp exponents lie within [-149, 120]: Pow2 takes them.)
  const double nh = x.hi * Pow2(-out.ulp_exp);
  const double nl = x.lo * Pow2(-out.ulp_exp);
  double r = std::nearbyint(nh);
  if (nl != 0 && nh - std::floor(nh) == 0.5) r = nl > 0 ? std::ceil(nh) : std::floor(nh);
  out.rounded = r == 0 ? std::copysign(0.0, x.hi) : r * Pow2(out.ulp_exp);
  return out;
}

}  // namespace

std::optional<TwoDoubleExact> FastTanhBwdExactValue(float grad_f, float t_f,
                                                    const FloatFormat& format) {
  const double grad = grad_f, t = t_f;
  if (!std::isfinite(grad) || !std::isfinite(t)) return std::nullopt;
  // t^2 is exact: 24 x 24 bits in 53, between 2^-298 and 2^256 (or 0).
  const double t2 = t * t;
  // 1 - t^2 = s.hi + s.lo exactly.
  const DoubleWord s = TwoSum(1.0, -t2);
  // grad * s.hi and grad * s.lo, each exactly two doubles: the products are 0
  // or at least 2^-149 * 2^-346 in magnitude, so their errors stay far above
  // the double subnormals (TwoProd's one condition).
  const DoubleWord p1 = TwoProd(grad, s.hi);
  const DoubleWord p2 = TwoProd(grad, s.lo);
  DoubleWord x;
  if (!ExactPair<4>({p1.hi, p1.lo, p2.hi, p2.lo}, &x)) return std::nullopt;
  return FromPair(x, format);
}

std::optional<TwoDoubleExact> FastExactSum(double* terms, size_t n, const FloatFormat& format) {
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(terms[i])) return std::nullopt;
  }
  if (n == 0) return std::nullopt;
  DoubleWord x;
  if (!ExactPairOf(terms, n, &x)) return std::nullopt;
  return FromPair(x, format);
}

std::optional<UlpError> FastUlpError(const TwoDoubleExact& x, double y, const FloatFormat& format) {
  UlpError result;
  // x is finite and rounds to a finite value: a NaN or an infinity is a
  // special mismatch, as ulp_metric.cc's ClassifyAgainstRounded has it.
  if (!std::isfinite(y)) {
    result.special_mismatch = true;
    result.special_cause = SpecialCause::kIntermediateRange;
    return result;
  }
  result.correctly_rounded = x.rounded == y;  // a zero matches a zero of either sign
  result.signed_zero_mismatch =
      y == 0 && x.rounded == 0 && std::signbit(y) != std::signbit(x.rounded);
  DoubleWord d;  // y - x = d.hi + d.lo, d.hi = RN(y - x)
  if (!ExactPair<3>({y, -x.hi, -x.lo}, &d)) return std::nullopt;
  if (d.hi == 0) return result;  // e == 0
  // e = RN(|y - x| / ulp(x)) = |d.hi| * 2^-ulp_exp: scaling by a power of two
  // commutes with RN when nothing under- or overflows (|d.hi| >= 2^-705).
  result.ulp = std::fabs(d.hi * Pow2(-x.ulp_exp));
  const int bound_count = HistogramBoundCount(format);
  int bin = LeastBoundAtOrAbove(result.ulp, bound_count);
  // e's double equals the bound: the exact |y - x| is above it when d.lo
  // points away from zero.
  if (bin < bound_count && result.ulp == HistogramBound(bin)) {
    const double away = std::signbit(d.hi) ? -d.lo : d.lo;
    if (away > 0) ++bin;
  }
  result.bin = bin;
  return result;
}

bool FastTanhBwdTermMagnitude(float grad_f, float t_f, double terms[4]) {
  if (!std::isfinite(grad_f) || !std::isfinite(t_f)) return false;
  const double g = std::fabs(static_cast<double>(grad_f));
  const double t = t_f;
  // t^2 exact (48 bits); g t^2 = p.hi + p.lo exactly: the product is 0 or at
  // least 2^-447, so its error stays far above the double subnormals.
  const DoubleWord p = TwoProd(g, t * t);
  terms[0] = g;
  terms[1] = 0;
  terms[2] = p.hi;
  terms[3] = p.lo;
  return true;
}

namespace {

// The double-word operations below are double_word.h's (Joldes, Muller and
// Popescu's): Add (AccurateDWPlusDW, 3 u^2 + 13 u^3) and Div (DWDivDW2 with
// DWTimesFP3, 15 u^2 + 56 u^3), u = 2^-53; every operand being nonnegative,
// no cancellation magnifies them.

// Half the distance from a finite f > 0 to its neighbour above (up) or below:
// the neighbours' bits are f's plus or minus one.
double HalfGap(double f, bool up) {
  uint64_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits = up ? bits + 1 : bits - 1;
  double next;
  std::memcpy(&next, &bits, sizeof next);
  return std::fabs(next - f) / 2;
}

}  // namespace

std::optional<BoundFraction> FastBoundFraction(const TwoDoubleExact& x, double y,
                                               const double* terms, size_t n,
                                               uint64_t roundings, const FloatFormat& format) {
  const bool binary32 = format.precision == kBinary32.precision && format.emax == kBinary32.emax;
  if ((!binary32 && format.precision > kBinary32.precision) || !std::isfinite(y) ||
      roundings == 0 || roundings > 64) {
    return std::nullopt;
  }
  BoundFraction result;
  // |y - x| = |d0 + n1 + s1| exactly: y - hi = d0 + d1, d1 - lo = s0 + s1,
  // d0 + s0 = n0 + n1 (TwoSum each). Either y - hi is exact (d1 = 0, then s0 =
  // -lo, s1 = 0) or y and hi are more than a factor 2 apart and |s0| is at
  // most 3u |d0|: the error is n0 + (n1 + s1) with one rounding of a term at
  // most 4u^2 of it.
  const DoubleWord d = TwoSum(y, -x.hi);
  const DoubleWord s = TwoSum(d.lo, -x.lo);
  const DoubleWord nn = TwoSum(d.hi, s.hi);
  if (nn.hi == 0 && nn.lo == 0 && s.lo == 0) return result;  // y == x: 0, bin 0
  DoubleWord error = FastTwoSum(nn.hi, nn.lo + s.lo);
  if (error.hi < 0) error = {-error.hi, -error.lo};
  if (error.hi == 0) return std::nullopt;
  // f = |y - x| c / (m A + U c), c = 2^24 - m, U = m 2^(emin - p + 1) (the
  // underflow allowance of reduction_bound.h and ElementwiseBound); MPFR
  // holds A at 320 bits, 2^-319 of it, far inside the margin below. In a
  // 16-bit format A is scaled by 2^(24 - p) and the bound widened by the
  // output's own rounding (MeasureBoundFraction): f = |y - x| c 2^p /
  // (den (2^p + 1) + |x| c + 2^emin c).
  const double m = static_cast<double>(roundings);
  const double c = 0x1p24 - m;
  // The terms are double-words of nonnegative quantities: added small ones
  // first, nothing cancels.
  std::array<DoubleWord, 4> a{};
  if (n > a.size()) return std::nullopt;
  for (size_t i = 0; i < n; ++i) {
    a[i] = {terms[2 * i], terms[2 * i + 1]};
    if (!(a[i].hi >= 0) || !std::isfinite(a[i].hi) || !std::isfinite(a[i].lo) ||
        (a[i].hi == 0 && a[i].lo != 0) || FastTwoSum(a[i].hi, a[i].lo).hi != a[i].hi) {
      return std::nullopt;
    }
  }
  for (size_t i = 1; i < n; ++i) {  // insertion sort by hi: at most four
    for (size_t j = i; j > 0 && a[j].hi < a[j - 1].hi; --j) std::swap(a[j], a[j - 1]);
  }
  DoubleWord sum{0, 0};
  for (size_t i = 0; i < n; ++i) sum = Add(sum, a[i]);
  const int p = format.precision;
  // Scalings by powers of two within the formats' exponents (|k| <= 149):
  // exact, as ldexp's are, for these normal doubles far from the double
  // range's ends.
  const double widen = Pow2(kBinary32.precision - p);
  sum = {sum.hi * widen, sum.lo * widen};
  // m c < 2^30: the allowance is exact.
  DoubleWord den = Add(MulDouble(sum, m), {m * c * Pow2(format.emin - p + 1), 0});
  DoubleWord num = MulDouble(error, c);
  if (!binary32) {
    num = {num.hi * Pow2(p), num.lo * Pow2(p)};
    const DoubleWord magnitude = x.hi < 0 ? DoubleWord{-x.hi, -x.lo} : DoubleWord{x.hi, x.lo};
    den = Add(Add(MulDouble(den, Pow2(p) + 1), MulDouble(magnitude, c)),
                {c * Pow2(format.emin), 0});
  }
  const DoubleWord q = Div(num, den);
  // The steps' relative errors add up to less than 50 u^2 (2^-100), none
  // magnified by a cancellation: the quotient is within 2^-96 of f,
  // relatively, with room to spare.
  const double margin = q.hi * 0x1p-96;
  // RN(f) = q.hi where f lies strictly between the midpoints on either side
  // of it (twice the margin covers the roundings of these two sums).
  const double f = q.hi;
  if (!(f > 0 && f < INFINITY) ||
      !(q.lo + 2 * margin < HalfGap(f, true) && q.lo - 2 * margin > -HalfGap(f, false))) {
    return std::nullopt;
  }
  result.fraction = f;
  const int above_bin = BoundFractionBoundCount();
  result.bin = above_bin;
  for (int i = 1; i < above_bin; ++i) {
    const double bound = BoundFractionBound(i);
    // Sign of f - bound: q.hi - bound is exact where the two are within a
    // factor 2 (Sterbenz), and decides by itself otherwise.
    const double below = (q.hi - bound) + q.lo;
    if (std::fabs(below) <= 2 * margin) return std::nullopt;
    if (below < 0) {
      result.bin = i;
      break;
    }
  }
  result.above_one = result.bin == above_bin;
  return result;
}

namespace {
constexpr mpfr_prec_t TierPrecision(int tier) { return tier < 4 ? 64 * (tier + 1) : 384; }
}  // namespace

MpfrTanhBwdError::MpfrTanhBwdError() {
  mpfr_init2(u_, 53);
  for (int k = 0; k < kTiers; ++k) {
    mpfr_init2(s_[k], TierPrecision(k));
    mpfr_init2(x_tier_[k], TierPrecision(k) + 24);
  }
  mpfr_init2(difference_, 53);
  x_ = x_tier_[0];
}

MpfrTanhBwdError::~MpfrTanhBwdError() {
  mpfr_clears(u_, difference_, static_cast<mpfr_ptr>(nullptr));
  for (int k = 0; k < kTiers; ++k) mpfr_clears(s_[k], x_tier_[k], static_cast<mpfr_ptr>(nullptr));
}

void MpfrTanhBwdError::Set(float grad, float t) {
  // Each step is exact (ternary 0) at the precision chosen for it: t^2 has at
  // most 48 bits; 1 - t^2 spans from the higher of 1 and t^2's leading bit
  // down to the lower of 1's and t^2's last bits, at most 347 bits (t^2 down
  // to 2^-298, 48 bits wide); grad * (1 - t^2) 24 bits more. Infinities and
  // NaN follow MPFR's extended-real rules, as TanhBwdExact's do.
  // t^2 in a double is exact (48 bits, within the double range), so one
  // conversion stands for setting t and squaring it.
  mpfr_set_d(u_, static_cast<double>(t) * static_cast<double>(t), MPFR_RNDN);
  long span = 2;
  if (mpfr_regular_p(u_)) {
    const long e = mpfr_get_exp(u_);  // u in [2^(e-1), 2^e), last bit at or above 2^(e-48)
    span = std::max(e, 1L) - std::min(e - 48, 0L) + 1;
  }
  int tier = 0;
  while (tier + 1 < kTiers && TierPrecision(tier) < span) ++tier;
  mpfr_ui_sub(s_[tier], 1, u_, MPFR_RNDN);
  x_ = x_tier_[tier];
  // grad = m 2^e with |m| < 2^24 an integer: a product by a small integer and
  // an exponent shift, both exact, cost less than a product by a double.
  int e = 0;
  const float fraction = std::frexp(grad, &e);
  if (std::isfinite(grad) && grad != 0) {
    mpfr_mul_si(x_, s_[tier], static_cast<long>(std::ldexp(fraction, 24)), MPFR_RNDN);
    mpfr_mul_2si(x_, x_, e - 24, MPFR_RNDN);
  } else {
    mpfr_mul_d(x_, s_[tier], grad, MPFR_RNDN);  // zeros, infinities, NaN: their signs and rules
  }
}

UlpError MpfrTanhBwdError::Measure(double y, const FloatFormat& format) const {
  UlpError result;
  if (mpfr_nan_p(x_)) {
    // The op is undefined here (inf*0, inf - inf): any NaN is right.
    result.correctly_rounded = std::isnan(y);
    result.special_mismatch = !result.correctly_rounded;
    if (result.special_mismatch) result.special_cause = SpecialCause::kNumberWhereUndefined;
    return result;
  }
  if (mpfr_inf_p(x_)) {
    const bool same = std::isinf(y) && ((y < 0) == (mpfr_signbit(x_) != 0));
    result.correctly_rounded = same;
    result.special_mismatch = !same;
    if (!same) result.special_cause = ClassifySpecialMismatch(false, true, true, y);
    return result;
  }
  if (!std::isfinite(y)) {
    // Right (half an ulp by definition) only where x rounds to that infinity:
    // |x| at or beyond max + ulp/2, a double.
    const double threshold = std::ldexp(2.0 - std::ldexp(1.0, -format.precision), format.emax);
    const bool negative = mpfr_signbit(x_) != 0;
    const bool rounds_infinite =
        negative ? mpfr_cmp_d(x_, -threshold) <= 0 : mpfr_cmp_d(x_, threshold) >= 0;
    const bool rounds_there = std::isinf(y) && (y < 0) == negative && rounds_infinite;
    if (rounds_there) {
      result.ulp = 0.5;
      result.bin = 1;
      result.correctly_rounded = true;
    } else {
      result.special_mismatch = true;
      result.special_cause = ClassifySpecialMismatch(false, false, rounds_infinite, y);
    }
    return result;
  }
  // y - x rounded once to 53 bits is RN(y - x); the ternary value says on
  // which side of it the exact difference lies (MPFR's exponent range has
  // no underflow here). e = |that| / 2^q (q = UlpExponent(x)), exact: a
  // power of two, built from its bits (|q| < 300).
  const int inexact = mpfr_d_sub(difference_, y, x_, MPFR_RNDN);
  const long q = UlpExponent(x_, format);
  const double d = mpfr_get_d(difference_, MPFR_RNDN);  // exact: 53 bits
  const uint64_t scale_bits = static_cast<uint64_t>(1023 - q) << 52;
  double scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
  result.ulp = std::fabs(d) * scale;
  // y is RN(x) exactly when |y - x| is below half the spacing of the format
  // at x (2^q: below a power of two the spacing halves, and q with it, so a y
  // across a binade edge is measured in x's), or half of it with y's last
  // bit even (ties to even: y / 2^q an even integer). That covers the zeros
  // (a zero matches either), the subnormals (one spacing) and the overflow
  // (from max + ulp/2 on x rounds to infinity, so a finite y is at least half
  // a spacing off, and at exactly half the largest value is odd). The double
  // e settles it but at e = 1/2, where the ternary value says on which side
  // of 1/2 the exact error is (below it when d was rounded away from zero).
  if (result.ulp != 0.5) {
    result.correctly_rounded = result.ulp < 0.5;
  } else if (inexact != 0) {
    result.correctly_rounded = (d > 0) == (inexact > 0);
  } else {
    result.correctly_rounded = std::fmod(std::fabs(y) * scale, 2.0) == 0;
  }
  // RN(x) is a zero exactly when y is a zero and correctly rounded, and then
  // has x's sign (an exact zero's, or a tiny x's rounded toward it).
  result.signed_zero_mismatch =
      y == 0 && result.correctly_rounded && std::signbit(y) != (mpfr_signbit(x_) != 0);
  if (mpfr_zero_p(difference_)) return result;  // y == x: e == 0
  const int bound_count = HistogramBoundCount(format);
  int bin = LeastBoundAtOrAbove(result.ulp, bound_count);
  // On a bound exactly, the exact |y - x| is above it when the rounding went
  // toward zero: d > 0 rounded down (ternary < 0) or d < 0 rounded up.
  if (bin < bound_count && result.ulp == HistogramBound(bin) && ((d > 0) == (inexact < 0)) &&
      inexact != 0) {
    ++bin;
  }
  result.bin = bin;
  return result;
}

}  // namespace ulpgate
