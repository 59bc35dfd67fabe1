// Rounding a binary32 value to a narrower format (bf16, f16, or any format
// whose values are all binary32 values) by integer operations on its bit
// pattern: the one home of that rounding. Scalar here; the same steps on
// Highway vectors in oracles/round_bits-inl.h, which the narrow kernels' exact
// conversions (kernels/narrow_convert-inl.h) and the sweep's tier call. Every
// function is generic over the format's traits (precision, exponent range,
// storage width), never over its name.
//
// Why it is one IEEE rounding. Let s = 24 - p, the binary32 bits below the
// format's last significant bit where the format's numbers are normal
// (binary32 exponent E >= emin). The format's values there are the patterns
// whose low s bits are zero, and they are ordered as the patterns are, so
// rounding to nearest even is integer rounding of the pattern to a multiple of
// 2^s: add 2^(s-1) - 1 plus the kept part's lowest bit (bit s, the tie
// breaker: a tie carries only when the kept part is odd) and clear the low s
// bits. A carry out of the mantissa moves into the exponent, which is where
// the rounding goes (2^(E+1)); past the largest finite value it reaches
// 2^(emax+1), the overflow, which is infinity (binary32's own infinity pattern
// where emax = 127). Toward zero is clearing the low s bits.
// Below 2^emin the format is subnormal with the fixed quantum q = 2^(emin -
// p + 1). Where emin = -126 (binary32's) that quantum is 2^s binary32
// subnormal steps, and the pattern rounding above holds unchanged. Where emin
// is above -126 (f16), binary32 is still normal there and the quantum is not a
// fixed number of pattern bits: one binary32 addition |x| + M with M = 2^(emin
// + 24 - p) (whose binary32 ulp is q; |x| < 2^emin <= M keeps the sum in M's
// binade) rounds |x| to a multiple of q in the FPU's rounding, to nearest
// even (ulpgate never changes the rounding mode; a flush of binary32
// subnormals to zero would change nothing, they round to zero), and
// subtracting M is exact (Sterbenz). The sign is set apart and put back.
// NaN is the caller's to handle (the functions below pass it through).
#ifndef ULPGATE_ORACLES_ROUND_BITS_H_
#define ULPGATE_ORACLES_ROUND_BITS_H_

#include <cstdint>

#include "oracles/float_format.h"
#include "oracles/float_text.h"

namespace ulpgate {

// A format's constants for the rounding above, as binary32 patterns. For
// formats with 2 <= p <= 23, -126 <= emin, emax <= 127 and emax = 1 - emin
// (IEEE's bias), storage of at most 32 bits.
struct RoundingBits {
  uint32_t shift;           // s = 24 - p
  uint32_t half_minus_one;  // 2^(s-1) - 1
  uint32_t keep;            // the pattern bits at and above bit s
  uint32_t min_normal;      // 2^emin
  uint32_t overflow;        // 2^(emax+1): a rounded magnitude at or past it is infinite
  uint32_t largest;         // the largest finite value
  uint32_t magic;           // M = 2^(emin + 24 - p), for the subnormals where emin > -126
  uint32_t quantum;         // q = 2^(emin - p + 1), the subnormal step
  // The format's encoding of a normal value v: (pattern(v) - rebias) >> s;
  // of +infinity: `infinity`; the sign at bit 32 - sign_shift - 1.
  uint32_t rebias;
  uint32_t infinity;
  uint32_t sign_shift;
  bool same_range;      // emin = -126 and emax = 127: binary32's exponent field
  bool narrower_range;  // emin > -126: subnormal where binary32 is normal
  bool lower_emax;      // emax < 127: overflow below binary32's
};

// 2^k's binary32 pattern, -126 <= k <= 127.
constexpr uint32_t Binary32PowerOfTwo(int k) { return static_cast<uint32_t>(k + 127) << 23; }

constexpr RoundingBits RoundingBitsOf(const FloatFormat& f) {
  RoundingBits r{};
  r.shift = static_cast<uint32_t>(24 - f.precision);
  r.half_minus_one = (uint32_t{1} << (r.shift - 1)) - 1;
  r.keep = ~((uint32_t{1} << r.shift) - 1);
  r.min_normal = Binary32PowerOfTwo(f.emin);
  r.overflow = f.emax == 127 ? 0x7f800000u : Binary32PowerOfTwo(f.emax + 1);
  r.largest = r.overflow - (uint32_t{1} << r.shift);
  r.magic = Binary32PowerOfTwo(f.emin + 24 - f.precision);
  r.quantum = Binary32PowerOfTwo(f.emin - f.precision + 1);
  r.rebias = static_cast<uint32_t>(127 - f.emax) << 23;
  r.infinity = ((uint32_t{1} << (f.bits - f.precision)) - 1) << (f.precision - 1);
  r.sign_shift = static_cast<uint32_t>(32 - f.bits);
  r.narrower_range = f.emin > -126;
  r.lower_emax = f.emax < 127;
  r.same_range = !r.narrower_range && !r.lower_emax;
  return r;
}

// The rounding addition on a magnitude's pattern (or, where same_range, on a
// whole pattern: the carry never reaches the sign of a non-NaN): the rounded
// pattern is t & keep, its encoding (t - rebias) >> shift.
inline uint32_t RoundingSum(const RoundingBits& f, uint32_t bits) {
  return bits + f.half_minus_one + ((bits >> f.shift) & 1u);
}

// y rounded to the format, to nearest even, as a binary32 value (subnormals
// and overflow to infinity as the format has them); a NaN as it is.
inline float RoundBinary32ToFormat(const RoundingBits& f, float y) {
  if (y != y) return y;
  const uint32_t bits = FloatBits(y);
  if (f.same_range) return FloatFromBits(RoundingSum(f, bits) & f.keep);
  const uint32_t sign = bits & 0x80000000u;
  const uint32_t magnitude = bits ^ sign;
  const uint32_t t = RoundingSum(f, magnitude);
  uint32_t r = t & f.keep;
  if (f.narrower_range && magnitude < f.min_normal) {
    const float m = FloatFromBits(f.magic);
    r = FloatBits((FloatFromBits(magnitude) + m) - m);
  }
  if (f.lower_emax && t >= f.overflow) r = 0x7f800000u;
  return FloatFromBits(r | sign);
}

// The same toward zero (truncation): past the largest finite value a finite
// y becomes the largest, an infinity stays one; a NaN as it is.
inline float TruncateBinary32ToFormat(const RoundingBits& f, float y) {
  if (y != y) return y;
  const uint32_t bits = FloatBits(y);
  if (f.same_range) return FloatFromBits(bits & f.keep);
  const uint32_t sign = bits & 0x80000000u;
  const uint32_t magnitude = bits ^ sign;
  uint32_t r = magnitude & f.keep;
  if (f.narrower_range && magnitude < f.min_normal) {
    // To nearest by the addition, then one quantum down where that went up
    // (both exact: multiples of q below 2^emin).
    const float a = FloatFromBits(magnitude), m = FloatFromBits(f.magic);
    float n = (a + m) - m;
    if (n > a) n -= FloatFromBits(f.quantum);
    r = FloatBits(n);
  }
  if (f.lower_emax && magnitude >= f.overflow && magnitude < 0x7f800000u) r = f.largest;
  return FloatFromBits(r | sign);
}

inline float RoundBinary32ToFormat(const FloatFormat& f, float y) {
  return RoundBinary32ToFormat(RoundingBitsOf(f), y);
}

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_ROUND_BITS_H_
