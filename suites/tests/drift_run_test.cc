// Float training runs composed of the kernels, beside the exact run.
#include "suites/drift/run.h"

#include <gtest/gtest.h>

#include "suites/drift/report.h"
#include "suites/inputs/inputs.h"

namespace ulpgate {
namespace {

// A run in which every operation is exact, derived by hand: y = w x + b with
// x = 1, w = 0.5, b = 0, target 0, N = 1 (2/N = 2), SGD with lr = 1/4.
//   epoch 0: y = 0.5, loss = 0.25; dy = 2 * 0.5 = 1, dW = 1, db = 1;
//            w = 0.5 - 0.25 = 0.25, b = -0.25.
//   epoch 1: y = 0, loss = 0, every gradient 0; nothing moves again.
// Every product and sum is a small dyadic number, so no rounding happens
// anywhere: each float run must equal the exact run bit for bit.
TEST(DriftRun, AnExactCaseMatchesTheHandDerivation) {
  const Scenario s = ParseScenario(nlohmann::json::parse(R"({
      "name": "exact", "layers": [{"type": "linear", "in": 1, "out": 1}],
      "optimizer": "sgd", "lr": 0.25, "epochs": 4, "batch": 1, "targets": [0],
      "x": ["0x1p+0"], "initial_parameters": {"W0": ["0x1p-1"], "b0": ["0x0p+0"]}})"),
                                   "exact");
  std::vector<RunConfig> configs;
  for (const TargetInfo& t : CompiledTargets()) {
    if (!t.supported) continue;
    for (const char* sgd : {"sgd=unfused", "sgd=fused"}) configs.push_back(ParseRunConfig(sgd, &t));
  }
  const DriftResult d = RunDrift(s, configs, 0);
  ASSERT_EQ(d.reference.loss.size(), 4u);
  EXPECT_EQ(d.reference.loss[0], 0.25);
  EXPECT_EQ(d.reference.loss[1], 0.0);
  for (const FloatRunResult& r : d.runs) {
    SCOPED_TRACE(r.config.Label());
    EXPECT_EQ(r.loss, std::vector<double>({0.25, 0.0, 0.0, 0.0}));
    EXPECT_EQ(r.final_parameters.tensors[0], std::vector<float>{0.25f});
    EXPECT_EQ(r.final_parameters.tensors[1], std::vector<float>{-0.25f});
    EXPECT_EQ(r.summary.max_relative_deviation, 0.0);
    for (double e : r.param_max_ulp) EXPECT_EQ(e, 0.0);
    for (const auto& [op, stats] : r.in_situ) EXPECT_EQ(stats.max_ulp(), 0.0) << op;
  }
}

TEST(DriftRun, RunsAreDeterministicForAnyThreadCount) {
  const Scenario s = BuiltinScenario("seed");
  std::vector<RunConfig> configs;
  for (const char* v : {"tanh_bwd=mac", "tanh_bwd=mulsub,linear=pairwise,sgd=fused"}) {
    configs.push_back(ParseRunConfig(v, &BestTarget()));
  }
  const std::string one = DriftJson(RunDrift(s, configs, 120, nullptr, 1)).dump();
  const std::string two = DriftJson(RunDrift(s, configs, 120, nullptr, 2)).dump();
  const std::string again = DriftJson(RunDrift(s, configs, 120, nullptr, 2)).dump();
  EXPECT_EQ(one, two);
  EXPECT_EQ(two, again);
}

// The saturating scenario drives tanh's outputs towards +-1 while its
// gradients stay large: there the unfused MAC's in-situ errors reach
// thousands of ULP (grad - RN(grad * r) cancels), while the fused mul/sub
// form stays below its proved bound of 2 ULP (two roundings of at most u each).
TEST(DriftRun, InSituHistogramsShowTheUnfusedMacNearOne) {
  const Scenario s = BuiltinScenario("saturating");
  const TargetInfo& best = BestTarget();
  const DriftResult d = RunDrift(
      s, {ParseRunConfig("tanh_bwd=mac_unfused", &best), ParseRunConfig("tanh_bwd=mulsub_fma", &best)},
      0);
  const ErrorStatistics& unfused = d.runs[0].in_situ.at("tanh_bwd");
  EXPECT_GE(unfused.max_ulp(), 1000.0);
  EXPECT_EQ(unfused.n(), 32000u);  // 8 x 2 outputs, two backward passes, 1000 epochs
  if (best.fused_negmuladd) {
    EXPECT_LE(d.runs[1].in_situ.at("tanh_bwd").max_ulp(), 2.0 + 0x1p-23);
  }
}

TEST(DriftRun, BadRunConfigurationsAreRejected) {
  EXPECT_THROW(ParseRunConfig("tanh_bwd=nope", &BestTarget()), InputError);
  EXPECT_THROW(ParseRunConfig("conv=x", &BestTarget()), InputError);
  EXPECT_THROW(ParseRunConfig("linear", &BestTarget()), InputError);
  EXPECT_THROW(ParseRunConfig("sgd=sometimes", &BestTarget()), InputError);
}

}  // namespace
}  // namespace ulpgate
