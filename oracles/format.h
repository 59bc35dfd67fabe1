// Binary floating-point formats as a parameter: a format is its precision,
// exponent range and storage width, and everything that measures, rounds or
// stores a value takes one (docs/design.md "Numerics"). A value of any format
// here is held exactly in a double (binary64 itself included).
#ifndef ULPGATE_ORACLES_FORMAT_H_
#define ULPGATE_ORACLES_FORMAT_H_

#include <mpfr.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace ulpgate {

struct FloatFormat {
  const char* name;  // as reports and the CLI name it: "f32", "bf16", "f16", "f64"
  int precision;     // p, counting the implicit bit
  int emin;          // exponent of the smallest normal
  int emax;          // exponent of the largest finite
  int bits;          // storage width

  constexpr int mantissa_bits() const { return precision - 1; }
  constexpr int exponent_bits() const { return bits - precision; }
  // MPFR's exponent convention (x = 0.1b... x 2^e): the smallest subnormal,
  // 2^(emin - p + 1), is 0.1b x 2^(emin - p + 2); the largest finite value is
  // below 2^(emax + 1).
  constexpr mpfr_exp_t mpfr_emin() const { return emin - precision + 2; }
  constexpr mpfr_exp_t mpfr_emax() const { return emax + 1; }
};

inline constexpr FloatFormat kBinary32{"f32", 24, -126, 127, 32};
inline constexpr FloatFormat kBFloat16{"bf16", 8, -126, 127, 16};
inline constexpr FloatFormat kBinary16{"f16", 11, -14, 15, 16};
inline constexpr FloatFormat kBinary64{"f64", 53, -1022, 1023, 64};

// 2^k for -1022 <= k <= 1023, from its bits: x * Pow2(k) is x * 2^k
// correctly rounded, as std::ldexp(x, k) is, at a fraction of the cost.
inline double Pow2(int k) {
  const uint64_t bits = static_cast<uint64_t>(k + 1023) << 52;
  double p;
  std::memcpy(&p, &bits, sizeof p);
  return p;
}

inline constexpr bool IsBinary32(const FloatFormat& f) {
  return f.precision == kBinary32.precision && f.bits == kBinary32.bits;
}

// f32, bf16, f16, f64.
const std::vector<const FloatFormat*>& Formats();
// nullptr for an unknown name.
const FloatFormat* FindFormat(std::string_view name);

// The value of a bit pattern (the low `bits` bits of `bits`), exactly.
double DecodeBits(const FloatFormat& format, uint64_t bits);
// The bit pattern of a value of the format. `value` must be one (a finite
// value with at most p significant bits in range, an infinity, or a NaN,
// which encodes as the quiet NaN of its sign); throws std::invalid_argument
// otherwise.
uint64_t EncodeBits(const FloatFormat& format, double value);
// True when `value` is a value of the format (NaN and infinities included).
bool IsRepresentable(const FloatFormat& format, double value);

// The format's value nearest to x (ties to even), with gradual underflow and
// overflow to infinity: one rounding of the exact x, whatever its precision.
double RoundToFormat(const FloatFormat& format, mpfr_srcptr x);
double RoundToFormat(const FloatFormat& format, double x);
// One rounding of a double to `format` (to nearest even, or toward zero),
// with the format's subnormals and overflow: the same value as
// RoundToFormat/TruncateToFormat, by double arithmetic instead of MPFR (what
// RoundToFormat of a double uses for such formats). `format` must have at most
// 52 significant bits.
double RoundDouble(const FloatFormat& format, double x, bool toward_zero = false);
// The exponent of the format's quantum (its ulp) at a finite nonzero x: values
// of the format near x are the integer multiples of 2^q.
int QuantumExponent(const FloatFormat& format, double x);
// The same toward zero (truncation, as a demotion that drops the low bits).
double TruncateToFormat(const FloatFormat& format, mpfr_srcptr x);

// "0x3f80" for a bf16 or f16 pattern, "0x3f800000" for f32: the width of the
// format's storage.
std::string BitsText(const FloatFormat& format, uint64_t bits);

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_FORMAT_H_
