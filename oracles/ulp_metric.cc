#include "oracles/ulp_metric.h"

#include <algorithm>
#include <cmath>

#include "oracles/float_text.h"
#include "oracles/ieee_emulation.h"

namespace ulpgate {
namespace {

// Per-thread scratch whose precision is set per call to hold y - x exactly.
struct Scratch {
  mpfr_t y, difference;
  Scratch() {
    mpfr_init2(y, 24);
    mpfr_init2(difference, 64);
  }
  ~Scratch() { mpfr_clears(y, difference, static_cast<mpfr_ptr>(nullptr)); }
};

Scratch& GetScratch() {
  thread_local Scratch scratch;
  return scratch;
}

}  // namespace

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
  return std::ldexp(1.0, i - 2);
}

UlpError MeasureUlpError(mpfr_srcptr x, float y, const FloatFormat& format) {
  UlpError result;
  const bool y_nan = std::isnan(y);
  const bool y_inf = std::isinf(y);
  if (mpfr_nan_p(x)) {
    // The op is undefined here (inf*0, inf - inf): any NaN is right.
    if (y_nan) {
      result.correctly_rounded = true;
    } else {
      result.special_mismatch = true;
    }
    return result;
  }
  if (mpfr_inf_p(x)) {
    const bool same = y_inf && ((y < 0) == (mpfr_signbit(x) != 0));
    result.correctly_rounded = same;
    result.special_mismatch = !same;
    return result;
  }
  const float rounded = RoundToBinary32(x);
  if (y_nan) {
    result.special_mismatch = true;
    return result;
  }
  if (y_inf) {
    if (FloatBits(rounded) == FloatBits(y)) {
      result.ulp = 0.5;
      result.bin = 1;
      result.correctly_rounded = true;
    } else {
      result.special_mismatch = true;
    }
    return result;
  }
  result.correctly_rounded =
      (y == 0 && rounded == 0) || FloatBits(rounded) == FloatBits(y);
  result.signed_zero_mismatch =
      y == 0 && rounded == 0 && std::signbit(y) != std::signbit(rounded);

  // d = y - x exactly: its bits span from the larger leading bit down to the
  // smaller of the two operands' last bits.
  Scratch& s = GetScratch();
  mpfr_set_flt(s.y, y, MPFR_RNDN);
  if (mpfr_cmp(s.y, x) == 0) return result;  // e == 0 (either zero sign)
  const long ulp_exp = UlpExponent(x, format);
  long high = -100000, low = 100000;
  if (!mpfr_zero_p(x)) {
    high = std::max<long>(high, mpfr_get_exp(x));
    low = std::min<long>(low, mpfr_get_exp(x) - mpfr_get_prec(x));
  }
  if (y != 0) {
    high = std::max<long>(high, mpfr_get_exp(s.y));
    low = std::min<long>(low, mpfr_get_exp(s.y) - 24);
  }
  mpfr_set_prec(s.difference, std::max<long>(high - low + 2, MPFR_PREC_MIN));
  mpfr_sub(s.difference, s.y, x, MPFR_RNDN);  // exact by the precision above
  mpfr_abs(s.difference, s.difference, MPFR_RNDN);
  mpfr_div_2si(s.difference, s.difference, ulp_exp, MPFR_RNDN);  // exact: power of 2
  result.ulp = mpfr_get_d(s.difference, MPFR_RNDN);

  // Bin: the least bound >= e. Rounding to double is monotone, so only an
  // e whose double equals a bound can be on the wrong side; settle it exactly.
  const int bound_count = HistogramBoundCount(format);
  int bin = bound_count;  // above the last bound
  for (int i = 1; i < bound_count; ++i) {
    if (result.ulp <= HistogramBound(i)) {
      bin = i;
      break;
    }
  }
  if (bin < bound_count && result.ulp == HistogramBound(bin)) {
    // e == bound or a hair above: compare e with the bound exactly.
    const long bound_exp = bin == 1 ? -1 : bin - 2;
    if (mpfr_cmp_ui_2exp(s.difference, 1, bound_exp) > 0) ++bin;
  }
  result.bin = bin;
  return result;
}

}  // namespace ulpgate
