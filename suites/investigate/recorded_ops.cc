#include "suites/investigate/recorded_ops.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "kernels/elementwise_ops.h"
#include "kernels/reductions/reduction_spec.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/inputs/inputs.h"
#include "suites/investigate/check.h"

namespace ulpgate {

std::vector<RecordedOp> ParseRecordedOps(const nlohmann::ordered_json& ops,
                                         const std::string& curve_path) {
  if (!ops.is_array()) throw InputError(curve_path + ": 'ops' must be a list");
  const std::filesystem::path folder = std::filesystem::path(curve_path).parent_path();
  std::vector<RecordedOp> out;
  for (size_t i = 0; i < ops.size(); ++i) {
    const auto& e = ops[i];
    const std::string at = fmt::format("{}: ops[{}]", curve_path, i);
    auto text = [&](const char* key) {
      if (!e.is_object() || !e.contains(key) || !e[key].is_string()) {
        throw InputError(at + fmt::format(": needs a string '{}'", key));
      }
      return e[key].get<std::string>();
    };
    RecordedOp op;
    op.op = text("op");
    op.dtype = text("dtype");
    op.output = text("output");
    const std::filesystem::path file = text("file");
    op.file = file.is_absolute() ? file.string() : (folder / file).string();
    if (e.contains("layer") && e["layer"].is_number_integer()) op.layer = e["layer"].get<int>();
    if (e.contains("calls") && e["calls"].is_number_unsigned()) op.calls = e["calls"].get<size_t>();
    if (FindElementwiseOp(op.op) == nullptr && FindReductionOp(op.op) == nullptr) {
      throw InputError(at + ": '" + op.op + "' is not an op check knows");
    }
    if (FindFormat(op.dtype) == nullptr) throw InputError(at + ": unknown dtype '" + op.dtype + "'");
    out.push_back(op);
  }
  return out;
}

RecordedOpModels MatchRecordedOp(const RecordedOp& op, unsigned threads) {
  CheckSpec spec;
  spec.op = op.op;
  spec.dtype = op.dtype;
  spec.inputs = op.file;
  spec.outputs = op.file + ":" + op.output;
  spec.label = op.output;
  spec.threads = threads;
  const nlohmann::ordered_json record = CheckRecord(spec);
  RecordedOpModels m;
  m.op = op;
  m.outputs = record.value("n", uint64_t{0});
  if (record.contains("bound_fraction")) {
    m.above_bound = record["bound_fraction"].value("above_one", uint64_t{0});
  }
  const auto& conformance = record["conformance"];
  for (const auto& name : conformance["matching"]) m.matching.push_back(name.get<std::string>());
  if (m.matching.empty() && conformance.contains("models")) {
    for (const auto& model : conformance["models"]) {
      if (model["source"] != "builtin") continue;
      const uint64_t mismatches = model["mismatches"].get<uint64_t>();
      if (m.nearest.empty() || mismatches < m.nearest_mismatches) {
        m.nearest = model["name"].get<std::string>();
        m.nearest_mismatches = mismatches;
      }
    }
  }
  return m;
}

const char* ModelCauseName(ModelCause cause) {
  switch (cause) {
    case ModelCause::kNone: return "none";
    case ModelCause::kFusion: return "fusion";
    case ModelCause::kRoundingFormat: return "rounding format";
    case ModelCause::kFormula: return "formula";
    case ModelCause::kFunctionImplementation: return "function implementation";
    case ModelCause::kFlushToZero: return "flush to zero";
    case ModelCause::kTree: return "tree";
  }
  return "?";
}

std::optional<ModelCause> ParseModelCause(const std::string& name) {
  for (ModelCause c : {ModelCause::kNone, ModelCause::kFusion, ModelCause::kRoundingFormat,
                       ModelCause::kFormula, ModelCause::kFunctionImplementation,
                       ModelCause::kFlushToZero, ModelCause::kTree}) {
    if (name == ModelCauseName(c)) return c;
  }
  return std::nullopt;
}

namespace {

// What a model is made of, in the terms its difference from another is named
// by: the op sequence (a formula), the summation tree of a reduction, how the
// result reaches the format, and whether its multiply-adds round once.
struct ModelParts {
  std::string formula;   // the sequence (elementwise) or the variant's form (reductions)
  std::string tree;      // reductions: schedule and lanes
  std::string rounding;  // "f32", "opmath", "per_op", "truncating"
  std::string conversion;  // the conversions' implementation ("", "highway_soft")
  bool fused = false;
};

// A sequence's formula: the model it is with every operation rounded (its
// NegMulAdd two roundings). mulsub_fma's s = NegMulAdd(t, t, 1); out = grad*s
// is mulsub's formula with one multiply-add fused, not another formula.
std::string FormulaOf(const ElementwiseOpInfo& op, std::string_view sequence) {
  const int variant = op.VariantIndex(sequence);
  if (variant >= 0) return std::string(op.variants[variant].model_unfused_target);
  for (const ElementwiseModelInfo& m : op.models) {
    if (m.sequence_of == sequence && !m.fused) return std::string(m.name);
  }
  return std::string(sequence);
}

std::optional<ModelParts> ElementwiseParts(const ElementwiseOpInfo& op, const FloatFormat& format,
                                           const std::string& name) {
  auto f32_parts = [&](size_t model) {
    ModelParts p;
    p.formula = FormulaOf(op, op.models[model].sequence_of);
    p.fused = op.models[model].fused;
    p.rounding = "f32";
    return p;
  };
  if (IsBinary32(format)) {
    for (size_t i = 0; i < op.models.size(); ++i) {
      if (op.models[i].name == name) return f32_parts(i);
    }
    return std::nullopt;
  }
  for (const NarrowModelInfo& m : NarrowModelInfos(op, format)) {
    if (m.name != name) continue;
    ModelParts p;
    switch (m.kind) {
      case NarrowModelInfo::kOpmath:
        p = f32_parts(m.f32_model);
        p.rounding = "opmath";
        break;
      case NarrowModelInfo::kTruncating:
        p = f32_parts(m.f32_model);
        p.rounding = "truncating";
        break;
      case NarrowModelInfo::kHighwaySoft:
        p = f32_parts(m.f32_model);
        p.rounding = "opmath";
        p.conversion = "highway_soft";
        break;
      case NarrowModelInfo::kPerOp:
        p.formula = FormulaOf(op, op.variants[m.sequence].name);
        p.fused = m.fused_functions;
        p.rounding = "per_op";
        break;
    }
    return p;
  }
  return std::nullopt;
}

std::optional<ModelParts> ReductionParts(const ReductionOpInfo& op, const std::string& name) {
  for (const ReductionVariantInfo& v : op.variants) {
    for (const ReductionModel& m : CandidateReductionModels(op, v)) {
      if (m.Name(op) != name) continue;
      ModelParts p;
      // sequential_fma unfused is the sequential_unfused chain: one tree.
      const bool sequential = m.schedule == ReductionSchedule::kSequentialFused ||
                              m.schedule == ReductionSchedule::kSequentialUnfused;
      p.tree = sequential ? "sequential"
                          : fmt::format("{}x{}", static_cast<int>(m.schedule), m.lanes);
      p.fused = op.fused_matters && m.fused && m.schedule != ReductionSchedule::kSequentialUnfused;
      p.formula = std::to_string(m.form);
      p.rounding = "f32";
      return p;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<ModelCause>> ModelDifference(const std::string& op_name,
                                                       const FloatFormat& format,
                                                       const std::string& a, const std::string& b) {
  std::optional<ModelParts> pa, pb;
  if (const ElementwiseOpInfo* elementwise = FindElementwiseOp(op_name)) {
    pa = ElementwiseParts(*elementwise, format, a);
    pb = ElementwiseParts(*elementwise, format, b);
  } else if (const ReductionOpInfo* reduction = FindReductionOp(op_name)) {
    pa = ReductionParts(*reduction, a);
    pb = ReductionParts(*reduction, b);
  }
  if (!pa || !pb) return std::nullopt;
  std::vector<ModelCause> causes;
  if (pa->tree != pb->tree) causes.push_back(ModelCause::kTree);
  if (pa->formula != pb->formula) causes.push_back(ModelCause::kFormula);
  if (pa->conversion != pb->conversion) causes.push_back(ModelCause::kFunctionImplementation);
  if (pa->rounding != pb->rounding) causes.push_back(ModelCause::kRoundingFormat);
  if (pa->fused != pb->fused) causes.push_back(ModelCause::kFusion);
  if (causes.empty() && a != b) {
    // Two names for one arithmetic would be a table's mistake: say formula
    // rather than none, which would claim the same bits.
    causes.push_back(ModelCause::kFormula);
  }
  return causes;
}

OpModelDifference CompareOpModels(const RecordedOpModels& a, const RecordedOpModels& b) {
  OpModelDifference d;
  for (const std::string& m : a.matching) {
    if (std::find(b.matching.begin(), b.matching.end(), m) != b.matching.end()) {
      d.cause = ModelCause::kNone;
      d.evidence = "models";
      d.model_a = d.model_b = m;
      return d;
    }
  }
  const FloatFormat* format = FindFormat(a.op.dtype);
  if (format == nullptr || a.op.dtype != b.op.dtype || a.op.op != b.op.op) return d;
  if (a.matching.empty() != b.matching.empty()) {
    const RecordedOpModels& none = a.matching.empty() ? a : b;
    const RecordedOpModels& some = a.matching.empty() ? b : a;
    std::string& none_model = a.matching.empty() ? d.model_a : d.model_b;
    std::string& some_model = a.matching.empty() ? d.model_b : d.model_a;
    none_model = none.nearest;
    some_model = some.matching.front();
    const auto same = std::find(some.matching.begin(), some.matching.end(), none.nearest);
    if (none.above_bound > 0 && IsBinary32(*format)) {
      d.evidence = "exceeds bound";
    } else if (!none.nearest.empty() && same != some.matching.end()) {
      d.evidence = "nearest model";
      some_model = *same;
    } else {
      return d;
    }
    d.cause = ModelCause::kFusion;
    d.causes = {ModelCause::kFusion};
    return d;
  }
  for (const std::string& ma : a.matching) {
    for (const std::string& mb : b.matching) {
      const auto causes = ModelDifference(a.op.op, *format, ma, mb);
      if (!causes) continue;
      if (!d.cause || causes->size() < d.causes.size()) {
        d.causes = *causes;
        d.cause = causes->empty() ? ModelCause::kNone : causes->front();
        d.evidence = "models";
        d.model_a = ma;
        d.model_b = mb;
      }
    }
  }
  return d;
}

}  // namespace ulpgate
