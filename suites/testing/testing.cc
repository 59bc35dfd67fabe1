#include "ulpgate/testing.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "oracles/float_text.h"
#include "oracles/model_expr.h"
#include "oracles/ulp_metric.h"
#include "suites/investigate/check.h"
#include "kernels/elementwise_ops.h"
#include "suites/engine/tanh_bwd_oracle.h"
#include "suites/inputs/tanh_bwd_suites.h"

namespace ulpgate {
namespace testing {

namespace {

// "0x1.8p-1 (0x3f400000)" in the format's bits.
std::string Value(const FloatFormat& format, double v) {
  return HexFloat(static_cast<float>(v)) + " (" + BitsText(format, EncodeBits(format, v)) + ")";
}

// The operands must be tanh_bwd's and values of the format; empty when they are.
std::string Unsupported(std::string_view op, const FloatFormat& format,
                        const std::vector<float>& operands) {
  if (op != "tanh_bwd") return fmt::format("op '{}': these helpers know tanh_bwd (grad, t)", op);
  if (operands.size() != kTanhBwdOperands.size()) {
    return fmt::format("tanh_bwd takes 2 operands (grad, t), got {}", operands.size());
  }
  for (size_t k = 0; k < operands.size(); ++k) {
    if (!IsRepresentable(format, operands[k])) {
      return fmt::format("operand {} = {} is not a {} value", kTanhBwdOperands[k],
                         HexFloat(operands[k]), format.name);
    }
  }
  return "";
}

// The replay of one input: an input file, an output file, `ulpgate check`.
std::string Replay(const FloatFormat& format, float grad, float t, float got) {
  return fmt::format(
      "printf '{} {}\\n' > in.txt; printf '{}\\n' > out.txt; ulpgate check --dtype {} --inputs "
      "in.txt --outputs out.txt",
      HexFloat(grad), HexFloat(t), HexFloat(got), format.name);
}

// Everything about one result, once, for a failure message.
std::string Describe(const FloatFormat& format, float grad, float t, float got) {
  const MpfrNumber exact = TanhBwdExact(grad, t);
  const UlpError u = MeasureUlpError(exact.get(), static_cast<double>(got), format);
  std::string matches;
  const double ops[2] = {grad, t};
  for (const ModelProgram& m : TanhBwdModelPrograms(format)) {
    const double y = m.Evaluate(ops);
    const bool same = (std::isnan(y) && std::isnan(got)) ||
                      (y == got && std::signbit(y) == std::signbit(got));
    if (same) matches += (matches.empty() ? "" : ", ") + m.name;
  }
  std::ostringstream s;
  s << "  grad = " << Value(format, grad) << ", t = " << Value(format, t) << "\n"
    << "  result            " << Value(format, got) << "\n"
    << "  exact             " << exact.ToDecimal(17) << "\n"
    << "  correctly rounded " << Value(format, RoundToFormat(format, exact.get())) << "\n"
    << "  ULP error         "
    << (u.special_mismatch ? std::string("special mismatch (NaN or infinity where the exact value "
                                         "is none, or the reverse)")
                           : fmt::format("{:.6g}", u.ulp))
    << "\n"
    << "  matches models    " << (matches.empty() ? "none" : matches) << "\n"
    << "  replay: " << Replay(format, grad, t, got) << "\n";
  return s.str();
}

// A check of arrays; an error string when they do not fit.
std::string Prepare(std::string_view op, const FloatFormat& format,
                    const std::vector<std::vector<float>>& operands,
                    const std::vector<float>& outputs, CheckRequest& request) {
  if (op != "tanh_bwd") return fmt::format("op '{}': these helpers know tanh_bwd (grad, t)", op);
  if (operands.size() != 2) return fmt::format("tanh_bwd takes 2 operand arrays, got {}", operands.size());
  for (size_t k = 0; k < 2; ++k) {
    if (operands[k].size() != outputs.size()) {
      return fmt::format("{} has {} values, the outputs {}", kTanhBwdOperands[k], operands[k].size(),
                         outputs.size());
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!IsRepresentable(format, operands[k][i])) {
        return fmt::format("{}[{}] = {} is not a {} value", kTanhBwdOperands[k], i,
                           HexFloat(operands[k][i]), format.name);
      }
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!IsRepresentable(format, outputs[i])) {
      return fmt::format("output {} = {} is not a {} value", i, HexFloat(outputs[i]), format.name);
    }
  }
  request.op = FindElementwiseOp(op);
  request.format = &format;
  request.inputs.operand_names = kTanhBwdOperands;
  request.inputs.columns = operands;
  request.inputs.source = "arrays";
  request.outputs = outputs;
  request.label = "outputs";
  request.models = TanhBwdModelPrograms(format);
  request.user_models.assign(request.models.size(), false);
  return "";
}

}  // namespace

::testing::AssertionResult WithinUlp(std::string_view op, const FloatFormat& format,
                                     const std::vector<float>& operands, float got,
                                     double max_ulp) {
  if (const std::string why = Unsupported(op, format, operands); !why.empty()) {
    return ::testing::AssertionFailure() << why;
  }
  const MpfrNumber exact = TanhBwdExact(operands[0], operands[1]);
  const UlpError u = MeasureUlpError(exact.get(), static_cast<double>(got), format);
  if (!u.special_mismatch && u.ulp <= max_ulp) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << fmt::format("tanh_bwd in {}: the result is {} ULP from the exact value, above {}\n",
                        format.name, u.special_mismatch ? "a special mismatch, not within any"
                                                        : fmt::format("{:.6g}", u.ulp),
                        max_ulp)
         << Describe(format, operands[0], operands[1], got);
}

::testing::AssertionResult CorrectlyRounded(std::string_view op, const FloatFormat& format,
                                            const std::vector<float>& operands, float got) {
  if (const std::string why = Unsupported(op, format, operands); !why.empty()) {
    return ::testing::AssertionFailure() << why;
  }
  const MpfrNumber exact = TanhBwdExact(operands[0], operands[1]);
  if (MeasureUlpError(exact.get(), static_cast<double>(got), format).correctly_rounded) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << fmt::format("tanh_bwd in {}: the result is not the correctly rounded value\n",
                        format.name)
         << Describe(format, operands[0], operands[1], got);
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
      request.models.push_back(ParseModelSpec(model, kTanhBwdOperands, format));
    } catch (const ModelSyntaxError& e) {
      return ::testing::AssertionFailure() << e.what();
    }
    request.user_models.push_back(true);
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
  s << fmt::format("tanh_bwd in {}: {} of {} outputs differ from model {} ({})\n", format.name,
                   c.mismatches, outputs.size(), c.name, c.expression);
  const auto& matching = result.result.conformance.matching;
  s << "  the outputs follow: "
    << (matching.empty() ? std::string("no built-in model")
                         : fmt::format("{}", fmt::join(matching, ", ")))
    << "\n  the nearest differing output, #" << c.nearest.front().index << " (" << c.nearest.front().apart_ulp
    << " ULP from the model's " << Value(format, c.nearest.front().model) << "):\n";
  const uint64_t i = c.nearest.front().index;
  s << Describe(format, operands[0][i], operands[1][i], outputs[i]);
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
      "tanh_bwd in {} over {} outputs: max {:.6g} ULP (budget {}), {} above 1 ULP = {:.6g} "
      "(budget {}), {} special mismatches\n  histogram (outputs per bin, upper bounds in ULP):",
      format.name, outputs.size(), s.max_ulp(), budget.max_ulp, above_one, fraction,
      budget.max_fraction_above_1_ulp, s.special_mismatch());
  for (size_t b = 0; b < s.counts().size(); ++b) {
    if (s.counts()[b] == 0) continue;
    m << " " << (b == 0 ? std::string("0") : b + 1 == s.counts().size() ? std::string(">max")
                                                                        : fmt::format("{:g}", HistogramBound(static_cast<int>(b))))
      << ":" << s.counts()[b];
  }
  m << "\n  the worst output, #" << s.max_index() << ":\n";
  const int64_t i = s.max_index() >= 0 ? s.max_index() : s.first_special_index();
  if (i >= 0) m << Describe(format, operands[0][i], operands[1][i], outputs[i]);
  return ::testing::AssertionFailure() << m.str();
}

}  // namespace testing
}  // namespace ulpgate
