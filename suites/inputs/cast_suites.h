// The inputs of a cast (the cast_f32, cast_bf16 and cast_f16 ops), values of
// the source format, each a pure function of (suite, destination, seed,
// index):
//   boundary  where casts go wrong: every midpoint between adjacent values of
//             the destination and its source-format neighbours (their lowest
//             bit a sticky bit far below the rounding bit), a quarter and
//             three quarters of the way, the values themselves, the
//             saturation threshold, the largest finite value, the edges of
//             the destination's and the source's subnormals, +-0, +-inf and
//             NaNs with payloads; both signs; a fixed list (seed and n ignored);
//   random    every bit pattern of the source, NaNs and infinities included;
//   scaled    in and around the destination's range: a random sign and
//             significand at exponents from below its subnormals to past emax.
#ifndef ULPGATE_SUITES_INPUTS_CAST_SUITES_H_
#define ULPGATE_SUITES_INPUTS_CAST_SUITES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "oracles/float_format.h"

namespace ulpgate {

inline const std::vector<std::string>& CastSuiteNames() {
  static const std::vector<std::string> names = {"boundary", "random", "scaled"};
  return names;
}
// The inputs' count when none is asked (boundary: its whole list).
inline constexpr uint64_t kCastSuiteDefaultN = 10000;

// The source patterns (the low `from.bits` bits: binary32, bf16 or f16) of a
// suite; throws InputError for an unknown suite.
std::vector<uint32_t> GenerateCastSuite(const FloatFormat& from, const FloatFormat& to,
                                        const std::string& suite, uint64_t seed, uint64_t n);

// The value of a source pattern (exact; NaN for a NaN).
double CastSourceValue(const FloatFormat& from, uint32_t bits);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_INPUTS_CAST_SUITES_H_
