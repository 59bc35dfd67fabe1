#include "suites/engine/measure.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "kernels/cast.h"
#include "kernels/reductions/reduction_spec.h"
#include "oracles/float_text.h"
#include "oracles/format.h"
#include "suites/drift/report.h"
#include "suites/drift/run.h"
#include "suites/drift/scenario.h"
#include "suites/engine/block_quant_cases.h"
#include "suites/engine/cast_cases.h"
#include "suites/engine/digest.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/inputs/inputs.h"
#include "suites/engine/op_table.h"
#include "suites/engine/plugins.h"
#include "suites/engine/kernel_names.h"
#include "suites/engine/reduction_cases.h"
#include "suites/inputs/reduction_suites.h"
#include "suites/reports/report.h"
#include "suites/drift/kernels.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/inputs/cast_suites.h"
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
  const ReductionShape shape = RunShape(op, spec.shape);
  spec.shape = ShapeText(op, shape);
  for (const auto& s : ReductionSuites()) {
    if (s.name == spec.suite && spec.n == 0) spec.n = s.default_n;
  }
  auto inputs = std::make_shared<ReductionInputSet>(
      GenerateReductionSuite(op, shape, spec.suite, spec.seed, spec.n, *FindFormat(spec.dtype)));
  ReductionRunOptions options;
  options.variants = spec.variants;
  options.targets = spec.targets;
  // A plugin's or an IUT's target: its kernels of the op and dtype, as cases
  // of their own (ReductionRunOptions::external); only those when every
  // target is such.
  std::vector<const TargetInfo*> compiled;
  for (const TargetInfo* t : spec.targets) {
    const LoadedPlugin* plugin = PluginOf(*t);
    if (plugin == nullptr) {
      compiled.push_back(t);
      continue;
    }
    for (const PluginKernel& k : plugin->kernels) {
      if (k.op != op.name || k.format->name != spec.dtype || !k.reduce) continue;
      if (!spec.variants.empty() && !KernelSelected(spec.variants, k.variant, plugin->target.name)) continue;
      options.external.push_back({k.variant, &plugin->target, k.reduction_model, k.reduce});
    }
  }
  if (compiled.size() != spec.targets.size()) {
    options.targets = compiled;
    options.builtin = !compiled.empty();
    std::vector<std::string> builtin;
    for (const std::string& v : spec.variants) {
      if (ReductionVariantIndex(op, v) >= 0 || v == kEigenPeerVariant) builtin.push_back(v);
    }
    options.variants = options.builtin ? builtin : std::vector<std::string>{};
  }
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


// The catalogue's codes on a suite's inputs, shared by every target and
// variant measured in this process: the models depend on (source,
// destination, suite, seed, n) only, and goldens and the gate measure the
// same inputs once per target.
std::shared_ptr<const CastModels> CachedCastModels(const FloatFormat& from, const FloatFormat& to,
                                                   const CastInputs& inputs, const std::string& key,
                                                   unsigned threads) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const CastModels>> cache;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    const auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  auto models = std::make_shared<const CastModels>(EvaluateCastModels(from, to, inputs, threads));
  const std::lock_guard<std::mutex> lock(mutex);
  cache[key] = models;
  return models;
}

// "0x3a800000 = 0x1p-10": a source pattern and its exact value.
nlohmann::ordered_json CastInputJson(const CastInputs& inputs, uint64_t index) {
  const double v = inputs.values[index];
  return {{"index", index},
          {"x", fmt::format("{} = {}", BitsText(*inputs.from, inputs.patterns[index]),
                            std::isnan(v) ? std::string("nan") : fmt::format("{:a}", v))}};
}

// A cast case's record: the policy its variant claims, the mismatches against
// it (conformance: the model it follows, the claimed one where it does),
// every policy it follows bit for bit, the ULP error over the inputs the
// destination's range holds, and the digest of its codes.
nlohmann::ordered_json CastCaseJson(const MeasureSpec& spec, const CastCaseResult& r,
                                    const CastInputs& inputs, bool model) {
  nlohmann::ordered_json j;
  j["op"] = spec.op;
  j["variant"] = r.variant;
  j["target"] = r.target;
  j["kind"] = model ? "model" : "kernel";
  j["dtype"] = spec.dtype;
  j["suite"] = spec.suite;
  j["seed"] = spec.seed;
  j["n"] = r.n;
  const uint64_t mismatches = r.claimed_fit ? r.claimed_fit->mismatches : r.n;
  nlohmann::ordered_json followed = nlohmann::ordered_json::array();
  for (const std::string& f : r.followed) followed.push_back(f);
  nlohmann::ordered_json followed_model;  // null: no policy of the catalogue
  if (mismatches == 0) {
    followed_model = r.claimed;
  } else if (!r.followed.empty()) {
    followed_model = r.followed.front();
  }
  j["conformance"] = {{"model", followed_model}, {"expected", r.claimed}, {"mismatches", mismatches}};
  nlohmann::ordered_json first = nlohmann::ordered_json::array();
  if (r.claimed_fit) {
    for (size_t i : r.claimed_fit->first_mismatches) first.push_back(CastInputJson(inputs, i)["x"]);
  }
  j["first_mismatches"] = first;
  j["followed"] = followed;
  j["in_range"] = r.in_range;
  j["max_ulp"] = r.max_ulp;
  j["max_input"] = r.in_range == 0 ? nlohmann::ordered_json() : CastInputJson(inputs, r.max_ulp_index);
  j["correctly_rounded"] = r.correctly_rounded;
  j["special_mismatch"] = r.special;
  j["output_digest"] = DigestHex(Fnv1a(r.codes.data(), r.codes.size()));
  return j;
}

Measurement MeasureCast(MeasureSpec spec) {
  const FloatFormat& from = *CastOpSource(spec.op);
  const FloatFormat& to = *FindCastDestination(spec.dtype);
  if (spec.n == 0) spec.n = kCastSuiteDefaultN;
  auto inputs = std::make_shared<CastInputs>();
  inputs->from = &from;
  inputs->Add(spec.suite, GenerateCastSuite(from, to, spec.suite, spec.seed, spec.n));
  spec.n = inputs->patterns.size();  // the boundary suite is a fixed list
  const std::shared_ptr<const CastModels> models = CachedCastModels(
      from, to, *inputs,
      fmt::format("{} {} {} {} {}", from.name, to.name, spec.suite, spec.seed, spec.n), spec.threads);
  Measurement m;
  for (const std::string& variant : spec.variants) {
    const CastVariantInfo& info = *FindCastVariant(variant);
    const std::optional<CastPolicy> claimed = ParseCastPolicy(info.policy);
    for (const TargetInfo* target : spec.targets) {
      const bool model = spec.models_only || !target->supported;
      CastCaseResult r;
      if (model) {
        // Every target's model is the policy its variant claims.
        std::vector<uint8_t> codes;
        for (size_t p = 0; p < models->policies.size(); ++p) {
          if (models->policies[p] == *claimed) codes = models->codes[p];
        }
        r = MeasureCastOutputs(to, *inputs, *models, std::move(codes), claimed);
        r.variant = variant;
        r.target = target->name;
      } else {
        std::vector<CastCaseResult> run =
            RunCastKernels(from, to, *inputs, *models, {variant}, {target});
        if (run.empty()) {
          throw InputError(fmt::format("{}: no {} kernel to {} on {}", spec.op, variant, to.name,
                                       target->name));
        }
        r = std::move(run.front());
      }
      MeasuredCase c;
      c.record = CastCaseJson(spec, r, *inputs, model);
      if (spec.keep_outputs) c.codes = std::move(r.codes);
      m.cases.push_back(std::move(c));
    }
  }
  m.describe = [inputs](uint64_t index) { return CastInputJson(*inputs, index); };
  m.spec = std::move(spec);
  return m;
}

// The input behind output `index` of a block quantization: a scale (index <
// blocks) names its block and amax, an element its block, index and value.
nlohmann::ordered_json BlockInputJson(const BlockShape& shape, const std::vector<float>& t,
                                      uint64_t index) {
  if (index < shape.blocks()) {
    return {{"block", fmt::format("{}", index)},
            {"amax", HexFloat(BlockAmax(t.data(), shape, index))}};
  }
  const size_t i = index - shape.blocks();
  // The block holding element i.
  const size_t bs = static_cast<size_t>(shape.block_size);
  const size_t r = i / shape.cols, col = i % shape.cols;
  const size_t block = shape.axis == BlockAxis::kRows ? r * (shape.cols / bs) + col / bs
                                                      : (r / bs) * shape.cols + col;
  return {{"block", fmt::format("{}", block)},
          {"element", fmt::format("{}", i)},
          {"x", HexFloat(t[i])}};
}

// A block quantization case: the rule (or NVFP4 sequence) its variant
// claims, the blocks off it and the first in words, and the digest of its
// scales and codes. Where it leaves its rule, the rules that reproduce it
// (NameScaleRules) name what it computes instead.
Measurement MeasureBlockQuant(MeasureSpec spec) {
  const BlockSpec& bspec = *FindBlockSpec(spec.dtype);
  if (spec.n == 0) spec.n = 64;
  auto shape = std::make_shared<BlockShape>();
  *shape = BlockShape{spec.n, kBlockQuantCols, BlockAxis::kRows, bspec.block_size};
  auto t = std::make_shared<std::vector<float>>(SeededBlockTensor(bspec, *shape, spec.seed));
  Measurement m;
  for (const std::string& variant : spec.variants) {
    const BlockQuantized want = BlockQuantModel(bspec, variant, t->data(), *shape);
    for (const TargetInfo* target : spec.targets) {
      const bool model = spec.models_only || !target->supported;
      BlockQuantized got = want;
      if (!model) {
        std::optional<BlockQuantized> k =
            RunBlockQuantKernel(bspec, variant, t->data(), *shape, *target, want.tensor_scale);
        if (!k) throw InputError(fmt::format("{}: no kernels on {}", spec.op, target->name));
        got = std::move(*k);
      }
      const BlockDifference d = CompareBlockOutputs(*shape, t->data(), want, got.scales, got.codes);
      nlohmann::ordered_json j;
      j["op"] = spec.op;
      j["variant"] = variant;
      j["target"] = target->name;
      j["kind"] = model ? "model" : "kernel";
      j["dtype"] = spec.dtype;
      j["suite"] = spec.suite;
      j["seed"] = spec.seed;
      j["n"] = spec.n;
      j["blocks"] = shape->blocks();
      nlohmann::ordered_json followed;  // null: no rule reproduces it
      if (d.blocks == 0) {
        followed = variant;
      } else if (!bspec.tensor_scale) {
        const BlockNaming naming = NameScaleRules(bspec, t->data(), *shape, got.scales, got.codes);
        for (const BlockModel& bm : naming.exact) {
          if (bm.policy == CastPolicy{}) {
            followed = ScaleRuleName(bm.rule);
            break;
          }
        }
      }
      j["conformance"] = {{"model", followed}, {"expected", variant}, {"mismatches", d.blocks}};
      nlohmann::ordered_json first = nlohmann::ordered_json::array();
      if (d.blocks != 0) first.push_back(d.first);
      j["first_mismatches"] = first;
      std::vector<uint8_t> outputs = got.scales;
      outputs.insert(outputs.end(), got.codes.begin(), got.codes.end());
      j["output_digest"] = DigestHex(Fnv1a(outputs.data(), outputs.size()));
      MeasuredCase c;
      c.record = std::move(j);
      if (spec.keep_outputs) c.codes = std::move(outputs);
      m.cases.push_back(std::move(c));
    }
  }
  m.describe = [shape, t](uint64_t index) { return BlockInputJson(*shape, *t, index); };
  m.spec = std::move(spec);
  return m;
}

}  // namespace

std::vector<std::string> MeasurableOps() {
  std::vector<std::string> ops;
  for (const OpInfo& op : OpTable()) ops.push_back(op.name);
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
    case OpFamily::kBlockQuant:
      return BlockQuantVariants(*FindBlockSpec(dtype));
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
  for (const auto& v : spec.variants) {
    const bool peer = IsPeerVariant(spec.op, spec.dtype, v);
    if (!peer && std::find(known.begin(), known.end(), v) == known.end()) {
      throw InputError(fmt::format("unknown variant '{}' for {} ({})", v, spec.op, Joined(known)));
    }
  }
  if (spec.variants.empty()) spec.variants = known;
  if (family == OpFamily::kCast) return MeasureCast(std::move(spec));
  if (family == OpFamily::kBlockQuant) return MeasureBlockQuant(std::move(spec));
  if (family == OpFamily::kElementwise) {
    const ElementwiseOpInfo& op = *FindElementwiseOp(spec.op);
    return MeasureElementwise(std::move(spec), op, progress);
  }
  const ReductionOpInfo& op = *FindReductionOp(spec.op);
  return MeasureReduction(std::move(spec), op, progress);
}

}  // namespace ulpgate
