// Models of Highway 1.0.3's f16 <-> f32 conversions on the targets without
// F16C (SCALAR, SSSE3, SSE4: scalar-inl.h and x86_128-inl.h compute them by
// bit manipulation), written from their definition in scalar C++ so that the
// kernels' vector conversions can be held to them bit for bit. What they do,
// unlike IEEE 754 conversion:
//   f16 -> f32: exponent 31 (inf, NaN) is taken as a normal exponent, so inf
//     becomes 2^16 and NaN 2^16 * (1 + m/1024);
//   f32 -> f16: truncates (rounds toward zero); |x| < 2^-24 becomes +0 (the
//     sign is lost); exponents above 15 are clamped to 15, so values at or
//     above 2^16, inf and NaN become finite: 2^15 * (1 + the top 10 bits of
//     the f32 significand).
#ifndef ULPGATE_ORACLES_HIGHWAY_F16_H_
#define ULPGATE_ORACLES_HIGHWAY_F16_H_

#include <cstdint>

namespace ulpgate {

float HighwaySoftF16ToF32(uint16_t bits);
uint16_t HighwaySoftF32ToF16(float value);

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_HIGHWAY_F16_H_
