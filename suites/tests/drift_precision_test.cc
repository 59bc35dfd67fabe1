// Training runs in bf16, f16 and mixed precision, the attribution runs that
// compute chosen ops exactly, and loss curves recorded elsewhere.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "oracles/format.h"
#include "suites/drift/attribution.h"
#include "suites/drift/curves.h"
#include "suites/drift/mixed_ops.h"
#include "suites/drift/precision.h"
#include "suites/drift/run.h"
#include "suites/drift/train_step.h"
#include "suites/inputs/inputs.h"
#include "suites/inputs/numpy_files.h"

namespace ulpgate {
namespace {

RunKernels Kernels(const DriftPrecision& p) {
  return TargetRunKernels({p.compute == &kBinary32 ? "mac" : "mac_per_op", "sequential_fma",
                           "sequential", "sequential_fma"},
                          BestTarget(), p);
}

// `epochs` epochs of a scenario on an ops type; the losses and the
// parameters (as doubles) after each epoch.
template <class Ops>
std::pair<std::vector<double>, std::vector<double>> Train(const Scenario& s, Ops& ops, size_t epochs) {
  const Batch batch = MakeBatch(s);
  TrainingStep<Ops> step(s, ops, ops.FromFloats(batch.x), ops.FromFloats(batch.target));
  std::vector<typename Ops::Tensor> w;
  for (const auto& t : InitialParameters(s).tensors) w.push_back(ops.FromFloats(t));
  std::vector<double> loss, params;
  for (size_t e = 0; e < epochs; ++e) {
    loss.push_back(Ops::ToDouble(step.Epoch(w)));
    for (const auto& t : w) {
      for (const auto& v : t) params.push_back(Ops::ToDouble(v));
    }
  }
  return {loss, params};
}

TEST(DriftPrecision, NamesParseAndScenariosCarryThem) {
  for (const std::string& name : DriftPrecisionNames()) {
    EXPECT_EQ(ParseDriftPrecision(name).Name(), name);
  }
  EXPECT_TRUE(ParseDriftPrecision("mixed_bf16").mixed());
  EXPECT_EQ(ParseDriftPrecision("mixed_f16").master, &kBinary32);
  EXPECT_EQ(ParseDriftPrecision("f16").master, &kBinary16);
  EXPECT_THROW(ParseDriftPrecision("f64"), InputError);
  EXPECT_THROW(ParseDriftPrecision("mixed_f32"), InputError);
  EXPECT_EQ(DriftPrecisionOf("bf16", "f32").Name(), "mixed_bf16");
  EXPECT_EQ(DriftPrecisionOf("bf16", "bf16").Name(), "bf16");
  EXPECT_THROW(DriftPrecisionOf("bf16", "f16"), InputError);
  EXPECT_THROW(DriftPrecisionOf("mixed_bf16", ""), InputError);

  nlohmann::ordered_json j = ScenarioJson(BuiltinScenario("seed"));
  j["dtype"] = "f16";
  j["master"] = "f32";
  const Scenario s = ParseScenario(j, "scenario.json");
  EXPECT_EQ(s.precision().Name(), "mixed_f16");
  EXPECT_EQ(ScenarioJson(ParseScenario(ScenarioJson(s), "again")).dump(), ScenarioJson(s).dump());
  j["master"] = "bf16";
  try {
    ParseScenario(j, "scenario.json");
    FAIL() << "a bf16 master under f16 layers was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("scenario.json: 'master' must be f32"), std::string::npos)
        << e.what();
  }
}

// Which format each op reads and writes: the casts of mixed precision.
TEST(DriftPrecision, OpsReadAndWriteWhereAutocastPutsThem) {
  const DriftPrecision mixed = ParseDriftPrecision("mixed_bf16");
  EXPECT_EQ(FormatsOf(StepOp::kLinearFwd, mixed).in, &kBFloat16);
  EXPECT_EQ(FormatsOf(StepOp::kTanhBwd, mixed).in, &kBFloat16);
  EXPECT_EQ(FormatsOf(StepOp::kMseFwd, mixed).in, &kBinary32);
  EXPECT_EQ(FormatsOf(StepOp::kSgdStep, mixed).out, &kBinary32);
  const DriftPrecision f16 = ParseDriftPrecision("f16");
  for (StepOp op : AllStepOps()) EXPECT_EQ(FormatsOf(op, f16).in, &kBinary16) << StepOpName(op);
}

// With no op exact, the attribution arithmetic is the float run bit for bit;
// with every op exact, the exact run.
TEST(MixedOps, NoOpExactIsTheFloatRunAndEveryOpExactIsTheExactRun) {
  for (const char* scenario : {"seed", "saturating"}) {
    const Scenario s = BuiltinScenario(scenario);
    for (const std::string& name : DriftPrecisionNames()) {
      SCOPED_TRACE(std::string(scenario) + " " + name);
      const DriftPrecision p = ParseDriftPrecision(name);
      FloatOps float_ops(s, p, Kernels(p), false, nullptr);
      MixedOps none_exact(s, p, Kernels(p), false, {});
      const auto a = Train(s, float_ops, 40);
      const auto b = Train(s, none_exact, 40);
      EXPECT_EQ(a.first, b.first);
      EXPECT_EQ(a.second, b.second);
      // A format's runs hold values of it: the loss in the master format.
      for (double l : a.first) EXPECT_TRUE(IsRepresentable(*p.master, l)) << l;
    }
    const DriftPrecision bf16 = ParseDriftPrecision("bf16");
    const auto all = AllStepOps();
    MixedOps every_exact(s, bf16, Kernels(bf16), false, std::vector<StepOp>(all.begin(), all.end()));
    ExactOps exact(s);
    const auto a = Train(s, exact, 20);
    const auto b = Train(s, every_exact, 20);
    EXPECT_EQ(a.first, b.first);
    EXPECT_EQ(a.second, b.second);
  }
}

// In bf16 the seed scenario stalls (PyTorch's own bf16 run ends at about ten
// times the exact run's loss): an update lr * g below half an ulp of the
// weight rounds away. Attribution must name the SGD step.
TEST(Attribution, NamesTheStepThatStallsBf16Training) {
  const Scenario s = BuiltinScenario("seed");
  const RunConfig run = ParseRunConfig("", &BestTarget(), ParseDriftPrecision("bf16"));
  const AttributionResult result = RunAttribution(s, {run}, 400);
  ASSERT_EQ(result.attributions.size(), 1u);
  const Attribution& a = result.attributions[0];
  EXPECT_TRUE(a.stalled);
  ASSERT_EQ(a.ops.size(), kStepOpCount);
  EXPECT_EQ(a.ops.front().op, StepOp::kSgdStep);
  EXPECT_GT(a.ops.front().share, 0.9);
  EXPECT_EQ(a.stalls_alone, std::vector<StepOp>{StepOp::kSgdStep});
  EXPECT_EQ(a.unstalled_without, std::vector<StepOp>{StepOp::kSgdStep});
  double sum = a.interaction;
  for (const OpShare& share : a.ops) {
    sum += share.share;
    EXPECT_EQ(share.share, share.alone->summary.final_signed_deviation /
                               a.full->summary.final_signed_deviation);
    if (share.op == StepOp::kRelu) {
      // ReLU is exact in every format: computing it exactly changes nothing.
      EXPECT_EQ(share.without->loss, a.full->loss);
    }
    if (share.op == StepOp::kMseFwd) {
      // The loss value feeds no gradient: rounding it alone moves no weight.
      EXPECT_EQ(share.alone->param_max_relative.back(), 0.0);
    }
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);
}

class LossCurveFiles : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ulpgate_curves_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::string Error(const std::string& path) {
    try {
      ReadLossCurve(path, "x");
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  }
  std::filesystem::path dir_;
};

TEST_F(LossCurveFiles, ReadEveryFormat) {
  const std::vector<double> want = {0.5, 0.25, 0.125};
  EXPECT_EQ(ReadLossCurve(Write("a.json", "[0.5, 0.25, 0.125]"), "a").loss, want);
  EXPECT_EQ(ReadLossCurve(Write("b.json", R"({"label": "torch", "loss": [0.5, 0.25, 0.125]})"), "b").loss,
            want);
  EXPECT_EQ(ReadLossCurve(Write("c.csv", "epoch,loss\n0,0.5\n1,0.25\n# done\n2,0.125\n"), "c").loss,
            want);
  EXPECT_EQ(ReadLossCurve(Write("d.txt", "0.5\n0.25\n\n0.125\n"), "d").loss, want);
  const std::string npy = (dir_ / "e.npy").string();
  WriteNumpyFile(npy, {{"loss", {3}, {0.5f, 0.25f, 0.125f}}});
  EXPECT_EQ(ReadLossCurve(npy, "e").loss, want);
  const auto nan = ReadLossCurve(Write("f.json", "[0.5, null]"), "f").loss;
  EXPECT_TRUE(std::isnan(nan[1]));
}

TEST_F(LossCurveFiles, BadFilesAreOneLineErrors) {
  EXPECT_NE(Error(Write("a.json", "[0.5, \"x\"]")).find("a.json: /1: expected a number"),
            std::string::npos);
  EXPECT_NE(Error(Write("b.json", "{\"losses\": []}")).find("an object with \"loss\""),
            std::string::npos);
  EXPECT_NE(Error(Write("c.csv", "0,0.5\n2,0.25\n")).find("c.csv:2: expected epoch 1"),
            std::string::npos);
  EXPECT_NE(Error(Write("d.csv", "0.5\nabc\n")).find("d.csv:2: 'abc' is not a number"),
            std::string::npos);
  EXPECT_NE(Error(Write("e.json", "[]")).find("e.json: no losses"), std::string::npos);
  EXPECT_NE(Error((dir_ / "missing.csv").string()).find("cannot open"), std::string::npos);
  EXPECT_NE(Error(Write("g.json", "[0.5,")).find("malformed JSON"), std::string::npos);
}

// A run's own curve, recorded and read back, is closest to that run, at
// distance 0, with the run's deviation and lag.
TEST_F(LossCurveFiles, ACurveComparesClosestToTheRunThatMadeIt) {
  const Scenario s = BuiltinScenario("seed");
  std::vector<RunConfig> runs;
  for (const char* p : {"f32", "bf16", "f16"}) {
    runs.push_back(ParseRunConfig("", &BestTarget(), ParseDriftPrecision(p)));
  }
  const DriftResult d = RunDrift(s, runs, 300);
  std::string text = "epoch,loss\n";
  for (size_t e = 0; e < d.runs[2].loss.size(); ++e) {
    text += std::to_string(e) + "," + fmt::format("{:.17g}", d.runs[2].loss[e]) + "\n";
  }
  const CurveComparison c = CompareCurve(ReadLossCurve(Write("f16.csv", text), "f16 run"), d);
  EXPECT_EQ(c.closest, 2u);
  EXPECT_EQ(c.distance[2], 0.0);
  EXPECT_GT(c.distance[0], 0.0);
  EXPECT_EQ(c.summary.final_signed_deviation, d.runs[2].summary.final_signed_deviation);
  ASSERT_EQ(c.summary.lags.size(), d.runs[2].summary.lags.size());
  for (size_t i = 0; i < c.summary.lags.size(); ++i) {
    EXPECT_EQ(c.summary.lags[i].lag, d.runs[2].summary.lags[i].lag);
  }
  // A shorter curve is compared over its epochs.
  const CurveComparison half =
      CompareCurve(ReadLossCurve(Write("short.json", "[0.7, 0.6]"), "short"), d);
  EXPECT_EQ(half.epochs, 2u);
}

}  // namespace
}  // namespace ulpgate
