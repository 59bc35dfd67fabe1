#include "ulpgate/testing.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "oracles/float_text.h"
#include "oracles/model_expr.h"
#include "oracles/ulp_metric.h"
#include "kernels/elementwise_ops.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/inputs/check_files.h"
#include "suites/investigate/check.h"
#include "suites/investigate/check_models.h"

namespace ulpgate {
namespace testing {

namespace {

// "0x1.8p-1 (0x3f400000)" in the format's bits.
std::string Value(const FloatFormat& format, double v) {
  return HexFloat(static_cast<float>(v)) + " (" + BitsText(format, EncodeBits(format, v)) + ")";
}

// The registered elementwise op, or an error message.
const ElementwiseOpInfo* FindOp(std::string_view op, std::string* why) {
  if (const ElementwiseOpInfo* info = FindElementwiseOp(op)) return info;
  std::string names;
  for (const ElementwiseOpInfo& o : ElementwiseOps()) names += (names.empty() ? "" : ", ") + std::string(o.name);
  *why = fmt::format("op '{}': not an elementwise op ({})", op, names);
  return nullptr;
}

std::string OperandList(const ElementwiseOpInfo& op) {
  return fmt::format("{}", fmt::join(op.operand_names(), ", "));
}

// The op's operands must be values of a format it runs in; empty when they are.
std::string Unsupported(const ElementwiseOpInfo& op, const FloatFormat& format,
                        const std::vector<float>& operands) {
  if (!RunsIn(op, format)) return fmt::format("{} does not run in {}", op.name, format.name);
  if (operands.size() != op.arity()) {
    return fmt::format("{} takes {} operands ({}), got {}", op.name, op.arity(), OperandList(op),
                       operands.size());
  }
  for (size_t k = 0; k < operands.size(); ++k) {
    if (!IsRepresentable(format, operands[k])) {
      return fmt::format("operand {} = {} is not a {} value", op.operands[k].name,
                         HexFloat(operands[k]), format.name);
    }
  }
  return "";
}

// The replay of one input: an input file, an output file, `ulpgate check`. The values
// are printf's arguments, not its format: a format that starts with '-' (a negative
// value) is taken for an option.
std::string Replay(const ElementwiseOpInfo& op, const FloatFormat& format,
                   const std::vector<float>& operands, float got) {
  std::string line;
  for (float v : operands) line += (line.empty() ? "" : " ") + HexFloat(v);
  return fmt::format(
      "printf '%s\\n' '{}' > in.txt; printf '%s\\n' '{}' > out.txt; ulpgate check --op {} "
      "--dtype {} --inputs in.txt --outputs out.txt",
      line, HexFloat(got), op.name, format.name);
}

// Everything about one result, once, for a failure message.
std::string Describe(const ElementwiseOpInfo& op, const FloatFormat& format,
                     const std::vector<float>& operands, float got) {
  const MpfrNumber exact = OracleOf(op).Exact(operands.data());
  const UlpError u = MeasureUlpError(exact.get(), static_cast<double>(got), format);
  // Every built-in model of the format, those the model language cannot
  // write (they call exp, erf, tanh) included.
  std::string matches;
  const std::vector<std::string> names = ModelNames(op, format);
  const std::vector<float> models = ModelOutputs(op, format, operands.data());
  for (size_t m = 0; m < names.size(); ++m) {
    const float y = models[m];
    const bool same = (std::isnan(y) && std::isnan(got)) ||
                      (y == got && std::signbit(y) == std::signbit(got));
    if (same) matches += (matches.empty() ? "" : ", ") + names[m];
  }
  std::ostringstream s;
  s << " ";
  for (size_t k = 0; k < operands.size(); ++k) {
    s << (k ? ", " : " ") << op.operands[k].name << " = " << Value(format, operands[k]);
  }
  s << "\n"
    << "  result            " << Value(format, got) << "\n"
    << "  exact             " << exact.ToDecimal(17) << "\n"
    << "  correctly rounded " << Value(format, RoundToFormat(format, exact.get())) << "\n"
    << "  ULP error         "
    << (u.special_mismatch ? std::string("special mismatch (NaN or infinity where the exact value "
                                         "is none, or the reverse)")
                           : fmt::format("{:.6g}", u.ulp))
    << "\n"
    << "  matches models    " << (matches.empty() ? "none" : matches) << "\n"
    << "  replay: " << Replay(op, format, operands, got) << "\n";
  return s.str();
}

// Input i of operand arrays.
std::vector<float> InputAt(const std::vector<std::vector<float>>& operands, size_t i) {
  std::vector<float> x;
  for (const auto& column : operands) x.push_back(column[i]);
  return x;
}

// A check of arrays; an error string when they do not fit.
std::string Prepare(std::string_view op_name, const FloatFormat& format,
                    const std::vector<std::vector<float>>& operands,
                    const std::vector<float>& outputs, CheckRequest& request) {
  std::string why;
  const ElementwiseOpInfo* op = FindOp(op_name, &why);
  if (op == nullptr) return why;
  if (!RunsIn(*op, format)) return fmt::format("{} does not run in {}", op->name, format.name);
  if (operands.size() != op->arity()) {
    return fmt::format("{} takes {} operand arrays ({}), got {}", op->name, op->arity(),
                       OperandList(*op), operands.size());
  }
  for (size_t k = 0; k < operands.size(); ++k) {
    const std::string_view name = op->operands[k].name;
    if (operands[k].size() != outputs.size()) {
      return fmt::format("{} has {} values, the outputs {}", name, operands[k].size(),
                         outputs.size());
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!IsRepresentable(format, operands[k][i])) {
        return fmt::format("{}[{}] = {} is not a {} value", name, i, HexFloat(operands[k][i]),
                           format.name);
      }
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!IsRepresentable(format, outputs[i])) {
      return fmt::format("output {} = {} is not a {} value", i, HexFloat(outputs[i]), format.name);
    }
  }
  request.op = op;
  request.format = &format;
  request.inputs.operand_names = op->operand_names();
  request.inputs.columns = operands;
  request.inputs.source = "arrays";
  request.outputs = outputs;
  request.label = "outputs";
  request.models = CheckModels(*op, {}, "", format, &request.user_models, &request.builtin_models);
  return "";
}

}  // namespace

::testing::AssertionResult WithinUlp(std::string_view op_name, const FloatFormat& format,
                                     const std::vector<float>& operands, float got,
                                     double max_ulp) {
  std::string why;
  const ElementwiseOpInfo* op = FindOp(op_name, &why);
  if (op != nullptr) why = Unsupported(*op, format, operands);
  if (!why.empty()) return ::testing::AssertionFailure() << why;
  const MpfrNumber exact = OracleOf(*op).Exact(operands.data());
  const UlpError u = MeasureUlpError(exact.get(), static_cast<double>(got), format);
  if (!u.special_mismatch && u.ulp <= max_ulp) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << fmt::format("{} in {}: the result is {} ULP from the exact value, above {}\n",
                        op->name, format.name, u.special_mismatch ? "a special mismatch, not within any"
                                                        : fmt::format("{:.6g}", u.ulp),
                        max_ulp)
         << Describe(*op, format, operands, got);
}

::testing::AssertionResult CorrectlyRounded(std::string_view op_name, const FloatFormat& format,
                                            const std::vector<float>& operands, float got) {
  std::string why;
  const ElementwiseOpInfo* op = FindOp(op_name, &why);
  if (op != nullptr) why = Unsupported(*op, format, operands);
  if (!why.empty()) return ::testing::AssertionFailure() << why;
  const MpfrNumber exact = OracleOf(*op).Exact(operands.data());
  if (MeasureUlpError(exact.get(), static_cast<double>(got), format).correctly_rounded) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << fmt::format("{} in {}: the result is not the correctly rounded value\n", op->name,
                        format.name)
         << Describe(*op, format, operands, got);
}

::testing::AssertionResult FollowsModel(std::string_view op, const FloatFormat& format,
                                        const std::vector<std::vector<float>>& operands,
                                        const std::vector<float>& outputs,
                                        std::string_view model) {
  CheckRequest request;
  if (const std::string why = Prepare(op, format, operands, outputs, request); !why.empty()) {
    return ::testing::AssertionFailure() << why;
  }
  std::string name(model);
  if (model.find(':') != std::string_view::npos) {
    try {
      request.models.push_back(ParseModelSpec(model, request.inputs.operand_names, format));
    } catch (const ModelSyntaxError& e) {
      return ::testing::AssertionFailure() << e.what();
    }
    request.user_models.push_back(true);
    request.builtin_models.push_back(-1);
    name = request.models.back().name;
  }
  const auto known = std::find_if(request.models.begin(), request.models.end(),
                                  [&](const ModelProgram& m) { return m.name == name; });
  if (known == request.models.end()) {
    std::string names;
    for (const auto& m : request.models) names += (names.empty() ? "" : ", ") + m.name;
    return ::testing::AssertionFailure()
           << fmt::format("unknown model '{}' in {} ({}; or NAME: statements)", name, format.name, names);
  }
  const CheckResult result = RunCheck(request);
  const ModelComparison& c = result.models[static_cast<size_t>(known - request.models.begin())];
  if (c.mismatches == 0) return ::testing::AssertionSuccess();
  std::ostringstream s;
  s << fmt::format("{} in {}: {} of {} outputs differ from model {}{}\n", request.op->name,
                   format.name, c.mismatches, outputs.size(), c.name,
                   c.expression.empty() ? "" : " (" + c.expression + ")");
  const auto& matching = result.result.conformance.matching;
  s << "  the outputs follow: "
    << (matching.empty() ? std::string("no built-in model")
                         : fmt::format("{}", fmt::join(matching, ", ")))
    << "\n  the nearest differing output, #" << c.nearest.front().index << " (" << c.nearest.front().apart_ulp
    << " ULP from the model's " << Value(format, c.nearest.front().model) << "):\n";
  const uint64_t i = c.nearest.front().index;
  s << Describe(*request.op, format, InputAt(operands, i), outputs[i]);
  return ::testing::AssertionFailure() << s.str();
}

::testing::AssertionResult UlpHistogramWithin(std::string_view op, const FloatFormat& format,
                                              const std::vector<std::vector<float>>& operands,
                                              const std::vector<float>& outputs,
                                              const UlpBudget& budget) {
  CheckRequest request;
  if (const std::string why = Prepare(op, format, operands, outputs, request); !why.empty()) {
    return ::testing::AssertionFailure() << why;
  }
  const CheckResult result = RunCheck(request);
  const ErrorStatistics& s = result.result.stats;
  // Bin i holds errors in (bound(i-1), bound(i)]: from bin 3 on, above 1 ULP.
  uint64_t above_one = 0;
  for (size_t b = 3; b < s.counts().size(); ++b) above_one += s.counts()[b];
  const double fraction = outputs.empty() ? 0 : static_cast<double>(above_one) / outputs.size();
  const bool ok = s.special_mismatch() == 0 && s.max_ulp() <= budget.max_ulp &&
                  fraction <= budget.max_fraction_above_1_ulp;
  if (ok) return ::testing::AssertionSuccess();
  std::ostringstream m;
  m << fmt::format(
      "{} in {} over {} outputs: max {:.6g} ULP (budget {}), {} above 1 ULP = {:.6g} "
      "(budget {}), {} special mismatches\n  histogram (outputs per bin, upper bounds in ULP):",
      request.op->name, format.name, outputs.size(), s.max_ulp(), budget.max_ulp, above_one, fraction,
      budget.max_fraction_above_1_ulp, s.special_mismatch());
  for (size_t b = 0; b < s.counts().size(); ++b) {
    if (s.counts()[b] == 0) continue;
    m << " " << (b == 0 ? std::string("0") : b + 1 == s.counts().size() ? std::string(">max")
                                                                        : fmt::format("{:g}", HistogramBound(static_cast<int>(b))))
      << ":" << s.counts()[b];
  }
  m << "\n  the worst output, #" << s.max_index() << ":\n";
  const int64_t i = s.max_index() >= 0 ? s.max_index() : s.first_special_index();
  if (i >= 0) m << Describe(*request.op, format, InputAt(operands, static_cast<size_t>(i)), outputs[i]);
  return ::testing::AssertionFailure() << m.str();
}

}  // namespace testing
}  // namespace ulpgate
