#include "oracles/format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "oracles/mpfr_number.h"

namespace ulpgate {
namespace {

// The formats as registered: f32, bf16, f16, f64, then the 8-, 6- and 4-bit
// ones. Adding a format is a line here (and its FloatFormat constant).
std::vector<const FloatFormat*>& Registry() {
  static std::vector<const FloatFormat*> formats = {
      &kBinary32,     &kBFloat16,       &kBinary16,      &kBinary64,
      &kFloat8E4M3FN, &kFloat8E4M3FNUZ, &kFloat8E5M2,    &kFloat8E5M2FNUZ,
      &kFloat6E2M3FN, &kFloat6E3M2FN,   &kFloat4E2M1FN,  &kFloat8E8M0FNU};
  return formats;
}

// Rounds x (any precision) to p bits in `rnd`, with the format's gradual
// underflow (mpfr_subnormalize, re-rounding with the ternary value of the
// step before, so the result is one rounding of x) and an exponent range one
// binade past the format's, so that a rounding past its largest finite value
// stays finite for FinishRounding to judge.
double Round(const FloatFormat& format, mpfr_srcptr x, mpfr_rnd_t rnd) {
  if (mpfr_nan_p(x)) return std::nan("");
  if (mpfr_inf_p(x)) {
    return RoundDouble(format, mpfr_signbit(x) ? -HUGE_VAL : HUGE_VAL, rnd == MPFR_RNDZ);
  }
  MpfrNumber r(format.precision);
  const mpfr_exp_t old_emin = mpfr_get_emin();
  const mpfr_exp_t old_emax = mpfr_get_emax();
  int ternary = mpfr_set(r.get(), x, rnd);
  mpfr_set_emin(format.has_subnormals ? format.mpfr_emin() : format.emin + 1);
  mpfr_set_emax(std::min<long>(format.mpfr_emax() + 1, 1024));  // binary64: its own range
  ternary = mpfr_check_range(r.get(), ternary, rnd);
  if (format.has_subnormals) mpfr_subnormalize(r.get(), ternary, rnd);
  mpfr_set_emin(old_emin);
  mpfr_set_emax(old_emax);
  // Exact: p <= 53, and in double's range (past it for binary64 only, where
  // the infinity is the overflow FinishRounding gives anyway).
  const double y = mpfr_get_d(r.get(), MPFR_RNDN);
  return RoundDouble(format, y, rnd == MPFR_RNDZ);  // exact already: only the range rules act
}

}  // namespace

const std::vector<const FloatFormat*>& Formats() { return Registry(); }

const FloatFormat* FindFormat(std::string_view name) {
  for (const FloatFormat* f : Formats()) {
    if (name == f->name) return f;
  }
  return nullptr;
}

ScopedFormatRegistration::ScopedFormatRegistration(const FloatFormat& format) : format_(&format) {
  if (FindFormat(format.name) != nullptr) {
    throw std::invalid_argument(fmt::format("format '{}' is registered already", format.name));
  }
  Registry().push_back(format_);
}

ScopedFormatRegistration::~ScopedFormatRegistration() {
  auto& formats = Registry();
  formats.erase(std::remove(formats.begin(), formats.end(), format_), formats.end());
}

double LargestFinite(const FloatFormat& f) {
  const int lost = f.largest_loses_top_mantissa() ? 1 : 0;
  return std::ldexp(2.0 - std::ldexp(1.0, 1 - f.precision + lost), f.emax);
}

double SmallestPositive(const FloatFormat& f) {
  return std::ldexp(1.0, f.has_subnormals ? f.emin - f.precision + 1 : f.emin);
}

double OverflowValue(const FloatFormat& f, bool negative) {
  double v;
  if (f.has_infinity()) {
    v = HUGE_VAL;
  } else if (f.has_nan()) {
    return std::nan("");
  } else {
    v = LargestFinite(f);
  }
  return negative && f.has_sign ? -v : v;
}

double DecodeBits(const FloatFormat& format, uint64_t bits) {
  const int m = format.mantissa_bits();
  const int e = format.exponent_bits();
  const uint64_t mantissa = bits & ((uint64_t{1} << m) - 1);
  const uint64_t exponent = (bits >> m) & ((uint64_t{1} << e) - 1);
  const bool negative = format.has_sign && ((bits >> (format.bits - 1)) & 1) != 0;
  const uint64_t max_exponent = (uint64_t{1} << e) - 1;
  const uint64_t magnitude_bits = format.has_sign ? format.bits - 1 : format.bits;
  const uint64_t magnitude = bits & ((uint64_t{1} << magnitude_bits) - 1);
  switch (format.nan) {
    case NanEncoding::kIeee:
      if (exponent == max_exponent) {
        const double special = mantissa == 0 ? HUGE_VAL : std::nan("");
        return negative ? -special : special;
      }
      break;
    case NanEncoding::kAllOnes:
      if (magnitude == (uint64_t{1} << magnitude_bits) - 1) return std::nan("");
      break;
    case NanEncoding::kNegativeZero:
      if (negative && magnitude == 0) return std::nan("");
      break;
    case NanEncoding::kNone:
      break;
  }
  double v;
  if (exponent == 0 && format.has_subnormals) {
    // Subnormal or zero. Scaling by Pow2 (exact, and no libm call: this runs
    // per element) where the formats' exponents stay inside its range.
    const int scale = format.emin - m;
    v = static_cast<double>(mantissa) * (scale >= -1022 ? Pow2(scale) : std::ldexp(1.0, scale));
  } else {
    const int scale = static_cast<int>(exponent) - format.bias() - m;
    const double significand = static_cast<double>(mantissa | (uint64_t{1} << m));
    v = scale >= -1022 && scale <= 1023 ? significand * Pow2(scale)
                                        : std::ldexp(significand, scale);
  }
  return negative ? -v : v;
}

bool IsRepresentable(const FloatFormat& format, double value) {
  if (std::isnan(value)) return format.has_nan();
  if (std::isinf(value)) return format.has_infinity() && (value > 0 || format.has_sign);
  if (value == 0) return format.has_zero() && (!std::signbit(value) || format.has_negative_zero());
  if (value < 0 && !format.has_sign) return false;
  const double magnitude = std::fabs(value);
  if (magnitude > LargestFinite(format) || magnitude < SmallestPositive(format)) return false;
  if (format.precision > 52) return RoundToFormat(format, value) == value;
  return RoundDouble(format, value) == value;
}

uint64_t EncodeBits(const FloatFormat& format, double value) {
  const int m = format.mantissa_bits();
  const int e = format.exponent_bits();
  const bool negative = format.has_sign && std::signbit(value);
  const uint64_t sign = negative ? uint64_t{1} << (format.bits - 1) : 0;
  const uint64_t max_exponent = (uint64_t{1} << e) - 1;
  const uint64_t magnitude_bits = format.has_sign ? format.bits - 1 : format.bits;
  if (std::isnan(value)) {
    switch (format.nan) {
      case NanEncoding::kIeee:  // the quiet NaN of the value's sign
        return sign | (max_exponent << m) | (uint64_t{1} << (m - 1));
      case NanEncoding::kAllOnes:
        return sign | ((uint64_t{1} << magnitude_bits) - 1);
      case NanEncoding::kNegativeZero:
        return uint64_t{1} << (format.bits - 1);
      case NanEncoding::kNone:
        break;
    }
    throw std::invalid_argument(fmt::format("EncodeBits: {} has no NaN", format.name));
  }
  // A format without -0 encodes a zero of either sign as +0.
  if (value == 0 && format.has_zero()) return format.has_negative_zero() ? sign : 0;
  if (!IsRepresentable(format, value)) {
    throw std::invalid_argument(fmt::format("EncodeBits: {} is not a value of {}", value,
                                            format.name));
  }
  if (std::isinf(value)) return sign | (max_exponent << m);
  const double magnitude = std::fabs(value);
  const int unbiased = std::ilogb(magnitude);  // magnitude in [2^unbiased, 2^(unbiased + 1))
  if (unbiased < format.emin) {  // subnormal: mantissa = magnitude / 2^(emin - m)
    return sign | static_cast<uint64_t>(std::ldexp(magnitude, m - format.emin));
  }
  const int scale = m - unbiased;
  const uint64_t significand = static_cast<uint64_t>(
      scale >= -1022 && scale <= 1023 ? magnitude * Pow2(scale) : std::ldexp(magnitude, scale));
  const uint64_t biased = static_cast<uint64_t>(unbiased + format.bias());
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
  if (std::isnan(x)) return x;
  if (x < 0 && !f.has_sign) return std::nan("");  // no negative value, not even -0's neighbours
  if (std::isinf(x)) {
    if (f.has_infinity()) return x;
    return toward_zero ? std::copysign(LargestFinite(f), x) : OverflowValue(f, x < 0);
  }
  double y = x;
  if (x != 0) {
    const int q = QuantumExponent(f, x);
    // x / 2^q and back are exact (powers of two, no overflow or underflow for
    // formats inside binary64's range). With p >= 1, -1022 <= -q and q <=
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
    y = std::copysign(r, scaled) * Pow2(q);
    if (std::fabs(y) > LargestFinite(f)) {
      // Rounded past the largest finite value: to nearest is the format's
      // overflow (x was at least the overflow threshold), toward zero the
      // largest finite value.
      return toward_zero ? std::copysign(LargestFinite(f), x) : OverflowValue(f, x < 0);
    }
  }
  if (y == 0) {
    // A format without zero (E8M0): a zero has no value there (NaN, as
    // ml_dtypes and OCP MX's "no zero" scale read it); a positive value below
    // its smallest goes to the smallest, the nearest value and the only one
    // toward zero.
    if (!f.has_zero()) return x == 0 ? std::nan("") : SmallestPositive(f);
    if (!f.has_negative_zero()) return 0.0;
  }
  return y;
}

double RoundToFormat(const FloatFormat& format, double x) {
  if (std::isnan(x)) return x;
  if (format.precision <= 52) return RoundDouble(format, x);
  if (std::isinf(x)) return x;
  MpfrNumber exact(53);
  mpfr_set_d(exact.get(), x, MPFR_RNDN);  // exact: a double
  return Round(format, exact.get(), MPFR_RNDN);
}

double TruncateToFormat(const FloatFormat& format, mpfr_srcptr x) {
  return Round(format, x, MPFR_RNDZ);
}

const char* EncodingName(const FloatFormat& format) {
  if (!format.has_sign && !format.has_subnormals) return "e8m0";
  switch (format.nan) {
    case NanEncoding::kIeee: return "ieee";
    case NanEncoding::kNegativeZero: return "fnuz";
    case NanEncoding::kAllOnes:
    case NanEncoding::kNone: return "fn";
  }
  return "?";
}

std::string StorageText(const FloatFormat& format) {
  if (format.packing == Packing::kNibblePairs) return "2 a byte, low first";
  const int bytes = format.storage_bytes();
  std::string text = fmt::format("{} byte{}", bytes, bytes == 1 ? "" : "s");
  if (format.bits != 8 * bytes) text += fmt::format(" ({} bits used)", format.bits);
  return text;
}

std::string BitsText(const FloatFormat& format, uint64_t bits) {
  return fmt::format("0x{:0{}x}", bits, (format.bits + 3) / 4);
}

}  // namespace ulpgate
