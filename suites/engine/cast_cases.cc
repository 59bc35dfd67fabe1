#include "suites/engine/cast_cases.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "kernels/cast.h"
#include "oracles/format.h"
#include "suites/engine/plugins.h"
#include "suites/inputs/cast_suites.h"
#include "suites/inputs/inputs.h"

namespace ulpgate {

std::string CastOpName(const FloatFormat& from) { return std::string("cast_") + from.name; }

const FloatFormat* CastOpSource(const std::string& op) {
  for (const FloatFormat* f : kCastSources) {
    if (op == CastOpName(*f)) return f;
  }
  return nullptr;
}

void CastInputs::Add(const std::string& suite, const std::vector<uint32_t>& source_patterns) {
  parts.push_back({suite, patterns.size(), source_patterns.size()});
  for (uint32_t p : source_patterns) {
    patterns.push_back(p);
    values.push_back(CastSourceValue(*from, p));
  }
}

CastModels EvaluateCastModels(const FloatFormat& from, const FloatFormat& to,
                              const CastInputs& inputs, unsigned threads) {
  CastModels m;
  m.policies = CastPolicies(from, to);
  m.codes.assign(m.policies.size(), std::vector<uint8_t>(inputs.values.size()));
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (size_t p = t; p < m.policies.size(); p += threads) {
        for (size_t i = 0; i < inputs.values.size(); ++i) {
          m.codes[p][i] = static_cast<uint8_t>(CastCode(from, to, inputs.values[i], m.policies[p]));
        }
      }
    });
  }
  for (std::thread& t : pool) t.join();
  return m;
}

double CastUlp(const FloatFormat& to, double x) {
  if (x == 0) return SmallestPositive(to);
  const int e = std::min(std::ilogb(std::fabs(x)), to.emax);
  return std::ldexp(1.0, std::max(e, to.emin) - (to.precision - 1));
}

CastCaseResult MeasureCastOutputs(const FloatFormat& to, const CastInputs& inputs,
                                  const CastModels& models, std::vector<uint8_t> codes,
                                  const std::optional<CastPolicy>& claimed) {
  CastCaseResult r;
  r.n = inputs.values.size();
  if (claimed) r.claimed = claimed->Name();
  const uint64_t mask = (uint64_t{1} << to.bits) - 1;
  for (uint8_t& c : codes) c = static_cast<uint8_t>(c & mask);
  constexpr size_t kKeep = 3;
  for (size_t p = 0; p < models.policies.size(); ++p) {
    CastPolicyFit fit{models.policies[p], models.policies[p].Name(), 0, {}};
    for (size_t i = 0; i < codes.size(); ++i) {
      if (codes[i] == models.codes[p][i] || SameCastCode(to, codes[i], models.codes[p][i])) {
        continue;
      }
      if (fit.first_mismatches.size() < kKeep) fit.first_mismatches.push_back(i);
      ++fit.mismatches;
    }
    if (claimed && models.policies[p] == *claimed) r.claimed_fit = fit;
    r.fits.push_back(std::move(fit));
  }
  std::stable_sort(r.fits.begin(), r.fits.end(), [](const CastPolicyFit& a, const CastPolicyFit& b) {
    return a.mismatches < b.mismatches;
  });
  for (const CastPolicyFit& f : r.fits) {
    if (f.mismatches == 0) r.followed.push_back(f.name);
  }
  const auto model_codes = [&](const CastPolicy& policy) -> const std::vector<uint8_t>& {
    for (size_t p = 0; p < models.policies.size(); ++p) {
      if (models.policies[p] == policy) return models.codes[p];
    }
    throw std::logic_error("MeasureCastOutputs: " + policy.Name() + " is not in the catalogue");
  };
  for (const CastInputs::Part& part : inputs.parts) {
    CastSuiteCount count{part.suite, part.count, 0};
    if (claimed) {
      const std::vector<uint8_t>& want = model_codes(*claimed);
      for (size_t i = part.begin; i < part.begin + part.count; ++i) {
        if (!SameCastCode(to, codes[i], want[i])) ++count.mismatches;
      }
    }
    r.per_suite.push_back(count);
  }
  const double largest = LargestFinite(to);
  // nearest_even.saturate: the correct rounding in range.
  const std::vector<uint8_t>& nearest_even = model_codes(CastPolicy{});
  for (size_t i = 0; i < codes.size(); ++i) {
    const double x = inputs.values[i];
    if (!std::isfinite(x) || std::fabs(x) > largest || (!to.has_sign && x <= 0)) continue;
    ++r.in_range;
    const double y = DecodeBits(to, codes[i]);
    if (!std::isfinite(y)) {
      ++r.special;
      continue;
    }
    // Both hold at most 24 significant bits and lie within 2^300 of each
    // other: the difference is exact or within a double's rounding, far below
    // what a ULP error reports.
    const double e = std::fabs(y - x) / CastUlp(to, x);
    if (e > r.max_ulp) {
      r.max_ulp = e;
      r.max_ulp_index = i;
    }
    if (SameCastCode(to, codes[i], nearest_even[i])) {
      ++r.correctly_rounded;
    }
  }
  r.codes = std::move(codes);
  return r;
}

std::vector<CastCaseResult> RunCastKernels(const FloatFormat& from, const FloatFormat& to,
                                           const CastInputs& inputs, const CastModels& models,
                                           const std::vector<std::string>& variants,
                                           const std::vector<const TargetInfo*>& targets) {
  std::vector<CastCaseResult> results;
  // The kernel's storage: binary32 patterns, or 16-bit ones.
  std::vector<uint16_t> narrow;
  if (!IsBinary32(from)) {
    for (uint32_t p : inputs.patterns) narrow.push_back(static_cast<uint16_t>(p));
  }
  const void* in = IsBinary32(from) ? static_cast<const void*>(inputs.patterns.data())
                                    : static_cast<const void*>(narrow.data());
  for (const CastVariantInfo& v : kCastVariants) {
    if (!CastVariantApplies(from, to, v.variant)) continue;
    if (!variants.empty() && std::find(variants.begin(), variants.end(), v.name) == variants.end()) {
      continue;
    }
    const std::optional<CastPolicy> claimed = ParseCastPolicy(v.policy);
    for (const TargetInfo* t : targets) {
      if (!t->supported) continue;
      const CastKernel kernel = FindCastKernel(from.name, to.name, v.name, t->bits);
      if (kernel == nullptr) continue;
      std::vector<uint8_t> codes(inputs.patterns.size());
      kernel(in, codes.data(), codes.size());
      // Targets that give the same codes share one measurement.
      const CastCaseResult* same = nullptr;
      for (const CastCaseResult& r : results) {
        if (r.variant == v.name && r.codes == codes) same = &r;
      }
      CastCaseResult r = same != nullptr ? *same
                                         : MeasureCastOutputs(to, inputs, models, std::move(codes),
                                                              claimed);
      r.variant = v.name;
      r.target = t->name;
      results.push_back(std::move(r));
    }
  }
  const auto named = [&](const std::string& name) {
    return variants.empty() || std::find(variants.begin(), variants.end(), name) != variants.end() ||
           std::find(variants.begin(), variants.end(), "none") != variants.end();
  };
  const std::string op = CastOpName(from);
  for (const TargetInfo* t : targets) {
    const LoadedPlugin* plugin = PluginOf(*t);
    if (plugin == nullptr) continue;
    for (const PluginKernel& k : plugin->kernels) {
      if (k.op != op || k.format != &to || !named(k.variant)) continue;
      std::vector<uint8_t> codes(inputs.patterns.size());
      std::optional<KernelFault> fault;
      try {
        const void* operands[1] = {in};
        k.call(operands, codes.data(), codes.size());
      } catch (const KernelFaultError& e) {
        fault = e.fault();
      }
      CastCaseResult r;
      const std::string claimed = k.policy ? k.policy->Name() : "";
      // A kernel that gives another's codes under the same claim (an IUT's
      // run of a built-in kernel) shares its measurement.
      const CastCaseResult* same = nullptr;
      for (const CastCaseResult& earlier : results) {
        if (!fault && !earlier.fault && earlier.claimed == claimed && earlier.codes == codes) same = &earlier;
      }
      if (fault) {
        r.n = inputs.patterns.size();
        r.claimed = claimed;
        r.fault = fault;
      } else if (same != nullptr) {
        r = *same;
      } else {
        r = MeasureCastOutputs(to, inputs, models, std::move(codes), k.policy);
      }
      r.variant = k.variant;
      r.target = t->name;
      results.push_back(std::move(r));
    }
  }
  return results;
}

}  // namespace ulpgate
