#include "suites/engine/reduction_cases.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>

#include "kernels/narrow_formats.h"
#include "oracles/float_text.h"
#include "oracles/mpfr_number.h"
#include "suites/engine/eigen_peer.h"
#include "kernels/iut/iut_protocol.h"
#include "suites/engine/guarded_buffer.h"
#include "suites/engine/kernel_fault.h"
#include "suites/engine/op_table.h"
#include "suites/inputs/inputs.h"
#include "suites/engine/reduction_oracle.h"

namespace ulpgate {

namespace {

// Offsets of 0..15 floats: every misalignment of a 512-bit vector.
constexpr size_t kMisalignCycle = 16;

// Elements: instance by instance, element by element. Kernels and the peer
// run per instance, before the engine's workers start (in the caller's
// thread, as a kernel author's debugger expects); units are ranges of one
// instance's elements, each instance a digest group.
class ReductionProblem : public EngineProblem {
 public:
  ReductionProblem(const ReductionInputSet& inputs, const ReductionOpInfo& op,
                   std::vector<ReductionModel> models, std::vector<std::string> model_names,
                   std::vector<std::vector<std::vector<float>>> produced,
                   std::map<std::pair<size_t, size_t>, KernelFault> faults = {})
      : inputs_(inputs),
        op_(op),
        models_(std::move(models)),
        model_names_(std::move(model_names)),
        produced_(std::move(produced)),
        faults_(std::move(faults)),
        elements_(inputs.outputs_per_instance()) {}

  const FloatFormat& format() const override { return *inputs_.format; }
  uint64_t size() const override { return inputs_.instances.size() * elements_; }
  bool bounded() const override { return true; }
  std::vector<EngineUnit> Units() const override {
    // An element of a large shape costs up to a millisecond (exact sum and a
    // dozen emulated models), and every unit carries its own statistics per
    // case: aim at about 64 units per instance. The size depends on the shape
    // only, never on the thread count, so merged results (the mean's rounding
    // included) do not depend on how many threads ran.
    const size_t per_unit = std::clamp<size_t>(elements_ / 64, 16, 1024);
    std::vector<EngineUnit> units;
    for (size_t i = 0; i < inputs_.instances.size(); ++i) {
      for (size_t e = 0; e < elements_; e += per_unit) {
        units.push_back({i * elements_ + e, std::min(per_unit, elements_ - e), i});
      }
    }
    return units;
  }
  const std::vector<std::string>& model_names() const override { return model_names_; }
  void Outputs(size_t c, const EngineUnit& unit, float* out) const override {
    // A kernel that faulted on an instance gave none of its outputs: the
    // fault is the whole call's.
    if (const auto f = faults_.find({unit.group, c}); f != faults_.end()) {
      KernelFault fault = f->second;
      fault.index = -1;
      fault.first = 0;
      fault.count = static_cast<int64_t>(unit.count);
      throw KernelFaultError(std::move(fault));
    }
    const std::vector<float>& y = produced_[unit.group][c];
    const size_t e = unit.begin - unit.group * elements_;
    std::copy(y.begin() + e, y.begin() + e + unit.count, out);
  }
  ElementTruth Truth(uint64_t index, float* models) const override {
    const ReductionInstance& instance = inputs_.instances[index / elements_];
    const ElementTerms terms =
        GatherElementTerms(op_, inputs_.shape, instance, index % elements_);
    ElementExact exact = ReductionExact(op_, terms);
    // A model in a 16-bit format: the binary32 model rounded once to it.
    const FloatFormat& format = *inputs_.format;
    for (size_t m = 0; models != nullptr && m < models_.size(); ++m) {
      const float binary32 = ReductionModelOutput(op_, models_[m], terms);
      models[m] = format.bits == 32 ? binary32
                                    : static_cast<float>(RoundToFormat(format, binary32));
    }
    ElementTruth truth(std::move(exact.numerator));
    truth.denominator = exact.denominator;
    truth.bound.emplace(std::move(exact.bound));
    return truth;
  }

 private:
  const ReductionInputSet& inputs_;
  const ReductionOpInfo& op_;
  std::vector<ReductionModel> models_;
  std::vector<std::string> model_names_;
  std::vector<std::vector<std::vector<float>>> produced_;  // [instance][case][element]
  std::map<std::pair<size_t, size_t>, KernelFault> faults_;  // (instance, case)
  size_t elements_;
};

}  // namespace

namespace {

// The kernel's fault, not bad input (exit 3): reductions are measured whole,
// so it ends the run naming the kernel.
KernelFaultError OutOfBounds(const ReductionOpInfo& op, std::string_view variant,
                             const TargetInfo& target, const FloatFormat& format) {
  KernelFault f;
  f.kind = KernelFaultKind::kOutOfBounds;
  f.detail = std::string(op.name) + " " + std::string(variant) +
             (format.bits == 32 ? std::string() : " (" + std::string(format.name) + ")") + " on " +
             target.name +
             (format.bits == 32 ? ": the kernel wrote outside its output"
                                : ": the kernel wrote outside its output or into its operands");
  return KernelFaultError(std::move(f));
}

// The kernel on buffers of the format's storage (Storage: float for f32, the
// bit patterns for a 16-bit format): operands encoded, outputs decoded.
template <class Storage>
std::vector<float> RunKernelIn(const ReductionOpInfo& op, std::string_view variant,
                               const TargetInfo& target, const ReductionShape& s,
                               const ReductionInstance& instance, size_t misalign,
                               const FloatFormat& format, ReductionKernel kernel) {
  constexpr bool kBinary32 = std::is_same_v<Storage, float>;
  std::vector<BasicGuardedBuffer<Storage>> in;
  std::vector<const void*> operands;
  for (const auto& operand : instance.operands) {
    in.emplace_back(operand.size(), misalign);
    for (size_t i = 0; i < operand.size(); ++i) {
      if constexpr (kBinary32) {
        in.back().data()[i] = operand[i];
      } else {
        in.back().data()[i] = static_cast<Storage>(EncodeBits(format, operand[i]));
      }
    }
    operands.push_back(in.back().data());
  }
  const size_t count = ReductionOutputCount(op, s);
  BasicGuardedBuffer<Storage> out(count, misalign);
  kernel(operands.data(), out.data(), s.data());
  bool intact = out.GuardsIntact();
  for (const auto& b : in) intact = intact && (kBinary32 || b.GuardsIntact());
  if (!intact) throw OutOfBounds(op, variant, target, format);
  std::vector<float> y(count);
  for (size_t i = 0; i < count; ++i) {
    if constexpr (kBinary32) {
      y[i] = out.data()[i];
    } else {
      y[i] = static_cast<float>(DecodeBits(format, out.data()[i]));
    }
  }
  return y;
}

}  // namespace

std::vector<float> RunReductionKernel(const ReductionOpInfo& op, std::string_view variant,
                                      const TargetInfo& target, const ReductionShape& s,
                                      const ReductionInstance& instance, size_t misalign,
                                      const FloatFormat& format) {
  const bool narrow = NarrowFormatIndex(format.name) >= 0;
  if (format.bits != 32 && !narrow) {
    throw InputError(std::string(op.name) + " has no kernels in " + format.name);
  }
  const std::string dtype = format.bits == 32 ? "f32" : format.name;
  const ReductionKernel kernel = FindReductionKernel(op.name, dtype, variant, target.bits);
  if (kernel == nullptr) {
    throw std::invalid_argument("no " + std::string(op.name) + " kernel '" + std::string(variant) +
                                "'" + (narrow ? " in " + std::string(format.name) : std::string()) +
                                " for target " + target.name);
  }
  if (narrow) {
    return RunKernelIn<uint16_t>(op, variant, target, s, instance, misalign, format, kernel);
  }
  return RunKernelIn<float>(op, variant, target, s, instance, misalign, format, kernel);
}

namespace {

// A plugin's or an IUT's kernel on one instance: operands in the format's
// storage in buffers `misalign` elements past a 64-byte boundary, guarded, so
// that a write outside the output is the case's fault as it is a built-in
// kernel's.
std::vector<float> RunExternalReductionKernel(const ReductionOpInfo& op, const ExternalReductionKernel& k,
                                              const ReductionShape& s, const ReductionInstance& instance,
                                              size_t misalign, const FloatFormat& format) {
  const size_t count = ReductionOutputCount(op, s);
  std::vector<uint64_t> wide = ReductionExtents(op, s);
  const std::vector<size_t> extents(wide.begin(), wide.end());
  std::vector<float> y(count);
  auto run = [&](auto zero) {
    using T = decltype(zero);
    std::vector<BasicGuardedBuffer<T>> in;
    std::vector<const void*> operands;
    for (const auto& operand : instance.operands) {
      in.emplace_back(operand.size(), misalign);
      for (size_t i = 0; i < operand.size(); ++i) {
        if constexpr (sizeof(T) == 4) {
          in.back().data()[i] = operand[i];
        } else {
          in.back().data()[i] = static_cast<T>(EncodeBits(format, operand[i]));
        }
      }
    }
    for (auto& b : in) operands.push_back(b.data());
    BasicGuardedBuffer<T> out(count, misalign);
    k.call(operands.data(), out.data(), extents.data(), extents.size());
    bool intact = out.GuardsIntact();
    for (const auto& b : in) intact = intact && b.GuardsIntact();
    if (!intact) {
      KernelFault f;
      f.kind = KernelFaultKind::kOutOfBounds;
      f.detail = "the kernel wrote outside its output or into its operands";
      throw KernelFaultError(std::move(f));
    }
    for (size_t i = 0; i < count; ++i) {
      if constexpr (sizeof(T) == 4) {
        y[i] = out.data()[i];
      } else {
        y[i] = static_cast<float>(DecodeBits(format, out.data()[i]));
      }
    }
  };
  if (format.storage_bytes() == 4) {
    run(0.0f);
  } else {
    run(uint16_t{0});
  }
  return y;
}

}  // namespace

std::vector<float> RunEigenPeer(const ReductionShape& s, const ReductionInstance& instance) {
  // An op whose spec says kEigenPeer is x [B, in] W [out, in]^T + b [out].
  std::vector<float> y(s[0] * s[2]);
  EigenLinearFwd(instance.operands[0].data(), instance.operands[1].data(),
                 instance.operands[2].data(), y.data(), s[0], s[1], s[2]);
  return y;
}

ReductionRun RunReduction(const ReductionInputSet& inputs, const ReductionRunOptions& options) {
  const ReductionOpInfo& op = *inputs.op;
  const FloatFormat& format = *inputs.format;
  // Eigen's product is binary32 only.
  const bool has_peer = !PeerVariants(op.name, format.name).empty();
  for (const ReductionInstance& instance : inputs.instances) {
    for (size_t k = 0; k < instance.operands.size(); ++k) {
      for (size_t i = 0; i < instance.operands[k].size(); ++i) {
        const float v = instance.operands[k][i];
        if (!IsRepresentable(format, v)) {
          throw InputError(fmt::format("instance {}: {}[{}] = {} is not a {} value",
                                       instance.index, op.operands[k], i, HexFloat(v),
                                       format.name));
        }
      }
    }
  }
  std::vector<int> variants;
  bool peer = has_peer && options.variants.empty() && options.outputs == nullptr;
  for (const auto& name : options.variants) {
    if (has_peer && name == kEigenPeerVariant) {
      peer = true;
      continue;
    }
    const int v = ReductionVariantIndex(op, name);
    if (v < 0) throw InputError("unknown " + std::string(op.name) + " variant '" + name + "'");
    variants.push_back(v);
  }
  if (options.variants.empty() && options.outputs == nullptr && options.builtin) {
    for (size_t v = 0; v < op.variants.size(); ++v) variants.push_back(static_cast<int>(v));
  }
  if (!options.builtin) peer = false;
  std::vector<const TargetInfo*> targets = options.targets;
  if (targets.empty()) {
    for (const TargetInfo& t : CompiledTargets()) {
      if (t.supported) targets.push_back(&t);
    }
  }

  // The distinct models any case needs, each evaluated once per element.
  std::vector<ReductionModel> models;
  std::vector<std::string> model_names;
  auto intern = [&](const ReductionModel& m) {
    const std::string name = m.Name(op);
    for (size_t i = 0; i < model_names.size(); ++i) {
      if (model_names[i] == name) return static_cast<int>(i);
    }
    models.push_back(m);
    model_names.push_back(name);
    return static_cast<int>(models.size() - 1);
  };
  std::vector<EngineCase> cases;
  auto add_case = [&](CaseKind kind, int v, const TargetInfo* target) {
    EngineCase c;
    c.kind = kind;
    c.variant = op.variants[v].name;
    c.target = target;
    const ReductionVariantInfo& variant = op.variants[v];
    c.expected = intern(
        ExpectedReductionModel(op, variant, target->f32_lanes, target->fused_muladd));
    if (options.all_candidate_models) {
      for (const ReductionModel& m : CandidateReductionModels(op, variant)) {
        c.compared.push_back(intern(m));
      }
    }
    if (std::find(c.compared.begin(), c.compared.end(), c.expected) == c.compared.end()) {
      c.compared.push_back(c.expected);
    }
    cases.push_back(c);
  };
  for (int v : variants) {
    for (const TargetInfo* target : targets) {
      const bool model = options.models_only || !target->supported;
      add_case(model ? CaseKind::kModel : CaseKind::kKernel, v, target);
    }
  }
  if (options.emulate_unsupported) {
    for (int v : variants) {
      for (const TargetInfo& target : CompiledTargets()) {
        const bool listed = std::find(targets.begin(), targets.end(), &target) != targets.end();
        if (!target.supported && !listed) add_case(CaseKind::kModel, v, &target);
      }
    }
  }
  // Kernels from plugins and IUTs: held to the model each claims (none: -1),
  // compared with every model of the op.
  const size_t first_external = cases.size();
  if (!options.external.empty()) {
    const std::vector<ReductionModel> all = [&] {
      std::vector<ReductionModel> m;
      for (const ReductionVariantInfo& v : op.variants) {
        for (const ReductionModel& candidate : CandidateReductionModels(op, v)) m.push_back(candidate);
      }
      return m;
    }();
    for (const ExternalReductionKernel& k : options.external) {
      EngineCase c;
      c.variant = k.variant;
      c.target = k.target;
      for (const ReductionModel& m : all) {
        const int index = intern(m);
        if (std::find(c.compared.begin(), c.compared.end(), index) == c.compared.end()) {
          c.compared.push_back(index);
        }
        if (m.Name(op) == k.model) c.expected = index;
      }
      if (!k.model.empty() && c.expected < 0) {
        throw InputError("unknown " + std::string(op.name) + " model '" + k.model + "'");
      }
      // Models only (goldens blessed from the claims): the model it claims
      // stands in for it; one that claims none is run.
      c.kind = options.models_only && c.expected >= 0 ? CaseKind::kModel : CaseKind::kKernel;
      cases.push_back(c);
    }
  }
  if (peer) {
    EngineCase c;
    c.kind = CaseKind::kPeer;
    c.variant = kEigenPeerVariant;
    cases.push_back(c);
  }
  if (options.outputs != nullptr) {
    EngineCase c;
    c.kind = CaseKind::kOutputs;
    c.variant = options.outputs_label;
    for (const ReductionVariantInfo& v : op.variants) {
      for (const ReductionModel& m : CandidateReductionModels(op, v)) {
        const int index = intern(m);
        if (std::find(c.compared.begin(), c.compared.end(), index) == c.compared.end()) {
          c.compared.push_back(index);
        }
      }
    }
    cases.push_back(c);
    if (options.outputs->size() != inputs.instances.size()) {
      throw InputError("outputs for " + std::to_string(options.outputs->size()) + " instances, " +
                       std::to_string(inputs.instances.size()) + " given");
    }
  }

  const size_t elements = inputs.outputs_per_instance();
  const size_t instance_count = inputs.instances.size();
  std::vector<std::vector<std::vector<float>>> produced(instance_count);  // [i][case][element]
  std::map<std::pair<size_t, size_t>, KernelFault> faults;
  std::vector<std::optional<KernelFault>> external_fault(options.external.size());
  for (size_t i = 0; i < instance_count; ++i) {
    produced[i].resize(cases.size());
    for (size_t c = 0; c < cases.size(); ++c) {
      const EngineCase& cs = cases[c];
      if (c >= first_external && c < first_external + options.external.size() &&
          cs.kind == CaseKind::kKernel) {
        // A fault is this case's result from its first faulting instance on;
        // the other cases are measured.
        std::optional<KernelFault>& fault = external_fault[c - first_external];
        if (!fault) {
          try {
            produced[i][c] = RunExternalReductionKernel(
                op, options.external[c - first_external], inputs.shape, inputs.instances[i],
                (options.misalign + inputs.instances[i].index) % kMisalignCycle, *inputs.format);
            continue;
          } catch (const KernelFaultError& e) {
            fault = e.fault();
          }
        }
        faults.emplace(std::make_pair(i, c), *fault);
        produced[i][c].assign(elements, 0.0f);
        continue;
      }
      if (cs.kind == CaseKind::kKernel) {
        produced[i][c] = RunReductionKernel(
            op, cs.variant, *cs.target, inputs.shape, inputs.instances[i],
            (options.misalign + inputs.instances[i].index) % kMisalignCycle, *inputs.format);
      } else if (cs.kind == CaseKind::kPeer) {
        produced[i][c] = RunEigenPeer(inputs.shape, inputs.instances[i]);
      } else if (cs.kind == CaseKind::kOutputs) {
        produced[i][c] = (*options.outputs)[i];
        if (produced[i][c].size() != inputs.outputs_per_instance()) {
          throw InputError(fmt::format("{} outputs where {} {} gives {}", produced[i][c].size(),
                                       op.name, ShapeText(op, inputs.shape),
                                       inputs.outputs_per_instance()));
        }
      }
    }
  }

  const ReductionProblem problem(inputs, op, std::move(models), std::move(model_names),
                                 std::move(produced), std::move(faults));
  EngineOptions engine;
  engine.threads = options.threads;
  engine.keep_outputs = true;
  engine.keep_details = options.keep_details;
  engine.progress = options.progress;
  EngineRun measured = RunEngine(problem, cases, engine);

  ReductionRun run;
  run.outputs.assign(instance_count, std::vector<std::vector<float>>(cases.size()));
  for (size_t c = 0; c < cases.size(); ++c) {
    CaseResult& r = measured.cases[c];
    r.op = std::string(op.name);
    r.variant = cases[c].variant;
    r.target = cases[c].target          ? cases[c].target->name
               : cases[c].kind == CaseKind::kPeer ? kEigenPeerTarget
                                                  : "";
    r.dtype = inputs.format->name;
    r.suite = inputs.source;
    r.seed = inputs.seed;
    r.shape = ShapeText(op, inputs.shape);
    r.instances = instance_count;
    for (size_t i = 0; i < instance_count; ++i) {
      run.outputs[i][c].assign(r.outputs.begin() + i * elements,
                               r.outputs.begin() + (i + 1) * elements);
    }
    r.outputs.clear();
    r.outputs.shrink_to_fit();
  }
  run.cases = std::move(measured.cases);
  if (options.keep_details) {
    run.details.resize(instance_count);
    for (size_t i = 0; i < instance_count; ++i) {
      InstanceDetail& d = run.details[i];
      d.exact.resize(elements);
      d.cases.assign(cases.size(), std::vector<ElementMeasure>(elements));
      for (size_t e = 0; e < elements; ++e) {
        ElementDetail& element = measured.details[i * elements + e];
        d.exact[e] = std::move(element.exact);
        for (size_t c = 0; c < cases.size(); ++c) d.cases[c][e] = element.cases[c];
      }
    }
  }
  return run;
}

}  // namespace ulpgate
