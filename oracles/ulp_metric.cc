#include "oracles/ulp_metric.h"

#include <algorithm>
#include <cmath>

#include "oracles/exact.h"
#include "oracles/float_text.h"
#include "oracles/ieee_emulation.h"
#include "oracles/mpfr_number.h"

namespace ulpgate {
namespace {

// Per-thread scratch whose precision is set per call to hold y - x exactly.
struct Scratch {
  mpfr_t y, difference;
  Scratch() {
    mpfr_init2(y, 53);
    mpfr_init2(difference, 64);
  }
  ~Scratch() { mpfr_clears(y, difference, static_cast<mpfr_ptr>(nullptr)); }
};

// Beyond this many bits, y - x is rounded to odd (MeasureUlpError).
constexpr long kOddPrecision = 256;

Scratch& GetScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// For a finite exact value x with binary32 rounding `rounded`: settles a NaN
// or infinite y (true: nothing more to measure) and, for a finite y, sets
// correctly_rounded and signed_zero_mismatch (false: measure |y - x|).
bool ClassifyAgainstRounded(double rounded, double y, UlpError* result) {
  if (std::isnan(y)) {
    result->special_mismatch = true;
    result->special_cause = ClassifySpecialMismatch(false, false, std::isinf(rounded), y);
    return true;
  }
  if (std::isinf(y)) {
    // An overflow to the infinity x rounds to is half an ulp by definition.
    if (rounded == y) {  // the same infinity
      result->ulp = 0.5;
      result->bin = 1;
      result->correctly_rounded = true;
    } else {
      result->special_mismatch = true;
      result->special_cause = ClassifySpecialMismatch(false, false, std::isinf(rounded), y);
    }
    return true;
  }
  result->correctly_rounded = rounded == y;  // a zero matches a zero of either sign
  result->signed_zero_mismatch =
      y == 0 && rounded == 0 && std::signbit(y) != std::signbit(rounded);
  return false;
}

}  // namespace

const char* SpecialCauseKey(SpecialCause cause) {
  switch (cause) {
    case SpecialCause::kNone: return "none";
    case SpecialCause::kIntermediateRange: return "intermediate_overflow";
    case SpecialCause::kNanWhereFinite: return "nan_where_finite";
    case SpecialCause::kInfinityWhereFinite: return "infinity_where_finite";
    case SpecialCause::kFiniteWhereInfinite: return "finite_where_infinite";
    case SpecialCause::kWrongInfinity: return "wrong_infinity";
    case SpecialCause::kNumberWhereUndefined: return "number_where_undefined";
  }
  return "none";
}

const char* SpecialCauseText(SpecialCause cause) {
  switch (cause) {
    case SpecialCause::kNone: return "none";
    case SpecialCause::kIntermediateRange:
      return "intermediate overflow or underflow (exact finite and in range, output NaN or inf)";
    case SpecialCause::kNanWhereFinite: return "NaN where the exact value is finite (beyond range)";
    case SpecialCause::kInfinityWhereFinite:
      return "infinity where the exact value is finite (the other sign)";
    case SpecialCause::kFiniteWhereInfinite: return "finite where the exact value is infinite";
    case SpecialCause::kWrongInfinity: return "NaN or the other infinity where the exact is infinite";
    case SpecialCause::kNumberWhereUndefined: return "a number where the exact value is undefined";
  }
  return "none";
}

SpecialCause ClassifySpecialMismatch(bool x_nan, bool x_inf, bool rounds_infinite, double y) {
  if (x_nan) return SpecialCause::kNumberWhereUndefined;
  if (x_inf) return std::isfinite(y) ? SpecialCause::kFiniteWhereInfinite : SpecialCause::kWrongInfinity;
  if (!rounds_infinite) return SpecialCause::kIntermediateRange;
  return std::isnan(y) ? SpecialCause::kNanWhereFinite : SpecialCause::kInfinityWhereFinite;
}

long UlpExponent(mpfr_srcptr x, const FloatFormat& format) {
  if (mpfr_zero_p(x)) return format.emin - format.precision + 1;
  // MPFR writes x = 0.1b... x 2^exp, so floor(log2 |x|) = exp - 1.
  long e = static_cast<long>(mpfr_get_exp(x)) - 1;
  e = std::min<long>(e, format.emax);
  return std::max<long>(e, format.emin) - format.precision + 1;
}

int HistogramBoundCount(const FloatFormat& format) {
  // 0, 0.5, then 2^0 .. 2^p.
  return 2 + format.precision + 1;
}

double HistogramBound(int i) {
  if (i == 0) return 0.0;
  if (i == 1) return 0.5;
  return Pow2(i - 2);
}

int LeastBoundAtOrAbove(double e, int bound_count) {
  if (e <= 0.5) return 1;
  if (!(e <= HistogramBound(bound_count - 1))) return bound_count;  // NaN too
  // e in (2^(k-1), 2^k] for k = ceil(log2 e), read from e's exponent: the
  // bound 2^k is bound k + 2.
  int k = std::ilogb(e);
  if (e != Pow2(k)) ++k;
  return k + 2;
}

UlpError MeasureUlpError(mpfr_srcptr x, float y, const FloatFormat& format) {
  return MeasureUlpError(x, static_cast<double>(y), format);
}

UlpError MeasureUlpError(mpfr_srcptr x, double y, const FloatFormat& format) {
  UlpError result;
  const bool y_nan = std::isnan(y);
  const bool y_inf = std::isinf(y);
  if (mpfr_nan_p(x)) {
    // The op is undefined here (inf*0, inf - inf): any NaN is right.
    if (y_nan) {
      result.correctly_rounded = true;
    } else {
      result.special_mismatch = true;
      result.special_cause = SpecialCause::kNumberWhereUndefined;
    }
    return result;
  }
  if (mpfr_inf_p(x)) {
    const bool same = y_inf && ((y < 0) == (mpfr_signbit(x) != 0));
    result.correctly_rounded = same;
    result.special_mismatch = !same;
    if (!same) result.special_cause = ClassifySpecialMismatch(false, true, true, y);
    return result;
  }
  if (ClassifyAgainstRounded(RoundToFormat(format, x), y, &result)) return result;

  // d = y - x exactly: its bits span from the larger leading bit down to the
  // smaller of the two operands' last bits.
  Scratch& s = GetScratch();
  mpfr_set_d(s.y, y, MPFR_RNDN);  // exact: y has at most 53 bits
  if (mpfr_cmp(s.y, x) == 0) return result;  // e == 0 (either zero sign)
  const long ulp_exp = UlpExponent(x, format);
  long high = -100000, low = 100000;
  if (!mpfr_zero_p(x)) {
    high = std::max<long>(high, mpfr_get_exp(x));
    low = std::min<long>(low, mpfr_get_exp(x) - mpfr_get_prec(x));
  }
  if (y != 0) {
    high = std::max<long>(high, mpfr_get_exp(s.y));
    low = std::min<long>(low, mpfr_get_exp(s.y) - format.precision);
  }
  const long span = high - low + 2;
  if (span <= kOddPrecision) {
    mpfr_set_prec(s.difference, std::max<long>(span, MPFR_PREC_MIN));
    mpfr_sub(s.difference, s.y, x, MPFR_RNDN);  // exact by the precision above
  } else {
    // x far below y's last bit or far above it (the exact value of a
    // function op at a large operand can be 2^-700000): d rounded to odd
    // at kOddPrecision bits stands for d in every decision below, each a
    // rounding to 53 bits or a comparison with a power of two (rounding to
    // odd at p bits, then to nearest at p - 2 or fewer, is one correct
    // rounding; and it keeps d's side of every p-bit number). The exact
    // difference would take as many bits as the span, and its time.
    mpfr_set_prec(s.difference, kOddPrecision);
    if (mpfr_sub(s.difference, s.y, x, MPFR_RNDZ) != 0 &&
        mpfr_min_prec(s.difference) < kOddPrecision) {
      if (mpfr_signbit(s.difference)) {
        mpfr_nextbelow(s.difference);
      } else {
        mpfr_nextabove(s.difference);
      }
    }
  }
  mpfr_abs(s.difference, s.difference, MPFR_RNDN);
  mpfr_div_2si(s.difference, s.difference, ulp_exp, MPFR_RNDN);  // exact: power of 2
  result.ulp = mpfr_get_d(s.difference, MPFR_RNDN);

  const int bound_count = HistogramBoundCount(format);
  int bin = LeastBoundAtOrAbove(result.ulp, bound_count);
  if (bin < bound_count && result.ulp == HistogramBound(bin)) {
    // e == bound or a hair above: compare e with the bound exactly.
    const long bound_exp = bin == 1 ? -1 : bin - 2;
    if (mpfr_cmp_ui_2exp(s.difference, 1, bound_exp) > 0) ++bin;
  }
  result.bin = bin;
  return result;
}

UlpError MeasureUlpErrorOfQuotient(mpfr_srcptr numerator, uint64_t denominator, float y,
                                   const FloatFormat& format) {
  return MeasureUlpErrorOfQuotient(numerator, denominator, static_cast<double>(y), format);
}

UlpError MeasureUlpErrorOfQuotient(mpfr_srcptr numerator, uint64_t denominator, double y,
                                   const FloatFormat& format) {
  if (denominator == 1 || !mpfr_number_p(numerator) || mpfr_zero_p(numerator)) {
    // inf / N and NaN / N are themselves, 0 / N is the same zero.
    return MeasureUlpError(numerator, y, format);
  }
  const mpfr_prec_t precision = mpfr_get_prec(numerator) + 128;
  // x rounded toward zero keeps x's binade (the power of two below |x| is
  // representable), so its exponent is x's.
  MpfrNumber toward_zero(precision);
  const int ternary = mpfr_div_ui(toward_zero.get(), numerator, denominator, MPFR_RNDZ);
  // A binary32 rounding boundary (a midpoint, 25 bits) on the `precision`-bit
  // grid of this binade cannot lie strictly between toward_zero and the next
  // grid point, where an inexact x lies; one extra bit in between stands for x
  // in every rounding decision and is itself no boundary. (Defensive: with 128
  // bits beyond the numerator's, |x - boundary| >= lsb(numerator) / N exceeds
  // the truncation error, so toward_zero is never itself a boundary; no input
  // can tell this step from plain round-to-nearest, hence no test for it.)
  MpfrNumber stand_in(precision + 1);
  mpfr_set(stand_in.get(), toward_zero.get(), MPFR_RNDN);  // exact: more bits
  if (ternary != 0) {
    if (mpfr_signbit(numerator)) {
      mpfr_nextbelow(stand_in.get());
    } else {
      mpfr_nextabove(stand_in.get());
    }
  }
  UlpError result;
  if (ClassifyAgainstRounded(RoundToFormat(format, stand_in.get()), y, &result)) return result;

  // |y*N - numerator| exactly: y*N has at most p + 64 bits.
  const mpfr_prec_t y_bits = format.precision + 64;
  MpfrNumber scaled_y(y_bits);
  MpfrNumber y_value(format.precision);
  mpfr_set_d(y_value.get(), y, MPFR_RNDN);  // exact: y is a value of the format
  if (mpfr_mul_ui(scaled_y.get(), y_value.get(), denominator, MPFR_RNDN) != 0) {
    throw InexactError("y * N rounded in MeasureUlpErrorOfQuotient");
  }
  long high = mpfr_get_exp(numerator);
  long low = mpfr_get_exp(numerator) - mpfr_get_prec(numerator);
  if (y != 0) {
    high = std::max<long>(high, mpfr_get_exp(scaled_y.get()));
    low = std::min<long>(low, mpfr_get_exp(scaled_y.get()) - y_bits);
  }
  MpfrNumber difference(std::max<long>(high - low + 2, MPFR_PREC_MIN));
  if (mpfr_sub(difference.get(), scaled_y.get(), numerator, MPFR_RNDN) != 0) {
    throw InexactError("y*N - numerator rounded in MeasureUlpErrorOfQuotient");
  }
  mpfr_abs(difference.get(), difference.get(), MPFR_RNDN);
  if (mpfr_zero_p(difference.get())) return result;  // e == 0

  // e = |y*N - numerator| / (N * ulp(x)); N * ulp(x) is exact in 64 bits.
  MpfrNumber scale(64);
  mpfr_set_ui(scale.get(), denominator, MPFR_RNDN);
  mpfr_mul_2si(scale.get(), scale.get(), UlpExponent(stand_in.get(), format), MPFR_RNDN);
  MpfrNumber e(53);
  mpfr_div(e.get(), difference.get(), scale.get(), MPFR_RNDN);  // one rounding, to double
  result.ulp = mpfr_get_d(e.get(), MPFR_RNDN);                   // exact: 53 bits

  // Bin: the least bound >= e, by exact comparison of difference with
  // bound * scale (a bound is a power of two, so the product is exact).
  const int bound_count = HistogramBoundCount(format);
  int bin = bound_count;
  MpfrNumber limit(64);
  for (int i = 1; i < bound_count; ++i) {
    const long bound_exp = i == 1 ? -1 : i - 2;
    mpfr_mul_2si(limit.get(), scale.get(), bound_exp, MPFR_RNDN);
    if (mpfr_cmp(difference.get(), limit.get()) <= 0) {
      bin = i;
      break;
    }
  }
  result.bin = bin;
  return result;
}

}  // namespace ulpgate
