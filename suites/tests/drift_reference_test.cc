// The exact shadow run: its gradients against finite differences of its own
// loss, its scenarios, data and initial parameters.
#include "suites/drift/exact_ops.h"

#include <gtest/gtest.h>

#include <cmath>

#include "suites/inputs/inputs.h"

namespace ulpgate {
namespace {

// Central differences at 256 bits: with h = 2^-40 the truncation error is
// about h^2 |f'''| ~ 1e-24 and the cancellation error 2^-256 / h ~ 1e-65, so
// agreement to 1e-15 relative tests the backward pass, not the arithmetic.
TEST(DriftReference, GradientsMatchFiniteDifferencesOfTheLoss) {
  for (const std::string& name : BuiltinScenarioNames()) {
    const Scenario s = BuiltinScenario(name);
    const Batch batch = MakeBatch(s);
    std::vector<ExactTensor> w = ToExact(InitialParameters(s));
    std::vector<ExactTensor> g;
    ExactLossAndGradients(s, batch, w, &g);
    for (size_t k = 0; k < w.size(); ++k) {
      for (size_t i = 0; i < w[k].size(); ++i) {
        std::vector<ExactTensor> plus = w, minus = w;
        mpfr_add_d(plus[k][i].get(), plus[k][i].get(), 0x1p-40, MPFR_RNDN);
        mpfr_sub_d(minus[k][i].get(), minus[k][i].get(), 0x1p-40, MPFR_RNDN);
        MpfrNumber difference = ExactLossAndGradients(s, batch, plus, nullptr);
        const MpfrNumber down = ExactLossAndGradients(s, batch, minus, nullptr);
        mpfr_sub(difference.get(), difference.get(), down.get(), MPFR_RNDN);
        mpfr_mul_2si(difference.get(), difference.get(), 39, MPFR_RNDN);  // / (2h)
        const double fd = difference.ToDouble(), analytic = g[k][i].ToDouble();
        EXPECT_NEAR(fd, analytic, 1e-15 * std::max(std::fabs(analytic), 1e-10))
            << name << " parameter " << k << "[" << i << "]";
      }
    }
  }
}

TEST(DriftReference, LossDecreasesOnTheSeedScenario) {
  const Scenario s = BuiltinScenario("seed");
  const ReferenceRun run = RunReference(s, MakeBatch(s), InitialParameters(s), 200);
  ASSERT_EQ(run.loss.size(), 200u);
  EXPECT_LT(run.loss.back(), 0.5 * run.loss.front());
}

TEST(DriftScenario, BuiltinsAreValidAndInitialisationIsInRange) {
  for (const std::string& name : BuiltinScenarioNames()) {
    const Scenario s = BuiltinScenario(name);
    // Round trip through JSON gives the same scenario.
    const Scenario again = ParseScenario(ScenarioJson(s), "roundtrip");
    EXPECT_EQ(ScenarioJson(again).dump(), ScenarioJson(s).dump());
    const Parameters p = InitialParameters(s);
    ASSERT_EQ(p.tensors.size(), 4u);
    for (size_t k = 0; k < p.tensors.size(); ++k) {
      const float bound = 1.0f / std::sqrt(k < 2 ? 4.0f : 4.0f);  // both layers have fan_in 4
      for (float v : p.tensors[k]) EXPECT_LE(std::fabs(v), bound);
    }
    const Batch b = MakeBatch(s);
    ASSERT_EQ(b.x.size(), s.batch * 4);
    for (float v : b.x) {
      EXPECT_GE(v, s.data_low);
      EXPECT_LT(v, s.data_high);
    }
  }
}

TEST(DriftScenario, MalformedScenariosNameTheField) {
  auto error_of = [](const char* text) {
    try {
      ParseScenario(nlohmann::json::parse(text), "s.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of(R"({"layers": []})"), "s.json: 'layers' must be a non-empty array");
  EXPECT_EQ(error_of(R"({"layers": [{"type": "conv"}]})"),
            "s.json: layers[0]: unknown layer type 'conv' (linear, relu, tanh)");
  EXPECT_EQ(error_of(R"({"layers": [{"type": "linear", "in": 2, "out": 1}], "targets": [1], "lr": "x"})"),
            "s.json: 'lr': 'x' is not a number (hex float, decimal, inf or nan)");
  EXPECT_EQ(error_of(R"({"layers": [{"type": "linear", "in": 2, "out": 2}, {"type": "linear", "in": 3, "out": 1}], "targets": [1]})"),
            "s.json: layer sizes do not chain (2 -> 3)");
  EXPECT_EQ(error_of(R"({"layers": [{"type": "linear", "in": 2, "out": 1}], "targets": [1, 2]})"),
            "s.json: 'targets' must have one value per network output (1)");
}

}  // namespace
}  // namespace ulpgate
