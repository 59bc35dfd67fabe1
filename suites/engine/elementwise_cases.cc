#include "suites/engine/elementwise_cases.h"
#include "suites/engine/kernel_names.h"

#include <algorithm>
#include <iterator>
#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>

#include "kernels/narrow_formats.h"
#include "oracles/fast_ulp.h"
#include "oracles/float_text.h"
#include "oracles/format.h"
#include "oracles/mpfr_number.h"
#include "suites/sweep/factor_columns.h"
#include "suites/sweep/sweep_tier.h"
#include "suites/engine/guarded_buffer.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/engine/vector_models.h"

namespace ulpgate {

std::vector<EngineUnit> ChunkUnits(uint64_t n) {
  std::vector<EngineUnit> units;
  for (uint64_t begin = 0, g = 0; begin < n; begin += kEngineChunk, ++g) {
    units.push_back({begin, std::min<uint64_t>(kEngineChunk, n - begin), g});
  }
  return units;
}

std::vector<KernelCall> ElementwiseCallPlan(size_t count) {
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
// plan (operands[k] is operand k's values over the chunk), or nullptr for a
// "model" case.
using ChunkKernel = std::function<void(const float* const* operands, float* out,
                                       const std::vector<KernelCall>& plan)>;

// An overrun is the kernel's fault on that call, as the IUT reports one from
// its own process: the case is not measured, the others are.
void CheckGuards(bool output_intact, bool operands_intact, const KernelCall& call) {
  if (output_intact && operands_intact) return;
  KernelFault f;
  f.kind = KernelFaultKind::kOutOfBounds;
  f.detail = output_intact ? "the kernel wrote into its operands"
                           : "the kernel wrote outside its output";
  f.first = static_cast<int64_t>(call.begin);
  f.count = static_cast<int64_t>(call.count);
  if (call.count == 1) f.index = f.first;  // a call of one input: that input faults alone
  throw KernelFaultError(std::move(f));
}

// Runs a kernel over a chunk's inputs call by call as ElementwiseCallPlan
// says, each call's operands and output copied into guarded buffers at the
// call's offsets; `call_kernel` calls it with the buffers' storage lanes
// (float for f32, the format's bit patterns for a 16-bit one, encoded from and
// decoded to the floats that hold its values, a NaN as its sign's quiet NaN).
template <class T, class Call>
ChunkKernel GuardedKernel(size_t arity, const FloatFormat& format, std::string /*name*/,
                          Call call_kernel) {
  return [arity, &format, call_kernel](const float* const* operands, float* out,
                                            const std::vector<KernelCall>& plan) {
    // Placed anew for every call, their allocations kept from call to call.
    thread_local std::vector<BasicGuardedBuffer<T>> in(kMaxElementwiseArity,
                                                       BasicGuardedBuffer<T>(0, 0));
    thread_local BasicGuardedBuffer<T> y(0, 0);
    for (const KernelCall& call : plan) {
      std::array<const T*, kMaxElementwiseArity> pointers{};
      for (size_t k = 0; k < arity; ++k) {
        in[k].Place(call.count, call.operand_misalign, /*elements=*/false);
        for (size_t i = 0; i < call.count; ++i) {
          const float v = operands[k][call.begin + i];
          if constexpr (std::is_same_v<T, float>) {
            in[k].data()[i] = v;
          } else {
            in[k].data()[i] = static_cast<T>(EncodeBits(format, v));
          }
        }
        pointers[k] = in[k].data();
      }
      y.Place(call.count, call.output_misalign);
      try {
        call_kernel(pointers.data(), y.data(), call.count);
      } catch (KernelFaultError& e) {  // from a kernel in another process: indices in the chunk
        const auto shift = static_cast<int64_t>(call.begin);
        if (e.fault().index >= 0) e.fault().index += shift;
        e.fault().first += shift;
        throw;
      }
      bool operands_intact = true;
      for (size_t k = 0; k < arity; ++k) operands_intact = operands_intact && in[k].GuardsIntact();
      CheckGuards(y.GuardsIntact(), operands_intact, call);
      for (size_t i = 0; i < call.count; ++i) {
        if constexpr (std::is_same_v<T, float>) {
          out[call.begin + i] = y.data()[i];
        } else {
          out[call.begin + i] = static_cast<float>(DecodeBits(format, y.data()[i]));
        }
      }
    }
  };
}

ChunkKernel BuiltinKernel(ElementwiseKernel kernel, size_t arity, const FloatFormat& format,
                          std::string name) {
  const auto call = [kernel](const auto* const* in, auto* out, size_t n) {
    kernel(reinterpret_cast<const void* const*>(in), out, n);
  };
  if (IsBinary32(format)) return GuardedKernel<float>(arity, format, std::move(name), call);
  return GuardedKernel<uint16_t>(arity, format, std::move(name), call);
}

// A plugin's kernel (kernels/plugins/ulpgate/plugin.h), as many operands as
// the op has.
ChunkKernel PluginChunkKernel(const PluginKernel& kernel, size_t arity, const FloatFormat& format,
                              std::string name) {
  const auto storage_call = [call = kernel.call](const auto* const* in, auto* out, size_t n) {
    call(reinterpret_cast<const void* const*>(in), out, n);
  };
  if (IsBinary32(format)) return GuardedKernel<float>(arity, format, std::move(name), storage_call);
  return GuardedKernel<uint16_t>(arity, format, std::move(name), storage_call);
}

// Elements are inputs; units are chunks of kEngineChunk inputs, each its own
// digest group.
class ElementwiseProblem : public EngineProblem {
 public:
  // extra_models: models given as expressions (a plugin's claim), after the
  // template models.
  ElementwiseProblem(const ElementwiseOpInfo& op, const InputSet& inputs, const FloatFormat& format,
                     int map_operand, std::vector<ChunkKernel> kernels,
                     std::vector<ModelProgram> extra_models = {})
      : op_(op),
        oracle_(OracleOf(op)),
        inputs_(inputs),
        format_(format),
        map_operand_(map_operand),
        models_(ModelNames(op, format)),
        builtin_models_(models_.size()),
        extra_models_(std::move(extra_models)),
        kernels_(std::move(kernels)),
        full_plan_(ElementwiseCallPlan(kEngineChunk)) {
    for (const ModelProgram& m : extra_models_) models_.push_back(m.name);
  }

  const FloatFormat& format() const override { return format_; }
  uint64_t size() const override { return inputs_.size(); }
  std::vector<EngineUnit> Units() const override { return ChunkUnits(size()); }
  const std::vector<std::string>& model_names() const override { return models_; }
  bool bounded() const override { return true; }
  void Outputs(size_t c, const EngineUnit& unit, float* out) const override {
    const std::vector<KernelCall> short_plan =
        unit.count == kEngineChunk ? std::vector<KernelCall>() : ElementwiseCallPlan(unit.count);
    std::array<const float*, kMaxElementwiseArity> operands{};
    for (size_t k = 0; k < op_.arity(); ++k) operands[k] = inputs_.columns[k].data() + unit.begin;
    kernels_[c](operands.data(), out, unit.count == kEngineChunk ? full_plan_ : short_plan);
  }
  ElementTruth Truth(uint64_t i, float* models) const override {
    const auto x = Operands(i);
    if (models != nullptr) {
      ModelOutputsInto(op_, format_, x.data(), /*native=*/false, models);
      ExtraModels(x, models);
    }
    ElementTruth truth(oracle_.Exact(x.data()));
    truth.bound = ElementwiseBound(op_, x.data(), format_);
    return truth;
  }
  float MapValue(uint64_t i) const override { return inputs_.columns[map_operand_][i]; }

  // The fast tier: native models, errors from the op's two-double exact value
  // (oracles/fast_ulp.h) where it has one.
  bool FastModels(uint64_t i, float* models) const override {
    const auto x = Operands(i);
    ModelOutputsInto(op_, format_, x.data(), /*native=*/true, models);
    ExtraModels(x, models);
    return true;
  }
  // The vectorized tier: the sweep's (suites/sweep/sweep_tier.h), for an op
  // that declares it, with no models beside its own; or for an op whose
  // factor and term magnitude have estimates (FastFactor, FastTermFactor),
  // its exact values from them (SweepScaledExactValues) and its models
  // element by element.
  bool HasVectorTier() const override {
    if (op_.arity() != 2) return false;
    return (op_.own_tiers.vector_sweep && extra_models_.empty()) || FactorTier();
  }
  void VectorTile(uint64_t begin, size_t n, EngineVectorTile* tile) const override {
    struct Operands {
      alignas(64) float grad[kSweepTile + kSweepVectorSlack];
      alignas(64) float t[kSweepTile + kSweepVectorSlack];
      alignas(64) uint16_t grad_bits[kSweepTile + kSweepVectorSlack];
      alignas(64) uint16_t t_bits[kSweepTile + kSweepVectorSlack];
    };
    thread_local std::unique_ptr<Operands> buffers;
    if (!buffers) buffers = std::make_unique<Operands>();
    Operands& o = *buffers;
    const float* grad = inputs_.columns[0].data() + begin;
    const float* t = inputs_.columns[1].data() + begin;
    std::copy(grad, grad + n, o.grad);
    std::copy(t, t + n, o.t);
    std::fill(o.grad + n, o.grad + n + kSweepVectorSlack, 0.0f);
    std::fill(o.t + n, o.t + n + kSweepVectorSlack, 0.0f);
    const bool binary32 = IsBinary32(format_);
    if (!binary32) {  // the patterns the kernels receive (a NaN its sign's quiet NaN)
      for (size_t i = 0; i < n + kSweepVectorSlack; ++i) {
        o.grad_bits[i] = static_cast<uint16_t>(EncodeBits(format_, o.grad[i]));
        o.t_bits[i] = static_cast<uint16_t>(EncodeBits(format_, o.t[i]));
      }
    }
    tile->models.resize(models_.size());
    std::vector<float*> model_arrays(models_.size());
    for (size_t m = 0; m < models_.size(); ++m) {
      tile->models[m].resize(kSweepTile + kSweepVectorSlack);
      model_arrays[m] = tile->models[m].data();
    }
    const bool factor_tier = FactorTier();
    std::fill(tile->exact_from_mpfr, tile->exact_from_mpfr + n, uint8_t{0});
    thread_local std::unique_ptr<FactorColumnsBuffer> factors;
    if (factor_tier) {
      if (!factors) factors = std::make_unique<FactorColumnsBuffer>();
      uint64_t mpfr_factors = 0;
      SweepScaledExactValues(format_, o.grad,
                             PerInputFactors(oracle_, format_, o.grad, o.t, n, factors.get(),
                                             &mpfr_factors, tile->exact_from_mpfr),
                             n, &tile->exact);
      std::array<float, kMaxElementwiseArity> x{};
      std::vector<float>& element_models = ThreadModels();
      // Only the models the engine still reads (EngineVectorTile::wanted).
      std::vector<size_t> builtin;
      bool extra = false;
      for (size_t m = 0; m < models_.size(); ++m) {
        if (m < tile->wanted.size() && !tile->wanted[m]) continue;
        if (m < builtin_models_) {
          builtin.push_back(m);
        } else {
          extra = true;
        }
      }
      // In binary32, in vectors where the CPU has them.
      if (binary32) {
        const float* operands[2] = {o.grad, o.t};
        size_t kept = 0;
        for (const size_t m : builtin) {
          if (!VectorModelOutputs(op_, m, operands, n, model_arrays[m])) builtin[kept++] = m;
        }
        builtin.resize(kept);
      }
      for (size_t i = 0; i < n && (!builtin.empty() || extra); ++i) {
        x[0] = o.grad[i];
        x[1] = o.t[i];
        for (const size_t m : builtin) {
          model_arrays[m][i] = CanonicalNan(ModelOutput(op_, format_, m, x.data(), /*native=*/true));
        }
        if (extra) {
          ExtraModels(x, element_models.data());
          for (size_t m = builtin_models_; m < models_.size(); ++m) {
            model_arrays[m][i] = CanonicalNan(element_models[m]);
          }
        }
      }
    } else {
      SweepExactValues(format_, o.grad, o.t, n, &tile->exact);
      SweepModelOutputs(format_, o.grad, o.t, o.grad_bits, o.t_bits, n, model_arrays.data());
    }
    // The bound fraction is f = |y - x| / D, FastBoundFraction's quotient;
    // D from every term rounded to a double (a relative error below 2^-48: a
    // few roundings of nonnegative quantities), or from |grad| times the
    // op's estimate of the rest (kFastTermFactorError and one rounding), and
    // its reciprocal per ULP one or two roundings more.
    const int p = format_.precision;
    const double m = static_cast<double>(op_.bound_roundings);
    const double c = 0x1p24 - m;
    const bool usable = op_.bound_roundings > 0 && op_.bound_roundings <= 64 && p <= 24;
    const double widen = Pow2(kBinary32.precision - p);
    const double allowance = m * c * Pow2(format_.emin - p + 1);
    // binary32 with the factor's term (all but a few inputs): the same
    // quantity in one division, c / (D scale[i]) (scale[i] a power of two),
    // in a loop with no branch or call that the compiler vectorizes; an
    // entry without the term (NaN there) left to the loop below.
    const bool fast_terms = usable && factor_tier && binary32;
    if (fast_terms) {
      for (size_t i = 0; i < n; ++i) {
        const double a = std::fabs(static_cast<double>(o.grad[i])) * factors->term[i];
        const double den = m * a * widen + allowance;
        const double scale = c / (den * tile->exact.scale[i]);
        tile->fraction_per_ulp[i] = scale >= 0x1p-1000 && scale <= 0x1p1000 ? scale : 0;
      }
    }
    for (size_t i = 0; i < n; ++i) {
      if (fast_terms && !std::isnan(factors->term[i])) continue;
      double scale = 0;
      std::array<double, 8> terms;
      const float operands[2] = {o.grad[i], o.t[i]};
      size_t count = 0;
      double a = 0;
      if (!usable) {
      } else if (factor_tier) {
        // |grad| T(x): T within 2^-50, the product one rounding more; T
        // from the factor's estimate where the op gave it there.
        const double with_factor = factors->term[i];
        const std::optional<double> rest =
            std::isnan(with_factor) ? oracle_.FastTermFactor(operands) : std::optional<double>(with_factor);
        if (rest) {
          count = 1;
          a = std::fabs(static_cast<double>(o.grad[i])) * *rest;
        }
      } else {
        count = oracle_.FastTermMagnitude(operands, terms.data());
        for (size_t k = 0; k < 2 * count; ++k) a += terms[k];
      }
      if (count > 0) {
        const double den = m * a * widen + allowance;
        scale = binary32 ? den / c
                         : (den * (Pow2(p) + 1) + std::fabs(tile->exact.x0[i]) * c +
                            c * Pow2(format_.emin)) /
                               (c * Pow2(p));
        // An error of e ULP is |y - x| = e / tile->exact.scale[i] (a power of two).
        scale = 1 / (scale * tile->exact.scale[i]);
        if (!(scale >= 0x1p-1000 && scale <= 0x1p1000)) scale = 0;
      }
      tile->fraction_per_ulp[i] = scale;
    }
  }

  bool FastMeasure(uint64_t i, float y, UlpError* error, BoundFraction* bound) const override {
    const auto operands = Operands(i);
    const auto x = oracle_.FastExact(operands.data(), format_);
    if (!x) return false;
    const auto e = ::ulpgate::FastUlpError(*x, y, format_);
    if (!e) return false;
    std::array<double, 8> terms{};
    const size_t n = oracle_.FastTermMagnitude(operands.data(), terms.data());
    if (n == 0) return false;
    const auto f = ::ulpgate::FastBoundFraction(*x, y, terms.data(), n,
                                                static_cast<uint64_t>(op_.bound_roundings), format_);
    if (!f) return false;
    *error = *e;
    *bound = *f;
    return true;
  }

 private:
  std::array<float, kMaxElementwiseArity> Operands(uint64_t i) const {
    std::array<float, kMaxElementwiseArity> x{};
    for (size_t k = 0; k < op_.arity(); ++k) x[k] = inputs_.columns[k][i];
    return x;
  }
  bool FactorTier() const {
    return !op_.own_tiers.vector_sweep && oracle_.HasFastFactor() && oracle_.HasFastTermFactor();
  }
  // Every model's output of one element (builtin and extra), per thread.
  std::vector<float>& ThreadModels() const {
    thread_local std::vector<float> models;
    models.resize(models_.size());
    return models;
  }
  void ExtraModels(const std::array<float, kMaxElementwiseArity>& x, float* models) const {
    std::array<double, kMaxElementwiseArity> ops{};
    for (size_t k = 0; k < op_.arity(); ++k) ops[k] = x[k];
    for (size_t k = 0; k < extra_models_.size(); ++k) {
      models[builtin_models_ + k] = static_cast<float>(extra_models_[k].Evaluate(ops.data()));
    }
  }

  const ElementwiseOpInfo& op_;
  const ElementwiseOracle& oracle_;
  const InputSet& inputs_;
  const FloatFormat& format_;
  int map_operand_;
  std::vector<std::string> models_;
  size_t builtin_models_;
  std::vector<ModelProgram> extra_models_;
  std::vector<ChunkKernel> kernels_;  // per case; empty for a "model" case
  std::vector<KernelCall> full_plan_;
};

}  // namespace

ElementwiseCasePlan PlanElementwiseCases(const ElementwiseOpInfo& op, const FloatFormat& format,
                                         const std::vector<std::string>& variants,
                                         const std::vector<const TargetInfo*>& requested_targets,
                                         bool models_only) {
  const std::string op_name(op.name);
  if (!RunsIn(op, format)) throw InputError(op_name + " has no kernels in " + format.name);
  const std::vector<std::string> all_variants = VariantNames(op, format);
  ElementwiseCasePlan plan;
  plan.model_names = ModelNames(op, format);
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
    if (!p->GivesOp(op_name)) {
      throw InputError("plugin " + p->target.name + " (" + p->path + ") gives " + p->OpsText() +
                       " kernels, not " + op_name);
    }
    if (!p->HasDtype(format.name, op_name)) {
      throw InputError("plugin " + p->target.name + " has no " + op_name + " kernels in " +
                       format.name);
    }
  }
  CheckKernelNames(op_name, format, variants, requested_targets);
  for (const std::string& v : all_variants) {
    for (const TargetInfo* target : targets) {
      if (!KernelSelected(variants, v, target->name)) continue;
      ElementwiseCasePlan::Case c;
      c.variant = v;
      c.target = target;
      const std::string expected = ExpectedModel(op, format, v, *target);
      c.expected = static_cast<int>(std::find(plan.model_names.begin(), plan.model_names.end(),
                                              expected) -
                                    plan.model_names.begin());
      c.name = op_name + " " + v + " (" + format.name + ") on " + target->name;
      if (!models_only && target->supported) {
        c.kernel = FindElementwiseKernel(op.name, format.name, v, target->bits);
      }
      c.kind = c.kernel != nullptr ? CaseKind::kKernel : CaseKind::kModel;
      plan.cases.push_back(std::move(c));
    }
  }

  // Plugin kernels: called like the built-in ones.
  for (const LoadedPlugin* plugin : plugins) {
    for (const PluginKernel& p : plugin->kernels) {
      if (std::string_view(p.format->name) != format.name || p.op != op_name ||
          !KernelSelected(variants, p.variant, plugin->target.name)) {
        continue;
      }
      ElementwiseCasePlan::Case c;
      // A built-in model by its name; an expression (or a name two plugins
      // share) joins the models once; no model: none expected.
      if (!p.model.name.empty()) {
        auto it = std::find(plan.model_names.begin(), plan.model_names.end(), p.model.name);
        if (it == plan.model_names.end()) {
          plan.extra_models.push_back(p.model);
          plan.model_names.push_back(p.model.name);
          it = plan.model_names.end() - 1;
        }
        c.expected = static_cast<int>(it - plan.model_names.begin());
      }
      c.variant = p.variant;
      c.target = &plugin->target;
      if (models_only && c.expected < 0) {
        throw InputError("plugin " + plugin->target.name + " kernel " + p.variant +
                         " claims no model, so none can stand in for it");
      }
      c.kind = models_only ? CaseKind::kModel : CaseKind::kKernel;
      c.name = "plugin " + plugin->target.name + " kernel " + p.variant;
      if (!models_only) c.plugin = &p;
      plan.cases.push_back(std::move(c));
    }
  }
  return plan;
}

std::vector<CaseResult> RunElementwise(const ElementwiseOpInfo& op, const InputSet& inputs,
                                       const RunOptions& options) {
  const std::string op_name(op.name);
  if (inputs.columns.size() != op.arity()) {
    std::string names;
    for (const std::string& o : op.operand_names()) names += (names.empty() ? "" : " ") + o;
    throw InputError(fmt::format("{} takes {} operands ({})", op_name, op.arity(), names));
  }
  if (options.map_operand >= static_cast<int>(inputs.columns.size())) {
    throw InputError("no operand " + std::to_string(options.map_operand) + " to map errors by");
  }
  const FloatFormat& format = *options.format;
  if (!RunsIn(op, format)) throw InputError(op_name + " has no kernels in " + format.name);
  // The inputs must be values of the format (an input file's may not be);
  // every float is a binary32 value.
  for (size_t k = 0; k < inputs.columns.size() && !IsBinary32(format); ++k) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const float v = inputs.columns[k][i];
      if (!IsRepresentable(format, v)) {
        throw InputError(fmt::format("input #{}: {} = {} is not a {} value (rounded: {})", i,
                                     inputs.operand_names[k], HexFloat(v), format.name,
                                     HexFloat(static_cast<float>(RoundToFormat(format, v)))));
      }
    }
  }
  const ElementwiseCasePlan plan =
      PlanElementwiseCases(op, format, options.variants, options.targets, options.models_only);
  std::vector<EngineCase> cases;
  std::vector<ChunkKernel> kernels;
  for (const ElementwiseCasePlan::Case& p : plan.cases) {
    EngineCase c;
    c.variant = p.variant;
    c.target = p.target;
    c.expected = p.expected;
    c.kind = p.kind;
    cases.push_back(std::move(c));
    if (p.kernel != nullptr) {
      kernels.push_back(BuiltinKernel(p.kernel, op.arity(), format, p.name));
    } else if (p.plugin != nullptr) {
      kernels.push_back(PluginChunkKernel(*p.plugin, op.arity(), format, p.name));
    } else {
      kernels.emplace_back();
    }
  }
  const std::vector<std::string>& names = plan.model_names;
  for (EngineCase& c : cases) {
    c.compared.resize(names.size());
    for (size_t m = 0; m < names.size(); ++m) c.compared[m] = static_cast<int>(m);
  }
  const ElementwiseProblem problem(op, inputs, format, options.map_operand, std::move(kernels),
                                   plan.extra_models);
  EngineOptions engine;
  engine.threads = options.threads;
  engine.keep_outputs = options.keep_outputs;
  engine.map = options.map_operand >= 0;
  engine.keep_details = options.details != nullptr;
  engine.mpfr_only = options.mpfr_only;
  engine.units_last_first = options.units_last_first;
  engine.progress = options.progress;
  EngineRun run = RunEngine(problem, cases, engine);
  if (options.details != nullptr) *options.details = std::move(run.details);
  if (options.mpfr_inputs != nullptr) *options.mpfr_inputs = run.mpfr_elements;
  std::vector<CaseResult> results = std::move(run.cases);
  for (size_t k = 0; k < results.size(); ++k) {
    CaseResult& r = results[k];
    r.op = op_name;
    r.variant = cases[k].variant;
    r.target = cases[k].target->name;
    if (const LoadedPlugin* plugin = PluginOf(*cases[k].target)) {
      r.source = plugin->Source();
    }
    r.dtype = format.name;
    r.suite = inputs.source;
    r.seed = inputs.seed;
    if (options.map_operand >= 0) r.map_operand = inputs.operand_names[options.map_operand];
    if (r.fault && !options.faults_are_results) {
      // A caller that does not report faults per case must not read the
      // case's partial statistics as a measurement: the run ends here.
      KernelFault f = *r.fault;
      f.detail = plan.cases[k].name + ": " + f.detail +
                 (f.index >= 0 ? " at input #" + std::to_string(f.index)
                               : " on a call of inputs #" + std::to_string(f.first) + " to #" +
                                     std::to_string(f.first + f.count - 1));
      throw KernelFaultError(f);
    }
  }
  return results;
}

}  // namespace ulpgate
