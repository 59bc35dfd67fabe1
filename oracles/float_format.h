// A binary floating-point format as a value (its precision, exponent range
// and storage width), without MPFR: the kernels, which know nothing of the
// oracles, take formats too. oracles/format.h adds what rounds and measures.
#ifndef ULPGATE_ORACLES_FLOAT_FORMAT_H_
#define ULPGATE_ORACLES_FLOAT_FORMAT_H_

#include <cstdint>
#include <cstring>

namespace ulpgate {

struct FloatFormat {
  const char* name;  // as reports and the CLI name it: "f32", "bf16", "f16", "f64"
  int precision;     // p, counting the implicit bit
  int emin;          // exponent of the smallest normal
  int emax;          // exponent of the largest finite
  int bits;          // storage width

  constexpr int mantissa_bits() const { return precision - 1; }
  constexpr int exponent_bits() const { return bits - precision; }
  // MPFR's exponent convention (mpfr_exp_t, a long) (x = 0.1b... x 2^e): the smallest subnormal,
  // 2^(emin - p + 1), is 0.1b x 2^(emin - p + 2); the largest finite value is
  // below 2^(emax + 1).
  constexpr long mpfr_emin() const { return emin - precision + 2; }
  constexpr long mpfr_emax() const { return emax + 1; }
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

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_FLOAT_FORMAT_H_
