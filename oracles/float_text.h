// binary32 values as text: C99 hex floats for anything a machine reads back,
// bit patterns for encodings, and a strict parser for input files and flags.
#ifndef ULPGATE_ORACLES_FLOAT_TEXT_H_
#define ULPGATE_ORACLES_FLOAT_TEXT_H_

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace ulpgate {

inline uint32_t FloatBits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

inline float FloatFromBits(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// "0x1.8p-1", "-0x0p+0", "inf", "-inf", "nan": exact, parseable by strtof and
// by ParseFloat.
std::string HexFloat(float x);

// "0x3f400000".
std::string BitsHex(float x);

// Shortest-ish decimal that reads back to the same float (9 significant digits).
std::string DecimalFloat(float x);

// Accepts a C99 hex float (must be exactly representable in binary32), a
// decimal (rounded to nearest), "inf"/"infinity"/"nan" with optional sign, or
// a bit pattern written "bits:0x3f800000". Returns nullopt on anything else,
// with a reason in *error when given.
std::optional<float> ParseFloat(std::string_view text, std::string* error = nullptr);

// Bitwise equality, except that any NaN equals any NaN.
inline bool SameFloat(float a, float b) {
  return (a != a && b != b) || FloatBits(a) == FloatBits(b);
}

// Every NaN as the quiet NaN 0x7fc00000. A NaN's sign and payload are part of
// no model: x86 gives the default NaN 0xffc00000 for an invalid operation and
// propagates an operand's NaN otherwise, in an order that differs between
// instructions and targets. Outputs are recorded this way (goldens, digests),
// so that a kernel and its model agree on every NaN they agree is a NaN.
inline float CanonicalNan(float x) { return x != x ? FloatFromBits(0x7fc00000u) : x; }

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_FLOAT_TEXT_H_
