// Helpers shared by the linear_* and mse_* tests: target parameters, runs of
// the engine, and failure messages built once in a string stream (STYLE.md
// habit 6): op, variant, target, element, output as hex float and bits, the
// exact value, the model's output, both error measures and the command that
// replays the element.
#ifndef ULPGATE_SUITES_TESTS_REDUCTION_TEST_SUPPORT_H_
#define ULPGATE_SUITES_TESTS_REDUCTION_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/reductions/linear/linear_spec.h"
#include "kernels/reductions/reduction_spec.h"
#include "kernels/registry.h"
#include "oracles/float_text.h"
#include "suites/engine/reduction_cases.h"
#include "suites/engine/reduction_oracle.h"
#include "suites/inputs/reduction_suites.h"

namespace ulpgate {
namespace testing_support {

// Every compiled target; tests skip those this CPU cannot run.
inline std::vector<const TargetInfo*> AllTargets() {
  std::vector<const TargetInfo*> targets;
  for (const TargetInfo& t : CompiledTargets()) targets.push_back(&t);
  return targets;
}

// A registered reduction by name; a test that names one fails to start
// without it.
inline const ReductionOpInfo& Reduction(std::string_view name) {
  const ReductionOpInfo* op = FindReductionOp(name);
  if (op == nullptr) throw std::logic_error("no reduction " + std::string(name));
  return *op;
}

// The ops of a family folder (kernels/reductions/<family>/), in registry order.
inline std::vector<const ReductionOpInfo*> FamilyOps(std::string_view family) {
  std::vector<const ReductionOpInfo*> ops;
  for (const ReductionOpInfo& op : ReductionOps()) {
    if (op.family == family) ops.push_back(&op);
  }
  return ops;
}

inline std::vector<const ReductionOpInfo*> LinearOps() { return FamilyOps("linear"); }

inline std::vector<std::string> SuiteNames() {
  std::vector<std::string> names;
  for (const auto& s : ReductionSuites()) names.push_back(s.name);
  return names;
}

// Enough instances to meet every adversarial family (instance i uses family
// i mod 5), two of the others.
inline size_t InstancesFor(const std::string& suite) {
  return suite == "adversarial" ? AdversarialFamilies(Reduction("linear_fwd")).size() : 2;
}

// One target, every variant, expected models only (see ReductionRunOptions).
inline ReductionRun RunOnTarget(const ReductionInputSet& inputs, const TargetInfo& target,
                                bool with_peer = false) {
  ReductionRunOptions options;
  options.targets = {&target};
  options.all_candidate_models = false;
  options.threads = 1;  // ctest runs tests in parallel already
  for (const auto& v : inputs.op->variants) options.variants.emplace_back(v.name);
  if (with_peer) options.variants.emplace_back(kEigenPeerVariant);
  return RunReduction(inputs, options);
}

// The full story of one element of one case.
inline std::string DescribeElement(const ReductionInputSet& inputs, const ReductionRun& run,
                                   size_t case_index, int64_t global) {
  std::ostringstream out;
  const CaseResult& r = run.cases[case_index];
  const FloatFormat& format = *inputs.format;
  out << r.op << " variant " << r.variant << " in " << format.name << " on " << r.target << " ("
      << CaseKindName(r.kind) << "), suite " << inputs.source << " seed " << inputs.seed << " shape "
      << ShapeText(*inputs.op, inputs.shape);
  if (global < 0) return out.str();
  const size_t per_instance = inputs.outputs_per_instance();
  const size_t i = static_cast<size_t>(global) / per_instance;
  const size_t e = static_cast<size_t>(global) % per_instance;
  const ReductionInstance& instance = inputs.instances[i];
  const ElementTerms terms = GatherElementTerms(*inputs.op, inputs.shape, instance, e);
  const ElementExact exact = ReductionExact(*inputs.op, terms);
  const float y = run.outputs[i][case_index][e];
  const UlpError ulp =
      MeasureUlpErrorOfQuotient(exact.numerator.get(), exact.denominator, y, format);
  const BoundFraction bound =
      MeasureBoundFraction(exact.numerator.get(), exact.denominator, y, exact.bound, format);
  out << "\n  instance " << instance.index << ", " << ElementName(*inputs.op, inputs.shape, e)
      << ": output " << HexFloat(y) << " (" << BitsHex(y) << ")"
      << "\n  exact " << ExactValue(exact).ToDecimal(25) << " = " << exact.numerator.ToHexExact()
      << (exact.denominator != 1 ? "/" + std::to_string(exact.denominator) : "")
      << ", correctly rounded "
      << HexFloat(static_cast<float>(RoundToFormat(format, ExactValue(exact).get())));
  if (r.kind != CaseKind::kPeer && !r.conformance.expected_model.empty()) {
    const ReductionOpInfo& op = *inputs.op;
    for (const auto& variant : op.variants) {
      if (variant.name != r.variant) continue;
      const TargetInfo* target = FindTarget(r.target);
      const ReductionModel model = ExpectedReductionModel(op, variant, target->f32_lanes,
                                                          target->fused_muladd);
      const float binary32 = ReductionModelOutput(op, model, terms);
      const float m = static_cast<float>(RoundToFormat(format, binary32));
      out << "\n  model " << model.Name(op) << (format.bits == 32 ? "" : " rounded once")
          << " gives " << HexFloat(m) << " (" << BitsHex(m)
          << ")";
    }
  }
  out << "\n  ULP error " << ulp.ulp << (ulp.special_mismatch ? " (special mismatch)" : "")
      << ", bound fraction " << bound.fraction
      << (bound.overflow_exempt ? " (overflow exempt)" : "") << " with m = "
      << exact.bound.roundings << "\n  replay: ulpgate run --op " << r.op << " --dtype "
      << format.name << " --variant "
      << r.variant << " --target " << r.target << " --suite " << inputs.source << " --seed "
      << inputs.seed << " --shape " << ShapeText(*inputs.op, inputs.shape) << " --instance "
      << instance.index << " --dump -";
  return out.str();
}

// One line per case: what a passing test prints as its summary.
inline std::string CaseLine(const CaseResult& r) {
  std::ostringstream out;
  out << "  " << r.variant << " on " << r.target << ": max ULP " << r.stats.max_ulp()
      << ", max bound fraction " << r.bound.max_fraction() << ", overflow exempt "
      << r.bound.overflow_exempt() << ", special " << r.stats.special_mismatch();
  if (r.kind != CaseKind::kPeer) {
    out << ", model " << r.conformance.expected_model << " mismatches "
        << r.conformance.mismatches;
  }
  return out.str();
}

// Every kernel case conforms to its expected model and stays within the bound.
inline void ExpectConformsAndBounded(const ReductionInputSet& inputs, const ReductionRun& run) {
  for (size_t c = 0; c < run.cases.size(); ++c) {
    const CaseResult& r = run.cases[c];
    if (r.kind == CaseKind::kPeer) continue;  // reported, not gated
    EXPECT_EQ(r.conformance.mismatches, 0u)
        << r.conformance.mismatches << " outputs differ from model "
        << r.conformance.expected_model << "; first:\n"
        << DescribeElement(inputs, run, c, r.conformance.first_mismatch_index);
    EXPECT_EQ(r.bound.above_one(), 0u)
        << r.bound.above_one() << " outputs break the classical error bound; first:\n"
        << DescribeElement(inputs, run, c, r.bound.first_above_one_index());
  }
}

}  // namespace testing_support
}  // namespace ulpgate

#endif  // ULPGATE_SUITES_TESTS_REDUCTION_TEST_SUPPORT_H_
