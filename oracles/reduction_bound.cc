#include "oracles/reduction_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "oracles/exact.h"

namespace ulpgate {
namespace {

void Check(int ternary, const char* what) {
  if (ternary != 0) throw InexactError(std::string("bound fraction: ") + what + " rounded");
}

// Enough bits for a + b or a - b to be exact: from the higher leading bit
// (plus a carry) down to the lower last bit.
mpfr_prec_t SumPrecision(mpfr_srcptr a, mpfr_srcptr b) {
  // Infinities and NaNs carry no exponent; their sums are exact anyway.
  if (!mpfr_number_p(a) || !mpfr_number_p(b)) {
    return std::max(mpfr_get_prec(a), mpfr_get_prec(b));
  }
  if (mpfr_zero_p(a)) return mpfr_get_prec(b);
  if (mpfr_zero_p(b)) return mpfr_get_prec(a);
  const long high = std::max<long>(mpfr_get_exp(a), mpfr_get_exp(b)) + 1;
  const long low = std::min<long>(mpfr_get_exp(a) - mpfr_get_prec(a),
                                  mpfr_get_exp(b) - mpfr_get_prec(b));
  return std::max<long>(high - low + 1, MPFR_PREC_MIN);
}

MpfrNumber ExactAdd(mpfr_srcptr a, mpfr_srcptr b) {
  MpfrNumber r(SumPrecision(a, b));
  Check(mpfr_add(r.get(), a, b, MPFR_RNDN), "a + b");
  return r;
}

MpfrNumber ExactSub(mpfr_srcptr a, mpfr_srcptr b) {
  MpfrNumber r(SumPrecision(a, b));
  Check(mpfr_sub(r.get(), a, b, MPFR_RNDN), "a - b");
  return r;
}

// a * k for an integer k < 2^64: at most 64 more bits.
MpfrNumber ExactMulUi(mpfr_srcptr a, uint64_t k) {
  MpfrNumber r(mpfr_get_prec(a) + 64);
  Check(mpfr_mul_ui(r.get(), a, k, MPFR_RNDN), "a * k");
  return r;
}

// 2^24, u = 2^-24 the unit roundoff of binary32.
constexpr uint64_t kInverseUnitRoundoff = uint64_t{1} << 24;

}  // namespace

int BoundFractionBoundCount() { return 10; }

double BoundFractionBound(int i) {
  static const double bounds[] = {0.0,      0x1p-10, 0x1p-8, 0x1p-6, 0x1p-5,
                                  0x1p-4,   0x1p-3,  0x1p-2, 0x1p-1, 1.0};
  return bounds[i];
}

double Gamma(uint64_t m) {
  return static_cast<double>(m) / static_cast<double>(kInverseUnitRoundoff - m);
}

BoundFraction MeasureBoundFraction(mpfr_srcptr numerator, uint64_t denominator, float y,
                                   const ReductionBound& bound, const FloatFormat& format) {
  const bool binary32 = format.precision == kBinary32.precision && format.emax == kBinary32.emax;
  if (!binary32 && format.precision > kBinary32.precision) {
    throw std::invalid_argument("bound fraction: outputs wider than the binary32 accumulation");
  }
  if (!mpfr_number_p(numerator) || !mpfr_number_p(bound.abs_sum.get()) ||
      !mpfr_number_p(bound.underflow.get()) || !mpfr_number_p(bound.peak.get())) {
    throw std::invalid_argument("bound fraction: an exact value or bound that is not a number");
  }
  const uint64_t m = bound.roundings;
  if (m > kInverseUnitRoundoff / 2) throw InexactError("bound fraction: m u > 1/2");
  // An exact value beyond MPFR's exponent range (a function op's, held at
  // MPFR's least number of its sign: oracles/exact.h) stands in as
  // +-2^-3000: far below every bit of y N (>= 2^-213), of the bound's terms
  // (ElementwiseBound holds them at or above 2^-2000) and of every threshold
  // compared below, so every comparison and rounding decides as for the real
  // value, and the exact differences stay a few thousand bits, not 2^30.
  MpfrNumber stand_in(64);
  if (mpfr_regular_p(numerator) && mpfr_get_exp(numerator) < -3000) {
    mpfr_set_si_2exp(stand_in.get(), mpfr_signbit(numerator) ? -1 : 1, -3000, MPFR_RNDN);
    numerator = stand_in.get();
  }
  // gamma_m = m u / (1 - m u) = m / (2^24 - m): scale everything by (2^24 - m)
  // and by the denominator N so that only exact dyadic numbers are compared:
  //   f = |y - E/N| / (m/(2^24 - m) * A'/N + U)
  //     = |y N - E| (2^24 - m) / (m A' + U N (2^24 - m)).
  const uint64_t complement = kInverseUnitRoundoff - m;
  BoundFraction result;

  // Overflow was possible iff (1 + gamma_m) peak reaches the output format's
  // overflow threshold (2 - 2^-p) 2^emax (2^128 - 2^103 for binary32), i.e.
  // peak 2^24 >= threshold (2^24 - m): the binary32 result z is within
  // gamma_m peak of the exact one, and a 16-bit output overflows only where
  // its one rounding of z does.
  const int p = format.precision;
  MpfrNumber threshold(64);
  mpfr_set_ui_2exp(threshold.get(), (uint64_t{1} << (p + 1)) - 1, format.emax - p,
                   MPFR_RNDN);  // exact
  const MpfrNumber scaled_threshold = ExactMulUi(threshold.get(), complement);
  MpfrNumber scaled_peak(mpfr_get_prec(bound.peak.get()));
  mpfr_mul_2si(scaled_peak.get(), bound.peak.get(), 24, MPFR_RNDN);  // exact
  const bool overflow_possible = mpfr_cmpabs(scaled_peak.get(), scaled_threshold.get()) >= 0;
  const int above_bin = BoundFractionBoundCount();
  if (!std::isfinite(y)) {
    if (overflow_possible) {
      result.overflow_exempt = true;
    } else {
      result.fraction = std::numeric_limits<double>::infinity();
      result.bin = above_bin;
      result.above_one = true;
    }
    return result;
  }

  MpfrNumber y_value(24, y);
  const MpfrNumber scaled_y = ExactMulUi(y_value.get(), denominator);
  MpfrNumber error = ExactSub(scaled_y.get(), numerator);
  mpfr_abs(error.get(), error.get(), MPFR_RNDN);
  MpfrNumber num = ExactMulUi(error.get(), complement);
  const MpfrNumber weighted_sum = ExactMulUi(bound.abs_sum.get(), m);
  const MpfrNumber allowance =
      ExactMulUi(ExactMulUi(bound.underflow.get(), denominator).get(), complement);
  MpfrNumber den = ExactAdd(weighted_sum.get(), allowance.get());
  if (!binary32) {
    // A 16-bit output y = RN_p(z) of the binary32 result z, |z - x| <= B:
    // |y - z| <= u_p |z| + U_p with u_p = 2^-p and U_p = 2^(emin - p) (half
    // the format's smallest subnormal), and |z| <= |x| + B, so
    //   |y - x| <= B (1 + u_p) + u_p |x| + U_p.
    // Scaled by N (2^24 - m) 2^p, as num and den are above (times 2^p):
    //   den' = den (2^p + 1) + |E| (2^24 - m) + 2^(emin) N (2^24 - m).
    mpfr_mul_2si(num.get(), num.get(), p, MPFR_RNDN);  // exact
    MpfrNumber magnitude(mpfr_get_prec(numerator));
    mpfr_abs(magnitude.get(), numerator, MPFR_RNDN);  // exact
    const MpfrNumber relative = ExactMulUi(magnitude.get(), complement);
    MpfrNumber subnormal(64);
    mpfr_set_ui_2exp(subnormal.get(), 1, format.emin, MPFR_RNDN);  // exact
    const MpfrNumber absolute =
        ExactMulUi(ExactMulUi(subnormal.get(), denominator).get(), complement);
    const MpfrNumber widened = ExactMulUi(den.get(), (uint64_t{1} << p) + 1);
    den = ExactAdd(ExactAdd(widened.get(), relative.get()).get(), absolute.get());
  }

  if (mpfr_zero_p(num.get())) return result;  // f == 0, bin 0
  if (mpfr_zero_p(den.get())) {
    // A bound of 0 (one term, no rounding) and a nonzero error.
    result.fraction = std::numeric_limits<double>::infinity();
    result.bin = above_bin;
    result.above_one = true;
    return result;
  }
  MpfrNumber f(53);
  mpfr_div(f.get(), num.get(), den.get(), MPFR_RNDN);  // one rounding, to double
  result.fraction = mpfr_get_d(f.get(), MPFR_RNDN);     // exact: 53 bits in range

  result.bin = above_bin;
  MpfrNumber limit(mpfr_get_prec(den.get()));
  for (int i = 1; i < above_bin; ++i) {
    // The bounds are powers of two: den * bound is exact.
    mpfr_mul_2si(limit.get(), den.get(), std::ilogb(BoundFractionBound(i)), MPFR_RNDN);
    if (mpfr_cmp(num.get(), limit.get()) <= 0) {
      result.bin = i;
      break;
    }
  }
  result.above_one = result.bin == above_bin;
  return result;
}

}  // namespace ulpgate
