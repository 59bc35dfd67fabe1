// A cast to a format as a model: the exact value of a source element and a
// policy (rounding, overflow, subnormals, route) give one output, bit for
// bit. Outputs are matched against every policy as the elementwise ops'
// outputs are matched against their op sequences; a policy is a model.
//
// The policy's parts, each what some implementation does:
//   rounding    nearest_even (IEEE, OCP's default), nearest_away, toward_zero
//               (a truncating conversion), up, down (toward +/-infinity),
//               stochastic with k random bits given as an operand: the
//               magnitude rounds up iff floor(f 2^k) + r >= 2^k, f the
//               fraction of the way to the next code (an implementation that
//               adds r to the bits below the kept ones and truncates);
//   overflow    saturate (to the largest finite, OCP's satfinite), nan, or
//               infinity (IEEE: only where the format has one); a result
//               rounded past the largest finite value is an overflow, an
//               infinite source too;
//   subnormals  kept, flushed on input (a source subnormal is a zero of its
//               sign first) or on output (a subnormal result is a zero);
//   route       direct, or rounded to nearest even to a wider format first
//               (bf16, f16, f32: double rounding), with that format's own
//               IEEE overflow.
// What no policy varies, from the formats' traits: a NaN source is the
// format's NaN (a format without one gets its sign bit alone, -0, as
// ml_dtypes gives it); a zero result is +0 where the format has no -0; an
// unsigned format (E8M0) takes a negative source or a zero as NaN and a
// positive one below its smallest as its smallest.
#ifndef ULPGATE_ORACLES_CAST_POLICY_H_
#define ULPGATE_ORACLES_CAST_POLICY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oracles/float_format.h"

namespace ulpgate {

enum class CastRounding : uint8_t {
  kNearestEven,
  kNearestAway,
  kTowardZero,
  kUp,
  kDown,
  kStochastic,
};
enum class CastOverflow : uint8_t { kSaturate, kNan, kInfinity };
enum class CastSubnormals : uint8_t { kKept, kFlushInput, kFlushOutput };

struct CastPolicy {
  CastRounding rounding = CastRounding::kNearestEven;
  CastOverflow overflow = CastOverflow::kSaturate;
  CastSubnormals subnormals = CastSubnormals::kKept;
  const FloatFormat* route = nullptr;  // nullptr: direct
  int random_bits = 0;                 // stochastic rounding: k, 1 <= k <= 32

  // "nearest_even.saturate", "toward_zero.nan.flush_output.via_bf16",
  // "stochastic16.saturate": rounding, overflow, then the parts that are not
  // the default (kept subnormals, direct), in that order.
  std::string Name() const;
  bool operator==(const CastPolicy& o) const {
    return rounding == o.rounding && overflow == o.overflow && subnormals == o.subnormals &&
           route == o.route && random_bits == o.random_bits;
  }
};

// Parses Name()'s form; nullopt for anything else (an unknown part or
// format, a repeated part, a stochastic rounding without its bit count).
std::optional<CastPolicy> ParseCastPolicy(std::string_view name);

// Whether `policy` makes sense for a cast from `from` to `to`: an infinity
// overflow needs a format with infinities, a nan overflow one with NaN, a
// route must be wider than `to` (more precision and range) and narrower than
// `from`. Empty when it does, else why not.
std::string CastPolicyProblem(const FloatFormat& from, const FloatFormat& to,
                              const CastPolicy& policy);

// Every policy the catalogue compares outputs with for a cast from `from` to
// `to` (deterministic roundings only: a stochastic policy needs its random
// operand), nearest_even.saturate first, in a stable order.
std::vector<CastPolicy> CastPolicies(const FloatFormat& from, const FloatFormat& to);

// The output of casting `x`, an exact value of `from` (NaN and infinities
// included), to `to` under `policy`, as a double holding the value of `to`
// exactly (NaN for its NaN). `random` is the stochastic rounding's operand
// (its low random_bits bits are used), ignored otherwise.
double CastValue(const FloatFormat& from, const FloatFormat& to, double x,
                 const CastPolicy& policy, uint32_t random = 0);
// The same as the code of `to` (CastValue's EncodeBits, with a format
// without NaN taking a NaN source as its sign bit alone).
uint64_t CastCode(const FloatFormat& from, const FloatFormat& to, double x,
                  const CastPolicy& policy, uint32_t random = 0);

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_CAST_POLICY_H_
