#include "suites/engine/engine.h"

#include <algorithm>
#include <atomic>
#include <limits>

#include "oracles/float_text.h"
#include "suites/engine/chunk_driver.h"
#include "suites/engine/digest.h"

namespace ulpgate {

const char* CaseKindName(CaseKind kind) {
  switch (kind) {
    case CaseKind::kKernel:
      return "kernel";
    case CaseKind::kModel:
      return "model";
    case CaseKind::kPeer:
      return "peer";
    case CaseKind::kOutputs:
      return "outputs";
  }
  return "?";
}

std::string Conformance::model() const {
  for (const auto& m : matching) {
    if (m == expected_model) return m;
  }
  return matching.empty() ? std::string() : matching.front();
}

std::string ElementTruth::Text() const {
  std::string text = numerator.ToHexExact();
  if (denominator != 1) text += "/" + std::to_string(denominator);
  return text;
}

namespace {

// What one unit contributes, per case.
struct UnitResult {
  std::vector<ErrorStatistics> stats;
  std::vector<BoundFractionStatistics> bound;
  std::vector<std::vector<uint64_t>> mismatches;  // [case][compared model]
  std::vector<std::vector<int64_t>> first_mismatch;
  std::vector<ErrorMap> maps;
  // The unit's output bits per case: its group's digest when the unit is the
  // whole group, else the outputs themselves, chained in unit order later.
  std::vector<uint64_t> digests;
  std::vector<std::vector<float>> group_part;
  // Per case: its kernel's fault in this unit, and whether the case was left
  // unmeasured here (faulted, or past a fault found in an earlier unit).
  std::vector<std::optional<KernelFault>> faults;
  std::vector<char> dropped;
  uint64_t mpfr_elements = 0;
};

}  // namespace

EngineRun RunEngine(const EngineProblem& problem, const std::vector<EngineCase>& cases,
                    const EngineOptions& options) {
  const FloatFormat& format = problem.format();
  const size_t model_count = problem.model_names().size();
  const std::vector<EngineUnit> units = problem.Units();
  const uint64_t n = problem.size();
  const bool mpfr_only = options.mpfr_only || options.keep_details;
  auto whole_group = [&](size_t u) {
    const uint64_t g = units[u].group;
    return (u == 0 || units[u - 1].group != g) && (u + 1 == units.size() || units[u + 1].group != g);
  };

  EngineRun run;
  run.cases.resize(cases.size());
  if (options.keep_outputs) {
    for (auto& r : run.cases) r.outputs.resize(n);
  }
  if (options.keep_details) run.details.resize(n);
  std::vector<UnitResult> partial(units.size());
  // Per case, the lowest input at which its kernel faulted so far: units past
  // it are not run for the case (their outputs could not change the report).
  std::vector<std::atomic<int64_t>> fault_at(cases.size());
  for (auto& a : fault_at) a.store(std::numeric_limits<int64_t>::max());

  auto run_unit = [&](size_t u) {
    const EngineUnit& unit = units[u];
    const size_t count = unit.count;
    UnitResult& out = partial[u];
    out.stats.assign(cases.size(), ErrorStatistics(format));
    out.bound.assign(cases.size(), BoundFractionStatistics());
    out.mismatches.resize(cases.size());
    out.first_mismatch.resize(cases.size());
    for (size_t c = 0; c < cases.size(); ++c) {
      out.mismatches[c].assign(cases[c].compared.size(), 0);
      out.first_mismatch[c].assign(cases[c].compared.size(), -1);
    }
    if (options.map) out.maps.assign(cases.size(), ErrorMap());
    out.faults.assign(cases.size(), std::nullopt);
    out.dropped.assign(cases.size(), 0);

    // Every element's models once, and its exact value unless the problem's
    // fast tier stands in for it (then Truth runs only where that tier cannot
    // decide); then every case's outputs.
    std::vector<std::optional<ElementTruth>> truth(count);
    std::vector<float> models(count * model_count);
    std::vector<float> scratch_models(model_count);
    for (size_t i = 0; i < count; ++i) {
      float* element_models = models.data() + i * model_count;
      if (mpfr_only || !problem.FastModels(unit.begin + i, element_models)) {
        truth[i].emplace(problem.Truth(unit.begin + i, element_models));
      }
    }
    std::vector<std::vector<float>> outputs(cases.size(), std::vector<float>(count));
    for (size_t c = 0; c < cases.size(); ++c) {
      if (cases[c].kind == CaseKind::kModel) {
        for (size_t i = 0; i < count; ++i) {
          outputs[c][i] = models[i * model_count + cases[c].expected];
        }
      } else if (static_cast<int64_t>(unit.begin) > fault_at[c].load()) {
        out.dropped[c] = 1;  // past a fault already found: not needed
        continue;
      } else {
        try {
          problem.Outputs(c, unit, outputs[c].data());
        } catch (const KernelFaultError& e) {
          KernelFault f = e.fault();
          const auto shift = static_cast<int64_t>(unit.begin);
          if (f.index >= 0) f.index += shift;
          f.first += shift;
          out.faults[c] = f;
          out.dropped[c] = 1;
          const int64_t at = f.index >= 0 ? f.index : f.first;
          for (int64_t seen = fault_at[c].load(); at < seen && !fault_at[c].compare_exchange_weak(seen, at);) {
          }
          continue;
        }
      }
      // A NaN's payload is part of no model and differs between targets.
      for (float& y : outputs[c]) y = CanonicalNan(y);
      if (options.keep_outputs) {
        std::copy(outputs[c].begin(), outputs[c].end(), run.cases[c].outputs.begin() + unit.begin);
      }
    }
    if (whole_group(u)) {
      out.digests.resize(cases.size());
      for (size_t c = 0; c < cases.size(); ++c) {
        out.digests[c] = Fnv1a(outputs[c].data(), count * sizeof(float));
      }
    } else {
      out.group_part = outputs;
    }

    // Each distinct output's error once per element: most cases agree bit for bit.
    struct Seen {
      uint32_t bits;
      UlpError ulp;
      BoundFraction bound;
      bool has_bound;
    };
    std::vector<Seen> seen;
    for (size_t i = 0; i < count; ++i) {
      const uint64_t index = unit.begin + i;
      std::optional<ElementTruth>& exact = truth[i];
      const float* element_models = models.data() + i * model_count;
      if (options.keep_details) {
        run.details[index].exact = exact->Text();
        run.details[index].cases.resize(cases.size());
      }
      seen.clear();
      for (size_t c = 0; c < cases.size(); ++c) {
        if (out.dropped[c]) continue;
        const EngineCase& cs = cases[c];
        const float y = outputs[c][i];
        const uint32_t bits = FloatBits(y);
        auto it = std::find_if(seen.begin(), seen.end(), [&](const Seen& s) { return s.bits == bits; });
        if (it == seen.end()) {
          Seen s{bits, {}, {}, problem.bounded()};
          if (exact || !problem.FastMeasure(index, y, &s.ulp, &s.bound)) {
            if (!exact) exact.emplace(problem.Truth(index, scratch_models.data()));
            s.ulp = MeasureUlpErrorOfQuotient(exact->numerator.get(), exact->denominator, y, format);
            s.has_bound = exact->bound.has_value();
            if (exact->bound) {
              s.bound = MeasureBoundFraction(exact->numerator.get(), exact->denominator, y,
                                             *exact->bound, format);
            }
          }
          seen.push_back(s);
          it = seen.end() - 1;
        }
        out.stats[c].Add(it->ulp, index);
        if (it->has_bound) out.bound[c].Add(it->bound, index);
        if (options.map) out.maps[c][BinadeBucket(problem.MapValue(index))].Add(it->ulp, index);
        bool conforms = true;
        for (size_t k = 0; k < cs.compared.size(); ++k) {
          if (!SameFloat(y, element_models[cs.compared[k]])) {
            if (out.mismatches[c][k]++ == 0) out.first_mismatch[c][k] = static_cast<int64_t>(index);
            if (cs.compared[k] == cs.expected) conforms = false;
          }
        }
        if (options.keep_details) run.details[index].cases[c] = {y, it->ulp, it->bound, conforms};
      }
      if (exact) ++out.mpfr_elements;
    }
  };

  RunUnits(
      units.size(), options.threads, run_unit, [&](size_t u) { return units[u].count; },
      options.progress ? std::function<void(uint64_t, uint64_t)>(options.progress) : nullptr);

  // Merged in unit order, so nothing depends on the thread count.
  for (const UnitResult& p : partial) run.mpfr_elements += p.mpfr_elements;
  for (size_t c = 0; c < cases.size(); ++c) {
    const EngineCase& cs = cases[c];
    CaseResult& r = run.cases[c];
    r.kind = cs.kind;
    r.n = n;
    r.stats = ErrorStatistics(format);
    std::vector<uint64_t> mismatches(cs.compared.size(), 0);
    std::vector<int64_t> first(cs.compared.size(), -1);
    uint64_t digest = kFnv1aOffset;
    uint64_t group_digest = kFnv1aOffset;
    for (size_t u = 0; u < units.size(); ++u) {
      const UnitResult& p = partial[u];
      if (p.faults[c] && !r.fault) r.fault = p.faults[c];  // units in input order
      r.stats.Merge(p.stats[c]);
      r.bound.Merge(p.bound[c]);
      if (options.map) MergeErrorMap(r.error_map, p.maps[c]);
      for (size_t m = 0; m < cs.compared.size(); ++m) {
        mismatches[m] += p.mismatches[c][m];
        if (first[m] < 0) first[m] = p.first_mismatch[c][m];
      }
      if (!p.digests.empty()) {
        group_digest = p.digests[c];
      } else {
        group_digest = Fnv1a(p.group_part[c].data(), p.group_part[c].size() * sizeof(float),
                             group_digest);
      }
      if (u + 1 == units.size() || units[u + 1].group != units[u].group) {
        digest = Fnv1a(&group_digest, sizeof group_digest, digest);
        group_digest = kFnv1aOffset;
      }
    }
    r.bounded = problem.bounded();
    r.output_digest = digest;
    if (cs.expected >= 0) r.conformance.expected_model = problem.model_names()[cs.expected];
    for (size_t m = 0; m < cs.compared.size(); ++m) {
      if (cs.compared[m] == cs.expected) {
        r.conformance.mismatches = mismatches[m];
        r.conformance.first_mismatch_index = first[m];
      }
      if (mismatches[m] == 0) r.conformance.matching.push_back(problem.model_names()[cs.compared[m]]);
    }
  }
  return run;
}

}  // namespace ulpgate
