#include "suites/engine/tanh_bwd_cases.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "kernels/narrow_formats.h"
#include "oracles/fast_ulp.h"
#include "oracles/float_text.h"
#include "oracles/format.h"
#include "oracles/mpfr_number.h"
#include "suites/engine/guarded_buffer.h"
#include "suites/engine/tanh_bwd_oracle.h"

namespace ulpgate {

std::vector<EngineUnit> ChunkUnits(uint64_t n) {
  std::vector<EngineUnit> units;
  for (uint64_t begin = 0, g = 0; begin < n; begin += kEngineChunk, ++g) {
    units.push_back({begin, std::min<uint64_t>(kEngineChunk, n - begin), g});
  }
  return units;
}

std::vector<KernelCall> TanhBwdCallPlan(size_t count) {
  // Every length 1..33 leaves every tail of 4, 8 and 16 lanes (and calls
  // shorter than one vector), and puts a third of the inputs of a 16-lane
  // target in tails, so that a bug confined to the tail shows on most suites;
  // the long calls run the body many times. 35 lengths and 16 offsets are
  // coprime, so every length meets every offset.
  static constexpr size_t kLengths[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                                        13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
                                        25, 26, 27, 28, 29, 30, 31, 32, 33, 64, 100};
  constexpr size_t kOffsets = 16;
  std::vector<KernelCall> plan;
  size_t begin = 0;
  for (size_t k = 0; begin < count; ++k) {
    const size_t length = std::min(kLengths[k % std::size(kLengths)], count - begin);
    plan.push_back({begin, length, k % kOffsets, (k * 7 + 3) % kOffsets});
    begin += length;
  }
  return plan;
}

namespace {

// What produces one case's outputs over a chunk: its kernel called by the
// plan, or nullptr for a "model" case.
using ChunkKernel = std::function<void(const float* grad, const float* t, float* out,
                                       const std::vector<KernelCall>& plan)>;

void CheckGuards(bool intact, const std::string& name, const KernelCall& call) {
  if (!intact) {
    throw std::logic_error(name + " wrote outside its output (a call of " +
                           std::to_string(call.count) + " inputs)");
  }
}

// Runs a binary32 kernel over a chunk's inputs call by call as TanhBwdCallPlan
// says, each call's operands and output copied into buffers at the call's
// offsets.
ChunkKernel Binary32Kernel(TanhBwdKernel kernel, std::string name) {
  return [kernel, name](const float* grad, const float* t, float* out,
                        const std::vector<KernelCall>& plan) {
    for (const KernelCall& call : plan) {
      GuardedBuffer g(call.count, call.operand_misalign);
      GuardedBuffer x(call.count, call.operand_misalign);
      GuardedBuffer y(call.count, call.output_misalign);
      std::copy(grad + call.begin, grad + call.begin + call.count, g.data());
      std::copy(t + call.begin, t + call.begin + call.count, x.data());
      kernel(g.data(), x.data(), y.data(), call.count);
      CheckGuards(y.GuardsIntact() && g.GuardsIntact() && x.GuardsIntact(), name, call);
      std::copy(y.data(), y.data() + call.count, out + call.begin);
    }
  };
}

// The same for a 16-bit kernel: operands encoded in the format (a NaN as its
// sign's quiet NaN), outputs decoded.
ChunkKernel NarrowKernel(TanhBwdNarrowKernel kernel, const FloatFormat& format, std::string name) {
  return [kernel, &format, name](const float* grad, const float* t, float* out,
                                 const std::vector<KernelCall>& plan) {
    for (const KernelCall& call : plan) {
      BasicGuardedBuffer<uint16_t> g(call.count, call.operand_misalign);
      BasicGuardedBuffer<uint16_t> x(call.count, call.operand_misalign);
      BasicGuardedBuffer<uint16_t> y(call.count, call.output_misalign);
      for (size_t i = 0; i < call.count; ++i) {
        g.data()[i] = static_cast<uint16_t>(EncodeBits(format, grad[call.begin + i]));
        x.data()[i] = static_cast<uint16_t>(EncodeBits(format, t[call.begin + i]));
      }
      kernel(g.data(), x.data(), y.data(), call.count);
      CheckGuards(y.GuardsIntact() && g.GuardsIntact() && x.GuardsIntact(), name, call);
      for (size_t i = 0; i < call.count; ++i) {
        out[call.begin + i] = static_cast<float>(DecodeBits(format, y.data()[i]));
      }
    }
  };
}


// Elements are inputs; units are chunks of kEngineChunk inputs, each its own
// digest group.
class TanhBwdProblem : public EngineProblem {
 public:
  // extra_models: models given as expressions (a plugin's claim), after the
  // template models.
  TanhBwdProblem(const InputSet& inputs, const FloatFormat& format, int map_operand,
                 std::vector<ChunkKernel> kernels, std::vector<ModelProgram> extra_models = {})
      : inputs_(inputs),
        format_(format),
        map_operand_(map_operand),
        models_(TanhBwdModelNames(format)),
        builtin_models_(models_.size()),
        extra_models_(std::move(extra_models)),
        kernels_(std::move(kernels)),
        full_plan_(TanhBwdCallPlan(kEngineChunk)),
        binary32_(IsBinary32(format)) {
    for (const ModelProgram& m : extra_models_) models_.push_back(m.name);
  }

  const FloatFormat& format() const override { return format_; }
  uint64_t size() const override { return inputs_.size(); }
  std::vector<EngineUnit> Units() const override { return ChunkUnits(size()); }
  const std::vector<std::string>& model_names() const override { return models_; }
  void Outputs(size_t c, const EngineUnit& unit, float* out) const override {
    const std::vector<KernelCall> short_plan =
        unit.count == kEngineChunk ? std::vector<KernelCall>() : TanhBwdCallPlan(unit.count);
    kernels_[c](inputs_.columns[0].data() + unit.begin, inputs_.columns[1].data() + unit.begin,
                out, unit.count == kEngineChunk ? full_plan_ : short_plan);
  }
  ElementTruth Truth(uint64_t i, float* models) const override {
    const float grad = inputs_.columns[0][i];
    const float t = inputs_.columns[1][i];
    const std::vector<float> m = TanhBwdModelOutputs(format_, grad, t);
    std::copy(m.begin(), m.end(), models);
    const double ops[2] = {grad, t};
    for (size_t k = 0; k < extra_models_.size(); ++k) {
      models[builtin_models_ + k] = static_cast<float>(extra_models_[k].Evaluate(ops));
    }
    return ElementTruth(TanhBwdExact(grad, t));
  }
  float MapValue(uint64_t i) const override { return inputs_.columns[map_operand_][i]; }

  // The fast tier: native models, errors from oracles/fast_ulp.h.
  bool FastModels(uint64_t i, float* models) const override {
    const float grad = inputs_.columns[0][i];
    const float t = inputs_.columns[1][i];
    if (binary32_) {
      const std::array<float, 4> m = TanhBwdModelsNative(grad, t);
      std::copy(m.begin(), m.end(), models);
    } else {
      const std::vector<float> m = TanhBwdNarrowModelsNative(
          format_, static_cast<uint16_t>(EncodeBits(format_, grad)),
          static_cast<uint16_t>(EncodeBits(format_, t)));
      std::copy(m.begin(), m.end(), models);
    }
    const double ops[2] = {grad, t};
    for (size_t k = 0; k < extra_models_.size(); ++k) {
      models[builtin_models_ + k] = static_cast<float>(extra_models_[k].Evaluate(ops));
    }
    return true;
  }
  bool FastUlpError(uint64_t i, float y, UlpError* error) const override {
    const auto x = FastTanhBwdExactValue(inputs_.columns[0][i], inputs_.columns[1][i], format_);
    if (!x) return false;
    const auto e = ::ulpgate::FastUlpError(*x, y, format_);
    if (!e) return false;
    *error = *e;
    return true;
  }

 private:
  const InputSet& inputs_;
  const FloatFormat& format_;
  int map_operand_;
  std::vector<std::string> models_;
  size_t builtin_models_;
  std::vector<ModelProgram> extra_models_;
  std::vector<ChunkKernel> kernels_;  // per case; empty for a "model" case
  std::vector<KernelCall> full_plan_;
  bool binary32_;
};

}  // namespace

std::vector<std::string> TanhBwdVariantNames(const FloatFormat& format) {
  std::vector<std::string> names;
  if (IsBinary32(format)) {
    for (const auto& v : kTanhBwdVariants) names.emplace_back(v.name);
  } else {
    TanhBwdNarrowModelNames(format);  // throws for a format without variants
    for (const auto& v : kTanhBwdNarrowVariants) names.emplace_back(v.name);
  }
  return names;
}

std::vector<std::string> TanhBwdModelNames(const FloatFormat& format) {
  if (!IsBinary32(format)) return TanhBwdNarrowModelNames(format);
  std::vector<std::string> names;
  for (const auto& m : kTanhBwdModels) names.emplace_back(m.name);
  return names;
}

std::vector<float> TanhBwdModelOutputs(const FloatFormat& format, float grad, float t) {
  if (IsBinary32(format)) {
    const auto m = TanhBwdModels(grad, t);
    return {m.begin(), m.end()};
  }
  return TanhBwdNarrowModels(format, static_cast<uint16_t>(EncodeBits(format, grad)),
                             static_cast<uint16_t>(EncodeBits(format, t)));
}

std::string ExpectedTanhBwdModel(const FloatFormat& format, std::string_view variant,
                                 const TargetInfo& target) {
  if (!IsBinary32(format)) return ExpectedNarrowModel(format, variant, target);
  const int v = TanhBwdVariantIndex(variant);
  if (v < 0) throw InputError("unknown tanh_bwd variant '" + std::string(variant) + "'");
  const auto& info = kTanhBwdVariants[v];
  return std::string(target.fused_negmuladd ? info.model_fused_target : info.model_unfused_target);
}

TanhBwdCasePlan PlanTanhBwdCases(const FloatFormat& format, const std::vector<std::string>& variants,
                                 const std::vector<const TargetInfo*>& requested_targets,
                                 bool models_only) {
  const bool binary32 = IsBinary32(format);
  if (!binary32 && NarrowFormatIndex(format.name) < 0) {
    throw InputError(std::string("tanh_bwd has no kernels in ") + format.name);
  }
  const std::vector<std::string> all_variants = TanhBwdVariantNames(format);
  TanhBwdCasePlan plan;
  plan.model_names = TanhBwdModelNames(format);
  std::vector<const TargetInfo*> targets;  // compiled
  std::vector<const LoadedPlugin*> plugins;
  for (const TargetInfo* t : requested_targets) {
    if (const LoadedPlugin* p = PluginOf(*t)) {
      plugins.push_back(p);
    } else {
      targets.push_back(t);
    }
  }
  if (requested_targets.empty()) {
    for (const TargetInfo& t : CompiledTargets()) {
      if (t.supported) targets.push_back(&t);
    }
  }
  for (const LoadedPlugin* p : plugins) {
    if (!p->HasDtype(format.name)) {
      throw InputError("plugin " + p->target.name + " has no tanh_bwd kernels in " + format.name);
    }
  }
  auto chosen = [&](const std::string& variant) {
    return variants.empty() || std::find(variants.begin(), variants.end(), variant) != variants.end();
  };
  for (const auto& name : variants) {
    const bool known =
        std::find(all_variants.begin(), all_variants.end(), name) != all_variants.end() ||
        std::any_of(plugins.begin(), plugins.end(),
                    [&](const LoadedPlugin* p) { return p->Find(name, format.name) != nullptr; });
    if (!known) {
      std::string names;
      for (const auto& v : all_variants) names += (names.empty() ? "" : ", ") + v;
      for (const LoadedPlugin* p : plugins) {
        for (const std::string& v : PluginVariants({&p->target}, format.name)) {
          names += ", " + v + " (" + p->target.name + ")";
        }
      }
      throw InputError("unknown tanh_bwd variant '" + name + "' in " + format.name + " (" + names +
                       ")");
    }
  }
  for (const std::string& v : all_variants) {
    if (!chosen(v)) continue;
    for (const TargetInfo* target : targets) {
      TanhBwdCasePlan::Case c;
      c.variant = v;
      c.target = target;
      const std::string expected = ExpectedTanhBwdModel(format, v, *target);
      c.expected = static_cast<int>(std::find(plan.model_names.begin(), plan.model_names.end(),
                                              expected) -
                                    plan.model_names.begin());
      c.name = "tanh_bwd " + v + " (" + format.name + ") on " + target->name;
      if (!models_only && target->supported) {
        if (binary32) {
          c.f32 = FindTanhBwdKernel(v, target->bits);
        } else {
          c.u16 = FindTanhBwdNarrowKernel(format.name, v, target->bits);
        }
      }
      c.kind = c.f32 != nullptr || c.u16 != nullptr ? CaseKind::kKernel : CaseKind::kModel;
      plan.cases.push_back(std::move(c));
    }
  }

  // Plugin kernels: called like the built-in ones.
  for (const LoadedPlugin* plugin : plugins) {
    for (const PluginKernel& p : plugin->kernels) {
      if (std::string_view(p.format->name) != format.name || !chosen(p.variant)) continue;
      // A built-in model by its name; an expression (or a name two plugins
      // share) joins the models once.
      auto it = std::find(plan.model_names.begin(), plan.model_names.end(), p.model.name);
      if (it == plan.model_names.end()) {
        plan.extra_models.push_back(p.model);
        plan.model_names.push_back(p.model.name);
        it = plan.model_names.end() - 1;
      }
      TanhBwdCasePlan::Case c;
      c.variant = p.variant;
      c.target = &plugin->target;
      c.expected = static_cast<int>(it - plan.model_names.begin());
      c.kind = models_only ? CaseKind::kModel : CaseKind::kKernel;
      c.name = "plugin " + plugin->target.name + " kernel " + p.variant;
      if (!models_only) {
        c.f32 = p.f32;
        c.u16 = p.u16;
      }
      plan.cases.push_back(std::move(c));
    }
  }
  return plan;
}

std::vector<CaseResult> RunTanhBwd(const InputSet& inputs, const RunOptions& options) {
  if (inputs.columns.size() != 2) throw InputError("tanh_bwd takes 2 operands (grad t)");
  if (options.map_operand >= static_cast<int>(inputs.columns.size())) {
    throw InputError("no operand " + std::to_string(options.map_operand) + " to map errors by");
  }
  const FloatFormat& format = *options.format;
  const bool binary32 = IsBinary32(format);
  if (!binary32 && NarrowFormatIndex(format.name) < 0) {
    throw InputError(std::string("tanh_bwd has no kernels in ") + format.name);
  }
  // The inputs must be values of the format (an input file's may not be).
  for (size_t k = 0; k < inputs.columns.size(); ++k) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const float v = inputs.columns[k][i];
      if (!IsRepresentable(format, v)) {
        throw InputError(fmt::format("input #{}: {} = {} is not a {} value (rounded: {})", i,
                                     inputs.operand_names[k], HexFloat(v), format.name,
                                     HexFloat(static_cast<float>(RoundToFormat(format, v)))));
      }
    }
  }
  const TanhBwdCasePlan plan =
      PlanTanhBwdCases(format, options.variants, options.targets, options.models_only);
  std::vector<EngineCase> cases;
  std::vector<ChunkKernel> kernels;
  for (const TanhBwdCasePlan::Case& p : plan.cases) {
    EngineCase c;
    c.variant = p.variant;
    c.target = p.target;
    c.expected = p.expected;
    c.kind = p.kind;
    cases.push_back(std::move(c));
    kernels.push_back(p.f32 != nullptr   ? Binary32Kernel(p.f32, p.name)
                      : p.u16 != nullptr ? NarrowKernel(p.u16, format, p.name)
                                         : ChunkKernel());
  }
  std::vector<ModelProgram> extra_models = plan.extra_models;
  const std::vector<std::string>& names = plan.model_names;
  for (EngineCase& c : cases) {
    c.compared.resize(names.size());
    for (size_t m = 0; m < names.size(); ++m) c.compared[m] = static_cast<int>(m);
  }
  const TanhBwdProblem problem(inputs, format, options.map_operand, std::move(kernels),
                               std::move(extra_models));
  EngineOptions engine;
  engine.threads = options.threads;
  engine.keep_outputs = options.keep_outputs;
  engine.map = options.map_operand >= 0;
  engine.keep_details = options.details != nullptr;
  engine.progress = options.progress;
  EngineRun run = RunEngine(problem, cases, engine);
  if (options.details != nullptr) *options.details = std::move(run.details);
  std::vector<CaseResult> results = std::move(run.cases);
  for (size_t k = 0; k < results.size(); ++k) {
    CaseResult& r = results[k];
    r.op = "tanh_bwd";
    r.variant = cases[k].variant;
    r.target = cases[k].target->name;
    r.dtype = format.name;
    r.suite = inputs.source;
    r.seed = inputs.seed;
    if (options.map_operand >= 0) r.map_operand = inputs.operand_names[options.map_operand];
  }
  return results;
}

}  // namespace ulpgate
