#include "suites/reports/replay.h"
#include "suites/investigate/matrix.h"

#include "suites/engine/digest.h"

#include <algorithm>

#include "suites/engine/elementwise_cases.h"
#include "suites/engine/plugins.h"
#include "suites/reports/report.h"
#include "suites/inputs/elementwise_suites.h"

namespace ulpgate {

const MatrixCell* ConformanceMatrix::Find(const std::string& variant,
                                          const std::string& target) const {
  for (const MatrixCell& c : cells) {
    if (c.variant == variant && c.target->name == target) return &c;
  }
  return nullptr;
}

bool ConformanceMatrix::AllAsExpected() const {
  return std::all_of(cells.begin(), cells.end(),
                     [](const MatrixCell& c) { return !c.run || c.as_expected(); });
}

bool ConformanceMatrix::AnyFault() const {
  return std::any_of(cells.begin(), cells.end(), [](const MatrixCell& c) { return c.fault.has_value(); });
}

std::string GroupName(int group) {
  std::string name;
  for (int g = group + 1; g > 0; g = (g - 1) / 26) name.insert(name.begin(), char('A' + (g - 1) % 26));
  return name;
}

ConformanceMatrix BuildMatrix(const ElementwiseOpInfo& op, uint64_t n_per_suite, uint64_t seed,
                              unsigned threads, const std::vector<const TargetInfo*>& plugins,
                              const std::function<void(uint64_t, uint64_t)>& progress) {
  RequirePluginOp(plugins, op.name);
  ConformanceMatrix m;
  m.op = op.name;
  m.n_per_suite = n_per_suite;
  m.seed = seed;
  for (const SuiteInfo& s : ElementwiseSuites(op)) m.suites.push_back(s.name);
  for (const auto& v : op.variants) m.variants.emplace_back(v.name);
  std::vector<const TargetInfo*> supported;
  for (const TargetInfo& t : CompiledTargets()) {
    m.targets.push_back(&t);
    if (t.supported) supported.push_back(&t);
  }
  for (const auto& v : op.variants) {
    for (const TargetInfo* t : m.targets) {
      MatrixCell c;
      c.variant = std::string(v.name);
      c.target = t;
      c.run = t->supported;
      c.expected_model =
          std::string(t->fused_negmuladd ? v.model_fused_target : v.model_unfused_target);
      if (c.run) {
        for (const auto& model : op.models) c.matching.emplace_back(model.name);
        c.digest = kFnv1aOffset;
      }
      m.cells.push_back(c);
    }
  }
  // A plugin's kernels: rows of their own, in the plugin's column only.
  for (const TargetInfo* t : plugins) {
    const LoadedPlugin& plugin = *PluginOf(*t);
    m.targets.push_back(t);
    supported.push_back(t);
    for (const PluginKernel& k : plugin.kernels) {
      if (std::string_view(k.format->name) != "f32" || k.op != op.name) continue;  // the matrix is f32's
      if (std::find(m.variants.begin(), m.variants.end(), k.variant) == m.variants.end()) {
        m.variants.push_back(k.variant);
      }
      MatrixCell c;
      c.variant = k.variant;
      c.target = t;
      c.run = true;
      c.expected_model = k.model.name;
      for (const auto& model : op.models) c.matching.emplace_back(model.name);
      if (!k.model.name.empty() &&
          std::find(c.matching.begin(), c.matching.end(), k.model.name) == c.matching.end()) {
        c.matching.push_back(k.model.name);
      }
      c.digest = kFnv1aOffset;
      m.cells.push_back(c);
    }
  }

  RunOptions options;
  options.targets = supported;
  options.threads = threads;
  options.faults_are_results = true;
  uint64_t suites_done = 0;
  for (const std::string& suite : m.suites) {
    const auto shared = std::make_shared<const InputSet>(
        GenerateElementwiseSuite(op, kBinary32, suite, seed, n_per_suite));
    const InputSet& inputs = *shared;
    if (progress) {
      const uint64_t before = suites_done, all = m.suites.size() * inputs.size();
      options.progress = [&progress, before, all](uint64_t done, uint64_t) { progress(before + done, all); };
    }
    suites_done += inputs.size();
    for (CaseResult& r : RunElementwise(op, inputs, options)) {
      auto cell = std::find_if(m.cells.begin(), m.cells.end(), [&](const MatrixCell& c) {
        return c.variant == r.variant && c.target->name == r.target;
      });
      if (cell->fault) continue;  // its first fault is its report
      if (r.fault) {
        cell->fault = std::move(r);
        cell->fault_inputs = shared;
        continue;
      }
      // Conformed to on every suite so far: keep the models this suite matched too.
      auto& matching = cell->matching;
      matching.erase(std::remove_if(matching.begin(), matching.end(),
                                    [&](const std::string& model) {
                                      return std::find(r.conformance.matching.begin(),
                                                       r.conformance.matching.end(),
                                                       model) == r.conformance.matching.end();
                                    }),
                     matching.end());
      cell->max_ulp.push_back(r.stats.max_ulp());
      cell->special_mismatch.push_back(r.stats.special_mismatch());
      for (int byte = 0; byte < 8; ++byte) {
        cell->digest ^= (r.output_digest >> (8 * byte)) & 0xff;
        cell->digest *= 0x100000001b3ULL;
      }
    }
  }
  for (size_t i = 0; i < m.cells.size(); ++i) {
    MatrixCell& c = m.cells[i];
    if (!c.run) continue;
    if (c.fault) {
      c.matching.clear();
      continue;
    }
    c.model = std::find(c.matching.begin(), c.matching.end(), c.expected_model) != c.matching.end()
                  ? c.expected_model
                  : (c.matching.empty() ? std::string() : c.matching.front());
    auto group = std::find_if(m.groups.begin(), m.groups.end(), [&](const std::vector<size_t>& g) {
      return m.cells[g.front()].digest == c.digest;
    });
    if (group == m.groups.end()) {
      c.group = static_cast<int>(m.groups.size());
      m.groups.push_back({i});
    } else {
      c.group = static_cast<int>(group - m.groups.begin());
      group->push_back(i);
    }
  }
  return m;
}

nlohmann::ordered_json MatrixJson(const ConformanceMatrix& m) {
  nlohmann::ordered_json j;
  j["format"] = "ulpgate-matrix-1";
  j["tool"] = ToolVersion();
  j["command"] = "matrix";
  j["op"] = m.op;
  j["suites"] = m.suites;
  j["n_per_suite"] = m.n_per_suite;
  j["seed"] = m.seed;
  j["as_expected"] = m.AllAsExpected();
  for (const MatrixCell& c : m.cells) {
    nlohmann::ordered_json cj;
    cj["variant"] = c.variant;
    cj["target"] = c.target->name;
    cj["run"] = c.run;
    cj["fused_negmuladd"] = c.target->fused_negmuladd;
    if (const LoadedPlugin* p = PluginOf(*c.target)) AddSourceJson(p->Source(), cj);
    cj["expected_model"] = c.expected_model;
    if (c.fault) {
      // Not measured: the fault (CaseJson's) and its suite, no figures.
      cj["fault"] = CaseJson(*c.fault, *c.fault_inputs)["fault"];
      cj["fault"]["suite"] = c.fault->suite;
    } else if (c.run) {
      cj["model"] = c.model.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(c.model);
      cj["matching"] = c.matching;
      nlohmann::ordered_json max_ulp, special;
      for (size_t s = 0; s < m.suites.size(); ++s) {
        max_ulp[m.suites[s]] = c.max_ulp[s];
        special[m.suites[s]] = c.special_mismatch[s];
      }
      cj["max_ulp"] = max_ulp;
      cj["special_mismatch"] = special;
      cj["digest"] = DigestHex(c.digest);
      cj["group"] = GroupName(c.group);
    }
    j["cells"].push_back(cj);
  }
  return j;
}

}  // namespace ulpgate
