// Which policies of the exact cast model (oracles/cast_policy.h) a cast's
// outputs follow bit for bit: each policy of the catalogue (CastPolicies) is
// a model, as an elementwise op's sequences are, and outputs conform to it
// where every code equals the model's (any NaN code equal to any other, as
// conformance treats NaNs everywhere).
#ifndef ULPGATE_SUITES_ENGINE_CAST_CONFORMANCE_H_
#define ULPGATE_SUITES_ENGINE_CAST_CONFORMANCE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "oracles/cast_policy.h"
#include "oracles/float_format.h"

namespace ulpgate {

struct CastPolicyFit {
  CastPolicy policy;
  std::string name;  // policy.Name()
  uint64_t mismatches = 0;
  std::vector<size_t> first_mismatches;  // indices into the inputs, in order
};

// Every policy of CastPolicies(from, to) against the codes: those followed
// bit for bit first (the catalogue's order, nearest_even.saturate first where
// it is followed), then the others by fewest mismatches (the catalogue's order
// among equals). `inputs` are values of `from` (NaN and infinities included),
// `codes` the cast's outputs, one a byte; `keep` first mismatches kept per
// policy.
std::vector<CastPolicyFit> FitCastPolicies(const FloatFormat& from, const FloatFormat& to,
                                           const std::vector<double>& inputs,
                                           const std::vector<uint8_t>& codes, size_t keep = 3);

// The same for one policy.
CastPolicyFit FitCastPolicy(const FloatFormat& from, const FloatFormat& to,
                            const CastPolicy& policy, const std::vector<double>& inputs,
                            const std::vector<uint8_t>& codes, size_t keep = 3);

// Two codes of `to` are the same output: equal, or both NaN.
bool SameCastCode(const FloatFormat& to, uint64_t a, uint64_t b);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_ENGINE_CAST_CONFORMANCE_H_
