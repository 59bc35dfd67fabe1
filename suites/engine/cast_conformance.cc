#include "suites/engine/cast_conformance.h"

#include <algorithm>
#include <cmath>

#include "oracles/format.h"

namespace ulpgate {

bool SameCastCode(const FloatFormat& to, uint64_t a, uint64_t b) {
  if (a == b) return true;
  return std::isnan(DecodeBits(to, a)) && std::isnan(DecodeBits(to, b));
}

CastPolicyFit FitCastPolicy(const FloatFormat& from, const FloatFormat& to,
                            const CastPolicy& policy, const std::vector<double>& inputs,
                            const std::vector<uint8_t>& codes, size_t keep) {
  CastPolicyFit fit{policy, policy.Name(), 0, {}};
  const uint64_t mask = (uint64_t{1} << to.bits) - 1;
  for (size_t i = 0; i < inputs.size() && i < codes.size(); ++i) {
    const uint64_t want = CastCode(from, to, inputs[i], policy);
    if (SameCastCode(to, codes[i] & mask, want)) continue;
    if (fit.first_mismatches.size() < keep) fit.first_mismatches.push_back(i);
    ++fit.mismatches;
  }
  return fit;
}

std::vector<CastPolicyFit> FitCastPolicies(const FloatFormat& from, const FloatFormat& to,
                                           const std::vector<double>& inputs,
                                           const std::vector<uint8_t>& codes, size_t keep) {
  std::vector<CastPolicyFit> fits;
  for (const CastPolicy& p : CastPolicies(from, to)) {
    fits.push_back(FitCastPolicy(from, to, p, inputs, codes, keep));
  }
  std::stable_sort(fits.begin(), fits.end(), [](const CastPolicyFit& a, const CastPolicyFit& b) {
    return a.mismatches < b.mismatches;
  });
  return fits;
}

}  // namespace ulpgate
