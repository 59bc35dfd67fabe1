#include "oracles/fast_ulp.h"

#include <array>
#include <cmath>

namespace ulpgate {
namespace {

struct Pair {
  double hi, lo;
};

// Knuth's TwoSum: hi = RN(a + b), lo = a + b - hi exactly (no overflow here:
// every value below is far inside the double range).
inline Pair TwoSum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

// hi = RN(a * b), lo = a * b - hi exactly, as long as lo does not underflow.
inline Pair TwoProd(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}

// The exact sum of terms[0 .. n) as hi + lo with hi = RN(sum), if the errors
// of a TwoSum cascade (terms by increasing magnitude) add up without rounding;
// false otherwise. Every step is an error-free transformation, so true means
// hi + lo is the sum exactly. Reorders `terms`.
bool ExactPairOf(double* terms, size_t n, Pair* out) {
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
    const Pair p = TwoSum(s, terms[i]);
    s = p.hi;
    const Pair q = TwoSum(r, p.lo);
    if (q.lo != 0) return false;
    r = q.hi;
  }
  *out = TwoSum(s, r);
  return true;
}

template <size_t N>
bool ExactPair(std::array<double, N> terms, Pair* out) {
  return ExactPairOf(terms.data(), N, out);
}

// What every output's measurement shares, from x = hi + lo exactly (hi =
// RN(x)); nullopt for an exact zero (its sign is MPFR's to give) or where
// rounding to the format might overflow.
std::optional<FastTanhBwdExact> FromPair(const Pair& x, const FloatFormat& format) {
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
  FastTanhBwdExact out;
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

std::optional<FastTanhBwdExact> FastTanhBwdExactValue(float grad_f, float t_f,
                                                      const FloatFormat& format) {
  const double grad = grad_f, t = t_f;
  if (!std::isfinite(grad) || !std::isfinite(t)) return std::nullopt;
  // t^2 is exact: 24 x 24 bits in 53, between 2^-298 and 2^256 (or 0).
  const double t2 = t * t;
  // 1 - t^2 = s.hi + s.lo exactly.
  const Pair s = TwoSum(1.0, -t2);
  // grad * s.hi and grad * s.lo, each exactly two doubles: the products are 0
  // or at least 2^-149 * 2^-346 in magnitude, so their errors stay far above
  // the double subnormals (TwoProd's one condition).
  const Pair p1 = TwoProd(grad, s.hi);
  const Pair p2 = TwoProd(grad, s.lo);
  Pair x;
  if (!ExactPair<4>({p1.hi, p1.lo, p2.hi, p2.lo}, &x)) return std::nullopt;
  return FromPair(x, format);
}

std::optional<FastTanhBwdExact> FastExactSum(double* terms, size_t n, const FloatFormat& format) {
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(terms[i])) return std::nullopt;
  }
  if (n == 0) return std::nullopt;
  Pair x;
  if (!ExactPairOf(terms, n, &x)) return std::nullopt;
  return FromPair(x, format);
}

std::optional<UlpError> FastUlpError(const FastTanhBwdExact& x, double y, const FloatFormat& format) {
  UlpError result;
  // x is finite and rounds to a finite value: a NaN or an infinity is a
  // special mismatch, as ulp_metric.cc's ClassifyAgainstRounded has it.
  if (!std::isfinite(y)) {
    result.special_mismatch = true;
    return result;
  }
  result.correctly_rounded = x.rounded == y;  // a zero matches a zero of either sign
  result.signed_zero_mismatch =
      y == 0 && x.rounded == 0 && std::signbit(y) != std::signbit(x.rounded);
  Pair d;  // y - x = d.hi + d.lo, d.hi = RN(y - x)
  if (!ExactPair<3>({y, -x.hi, -x.lo}, &d)) return std::nullopt;
  if (d.hi == 0) return result;  // e == 0
  // e = RN(|y - x| / ulp(x)) = |d.hi| * 2^-ulp_exp: scaling by a power of two
  // commutes with RN when nothing under- or overflows (|d.hi| >= 2^-705).
  result.ulp = std::fabs(d.hi * Pow2(-x.ulp_exp));
  const int bound_count = HistogramBoundCount(format);
  int bin = bound_count;
  for (int i = 1; i < bound_count; ++i) {
    if (result.ulp <= HistogramBound(i)) {
      bin = i;
      break;
    }
  }
  // e's double equals the bound: the exact |y - x| is above it when d.lo
  // points away from zero.
  if (bin < bound_count && result.ulp == HistogramBound(bin)) {
    const double away = std::signbit(d.hi) ? -d.lo : d.lo;
    if (away > 0) ++bin;
  }
  result.bin = bin;
  return result;
}

}  // namespace ulpgate
