#include "oracles/highway_f16.h"

#include <algorithm>
#include <cmath>

#include "oracles/float_text.h"

namespace ulpgate {

float HighwaySoftF16ToF32(uint16_t bits) {
  const bool negative = (bits & 0x8000) != 0;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  // Every exponent field but 0 is read as a normal one, 31 included.
  const float magnitude = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -24)
                                        : std::ldexp(1.0f + mantissa / 1024.0f, exponent - 15);
  return negative ? -magnitude : magnitude;
}

uint16_t HighwaySoftF32ToF16(float value) {
  const uint32_t bits = FloatBits(value);
  const uint32_t sign = bits >> 31;
  const uint32_t mantissa32 = bits & 0x7fffff;
  // The unbiased exponent, clamped from above only; inf and NaN's 128 too.
  const int exponent = std::min(static_cast<int>((bits >> 23) & 0xff) - 127, 15);
  if (exponent < -24) return 0;
  uint32_t biased16 = 0, mantissa16 = 0;
  if (exponent < -14) {
    // The implicit bit and the mantissa shifted into the subnormal grid,
    // the bits below it dropped.
    const int shift = -14 - exponent;  // 1..10
    mantissa16 = (1u << (10 - shift)) + (mantissa32 >> (13 + shift));
  } else {
    biased16 = static_cast<uint32_t>(exponent + 15);
    mantissa16 = mantissa32 >> 13;
  }
  return static_cast<uint16_t>((sign << 15) | (biased16 << 10) | mantissa16);
}

}  // namespace ulpgate
