#include "oracles/format.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "oracles/mpfr_number.h"

namespace ulpgate {
namespace {

// Rounds x (any precision) to the format in `rnd`, through one MPFR value of
// precision p in the format's exponent range: mpfr_check_range for overflow,
// mpfr_subnormalize for gradual underflow, each re-rounding with the ternary
// value of the step before, so the result is one rounding of x.
double Round(const FloatFormat& format, mpfr_srcptr x, mpfr_rnd_t rnd) {
  if (mpfr_nan_p(x)) return std::nan("");
  MpfrNumber r(format.precision);
  const mpfr_exp_t old_emin = mpfr_get_emin();
  const mpfr_exp_t old_emax = mpfr_get_emax();
  int ternary = mpfr_set(r.get(), x, rnd);
  mpfr_set_emin(format.mpfr_emin());
  mpfr_set_emax(format.mpfr_emax());
  ternary = mpfr_check_range(r.get(), ternary, rnd);
  mpfr_subnormalize(r.get(), ternary, rnd);
  mpfr_set_emin(old_emin);
  mpfr_set_emax(old_emax);
  return mpfr_get_d(r.get(), MPFR_RNDN);  // exact: p <= 53 and in double's range
}

}  // namespace

const std::vector<const FloatFormat*>& Formats() {
  static const std::vector<const FloatFormat*> formats = {&kBinary32, &kBFloat16, &kBinary16,
                                                          &kBinary64};
  return formats;
}

const FloatFormat* FindFormat(std::string_view name) {
  for (const FloatFormat* f : Formats()) {
    if (name == f->name) return f;
  }
  return nullptr;
}

double DecodeBits(const FloatFormat& format, uint64_t bits) {
  const int m = format.mantissa_bits();
  const int e = format.exponent_bits();
  const uint64_t mantissa = bits & ((uint64_t{1} << m) - 1);
  const uint64_t exponent = (bits >> m) & ((uint64_t{1} << e) - 1);
  const bool negative = ((bits >> (format.bits - 1)) & 1) != 0;
  const uint64_t max_exponent = (uint64_t{1} << e) - 1;
  double v;
  if (exponent == max_exponent) {
    v = mantissa == 0 ? HUGE_VAL : std::nan("");
  } else if (exponent == 0) {
    // Subnormal or zero. Scaling by Pow2 (exact, and no libm call: this runs
    // per element) where the formats' exponents stay inside its range.
    const int scale = format.emin - m;
    v = static_cast<double>(mantissa) * (scale >= -1022 ? Pow2(scale) : std::ldexp(1.0, scale));
  } else {
    const int scale = static_cast<int>(exponent) - (static_cast<int>(max_exponent) >> 1) - m;
    const double significand = static_cast<double>(mantissa | (uint64_t{1} << m));
    v = scale >= -1022 && scale <= 1023 ? significand * Pow2(scale)
                                        : std::ldexp(significand, scale);
  }
  return negative ? -v : v;
}

bool IsRepresentable(const FloatFormat& format, double value) {
  if (std::isnan(value) || std::isinf(value)) return true;
  return RoundToFormat(format, value) == value;
}

uint64_t EncodeBits(const FloatFormat& format, double value) {
  const int m = format.mantissa_bits();
  const int e = format.exponent_bits();
  const uint64_t sign = std::signbit(value) ? uint64_t{1} << (format.bits - 1) : 0;
  const uint64_t max_exponent = (uint64_t{1} << e) - 1;
  if (std::isnan(value)) return sign | (max_exponent << m) | (uint64_t{1} << (m - 1));
  if (std::isinf(value)) return sign | (max_exponent << m);
  if (!IsRepresentable(format, value)) {
    throw std::invalid_argument(fmt::format("EncodeBits: {} is not a value of {}", value,
                                            format.name));
  }
  const double magnitude = std::fabs(value);
  if (magnitude == 0) return sign;
  const int unbiased = std::ilogb(magnitude);  // magnitude in [2^unbiased, 2^(unbiased + 1))
  if (unbiased < format.emin) {  // subnormal: mantissa = magnitude / 2^(emin - m)
    return sign | static_cast<uint64_t>(std::ldexp(magnitude, m - format.emin));
  }
  const int scale = m - unbiased;
  const uint64_t significand = static_cast<uint64_t>(
      scale >= -1022 && scale <= 1023 ? magnitude * Pow2(scale) : std::ldexp(magnitude, scale));
  const uint64_t biased = static_cast<uint64_t>(unbiased + (static_cast<int>(max_exponent) >> 1));
  return sign | (biased << m) | (significand & ((uint64_t{1} << m) - 1));
}

double RoundToFormat(const FloatFormat& format, mpfr_srcptr x) {
  return Round(format, x, MPFR_RNDN);
}

int QuantumExponent(const FloatFormat& f, double x) {
  // ilogb(x) from the exponent field (a double subnormal has none to read).
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  const int e = biased == 0 ? std::ilogb(x) : biased - 1023;
  return (e > f.emin ? e : f.emin) - (f.precision - 1);
}

double RoundDouble(const FloatFormat& f, double x, bool toward_zero) {
  if (x == 0 || !std::isfinite(x)) return x;
  const int q = QuantumExponent(f, x);
  // x / 2^q and back are exact (powers of two, no overflow or underflow for
  // formats inside binary64's range). With p >= 2, -1022 <= -q and q <=
  // 1023: Pow2 takes both. |scaled| < 2^p.
  const double scaled = x * Pow2(-q);
  double r;
  if (toward_zero) {
    r = static_cast<double>(static_cast<int64_t>(scaled));  // truncates; |scaled| < 2^53
  } else if (f.precision <= 50) {
    // Adding and subtracting 1.5 * 2^52 leaves the integer nearest |scaled|
    // < 2^51, ties to even, in the default rounding mode, which ulpgate
    // never changes (and -ffp-contract=off, no fast-math: both operations
    // happen as written).
    constexpr double kShift = 0x1.8p52;
    r = (scaled + kShift) - kShift;
  } else {
    r = std::nearbyint(scaled);
  }
  // A result of zero keeps the sign of x, as trunc and nearbyint give it.
  const double y = std::copysign(r, scaled) * Pow2(q);
  if (std::fabs(y) >= Pow2(f.emax + 1)) {
    // Rounded past the largest finite value: to nearest gives infinity (x was
    // at least the overflow threshold), toward zero the largest finite value.
    const double largest = std::ldexp(2.0 - std::ldexp(1.0, 1 - f.precision), f.emax);
    return std::copysign(toward_zero ? largest : std::numeric_limits<double>::infinity(), x);
  }
  return y;
}

double RoundToFormat(const FloatFormat& format, double x) {
  if (std::isnan(x) || std::isinf(x)) return x;
  if (format.precision <= 52) return RoundDouble(format, x);
  MpfrNumber exact(53);
  mpfr_set_d(exact.get(), x, MPFR_RNDN);  // exact: a double
  return Round(format, exact.get(), MPFR_RNDN);
}

double TruncateToFormat(const FloatFormat& format, mpfr_srcptr x) {
  return Round(format, x, MPFR_RNDZ);
}

std::string BitsText(const FloatFormat& format, uint64_t bits) {
  return fmt::format("0x{:0{}x}", bits, format.bits / 4);
}

}  // namespace ulpgate
