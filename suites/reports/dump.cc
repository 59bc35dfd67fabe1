#include "suites/reports/dump.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "oracles/float_text.h"
#include "oracles/format.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/elementwise_oracle.h"

namespace ulpgate {
namespace {

using Json = nlohmann::ordered_json;

Json HexList(const std::vector<float>& values) {
  Json list = Json::array();
  for (float x : values) list.push_back(HexFloat(x));
  return list;
}

// The per-element arrays and index lists of one (variant, target) result.
Json ResultJson(const std::string& variant, const std::string& target, const std::string& kind,
                const std::string& model, const std::vector<ElementMeasure>& measures,
                bool with_bound) {
  Json j;
  j["variant"] = variant;
  j["target"] = target;
  j["kind"] = kind;
  j["model"] = model.empty() ? Json() : Json(model);
  Json outputs = Json::array(), ulp = Json::array(), ulp_bin = Json::array();
  Json fraction = Json::array(), fraction_bin = Json::array();
  Json special = Json::array(), signed_zero = Json::array(), not_rounded = Json::array();
  Json above_one = Json::array(), exempt = Json::array(), model_mismatch = Json::array();
  for (size_t e = 0; e < measures.size(); ++e) {
    const ElementMeasure& m = measures[e];
    outputs.push_back(HexFloat(m.output));
    if (m.ulp.special_mismatch) {
      ulp.push_back(nullptr);
      ulp_bin.push_back(nullptr);
      special.push_back(e);
    } else {
      ulp.push_back(m.ulp.ulp);
      ulp_bin.push_back(m.ulp.bin);
    }
    if (m.ulp.signed_zero_mismatch) signed_zero.push_back(e);
    if (!m.ulp.correctly_rounded) not_rounded.push_back(e);
    if (!m.conforms) model_mismatch.push_back(e);
    if (with_bound) {
      if (m.bound.overflow_exempt) {
        fraction.push_back(nullptr);
        fraction_bin.push_back(nullptr);
        exempt.push_back(e);
      } else {
        fraction.push_back(std::isinf(m.bound.fraction) ? Json("inf") : Json(m.bound.fraction));
        fraction_bin.push_back(m.bound.bin);
      }
      if (m.bound.above_one) above_one.push_back(e);
    }
  }
  j["outputs"] = outputs;
  j["ulp_error"] = ulp;
  j["ulp_bin"] = ulp_bin;
  j["special_mismatch"] = special;
  j["signed_zero_mismatch"] = signed_zero;
  j["not_correctly_rounded"] = not_rounded;
  j["model_mismatch"] = model_mismatch;
  if (with_bound) {
    j["bound_fraction"] = fraction;
    j["bound_bin"] = fraction_bin;
    j["above_one"] = above_one;
    j["overflow_exempt"] = exempt;
  }
  return j;
}

}  // namespace

void WriteElementwiseDump(std::ostream& out, const ElementwiseOpInfo& op, const InputSet& inputs,
                          const std::vector<CaseResult>& results) {
  const FloatFormat* format = FindFormat(results.empty() ? "f32" : results.front().dtype);
  if (format == nullptr) throw std::logic_error("WriteElementwiseDump: unknown dtype");
  const std::vector<std::string> model_names = ModelNames(op, *format);
  const ElementwiseOracle& oracle = OracleOf(op);
  std::vector<float> x(op.arity());
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t k = 0; k < op.arity(); ++k) x[k] = inputs.columns[k][i];
    const MpfrNumber exact = oracle.Exact(x.data());
    const std::vector<float> models = ModelOutputs(op, *format, x.data());
    Json record;
    record["format"] = kDumpFormat;
    record["op"] = op.name;
    record["dtype"] = format->name;
    record["suite"] = inputs.source;
    record["seed"] = inputs.seed;
    record["instance"] = i;
    record["shape"] = "1";
    record["inputs"] = Json::object();
    for (size_t k = 0; k < op.arity(); ++k) {
      record["inputs"][inputs.operand_names[k]] = HexList({x[k]});
    }
    record["exact"] = Json::array({exact.ToHexExact()});
    Json list = Json::array();
    for (const CaseResult& r : results) {
      if (r.outputs.size() != inputs.size()) {
        throw std::logic_error("WriteElementwiseDump needs RunOptions::keep_outputs");
      }
      ElementMeasure m;
      m.output = r.outputs[i];
      m.ulp = MeasureUlpError(exact.get(), m.output, *format);
      const auto model = std::find(model_names.begin(), model_names.end(),
                                   r.conformance.expected_model);
      m.conforms = model != model_names.end() &&
                   SameFloat(m.output, models[model - model_names.begin()]);
      list.push_back(ResultJson(r.variant, r.target, CaseKindName(r.kind),
                                r.conformance.expected_model, {m}, /*with_bound=*/false));
    }
    record["results"] = list;
    out << record.dump() << '\n';
  }
}

void WriteReductionDump(std::ostream& out, const ReductionInputSet& inputs,
                        const ReductionRun& run) {
  if (run.details.size() != inputs.instances.size()) {
    throw std::logic_error("WriteReductionDump needs ReductionRunOptions::keep_details");
  }
  const ReductionOpInfo& op = *inputs.op;
  for (size_t i = 0; i < inputs.instances.size(); ++i) {
    const ReductionInstance& instance = inputs.instances[i];
    const InstanceDetail& detail = run.details[i];
    Json record;
    record["format"] = kDumpFormat;
    record["op"] = std::string(op.name);
    record["dtype"] = inputs.format->name;
    record["suite"] = inputs.source;
    record["seed"] = inputs.seed;
    record["instance"] = instance.index;
    record["shape"] = ShapeText(*inputs.op, inputs.shape);
    Json operands;
    for (size_t k = 0; k < op.operands.size(); ++k) {
      operands[op.operands[k]] = HexList(instance.operands[k]);
    }
    record["inputs"] = operands;
    record["exact"] = detail.exact;
    Json list = Json::array();
    for (size_t c = 0; c < run.cases.size(); ++c) {
      const CaseResult& r = run.cases[c];
      list.push_back(ResultJson(r.variant, r.target, CaseKindName(r.kind),
                                r.conformance.expected_model, detail.cases[c],
                                /*with_bound=*/true));
    }
    record["results"] = list;
    out << record.dump() << '\n';
  }
}

void WriteDumpFile(const std::string& path, const std::function<void(std::ostream&)>& write) {
  if (path == "-") {
    write(std::cout);
    std::cout.flush();
    return;
  }
  std::ofstream out(path, std::ios::trunc);
  if (!out) throw std::runtime_error(path + ": cannot open for writing");
  write(out);
  out.flush();
  if (!out) throw std::runtime_error(path + ": write failed");
}

}  // namespace ulpgate
