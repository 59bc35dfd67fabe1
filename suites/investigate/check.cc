#include "suites/investigate/check.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "oracles/float_text.h"
#include "suites/inputs/check_files.h"
#include "suites/investigate/check_models.h"
#include "suites/engine/chunk_driver.h"
#include "suites/engine/op_table.h"
#include "suites/engine/reduction_cases.h"
#include "suites/reports/report.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/elementwise_oracle.h"

namespace ulpgate {

namespace {

bool SameValue(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return FloatBits(a) == FloatBits(b);
}

// Model m's output at input i: its program (where it calls a free function,
// the output given when some values of the functions give it), or the op's
// built-in model that the model language cannot write.
double ModelOutput(const CheckRequest& r, size_t m, uint64_t i) {
  std::array<float, kMaxElementwiseArity> x{};
  std::array<double, kMaxElementwiseArity> ops{};
  for (size_t k = 0; k < r.inputs.columns.size(); ++k) {
    x[k] = r.inputs.columns[k][i];
    ops[k] = x[k];
  }
  if (m < r.builtin_models.size() && r.builtin_models[m] >= 0) {
    return ModelOutput(*r.op, *r.format, static_cast<size_t>(r.builtin_models[m]), x.data(), /*native=*/true);
  }
  if (i < r.outputs.size()) return r.models[m].EvaluateToward(ops.data(), r.outputs[i]);
  return r.models[m].Evaluate(ops.data());
}

// The file's outputs as a case of the engine, compared with every model.
class CheckProblem : public EngineProblem {
 public:
  explicit CheckProblem(const CheckRequest& r) : r_(r) {
    for (const ModelProgram& m : r.models) names_.push_back(m.name);
  }
  const FloatFormat& format() const override { return *r_.format; }
  uint64_t size() const override { return r_.inputs.size(); }
  std::vector<EngineUnit> Units() const override { return ChunkUnits(size()); }
  const std::vector<std::string>& model_names() const override { return names_; }
  bool bounded() const override { return true; }
  void Outputs(size_t, const EngineUnit& unit, float* out) const override {
    std::copy(r_.outputs.begin() + static_cast<std::ptrdiff_t>(unit.begin),
              r_.outputs.begin() + static_cast<std::ptrdiff_t>(unit.begin + unit.count), out);
  }
  ElementTruth Truth(uint64_t i, float* models) const override {
    for (size_t m = 0; models != nullptr && m < r_.models.size(); ++m) {
      models[m] = static_cast<float>(ModelOutput(r_, m, i));
    }
    std::array<float, kMaxElementwiseArity> x{};
    for (size_t k = 0; k < r_.inputs.columns.size(); ++k) x[k] = r_.inputs.columns[k][i];
    ElementTruth truth(OracleOf(*r_.op).Exact(x.data()));
    truth.bound = ElementwiseBound(*r_.op, x.data(), *r_.format);
    return truth;
  }
  float MapValue(uint64_t i) const override { return r_.inputs.columns.back()[i]; }

 private:
  const CheckRequest& r_;
  std::vector<std::string> names_;
};

bool Nearer(const ModelComparison::Example& a, const ModelComparison::Example& b) {
  return a.apart_ulp != b.apart_ulp ? a.apart_ulp < b.apart_ulp : a.index < b.index;
}

}  // namespace

std::string NarrowerDtypeHint(const CheckRequest& request) {
  if (request.op == nullptr || request.format->bits != 32 || request.outputs.size() < 16) return "";
  std::vector<std::string> fits;
  // The op's own formats, narrower than f32, in the op table's order.
  for (const std::string& dtype : GetOp(std::string(request.op->name)).dtypes) {
    const FloatFormat* narrow = FindFormat(dtype);
    if (narrow == nullptr || narrow->bits >= 32) continue;
    auto all_of = [&](const std::vector<float>& values) {
      return std::all_of(values.begin(), values.end(),
                         [&](float v) { return std::isnan(v) || IsRepresentable(*narrow, v); });
    };
    bool every = all_of(request.outputs);
    for (const auto& column : request.inputs.columns) every = every && all_of(column);
    if (every) fits.push_back(narrow->name);
  }
  if (fits.empty()) return "";
  return fmt::format(
      "warning: every input and output is a {} value{}, checked here as f32 (errors in f32 ULPs): "
      "if the kernel computed in {}, pass --dtype {}",
      fits.front(), fits.size() > 1 ? " (and an " + fmt::format("{}", fmt::join(fits.begin() + 1, fits.end(), ", ")) + " one)" : "",
      fits.front(), fits.front());
}

double UlpsApart(const FloatFormat& format, double a, double b) {
  if (std::isnan(a) || std::isnan(b)) {
    return std::isnan(a) && std::isnan(b) ? 0 : std::numeric_limits<double>::infinity();
  }
  if (a == b) return 0;
  if (std::isinf(a) || std::isinf(b)) return std::numeric_limits<double>::infinity();
  const double larger = std::max(std::fabs(a), std::fabs(b));
  const int e = std::max(std::ilogb(larger), format.emin);
  return std::fabs(a - b) / std::ldexp(1.0, e - format.precision + 1);
}

CheckResult RunCheck(const CheckRequest& request) {
  if (request.op == nullptr) throw InputError("check: no op given");
  CheckResult out;
  const size_t n = request.inputs.size();
  if (request.outputs.size() != n) {
    throw InputError("check: " + std::to_string(request.outputs.size()) + " outputs for " +
                     std::to_string(n) + " inputs");
  }
  const CheckProblem problem(request);
  EngineCase c;
  c.kind = CaseKind::kOutputs;
  c.variant = request.label;
  for (size_t m = 0; m < request.models.size(); ++m) c.compared.push_back(static_cast<int>(m));
  EngineOptions options;
  options.threads = request.threads;
  options.progress = request.progress;
  EngineRun run = RunEngine(problem, {c}, options);
  out.result = std::move(run.cases.front());
  out.result.op = request.op->name;
  out.result.variant = request.label;
  out.result.target = "";
  out.result.dtype = request.format->name;
  out.result.suite = request.inputs.source;
  out.result.seed = request.inputs.seed;

  // Per model: mismatches, the nearest examples and the positions, by
  // blocks of inputs on the engine's driver, merged in block order.
  const size_t models = request.models.size();
  constexpr size_t kBlock = 65536;
  const size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<std::vector<ModelComparison>> partial(blocks);
  RunUnits(blocks, request.threads, [&](size_t b) {
    std::vector<ModelComparison>& mine = partial[b];
    mine.resize(models);
    for (ModelComparison& m : mine) m.by_position.assign(request.period, 0);
    const size_t end = std::min(n, (b + 1) * kBlock);
    for (size_t i = b * kBlock; i < end; ++i) {
      const float y = request.outputs[i];
      for (size_t m = 0; m < models; ++m) {
        const float want = static_cast<float>(ModelOutput(request, m, i));
        if (SameValue(y, want)) continue;
        ModelComparison& mc = mine[m];
        ++mc.mismatches;
        if (request.period > 0) ++mc.by_position[i % request.period];
        const ModelComparison::Example e{i, y, want, UlpsApart(*request.format, y, want)};
        if (mc.nearest.size() < request.examples) {
          mc.nearest.push_back(e);
          std::sort(mc.nearest.begin(), mc.nearest.end(), Nearer);
        } else if (request.examples > 0 && Nearer(e, mc.nearest.back())) {
          mc.nearest.back() = e;
          std::sort(mc.nearest.begin(), mc.nearest.end(), Nearer);
        }
      }
    }
  });
  out.models.resize(models);
  for (size_t m = 0; m < models; ++m) {
    ModelComparison& mc = out.models[m];
    mc.name = request.models[m].name;
    mc.expression = request.models[m].text;
    mc.user = m < request.user_models.size() && request.user_models[m];
    mc.by_position.assign(request.period, 0);
    for (const auto& block : partial) {
      const ModelComparison& p = block[m];
      mc.mismatches += p.mismatches;
      for (size_t k = 0; k < request.period; ++k) mc.by_position[k] += p.by_position[k];
      mc.nearest.insert(mc.nearest.end(), p.nearest.begin(), p.nearest.end());
    }
    std::sort(mc.nearest.begin(), mc.nearest.end(), Nearer);
    if (mc.nearest.size() > request.examples) mc.nearest.resize(request.examples);
  }
  return out;
}

CaseResult RunReductionCheck(const ReductionInputSet& inputs,
                             const std::vector<std::vector<float>>& outputs,
                             const std::string& label, unsigned threads) {
  ReductionRunOptions options;
  options.outputs = &outputs;
  options.outputs_label = label;
  options.threads = threads;
  ReductionRun run = RunReduction(inputs, options);
  return std::move(run.cases.front());
}

nlohmann::ordered_json ReductionCheckJson(const CaseResult& r, const ReductionInputSet& inputs) {
  nlohmann::ordered_json j = CaseJson(r, inputs);
  j.erase("target");
  j["conformance"] = {{"matching", r.conformance.matching}};
  j["exceeds_bound"] = r.bound.above_one() > 0;
  return j;
}

namespace {

// The conformance fields of a kernel's record, against `expected`.
void AddExpected(nlohmann::ordered_json& record, const std::string& expected, uint64_t mismatches) {
  auto& c = record["conformance"];
  const nlohmann::ordered_json matching = c["matching"];  // a copy: c grows below
  bool follows = false;
  for (const auto& m : matching) follows = follows || m.get<std::string>() == expected;
  c["expected"] = expected;
  c["model"] = follows ? nlohmann::ordered_json(expected)
               : matching.empty() ? nlohmann::ordered_json()
                                  : matching.front();
  c["mismatches"] = mismatches;
}

}  // namespace

CheckRequest MakeCheckRequest(const ElementwiseOpInfo& op, const FloatFormat& format, InputSet inputs,
                              std::vector<float> outputs, std::string label,
                              const std::vector<std::string>& models) {
  if (inputs.columns.size() != op.arity()) {
    throw InputError(fmt::format("{} takes {} operands, given {}", op.name, op.arity(),
                                 inputs.columns.size()));
  }
  if (inputs.operand_names.empty()) inputs.operand_names = op.operand_names();
  for (size_t k = 0; k < inputs.columns.size(); ++k) {
    if (inputs.columns[k].size() != outputs.size()) {
      throw InputError(fmt::format("{} outputs for {} values of {}: the shapes differ", outputs.size(),
                                   inputs.columns[k].size(), inputs.operand_names[k]));
    }
  }
  const auto require_values = [&](const std::vector<float>& values, const std::string& what) {
    for (size_t i = 0; i < values.size(); ++i) {
      if (!IsRepresentable(format, values[i])) {
        throw InputError(fmt::format("{}[{}] = {} is not a value of {}", what, i, HexFloat(values[i]),
                                     format.name));
      }
    }
  };
  for (size_t k = 0; k < inputs.columns.size(); ++k) require_values(inputs.columns[k], inputs.operand_names[k]);
  require_values(outputs, "outputs");
  if (outputs.empty()) throw InputError("no outputs");
  CheckRequest request;
  request.op = &op;
  request.format = &format;
  request.inputs = std::move(inputs);
  request.outputs = std::move(outputs);
  request.label = std::move(label);
  request.models = CheckModels(op, models, "", format, &request.user_models, &request.builtin_models);
  return request;
}

std::vector<float> KernelOutputs(const FloatFormat& format, const InputSet& inputs, const StorageKernel& kernel) {
  const size_t n = inputs.size();
  const size_t arity = inputs.columns.size();
  std::vector<float> outputs(n);
  std::vector<const void*> in(arity);
  if (IsBinary32(format)) {
    for (size_t k = 0; k < arity; ++k) in[k] = inputs.columns[k].data();
    kernel(in.data(), outputs.data(), n);
    return outputs;
  }
  std::vector<std::vector<uint16_t>> bits(arity, std::vector<uint16_t>(n));
  for (size_t k = 0; k < arity; ++k) {
    for (size_t i = 0; i < n; ++i) bits[k][i] = static_cast<uint16_t>(EncodeBits(format, inputs.columns[k][i]));
    in[k] = bits[k].data();
  }
  std::vector<uint16_t> out(n);
  kernel(in.data(), out.data(), n);
  for (size_t i = 0; i < n; ++i) outputs[i] = static_cast<float>(DecodeBits(format, out[i]));
  return outputs;
}

CheckRequest ReadCheckRequest(const CheckSpec& spec, const std::string& models_path) {
  const FloatFormat& format = CheckFormat(spec.op, spec.dtype);
  const ElementwiseOpInfo* op = FindElementwiseOp(spec.op);
  if (op == nullptr) throw InputError("check: '" + spec.op + "' is not an elementwise op");
  CheckRequest request;
  request.op = op;
  request.format = &format;
  request.inputs = ReadCheckInputs(*op, spec.inputs, format);
  if (request.inputs.size() == 0) throw InputError(spec.inputs + ": no inputs");
  request.label = spec.label;
  if (spec.outputs_from) {
    request.outputs = KernelOutputs(format, request.inputs, spec.outputs_from);
  } else {
    request.outputs = ReadCheckOutputs(*op, spec.outputs, format, &request.label);
  }
  if (request.outputs.size() != request.inputs.size()) {
    throw InputError(fmt::format("{} outputs for {} inputs: the shapes differ",
                                 request.outputs.size(), request.inputs.size()));
  }
  request.models = CheckModels(*op, spec.models, models_path, format, &request.user_models,
                               &request.builtin_models);
  request.threads = spec.threads;
  return request;
}

nlohmann::ordered_json CheckRecord(const CheckSpec& spec) {
  const FloatFormat& format = CheckFormat(spec.op, spec.dtype);
  if (FamilyOf(spec.op) == OpFamily::kReduction) {
    if (!spec.models.empty()) throw InputError("models of your own are for elementwise ops");
    const ReductionOpInfo& op = *FindReductionOp(spec.op);
    const ReductionInputSet inputs = ReadReductionInputs(op, spec.inputs, format);
    std::string label = spec.label;
    const auto outputs = ReadReductionOutputs(op, inputs, spec.outputs, &label);
    const CaseResult r = RunReductionCheck(inputs, outputs, label, spec.threads);
    nlohmann::ordered_json record = ReductionCheckJson(r, inputs);
    if (!spec.expected_model.empty()) {
      // Outputs either follow a schedule's model or they do not: one count.
      const auto& m = r.conformance.matching;
      const bool follows = std::find(m.begin(), m.end(), spec.expected_model) != m.end();
      AddExpected(record, spec.expected_model, follows ? 0 : r.n);
    }
    return record;
  }
  const CheckRequest request = ReadCheckRequest(spec);
  const CheckResult result = RunCheck(request);
  nlohmann::ordered_json record = CheckJson(request, result);
  if (!spec.expected_model.empty()) {
    const auto it = std::find_if(result.models.begin(), result.models.end(),
                                 [&](const ModelComparison& m) { return m.name == spec.expected_model; });
    if (it == result.models.end()) {
      throw InputError("expected model '" + spec.expected_model + "' is not one of the models");
    }
    AddExpected(record, spec.expected_model, it->mismatches);
  }
  return record;
}

nlohmann::ordered_json CheckJson(const CheckRequest& request, const CheckResult& result) {
  const FloatFormat& format = *request.format;
  auto value = [&](float v) {
    nlohmann::ordered_json j;
    j["value"] = HexFloat(v);
    j["bits"] = BitsText(format, EncodeBits(format, v));
    return j;
  };
  nlohmann::ordered_json j = CaseJson(result.result, request.inputs);
  j.erase("target");
  nlohmann::ordered_json conformance;
  conformance["matching"] = result.result.conformance.matching;
  nlohmann::ordered_json models = nlohmann::ordered_json::array();
  for (const ModelComparison& m : result.models) {
    nlohmann::ordered_json mj;
    mj["name"] = m.name;
    mj["expression"] = m.expression;
    mj["source"] = m.user ? "user" : "builtin";
    mj["mismatches"] = m.mismatches;
    nlohmann::ordered_json nearest = nlohmann::ordered_json::array();
    for (const auto& e : m.nearest) {
      nlohmann::ordered_json ej = InputJson(request.inputs, e.index);
      ej["output"] = value(e.output);
      ej["model"] = value(e.model);
      ej["apart_ulp"] = std::isinf(e.apart_ulp) ? nlohmann::ordered_json("inf")
                                                : nlohmann::ordered_json(e.apart_ulp);
      nearest.push_back(ej);
    }
    mj["nearest_mismatches"] = nearest;
    if (request.period > 0) mj["mismatches_by_position"] = m.by_position;
    models.push_back(mj);
  }
  conformance["models"] = models;
  if (request.period > 0) conformance["period"] = request.period;
  j["conformance"] = conformance;
  return j;
}

}  // namespace ulpgate
