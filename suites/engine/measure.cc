#include "suites/engine/measure.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "kernels/cast.h"
#include "kernels/reduction_spec.h"
#include "oracles/format.h"
#include "suites/drift/report.h"
#include "suites/drift/run.h"
#include "suites/drift/scenario.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/inputs/inputs.h"
#include "suites/engine/op_table.h"
#include "suites/engine/plugins.h"
#include "suites/engine/reduction_cases.h"
#include "suites/inputs/reduction_suites.h"
#include "suites/reports/report.h"
#include "suites/drift/kernels.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/inputs/elementwise_suites.h"

namespace ulpgate {
namespace {

std::string Joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

void CheckSuite(const std::string& op, const std::string& suite) {
  const auto suites = MeasurableSuites(op);
  if (std::find(suites.begin(), suites.end(), suite) == suites.end()) {
    throw InputError(fmt::format("unknown {} '{}' for {} ({})", GetOp(op).suite_word(), suite,
                                 op, Joined(suites)));
  }
}

std::vector<const TargetInfo*> RunnableTargets(const std::vector<const TargetInfo*>& targets) {
  if (!targets.empty()) return targets;
  std::vector<const TargetInfo*> all;
  for (const TargetInfo& t : CompiledTargets()) {
    if (t.supported) all.push_back(&t);
  }
  return all;
}

Measurement MeasureElementwise(MeasureSpec spec, const ElementwiseOpInfo& op,
                               const std::function<void(uint64_t, uint64_t)>& progress) {
  uint64_t default_n = 0;
  for (const auto& s : ElementwiseSuites(op)) {
    if (s.name == spec.suite) default_n = s.default_n;
  }
  if (spec.n == 0) spec.n = default_n;
  Measurement m;
  const FloatFormat& format = *FindFormat(spec.dtype);
  auto inputs = std::make_shared<InputSet>(
      GenerateElementwiseSuite(op, format, spec.suite, spec.seed, spec.n));
  RunOptions options;
  options.format = &format;
  options.variants = spec.variants;
  options.targets = spec.targets;
  options.models_only = spec.models_only;
  options.threads = spec.threads;
  options.keep_outputs = spec.keep_outputs;
  // A faulted case is a record with its fault and no measurement; the
  // others are measured.
  options.faults_are_results = true;
  if (progress) options.progress = progress;
  for (CaseResult& r : RunElementwise(op, *inputs, options)) {
    MeasuredCase c;
    c.record = CaseJson(r, *inputs);
    c.outputs = std::move(r.outputs);
    m.cases.push_back(std::move(c));
  }
  m.describe = [inputs](uint64_t index) { return InputJson(*inputs, index); };
  m.spec = std::move(spec);
  return m;
}

Measurement MeasureReduction(MeasureSpec spec, const ReductionOpInfo& op,
                             const std::function<void(uint64_t, uint64_t)>& progress) {
  const ReductionShape shape = RunShape(op.op, spec.shape);
  spec.shape = ShapeText(op.op, shape);
  for (const auto& s : ReductionSuites()) {
    if (s.name == spec.suite && spec.n == 0) spec.n = s.default_n;
  }
  auto inputs = std::make_shared<ReductionInputSet>(
      GenerateReductionSuite(op.op, shape, spec.suite, spec.seed, spec.n, *FindFormat(spec.dtype)));
  ReductionRunOptions options;
  options.variants = spec.variants;
  options.targets = spec.targets;
  options.models_only = spec.models_only;
  options.threads = spec.threads;
  if (progress) options.progress = progress;
  const ReductionRun run = RunReduction(*inputs, options);
  Measurement m;
  for (size_t c = 0; c < run.cases.size(); ++c) {
    MeasuredCase mc;
    mc.record = CaseJson(run.cases[c], *inputs);
    if (spec.keep_outputs) {
      for (const auto& instance : run.outputs) {
        mc.outputs.insert(mc.outputs.end(), instance[c].begin(), instance[c].end());
      }
    }
    m.cases.push_back(std::move(mc));
  }
  m.describe = [inputs](uint64_t index) { return ReductionElementJson(*inputs, index); };
  m.spec = std::move(spec);
  return m;
}

Measurement MeasureDrift(MeasureSpec spec,
                         const std::function<void(uint64_t, uint64_t)>& progress) {
  const Scenario scenario = BuiltinScenario(spec.suite);
  if (spec.variants.empty()) spec.variants = MeasurableVariants(kDriftOp);
  const DriftPrecision precision = ParseDriftPrecision(spec.dtype);
  std::vector<RunConfig> configs;
  for (const std::string& variants : spec.variants) {
    for (const TargetInfo* target : spec.targets) {
      configs.push_back(ParseRunConfig(variants, target, precision));
      configs.back().model = spec.models_only || !target->supported;
    }
  }
  std::function<void(size_t, size_t)> epoch_progress;
  if (progress) epoch_progress = [&](size_t done, size_t total) { progress(done, total); };
  const DriftResult d = RunDrift(scenario, configs, spec.n, epoch_progress, spec.threads);
  spec.n = d.epochs;
  const nlohmann::ordered_json report = DriftJson(d);
  Measurement m;
  for (size_t i = 0; i < d.runs.size(); ++i) {
    const nlohmann::ordered_json& run = report["runs"][i];
    MeasuredCase c;
    c.record["op"] = kDriftOp;
    c.record["variant"] = spec.variants[i / spec.targets.size()];
    c.record["target"] = run["target"];
    c.record["kind"] = configs[i].model ? "model" : "kernel";
    c.record["dtype"] = spec.dtype;
    c.record["suite"] = spec.suite;
    c.record["epochs"] = d.epochs;
    for (const char* key : {"label", "variants", "summary", "loss", "in_situ",
                            "final_parameters", "final_parameters_digest"}) {
      if (run.contains(key)) c.record[key] = run[key];
    }
    if (spec.keep_outputs) c.outputs.assign(d.runs[i].loss.begin(), d.runs[i].loss.end());
    m.cases.push_back(std::move(c));
  }
  m.describe = [](uint64_t index) { return nlohmann::ordered_json{{"epoch", index}}; };
  m.spec = std::move(spec);
  return m;
}

}  // namespace

std::vector<std::string> MeasurableOps() {
  std::vector<std::string> ops;
  // Casts are measured by run, check and sweep; goldens and the gate do not
  // take them.
  for (const OpInfo& op : OpTable()) {
    if (op.family != OpFamily::kCast) ops.push_back(op.name);
  }
  return ops;
}

std::vector<std::string> MeasurableSuites(const std::string& op) { return GetOp(op).suites; }

std::vector<std::string> MeasurableDtypes(const std::string& op) { return GetOp(op).dtypes; }

std::vector<std::string> MeasurableVariants(const std::string& op, const std::string& dtype) {
  const OpInfo& info = GetOp(op);
  if (std::find(info.dtypes.begin(), info.dtypes.end(), dtype) == info.dtypes.end()) {
    throw InputError(fmt::format("{} does not run in '{}' ({})", op, dtype, Joined(info.dtypes)));
  }
  std::vector<std::string> variants;
  switch (info.family) {
    case OpFamily::kElementwise:
      return VariantNames(*FindElementwiseOp(op), *FindFormat(dtype));
    case OpFamily::kDrift:
      // The default run specs: one per variant of the tanh layer's op in the
      // compute format.
      for (const std::string& v :
           VariantNames(*FindElementwiseOp(kDriftTanhBwd), *ParseDriftPrecision(dtype).compute)) {
        variants.push_back(std::string(kDriftTanhBwd) + "=" + v);
      }
      return variants;
    case OpFamily::kReduction:
      for (const auto& v : FindReductionOp(op)->variants) variants.emplace_back(v.name);
      return variants;
    case OpFamily::kCast:
      for (const CastVariantInfo& v : kCastVariants) {
        if (CastVariantApplies(*FindCastSource(op.substr(5)), *FindFormat(dtype), v.variant)) {
          variants.emplace_back(v.name);
        }
      }
      return variants;
  }
  return variants;
}

Measurement Measure(const MeasureSpec& given,
                    const std::function<void(uint64_t, uint64_t)>& progress) {
  MeasureSpec spec = given;
  CheckSuite(spec.op, spec.suite);
  spec.targets = RunnableTargets(spec.targets);
  auto known = MeasurableVariants(spec.op, spec.dtype);  // checks the dtype too
  const OpFamily family = FamilyOf(spec.op);
  const bool plugins = std::any_of(spec.targets.begin(), spec.targets.end(),
                                   [](const TargetInfo* t) { return IsPluginTarget(*t); });
  if (plugins) {
    RequirePluginOp(spec.targets, spec.op);
    const std::vector<std::string> plugin_variants = PluginVariants(spec.targets, spec.op, spec.dtype);
    known.insert(known.end(), plugin_variants.begin(), plugin_variants.end());
  }
  if (family == OpFamily::kDrift) return MeasureDrift(std::move(spec), progress);
  if (family == OpFamily::kCast) {
    throw InputError(spec.op + ": casts are measured by run, check and sweep, not by goldens or the gate");
  }
  for (const auto& v : spec.variants) {
    const bool peer = IsPeerVariant(spec.op, spec.dtype, v);
    if (!peer && std::find(known.begin(), known.end(), v) == known.end()) {
      throw InputError(fmt::format("unknown variant '{}' for {} ({})", v, spec.op, Joined(known)));
    }
  }
  if (spec.variants.empty()) spec.variants = known;
  if (family == OpFamily::kElementwise) {
    const ElementwiseOpInfo& op = *FindElementwiseOp(spec.op);
    return MeasureElementwise(std::move(spec), op, progress);
  }
  const ReductionOpInfo& op = *FindReductionOp(spec.op);
  return MeasureReduction(std::move(spec), op, progress);
}

}  // namespace ulpgate
