// Test support: values a given number of places away in a format, for
// outputs near a model's or the correctly rounded one.
#ifndef ULPGATE_SUITES_TESTS_FORMAT_STEPS_H_
#define ULPGATE_SUITES_TESTS_FORMAT_STEPS_H_

#include <cmath>
#include <cstdint>

#include "oracles/format.h"

namespace ulpgate {

// The value `steps` places away from y in the format (through zero, up to an
// infinity), by the order of the bit patterns; y itself past an infinity.
inline double Step(const FloatFormat& format, double y, int steps) {
  const uint64_t sign_bit = uint64_t{1} << (format.bits - 1);
  const uint64_t infinity = EncodeBits(format, INFINITY);
  const uint64_t bits = EncodeBits(format, y);
  const int64_t magnitude = static_cast<int64_t>(bits & (sign_bit - 1));
  const int64_t order = ((bits & sign_bit) ? -magnitude : magnitude) + steps;
  const uint64_t m = static_cast<uint64_t>(order < 0 ? -order : order);
  if (m > infinity) return y;
  return DecodeBits(format, (order < 0 ? sign_bit : 0) | m);
}

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_TESTS_FORMAT_STEPS_H_
