#include "suites/reports/replay.h"
#include "suites/investigate/explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <stdexcept>

#include "kernels/elementwise_ops.h"
#include "oracles/exact.h"
#include "oracles/float_text.h"
#include "oracles/ieee_emulation.h"
#include "suites/engine/kernel_names.h"
#include "suites/engine/plugins.h"
#include "suites/inputs/inputs.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/reports/report.h"

namespace ulpgate {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An elementwise op as explain describes it, from its spec's tables and its
// oracle (suites/engine/elementwise_oracle.h): the sequences run through the
// tracing arithmetic, the exact value, the condition numbers, the kernels.
ExplainableOp MakeExplainable(const ElementwiseOpInfo& info) {
  ExplainableOp op;
  op.name = std::string(info.name);
  op.definition = std::string(info.definition);
  op.operand_names = info.operand_names();
  for (const auto& v : info.variants) {
    op.variants.push_back({std::string(v.name), std::string(v.model_fused_target),
                           std::string(v.model_unfused_target)});
  }
  for (const auto& m : info.models) {
    op.models.push_back({std::string(m.name), std::string(m.sequence_of), m.fused});
  }
  const ElementwiseOracle* oracle = &OracleOf(info);
  const ElementwiseOpInfo* op_info = &info;
  op.sequence = [oracle, op_info](std::string_view variant, TracingArith& arith,
                                  const std::vector<TracingArith::Value>& operands) {
    const int v = op_info->SequenceIndex(variant);
    if (v < 0) throw std::invalid_argument("unknown " + std::string(op_info->name) + " sequence");
    return oracle->Trace(static_cast<size_t>(v), arith, operands);
  };
  op.exact = [oracle](const std::vector<float>& operands) { return oracle->Exact(operands.data()); };
  op.condition = [oracle](const std::vector<float>& operands) {
    return oracle->Condition(operands.data());
  };
  op.kernel = [op_info](std::string_view variant, const TargetInfo& target,
                        const std::vector<float>& operands) {
    const ElementwiseKernel kernel =
        FindElementwiseKernel(op_info->name, "f32", variant, target.bits);
    if (kernel == nullptr) {
      throw std::invalid_argument("no " + std::string(op_info->name) + " kernel " +
                                  std::string(variant) + " for " + target.name);
    }
    float out;
    std::vector<const void*> in;
    for (const float& x : operands) in.push_back(&x);
    kernel(in.data(), &out, 1);
    return out;
  };
  return op;
}

struct SequenceRun {
  std::vector<TracingArith::Step> steps;
  MpfrNumber output{24};
};

SequenceRun RunSequence(const ExplainableOp& op, std::string_view variant, bool fused,
                        int rounded_steps, const std::vector<float>& operands) {
  TracingArith arith(fused, rounded_steps);
  std::vector<TracingArith::Value> inputs;
  for (size_t k = 0; k < operands.size(); ++k) {
    inputs.push_back(arith.Input(op.operand_names[k], operands[k]));
  }
  const TracingArith::Value out = op.sequence(variant, arith, inputs);
  return {arith.steps(), out.number};
}

const ExplainableOp::Model& FindModel(const ExplainableOp& op, const std::string& name) {
  for (const auto& m : op.models) {
    if (m.name == name) return m;
  }
  throw std::invalid_argument("unknown model '" + name + "' of " + op.name);
}

std::string Printf(const char* format, double x) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, x);
  return buffer;
}

// Fills the trace of one model into c (see the contribution definition in
// explain.h).
void TraceModel(const ExplainableOp& op, const ExplainableOp::Model& model,
                const std::vector<float>& operands, const MpfrNumber& exact, ExplainedCase& c) {
  const SequenceRun full = RunSequence(op, model.sequence_of, model.fused, -1, operands);
  const int n = static_cast<int>(full.steps.size());
  // outputs[j] = E_j: the first j steps rounded, the rest exact.
  std::vector<MpfrNumber> outputs;
  std::vector<TracingArith::Step> ideal_steps;
  for (int j = 0; j < n; ++j) {
    SequenceRun run = RunSequence(op, model.sequence_of, model.fused, j, operands);
    if (static_cast<int>(run.steps.size()) != n) {
      throw std::logic_error("the sequence of " + model.sequence_of +
                             " takes a different path when rounded differently");
    }
    if (j == 0) ideal_steps = run.steps;
    outputs.push_back(run.output);
  }
  outputs.push_back(full.output);

  c.traced_model = model.name;
  c.model_output = RoundToBinary32(full.output.get());
  c.sequence_exact = outputs.front();
  c.signed_error_ulp = SignedUlpError(exact, full.output);
  c.contributions_defined = exact.IsFinite();
  for (const MpfrNumber& e : outputs) c.contributions_defined &= e.IsFinite();
  c.steps.clear();
  for (int i = 0; i < n; ++i) {
    ExplainedStep s;
    s.index = i;
    s.step = full.steps[i];
    s.ideal = ideal_steps[i].exact;
    s.local_error_ulp = SignedUlpError(s.step.exact, s.step.value);
    s.error_vs_ideal_ulp = SignedUlpError(s.ideal, s.step.value);
    s.contribution_ulp = c.contributions_defined
                             ? SignedUlpDifference(outputs[i], outputs[i + 1], exact)
                             : kNaN;
    c.steps.push_back(std::move(s));
  }
  c.dominant_step = -1;
  c.amplifier_step = -1;
  c.amplification = 0;
  if (!c.contributions_defined) return;
  double largest = 0;
  for (const ExplainedStep& s : c.steps) {
    if (std::fabs(s.contribution_ulp) > largest) {
      largest = std::fabs(s.contribution_ulp);
      c.dominant_step = s.index;
    }
  }
  if (c.dominant_step < 0) return;
  const ExplainedStep& d = c.steps[c.dominant_step];
  if (d.local_error_ulp != 0) c.amplification = largest / std::fabs(d.local_error_ulp);
  double strongest = 1;
  for (const ExplainedStep& s : c.steps) {
    const auto& deps = s.step.depends_on;
    if (s.index > d.index && std::binary_search(deps.begin(), deps.end(), d.index) &&
        s.step.cancellation > strongest) {
      strongest = s.step.cancellation;
      c.amplifier_step = s.index;
    }
  }
}

std::string StepLabel(const ExplainedStep& s) {
  return s.step.operation == "fma" ? s.step.expression + " (fused)" : s.step.expression;
}

// The first step whose value went NaN or infinite from finite operands.
std::string SpecialOrigin(const ExplainedCase& c) {
  for (const ExplainedStep& s : c.steps) {
    bool operands_finite = true;
    for (const auto& v : s.step.operand_values) operands_finite &= v.IsFinite();
    bool operands_nan = false;
    for (const auto& v : s.step.operand_values) operands_nan |= v.IsNan();
    if (s.step.value.IsNan() && !operands_nan) {
      std::string values;
      for (const auto& v : s.step.operand_values) {
        values += (values.empty() ? "" : ", ") + v.ToDecimal(9);
      }
      return "NaN first appears at step " + std::to_string(s.index + 1) + ", " +
             s.step.expression + " with operands " + values;
    }
    if (s.step.value.IsInf() && operands_finite) {
      return "step " + std::to_string(s.index + 1) + ", " + s.step.expression + ", overflows";
    }
  }
  return "";
}

// A plugin's kernels on the input: each compared with every model and with
// the expression it claims, and traced step by step through the template
// model it matched (or claims); a kernel that follows only an expression is
// measured but not traced.
void ExplainPlugin(const ExplainableOp& op, const LoadedPlugin& plugin,
                   const std::vector<std::string>& variants,
                   std::map<std::string, float>& model_outputs, Explanation& x) {
  if (!plugin.GivesOp(op.name)) {
    throw std::invalid_argument("plugin " + plugin.target.name + " (" + plugin.path + ") gives " +
                                plugin.OpsText() + " kernels, not " + op.name);
  }
  for (const PluginKernel& k : plugin.kernels) {
    if (std::string_view(k.format->name) != "f32" || k.op != op.name ||
        !KernelSelected(variants, k.variant, plugin.target.name)) {
      continue;  // explain follows the f32 sequences
    }
    ExplainedCase c;
    c.variant = k.variant;
    c.target = &plugin.target;
    std::vector<const void*> in;
    for (const float& operand : x.operands) in.push_back(&operand);
    k.call(in.data(), &c.kernel_output, 1);
    c.expected_model = k.model.name;
    const bool claims = !k.model.name.empty();  // an IUT's kernel may claim none
    const bool builtin = std::any_of(op.models.begin(), op.models.end(),
                                     [&](const auto& m) { return m.name == k.model.name; });
    if (claims && !builtin) {
      const std::vector<double> ops(x.operands.begin(), x.operands.end());
      model_outputs[k.model.name] = static_cast<float>(k.model.Evaluate(ops.data()));
    }
    auto matches = [&](const std::string& name) {
      return std::find(c.matching_models.begin(), c.matching_models.end(), name) !=
             c.matching_models.end();
    };
    for (const auto& m : op.models) {
      if (SameFloat(model_outputs[m.name], c.kernel_output)) c.matching_models.push_back(m.name);
    }
    if (claims && !builtin && SameFloat(model_outputs[k.model.name], c.kernel_output)) {
      c.matching_models.push_back(k.model.name);
    }
    // The claimed model if it matched, else the first template model that did.
    std::string traced = builtin && matches(k.model.name) ? k.model.name : "";
    for (const auto& m : op.models) {
      if (traced.empty() && matches(m.name)) traced = m.name;
    }
    if (traced.empty() && builtin) traced = k.model.name;
    if (!traced.empty()) {
      TraceModel(op, FindModel(op, traced), x.operands, x.exact, c);
    } else {
      c.model_output = claims ? model_outputs[k.model.name] : c.kernel_output;
      c.sequence_exact = x.exact;
    }
    c.error = MeasureUlpError(x.exact.get(), c.kernel_output);
    x.cases.push_back(std::move(c));
  }
}

std::string Verdict(const Explanation& x, const ExplainedCase& c, const ExplainedCase* best) {
  const UlpError& e = c.error;
  if (!x.exact.IsFinite() || e.special_mismatch || !c.contributions_defined) {
    const std::string origin = SpecialOrigin(c);
    std::string text;
    if (e.special_mismatch) {
      text = "special mismatch: output " + HexFloat(c.kernel_output) + " where the exact value is " +
             x.exact.ToDecimal(9);
    } else {
      text = "output " + HexFloat(c.kernel_output) + " for exact value " + x.exact.ToDecimal(9) +
             (e.correctly_rounded ? ", as it should be" : "");
      if (std::isfinite(c.kernel_output) && x.exact.IsFinite()) {
        text += " (" + FormatUlp(e.ulp) + " ULP)";
      }
    }
    return origin.empty() ? text : text + "; " + origin;
  }
  if (e.ulp == 0 && c.dominant_step < 0) return "exact: no step rounded anything that mattered";
  std::string text = FormatUlp(e.ulp) + " ULP";
  if (e.correctly_rounded) text += ", correctly rounded";
  if (c.dominant_step >= 0) {
    double total = 0;
    for (const ExplainedStep& s : c.steps) total += std::fabs(s.contribution_ulp);
    const ExplainedStep& d = c.steps[c.dominant_step];
    const double share = std::fabs(d.contribution_ulp) / total;
    const std::string how = share >= 0.9   ? "almost all from"
                            : share >= 0.5 ? "mostly from"
                                           : "the largest part (" +
                                                 Printf("%.0f%%", 100 * share) + ") from";
    text += ": " + how + " the rounding of " + StepLabel(d) + " (" +
            Printf("%+.3g", d.local_error_ulp) + " ULP of it)";
    if (c.amplification >= 4) {
      text += ", amplified about " + FormatFactor(c.amplification) + " times";
      if (c.amplifier_step >= 0 && c.steps[c.amplifier_step].step.cancellation >= 2) {
        text += " by the cancellation in " + c.steps[c.amplifier_step].step.expression;
      } else {
        text += " by the steps after it";
      }
    }
  }
  // Conditioning: a relative change of u (half an ULP) in every operand moves
  // the output by up to kappa * u relatively, i.e. up to about kappa ULP. An
  // error within that is what an ill-conditioned input costs a form that rounds
  // before the sensitive step; an error far beyond it is the form's alone.
  const double kappa = x.condition_total;
  if (std::isnan(kappa)) return text;
  const std::string k = "kappa = " + FormatFactor(kappa);
  if (e.ulp > 2 * (1 + kappa) && e.ulp > 1) {
    text += "; " + k + " accounts for about " + FormatUlp(kappa) +
            " ULP, so the form, not the input, is at fault";
  } else if (kappa >= 8 && e.ulp > 1) {
    text += "; the input is ill-conditioned (" + k + ")";
    if (best != nullptr && best != &c && best->error.ulp * 8 <= e.ulp) {
      text += ", yet " + best->variant + " on " + best->target->name + " gets " +
              FormatUlp(best->error.ulp) + " ULP here: the form matters";
    }
  } else if (e.ulp > 1) {
    text += "; the input is well-conditioned (" + k + ")";
  }
  return text;
}

nlohmann::ordered_json FloatJson(float x) {
  return {{"hex", HexFloat(x)}, {"bits", BitsHex(x)}, {"decimal", DecimalFloat(x)}};
}

nlohmann::ordered_json ExactJson(const MpfrNumber& x) {
  return {{"hex", x.ToHexExact()}, {"decimal", x.ToDecimal(25)}};
}

// JSON has no NaN or infinity: those become null (a double that is not finite
// is meaningless in these fields: an undefined contribution, say).
nlohmann::ordered_json Number(double x) {
  if (std::isfinite(x)) return x;
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return nullptr;
}

}  // namespace

std::string FormatFactor(double factor) {
  if (std::isnan(factor)) return "n/a";
  if (std::isinf(factor)) return "inf";
  if (factor < 1e5) return Printf("%.4g", factor);
  // Large factors with their binary magnitude, to one decimal: 2^20.6, not a
  // rounded power that misstates the value.
  return Printf("%.3g", factor) + " (2^" + Printf("%.1f", std::log2(factor)) + ")";
}

const std::vector<ExplainableOp>& ExplainableOps() {
  static const std::vector<ExplainableOp> ops = [] {
    std::vector<ExplainableOp> all;
    for (const ElementwiseOpInfo& op : ElementwiseOps()) all.push_back(MakeExplainable(op));
    return all;
  }();
  return ops;
}

const ExplainableOp* FindExplainableOp(std::string_view name) {
  for (const ExplainableOp& op : ExplainableOps()) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

Explanation Explain(const ExplainableOp& op, const std::vector<float>& operands,
                    const std::vector<std::string>& variants,
                    const std::vector<const TargetInfo*>& targets) {
  if (operands.size() != op.operand_names.size()) {
    throw std::invalid_argument(op.name + " takes " + std::to_string(op.operand_names.size()) +
                                " operands");
  }
  Explanation x;
  x.op = &op;
  x.operands = operands;
  x.exact = op.exact(operands);
  x.correctly_rounded = RoundToBinary32(x.exact.get());
  x.condition = op.condition(operands);
  x.condition_total = 0;
  for (double k : x.condition) x.condition_total += k;

  std::map<std::string, float> model_outputs;
  for (const auto& m : op.models) {
    const SequenceRun run = RunSequence(op, m.sequence_of, m.fused, -1, operands);
    model_outputs[m.name] = RoundToBinary32(run.output.get());
  }
  std::vector<const ExplainableOp::Variant*> chosen;
  for (const auto& v : op.variants) chosen.push_back(&v);
  try {
    CheckKernelNames(op.name, kBinary32, variants, targets);
  } catch (const InputError& e) {
    throw std::invalid_argument(e.what());
  }
  for (const ExplainableOp::Variant* v : chosen) {
    for (const TargetInfo* target : targets) {
      if (IsPluginTarget(*target) || !KernelSelected(variants, v->name, target->name)) continue;
      ExplainedCase c;
      c.variant = v->name;
      c.target = target;
      c.kernel_output = op.kernel(v->name, *target, operands);
      c.expected_model =
          target->fused_negmuladd ? v->model_on_fused_target : v->model_on_unfused_target;
      for (const auto& m : op.models) {
        if (SameFloat(model_outputs[m.name], c.kernel_output)) c.matching_models.push_back(m.name);
      }
      std::string traced = c.expected_model;
      if (std::find(c.matching_models.begin(), c.matching_models.end(), traced) ==
              c.matching_models.end() &&
          !c.matching_models.empty()) {
        traced = c.matching_models.front();
      }
      TraceModel(op, FindModel(op, traced), operands, x.exact, c);
      c.error = MeasureUlpError(x.exact.get(), c.kernel_output);
      x.cases.push_back(std::move(c));
    }
  }
  for (const TargetInfo* target : targets) {
    if (const LoadedPlugin* plugin = PluginOf(*target)) {
      ExplainPlugin(op, *plugin, variants, model_outputs, x);
    }
  }
  const ExplainedCase* best = nullptr;
  for (const ExplainedCase& c : x.cases) {
    if (!c.error.special_mismatch && (best == nullptr || c.error.ulp < best->error.ulp)) best = &c;
  }
  for (ExplainedCase& c : x.cases) c.verdict = Verdict(x, c, best);
  return x;
}

nlohmann::ordered_json ExplanationJson(const Explanation& x) {
  const ExplainableOp& op = *x.op;
  nlohmann::ordered_json j;
  j["format"] = "ulpgate-explain-1";
  j["tool"] = ToolVersion();
  j["command"] = "explain";
  j["op"] = op.name;
  j["definition"] = op.definition;
  nlohmann::ordered_json inputs;
  for (size_t k = 0; k < x.operands.size(); ++k) inputs[op.operand_names[k]] = FloatJson(x.operands[k]);
  j["inputs"] = inputs;
  j["exact"] = ExactJson(x.exact);
  j["correctly_rounded"] = FloatJson(x.correctly_rounded);
  nlohmann::ordered_json condition;
  for (size_t k = 0; k < x.condition.size(); ++k) condition[op.operand_names[k]] = Number(x.condition[k]);
  j["condition"] = {{"per_operand", condition}, {"total", Number(x.condition_total)}};
  j["contribution_definition"] =
      "E_j = output with steps 1..j rounded and later steps exact; contribution of step k = "
      "(E_k - E_{k-1}) / ulp(exact); the contributions sum to the signed error";
  for (const ExplainedCase& c : x.cases) {
    nlohmann::ordered_json cj;
    cj["variant"] = c.variant;
    cj["target"] = c.target->name;
    cj["fused_negmuladd"] = c.target->fused_negmuladd;
    if (const LoadedPlugin* p = PluginOf(*c.target)) AddSourceJson(p->Source(), cj);
    cj["kernel_output"] = FloatJson(c.kernel_output);
    cj["expected_model"] = c.expected_model;
    cj["matching_models"] = c.matching_models;
    cj["traced_model"] = c.traced_model;
    cj["model_output"] = FloatJson(c.model_output);
    cj["sequence_exact"] = ExactJson(c.sequence_exact);
    nlohmann::ordered_json steps = nlohmann::ordered_json::array();
    for (const ExplainedStep& s : c.steps) {
      nlohmann::ordered_json sj;
      sj["step"] = s.index + 1;
      sj["operation"] = s.step.operation;
      sj["expression"] = s.step.expression;
      sj["operands"] = s.step.operands;
      nlohmann::ordered_json from = nlohmann::ordered_json::array();
      for (int o : s.step.operand_steps) from.push_back(o < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(o + 1));
      sj["operand_steps"] = from;
      sj["exact"] = ExactJson(s.step.exact);
      sj["rounded"] = FloatJson(RoundToBinary32(s.step.value.get()));
      sj["ideal"] = ExactJson(s.ideal);
      sj["local_error_ulp"] = Number(s.local_error_ulp);
      sj["error_vs_ideal_ulp"] = Number(s.error_vs_ideal_ulp);
      sj["contribution_ulp"] = Number(s.contribution_ulp);
      sj["cancellation"] = Number(s.step.cancellation);
      steps.push_back(sj);
    }
    cj["steps"] = steps;
    cj["ulp_error"] = c.error.special_mismatch ? nlohmann::ordered_json() : Number(c.error.ulp);
    cj["signed_error_ulp"] = Number(c.signed_error_ulp);
    cj["correctly_rounded"] = c.error.correctly_rounded;
    cj["special_mismatch"] = c.error.special_mismatch;
    cj["signed_zero_mismatch"] = c.error.signed_zero_mismatch;
    cj["dominant_step"] = c.dominant_step < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(c.dominant_step + 1);
    cj["amplifier_step"] = c.amplifier_step < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(c.amplifier_step + 1);
    cj["amplification"] = Number(c.amplification);
    cj["verdict"] = c.verdict;
    j["cases"].push_back(cj);
  }
  return j;
}

}  // namespace ulpgate
