#include "oracles/highway_math.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>

#include "oracles/double_word.h"  // ULPGATE_FMA_CLONES
#include "oracles/erf_polynomial.h"

namespace ulpgate {
namespace {

uint32_t Bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
float FromBits(uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// Host binary32 arithmetic: every translation unit is compiled with
// -ffp-contract=off and x86-64 has no excess precision, so each operation
// below rounds once, and MulAdd rounds once or twice as asked.
float MulAdd(float a, float b, float c, bool fused) {
  return fused ? std::fma(a, b, c) : a * b + c;
}

// Highway's ConvertTo(int32, float) on x86: truncation; NaN and values below
// -2^31 give INT32_MIN, values from 2^31 up INT32_MAX (Highway fixes the
// instruction's 0x80000000 up for positive overflow).
int32_t ToInt32(float x) {
  if (std::isnan(x) || x < -2147483648.0f) return std::numeric_limits<int32_t>::min();
  if (x >= 2147483648.0f) return std::numeric_limits<int32_t>::max();
  return static_cast<int32_t>(x);
}

// Highway's Pow2I: the bits (x + 127) << 23 as a float, in wrapping 32-bit
// arithmetic like the vector instructions.
float Pow2I(int32_t x) { return FromBits((static_cast<uint32_t>(x) + 0x7Fu) << 23); }

// x * 2^e in two steps, as Highway's LoadExpShortRange.
float LoadExpShortRange(float x, int32_t e) {
  const int32_t y = e >> 1;  // arithmetic shift, as ShiftRight on int32 lanes
  const int32_t rest = static_cast<int32_t>(static_cast<uint32_t>(e) - static_cast<uint32_t>(y));
  return (x * Pow2I(y)) * Pow2I(rest);
}

float Estrin(float x, float c0, float c1, float c2, float c3, float c4, float c5, bool fused) {
  const float x2 = x * x;
  const float x4 = x2 * x2;
  return MulAdd(x4, MulAdd(c5, x, c4, fused),
                MulAdd(x2, MulAdd(c3, x, c2, fused), MulAdd(c1, x, c0, fused), fused), fused);
}

// q = ToInt32(x / ln 2 +- 1/2) and x - q ln 2 in two parts (ExpReduce), then
// ExpPoly: e^r - 1 for the reduced r. Shared by Exp and Expm1.
struct Reduced {
  int32_t q;
  float poly;  // ExpPoly(r)
};
// (With FMA instructions where the CPU has them: a fused MulAdd is otherwise
// a library call; the same bits either way.)
ULPGATE_FMA_CLONES Reduced ReduceAndApproximate(float x, bool fused) {
  const float kOneOverLog2 = static_cast<float>(+1.442695040888963407359924681);
  const float half = std::copysign(0.5f, x);  // Or(kHalf, And(x, kNegZero))
  const int32_t q = ToInt32(MulAdd(x, kOneOverLog2, half, fused));
  const float qf = static_cast<float>(q);
  float r = MulAdd(qf, -0.693145751953125f, x, fused);
  r = MulAdd(qf, -1.428606765330187045e-6f, r, fused);
  const float poly = Estrin(r, +0.5f, +0.166666671633720397949219f, +0.0416664853692054748535156f,
                            +0.00833336077630519866943359f, +0.00139304355252534151077271f,
                            +0.000198527617612853646278381f, fused);
  return {q, MulAdd(poly, r * r, r, fused)};
}

}  // namespace

float HighwayExp(float x, bool fused_muladd) {
  const Reduced reduced = ReduceAndApproximate(x, fused_muladd);
  const float y = LoadExpShortRange(reduced.poly + 1.0f, reduced.q);
  return x >= -104.0f ? y : 0.0f;  // IfThenElseZero(Ge(x, kLowerBound), y): NaN gives 0
}

float HighwayExpm1(float x, bool fused_muladd) {
  const float kLn2Over2 = static_cast<float>(+0.346573590279972654708616);
  const Reduced reduced = ReduceAndApproximate(x, fused_muladd);
  const float z = std::fabs(x) < kLn2Over2
                      ? reduced.poly
                      : LoadExpShortRange(reduced.poly + 1.0f, reduced.q) - 1.0f;
  return x < -104.0f ? -1.0f : z;
}

float HighwayTanh(float x, bool fused_muladd) {
  const float kLimit = static_cast<float>(18.714973875);
  const uint32_t sign = Bits(x) & 0x80000000u;
  const float abs_x = FromBits(Bits(x) ^ sign);
  const float y = HighwayExpm1(abs_x * 2.0f, fused_muladd);
  const float z = abs_x > kLimit ? 1.0f : y / (y + 2.0f);
  return FromBits(Bits(z) ^ sign);
}

namespace {
// a*b - c, one rounding or two, as Highway's MulSub.
float MulSub(float a, float b, float c, bool fused) {
  return fused ? std::fma(a, b, -c) : a * b - c;
}

ULPGATE_FMA_CLONES float LogClones(float x, bool fused) {
  // The constants of LogImpl<float> and impl::Log, as Highway writes them.
  const float kLn2Hi = 0.69313812256f;
  const float kLn2Lo = 9.0580006145e-6f;
  const float kMinNormal = 1.175494351e-38f;
  const float kScale = 3.355443200e+7f;  // 2^25
  const uint32_t kMagic = 0x3F3504F3u;   // bits of sqrt(2)/2
  const uint32_t kExpMask = 0x3F800000u;
  const int32_t kExpScale = -25;
  const uint32_t kManMask = 0x7FFFFFu;
  // Scale a subnormal up by 2^25 (exact) and take 25 off the exponent.
  const bool is_denormal = x < kMinNormal;
  if (is_denormal) x = x * kScale;
  // Integer lanes wrap: the vector code adds in 32-bit lanes.
  const uint32_t exp_bits = Bits(x) + (kExpMask - kMagic);
  const int32_t exp_int = (is_denormal ? kExpScale : 0) +
                          (static_cast<int32_t>(exp_bits >> 23) - 0x7F);
  const float exp = static_cast<float>(exp_int);  // ConvertTo: exact, |exp_int| < 2^8
  // y in [sqrt(2)/2, sqrt(2)): the mantissa with the exponent that puts it there
  // (kLowerBits is 0 for float, so And(x, kLowerBits) contributes nothing).
  const float y = FromBits((exp_bits & kManMask) + kMagic);
  const float ym1 = y - 1.0f;
  const float z = ym1 / (y + 1.0f);
  // LogPoly: MulAdd(MulAdd(k2, x4, k0), x2, Mul(MulAdd(k3, x4, k1), x4)).
  const float x2 = z * z;
  const float x4 = x2 * x2;
  const float poly = MulAdd(MulAdd(0.28498786688f, x4, 0.66666662693f, fused), x2,
                            MulAdd(0.24279078841f, x4, 0.40000972152f, fused) * x4, fused);
  return MulSub(exp, kLn2Hi,
                MulSub(z, ym1 - poly, exp * kLn2Lo, fused) - ym1, fused);
}

ULPGATE_FMA_CLONES float ErfClones(float x, bool fused_muladd) {
  if (std::isnan(x)) return x + x;
  const auto horner = [fused_muladd](const auto& c, float v) {
    const size_t n = std::size(c);
    float p = c[n - 1];
    for (size_t k = n - 1; k-- > 0;) p = MulAdd(p, v, c[k], fused_muladd);
    return p;
  };
  const float a = std::fabs(x);
  if (a < kErfSmallEnd) return MulAdd(x, horner(kErfSmall, x * x), x, fused_muladd);
  const float clamped = std::min(a, kErfClamp);
  const float q = clamped < kErfNearEnd ? horner(kErfNear, clamped - 1.0f)
                                        : horner(kErfFar, clamped - 3.0f);
  return std::copysign(1.0f - ExpOfSequences(q, fused_muladd), x);
}
}  // namespace

float ErfOfSequences(float x, bool fused_muladd) { return ErfClones(x, fused_muladd); }

float HighwayLog(float x, bool fused_muladd) { return LogClones(x, fused_muladd); }

}  // namespace ulpgate
