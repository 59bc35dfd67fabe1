// A binary floating-point format as a value (its precision, exponent range,
// encodings and storage), without MPFR: the kernels, which know nothing of the
// oracles, take formats too. oracles/format.h adds what rounds and measures.
#ifndef ULPGATE_ORACLES_FLOAT_FORMAT_H_
#define ULPGATE_ORACLES_FLOAT_FORMAT_H_

#include <cstdint>
#include <cstring>

namespace ulpgate {

// What a format's special patterns mean (LLVM libc's FPBits keeps the same
// beside its storage type). Infinities exist only under kIeee.
enum class NanEncoding : uint8_t {
  kIeee,          // all-ones exponent: infinity with a zero mantissa, NaN otherwise
  kAllOnes,       // only the all-ones magnitude of each sign is NaN (E4M3FN; E8M0's 0xff)
  kNegativeZero,  // the pattern of -0 is the one NaN; there is no -0 (the FNUZ formats)
  kNone,          // every pattern is a finite number (FP6, FP4)
};

// How elements lie in memory: one per storage unit (a byte for the 6- and
// 8-bit formats), or two 4-bit codes per byte, element 2i in the low nibble
// (OCP MX's and PyTorch's float4_e2m1fn_x2 order).
enum class Packing : uint8_t { kOnePerUnit, kNibblePairs };

// A format's traits. A value of every format here is held exactly in a
// double. Everything that decodes, rounds, measures or stores a value reads
// these fields; nothing asks a format's name to decide.
struct FloatFormat {
  const char* name;  // as reports and the CLI name it: "f32", "bf16", "float8_e4m3fn"
  int precision;     // p, counting the implicit bit
  int emin;          // exponent of the smallest normal
  int emax;          // exponent of the largest finite binade
  int bits;          // encoding width: 4, 6, 8, 16, 32, 64
  NanEncoding nan = NanEncoding::kIeee;
  bool has_sign = true;        // false: unsigned (E8M0), every pattern's value is >= 0
  bool has_subnormals = true;  // false: exponent field 0 is a normal binade, no zero (E8M0)
  Packing packing = Packing::kOnePerUnit;
  const char* description = "";  // one line for `ulpgate list`

  constexpr int mantissa_bits() const { return precision - 1; }
  constexpr int exponent_bits() const { return bits - precision + 1 - (has_sign ? 1 : 0); }
  // The exponent field of a normal value 2^e is e + bias.
  constexpr int bias() const { return has_subnormals ? 1 - emin : -emin; }
  constexpr bool has_infinity() const { return nan == NanEncoding::kIeee; }
  constexpr bool has_nan() const { return nan != NanEncoding::kNone; }
  constexpr bool has_negative_zero() const {
    return has_sign && has_subnormals && nan != NanEncoding::kNegativeZero;
  }
  constexpr bool has_zero() const { return has_subnormals; }
  // Bytes one unpacked element takes in memory (1, 2, 4, 8); a packed
  // format's elements take half a byte each.
  constexpr int storage_bytes() const { return bits <= 8 ? 1 : bits / 8; }
  // Bytes n elements take in memory.
  constexpr uint64_t StorageSize(uint64_t n) const {
    return packing == Packing::kNibblePairs ? (n + 1) / 2 : n * storage_bytes();
  }
  // Where the largest exponent field holds numbers whose all-ones mantissa
  // is the NaN (E4M3FN), the largest finite value lacks that last step.
  constexpr bool largest_loses_top_mantissa() const {
    return nan == NanEncoding::kAllOnes && emax + bias() == (1 << exponent_bits()) - 1;
  }
  // MPFR's exponent convention (mpfr_exp_t, a long) (x = 0.1b... x 2^e): the smallest subnormal,
  // 2^(emin - p + 1), is 0.1b x 2^(emin - p + 2); the largest finite value is
  // below 2^(emax + 1).
  constexpr long mpfr_emin() const { return emin - precision + 2; }
  constexpr long mpfr_emax() const { return emax + 1; }
};

inline constexpr FloatFormat kBinary32{"f32", 24, -126, 127, 32, NanEncoding::kIeee, true, true,
                                       Packing::kOnePerUnit, "IEEE binary32"};
inline constexpr FloatFormat kBFloat16{"bf16", 8, -126, 127, 16, NanEncoding::kIeee, true, true,
                                       Packing::kOnePerUnit, "bfloat16: binary32's exponent, 8 bits of precision"};
inline constexpr FloatFormat kBinary16{"f16", 11, -14, 15, 16, NanEncoding::kIeee, true, true,
                                       Packing::kOnePerUnit, "IEEE binary16"};
inline constexpr FloatFormat kBinary64{"f64", 53, -1022, 1023, 64, NanEncoding::kIeee, true, true,
                                       Packing::kOnePerUnit, "IEEE binary64"};

// The 8-, 6- and 4-bit formats of low-precision training, by the OCP 8-bit
// floating point specification (OFP8) and the OCP Microscaling (MX) v1.0
// specification, and the FNUZ variants (AMD's, in LLVM's APFloat and
// ml_dtypes: bias one larger, no -0, 0x80 the NaN).
inline constexpr FloatFormat kFloat8E4M3FN{
    "float8_e4m3fn", 4, -6, 8, 8, NanEncoding::kAllOnes, true, true, Packing::kOnePerUnit,
    "OCP FP8 E4M3: no infinity, NaN 0x7f/0xff, largest 448"};
inline constexpr FloatFormat kFloat8E4M3FNUZ{
    "float8_e4m3fnuz", 4, -7, 7, 8, NanEncoding::kNegativeZero, true, true, Packing::kOnePerUnit,
    "E4M3, bias 8: no infinity, no -0, NaN 0x80, largest 240"};
inline constexpr FloatFormat kFloat8E5M2{
    "float8_e5m2", 3, -14, 15, 8, NanEncoding::kIeee, true, true, Packing::kOnePerUnit,
    "OCP FP8 E5M2: IEEE infinities and NaNs, largest 57344"};
inline constexpr FloatFormat kFloat8E5M2FNUZ{
    "float8_e5m2fnuz", 3, -15, 15, 8, NanEncoding::kNegativeZero, true, true,
    Packing::kOnePerUnit, "E5M2, bias 16: no infinity, no -0, NaN 0x80, largest 57344"};
inline constexpr FloatFormat kFloat6E2M3FN{
    "float6_e2m3fn", 4, 0, 2, 6, NanEncoding::kNone, true, true, Packing::kOnePerUnit,
    "OCP MX FP6 E2M3: finite only, largest 7.5; one per byte"};
inline constexpr FloatFormat kFloat6E3M2FN{
    "float6_e3m2fn", 3, -2, 4, 6, NanEncoding::kNone, true, true, Packing::kOnePerUnit,
    "OCP MX FP6 E3M2: finite only, largest 28; one per byte"};
inline constexpr FloatFormat kFloat4E2M1FN{
    "float4_e2m1fn", 2, 0, 2, 4, NanEncoding::kNone, true, true, Packing::kNibblePairs,
    "OCP MX FP4 E2M1: finite only, largest 6; two per byte, low nibble first"};
inline constexpr FloatFormat kFloat8E8M0FNU{
    "float8_e8m0fnu", 1, -127, 127, 8, NanEncoding::kAllOnes, false, false,
    Packing::kOnePerUnit, "OCP MX E8M0 scale: 2^(e-127), unsigned, no zero, NaN 0xff"};

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
