// ulpgate explain: one input, every variant on every target, op by op: which
// rounding caused the error and how the rest of the sequence amplified it
// (suites/investigate/explain.h does the work; this file parses and prints).
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <set>

#include "oracles/float_text.h"
#include "oracles/ieee_emulation.h"
#include "oracles/ulp_metric.h"
#include "suites/investigate/explain.h"
#include "suites/engine/kernel_names.h"
#include "suites/engine/plugins.h"
#include "suites/reports/report.h"
#include "tools/cli.h"
#include "tools/text_table.h"

namespace ulpgate {
namespace {

struct ExplainArgs {
  std::string kernel;
  std::vector<std::string> inputs;  // name=value
  std::string target = "all";
  std::string variant = "all";
  std::string json_path;
  std::vector<std::string> plugins;
};

std::vector<float> ParseOperands(const ExplainableOp& op, const std::vector<std::string>& specs) {
  std::vector<float> operands(op.operand_names.size());
  std::vector<bool> given(op.operand_names.size(), false);
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos) {
      throw UsageError("--input '" + spec + "' is not NAME=VALUE");
    }
    const std::string name = spec.substr(0, eq);
    const auto it = std::find(op.operand_names.begin(), op.operand_names.end(), name);
    if (it == op.operand_names.end()) {
      std::string names;
      for (const auto& n : op.operand_names) names += (names.empty() ? "" : ", ") + n;
      throw UsageError("--input " + name + ": " + op.name + " has no operand '" + name +
                       "' (operands: " + names + ")");
    }
    const size_t k = static_cast<size_t>(it - op.operand_names.begin());
    if (given[k]) throw UsageError("--input " + name + " given twice");
    std::string why;
    const auto value = ParseFloat(spec.substr(eq + 1), &why);
    if (!value) throw UsageError("--input " + name + ": " + why);
    operands[k] = *value;
    given[k] = true;
  }
  for (size_t k = 0; k < given.size(); ++k) {
    if (!given[k]) throw UsageError("missing --input " + op.operand_names[k] + "=VALUE");
  }
  return operands;
}

std::string Signed(double x) {
  if (std::isnan(x)) return "n/a";
  if (x == 0) return "0";
  return (x > 0 ? "+" : "-") + FormatUlp(std::fabs(x));
}

std::string FloatText(float x) { return fmt::format("{} ({})", HexFloat(x), BitsHex(x)); }

void PrintHeader(const Explanation& x) {
  const ExplainableOp& op = *x.op;
  std::string names;
  for (const auto& n : op.operand_names) names += (names.empty() ? "" : ", ") + n;
  std::cout << fmt::format("{}({}) = {}\n", op.name, names, op.definition);
  size_t width = 0;
  for (const auto& n : op.operand_names) width = std::max(width, n.size());
  for (size_t k = 0; k < x.operands.size(); ++k) {
    std::cout << fmt::format("  {:<{}} = {} ({}, {})\n", op.operand_names[k], width,
                             HexFloat(x.operands[k]), BitsHex(x.operands[k]),
                             DecimalFloat(x.operands[k]));
  }
  std::cout << fmt::format("  exact value        {}\n", x.exact.ToDecimal(17));
  std::cout << fmt::format("  correctly rounded  {}\n", FloatText(x.correctly_rounded));
  std::string kappa = "  condition number   kappa = ";
  for (size_t k = 0; k < x.condition.size(); ++k) {
    kappa += fmt::format("{}{} ({})", k ? " + " : "", FormatFactor(x.condition[k]),
                         op.operand_names[k]);
  }
  kappa += " = " + FormatFactor(x.condition_total);
  std::cout << kappa << "\n";
  std::cout << "  (a relative change of u in every operand moves the output by up to kappa*u)\n";
}

void PrintCaseGroup(const Explanation& x, const std::vector<const ExplainedCase*>& group) {
  const ExplainedCase& c = *group.front();
  std::string targets;
  for (const ExplainedCase* g : group) targets += (targets.empty() ? "" : ", ") + g->target->name;
  std::string model;
  if (c.matching_models.empty()) {
    model = fmt::format("matches NO model (traced: expected {})", c.expected_model);
  } else if (c.traced_model == c.expected_model) {
    model = "model " + c.traced_model;
  } else {
    model = fmt::format("model {} (UNEXPECTED: expected {})", c.traced_model, c.expected_model);
  }
  const std::string summary =
      c.error.special_mismatch ? "special mismatch" : FormatUlp(c.error.ulp) + " ULP";
  std::cout << fmt::format("\n{} on {}: {}, output {}: {}\n", c.variant, targets, model,
                           FloatText(c.kernel_output), summary);
  TextTable table({"step", "op", "expression", "exact (rounded operands)", "rounded", "local ULP",
                   "vs ideal ULP", "contribution ULP"});
  table.SetLeftAligned({1, 2, 3, 4});
  for (const ExplainedStep& s : c.steps) {
    const float rounded = RoundToBinary32(s.step.value.get());
    table.AddRow({std::to_string(s.index + 1), s.step.operation, s.step.expression,
                  s.step.exact.ToDecimal(17), HexFloat(rounded), Signed(s.local_error_ulp),
                  Signed(s.error_vs_ideal_ulp), Signed(s.contribution_ulp)});
  }
  table.Print(std::cout, "  ");
  double sum = 0;
  for (const ExplainedStep& s : c.steps) sum += s.contribution_ulp;
  const std::string error =
      c.error.special_mismatch ? "special mismatch" : FormatUlp(c.error.ulp) + " ULP";
  // A sequence whose constants are rounded (gelu's sqrt(2/pi)) stands for a
  // slightly different value than the op's: that share is the constants'.
  const double constants =
      c.contributions_defined ? SignedUlpDifference(x.exact, c.sequence_exact, x.exact) : 0;
  const std::string detail =
      !c.contributions_defined
          ? std::string("no contributions: a value is not finite")
      : constants == 0
          ? fmt::format("signed {}; contributions sum to {}", Signed(c.signed_error_ulp), Signed(sum))
          : fmt::format("signed {}; contributions sum to {}, and {} from the sequence's constants "
                        "rounded to binary32",
                        Signed(c.signed_error_ulp), Signed(sum), Signed(constants));
  // The kernel's own output beside its error; where it is not the traced
  // model's, the model's output and error follow, with the trace's account.
  std::cout << "  ";
  if (SameFloat(c.model_output, c.kernel_output)) {
    PrintWrapped(std::cout,
                 fmt::format("output {}  exact {}  error {} ({})", HexFloat(c.kernel_output),
                             x.exact.ToDecimal(17), error, detail),
                 4, 2);
  } else {
    PrintWrapped(std::cout,
                 fmt::format("the kernel's output {}  exact {}  error {}", HexFloat(c.kernel_output),
                             x.exact.ToDecimal(17), error),
                 4, 2);
    const UlpError model_error = MeasureUlpError(x.exact.get(), c.model_output);
    std::cout << "  ";
    PrintWrapped(std::cout,
                 fmt::format("not the traced model's output {}, error {} ({})", HexFloat(c.model_output),
                             model_error.special_mismatch ? "special mismatch"
                                                          : FormatUlp(model_error.ulp) + " ULP",
                             detail),
                 4, 2);
  }
  std::cout << "  verdict: ";
  PrintWrapped(std::cout, c.verdict, 11, 11);
}

void RunExplain(const ExplainArgs& args) {
  const ExplainableOp* op = FindExplainableOp(args.kernel);
  if (op == nullptr) {
    std::string names;
    for (const ExplainableOp& known : ExplainableOps()) names += (names.empty() ? "" : ", ") + known.name;
    throw UsageError("unknown kernel '" + args.kernel + "' (available: " + names + ")");
  }
  const std::vector<float> operands = ParseOperands(*op, args.inputs);
  const std::vector<const TargetInfo*> plugins = LoadPlugins(args.plugins);
  RequirePluginOp(plugins, op->name);
  // --variant none: only the plugins' kernels.
  bool builtin = true;
  const std::vector<std::string> variants =
      ResolveKernelNames(op->name, kBinary32, args.variant, plugins, &builtin);
  const bool no_builtin = !builtin;
  if (no_builtin && plugins.empty()) throw UsageError("--variant none explains only plugins: give --plugin");
  std::vector<std::string> skipped;
  std::vector<const TargetInfo*> targets;
  if (!no_builtin) targets = ResolveTargets(args.target, &skipped);
  targets.insert(targets.end(), plugins.begin(), plugins.end());
  const Explanation x = Explain(*op, operands, variants, targets);

  PrintHeader(x);
  if (!skipped.empty()) {
    std::string names;
    for (const auto& s : skipped) names += (names.empty() ? "" : ", ") + s;
    std::cout << "  ";
    PrintWrapped(std::cout, "skipped (compiled, not supported by this CPU): " + names, 4, 2);
  }
  // Targets whose kernel followed the same model to the same output share one trace.
  std::vector<std::vector<const ExplainedCase*>> groups;
  for (const ExplainedCase& c : x.cases) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      const ExplainedCase& o = *g.front();
      return o.variant == c.variant && o.traced_model == c.traced_model &&
             o.expected_model == c.expected_model &&
             FloatBits(o.kernel_output) == FloatBits(c.kernel_output) &&
             o.matching_models == c.matching_models;
    });
    if (it == groups.end()) {
      groups.push_back({&c});
    } else {
      it->push_back(&c);
    }
  }
  for (const auto& g : groups) PrintCaseGroup(x, g);
  if (!args.json_path.empty()) WriteJsonFile(args.json_path, ExplanationJson(x));
}

}  // namespace

void AddExplainCommand(CLI::App& app) {
  auto args = std::make_shared<ExplainArgs>();
  auto* cmd = app.add_subcommand(
      "explain", "Trace one input through every variant and target, rounding by rounding");
  cmd->add_option("--op,--kernel", args->kernel, "Elementwise op to explain (see 'ulpgate list')")
      ->required();
  cmd->add_option("--input", args->inputs,
                  "An operand as NAME=VALUE (hex float, decimal, inf, nan or bits:0x...); one per operand")
      ->required();
  cmd->add_option("--target", args->target,
                  "Target (SCALAR, SSSE3, SSE4, AVX2, ...), comma-separated list, best, or all")
      ->capture_default_str();
  cmd->add_option("--variant", args->variant, VariantHelp("only the plugins' kernels"))
      ->capture_default_str();
  cmd->add_option("--json", args->json_path, "Write the explanation as JSON here");
  AddPluginOption(cmd, &args->plugins, "; --variant none explains only these");
  cmd->callback([args] { RunExplain(*args); });
}

}  // namespace ulpgate
