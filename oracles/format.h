// Binary floating-point formats as a parameter: a format is its precision,
// exponent range and storage width, and everything that measures, rounds or
// stores a value takes one (docs/design.md "Numerics"). A value of any format
// here is held exactly in a double (binary64 itself included).
#ifndef ULPGATE_ORACLES_FORMAT_H_
#define ULPGATE_ORACLES_FORMAT_H_

#include <mpfr.h>

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "oracles/float_format.h"

namespace ulpgate {

static_assert(std::is_same_v<mpfr_exp_t, long>, "FloatFormat::mpfr_emin() is a long");

// Every registered format: f32, bf16, f16, f64, then the 8-, 6- and 4-bit
// formats (float_format.h), then any a ScopedFormatRegistration added.
const std::vector<const FloatFormat*>& Formats();
// nullptr for an unknown name.
const FloatFormat* FindFormat(std::string_view name);

// A format registered for the object's lifetime: the test seam that proves
// a new format needs one registration (a throwaway format goes everywhere a
// name reaches). Not thread-safe; throws std::invalid_argument for a name
// registered already.
class ScopedFormatRegistration {
 public:
  explicit ScopedFormatRegistration(const FloatFormat& format);
  ~ScopedFormatRegistration();
  ScopedFormatRegistration(const ScopedFormatRegistration&) = delete;
  ScopedFormatRegistration& operator=(const ScopedFormatRegistration&) = delete;

 private:
  const FloatFormat* format_;
};

// The largest finite value (448 for E4M3FN, whose all-ones mantissa at the
// top exponent is NaN), the smallest positive one (the smallest subnormal, or
// 2^emin without subnormals), and what an overflow rounds to nearest by
// default: infinity where the format has one, else NaN where it has one, else
// (FP6, FP4) the largest finite value; negative where the format is signed.
double LargestFinite(const FloatFormat& format);
double SmallestPositive(const FloatFormat& format);
double OverflowValue(const FloatFormat& format, bool negative);

// The value of a bit pattern (the low `bits` bits of `bits`), exactly: a
// NaN for each NaN encoding, -0 only where the format has it.
double DecodeBits(const FloatFormat& format, uint64_t bits);
// The bit pattern of a value of the format. `value` must be one (a finite
// value with at most p significant bits in range, an infinity, or a NaN,
// which encodes as the format's NaN: IEEE's quiet NaN of its sign, the
// all-ones pattern, or 0x80 for FNUZ); a zero of either sign encodes as +0
// where the format has no -0. Throws std::invalid_argument otherwise (and for
// a NaN in a format without one).
uint64_t EncodeBits(const FloatFormat& format, double value);
// True when `value` is a value of the format (NaN and infinities included).
bool IsRepresentable(const FloatFormat& format, double value);

// The format's value nearest to x (ties to even), with gradual underflow and
// the format's overflow (OverflowValue: infinity for IEEE formats): one
// rounding of the exact x, whatever its precision. A zero result is +0 where
// the format has no -0; a negative x is NaN in an unsigned format.
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

// The encoding family of a format's special patterns, from its traits:
// "ieee" (infinities, NaNs), "fn" (finite, and NaN only at the all-ones
// magnitude if any: OCP E4M3, FP6, FP4), "fnuz" (no infinity, no -0, NaN at
// the -0 pattern), "e8m0" (unsigned, no zero, powers of two).
const char* EncodingName(const FloatFormat& format);
// How elements lie in memory: "1 byte", "2 bytes", "1 byte (6 bits used)",
// "2 per byte (low nibble first)".
std::string StorageText(const FloatFormat& format);

// "0x3f80" for a bf16 or f16 pattern, "0x3f800000" for f32: the width of the
// format's storage.
std::string BitsText(const FloatFormat& format, uint64_t bits);

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_FORMAT_H_
