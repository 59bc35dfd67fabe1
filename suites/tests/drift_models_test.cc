// The models of a training run's kernels (suites/drift/kernels.h) against the
// kernels, on every target this CPU runs: Highway's Tanh bit for bit over
// every binade and the specials, and whole training runs on models equal to
// the runs on kernels in every epoch's loss, the final parameters and the
// in-situ statistics. A target this CPU cannot run is reported as skipped:
// its goldens and budgets rely on exactly this equality.
#include "suites/drift/kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/train_step.h"
#include "oracles/float_text.h"
#include "suites/inputs/counter_rng.h"
#include "suites/drift/run.h"
#include "suites/tests/test_targets.h"

namespace ulpgate {
namespace {

std::vector<float> TanhInputs() {
  std::vector<float> x = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e-30f, -1e-30f, 1e-45f, 9.0f, 18.0f,
                          18.714973875f, 18.7149753f, 19.0f, 50.0f, 88.7f, 104.0f, 1e30f,
                          std::numeric_limits<float>::max(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(), 0.34657359f, 0.3465736f,
                          0.17328679f};
  // Dense over [-20, 20], where every branch of Expm1 is taken.
  for (int i = -20000; i <= 20000; ++i) x.push_back(static_cast<float>(i) * 0.001f);
  // Every binade, both signs, many mantissas.
  for (uint32_t bits = 0; bits < 0x7f800000u; bits += 0x1f3f1u) {
    x.push_back(FloatFromBits(bits));
    x.push_back(-FloatFromBits(bits));
  }
  return x;
}

class HighwayTanhModelTest : public PerTargetTest {};

TEST_P(HighwayTanhModelTest, EqualsTheKernelBitForBit) {
  const TargetInfo& target = *GetParam();
  const std::vector<float> x = TanhInputs();
  std::vector<float> y(x.size());
  FindTrainStepKernels(target.bits)->tanh_forward(x.data(), y.data(), x.size());
  size_t mismatches = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float m = HighwayTanhModel(x[i], target.fused_muladd);
    if (!SameFloat(m, y[i])) {
      if (++mismatches <= 5) {
        ADD_FAILURE() << "tanh(" << HexFloat(x[i]) << "): kernel " << HexFloat(y[i]) << ", model "
                      << HexFloat(m);
      }
    }
  }
  EXPECT_EQ(mismatches, 0u) << "of " << x.size() << " inputs";
}

// The model of the other MulAdd is not the kernel: the test can tell them apart.
TEST_P(HighwayTanhModelTest, TheOtherRoundingModelDiffers) {
  const TargetInfo& target = *GetParam();
  const std::vector<float> x = TanhInputs();
  std::vector<float> y(x.size());
  FindTrainStepKernels(target.bits)->tanh_forward(x.data(), y.data(), x.size());
  size_t differ = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    differ += !SameFloat(HighwayTanhModel(x[i], !target.fused_muladd), y[i]);
  }
  EXPECT_GT(differ, 0u);
}

class DriftModelRun : public PerTargetTest {};

TEST_P(DriftModelRun, EqualsTheKernelRunInEveryEpoch) {
  const TargetInfo* target = GetParam();
  for (const std::string& precision : DriftPrecisionNames()) {
    const DriftPrecision p = ParseDriftPrecision(precision);
    const bool binary32 = IsBinary32(*p.compute);
    const std::vector<std::string> specs =
        binary32 ? std::vector<std::string>{"tanh_bwd=mac", "tanh_bwd=mac_unfused",
                                            "tanh_bwd=mulsub", "tanh_bwd=mulsub_fma,sgd=fused",
                                            "linear=lane_parallel,bias=pairwise,mse=pairwise",
                                            "linear=pairwise,mse=sequential_fma_recip"}
                 : std::vector<std::string>{"tanh_bwd=mac_opmath", "tanh_bwd=mac_per_op",
                                            "tanh_bwd=mulsub_opmath_hwy,sgd=fused",
                                            "linear=lane_parallel,bias=pairwise,mse=pairwise"};
    for (const char* scenario : {"seed", "saturating"}) {
      std::vector<RunConfig> configs;
      for (const std::string& spec : specs) {
        RunConfig kernel = ParseRunConfig(spec, target, p);
        RunConfig model = kernel;
        model.model = true;
        configs.push_back(kernel);
        configs.push_back(model);
      }
      const DriftResult d = RunDrift(BuiltinScenario(scenario), configs, binary32 ? 40 : 20);
      for (size_t i = 0; i < d.runs.size(); i += 2) {
        const FloatRunResult& kernel = d.runs[i];
        const FloatRunResult& model = d.runs[i + 1];
        SCOPED_TRACE(std::string(scenario) + " " + kernel.config.Label());
        EXPECT_EQ(kernel.config.Label(), model.config.Label());
        ASSERT_EQ(kernel.loss.size(), model.loss.size());
        for (size_t e = 0; e < kernel.loss.size(); ++e) {
          ASSERT_EQ(kernel.loss[e], model.loss[e]) << "epoch " << e;
        }
        ASSERT_EQ(kernel.final_parameters.tensors.size(), model.final_parameters.tensors.size());
        for (size_t k = 0; k < kernel.final_parameters.tensors.size(); ++k) {
          const auto& a = kernel.final_parameters.tensors[k];
          const auto& b = model.final_parameters.tensors[k];
          ASSERT_EQ(a.size(), b.size());
          for (size_t j = 0; j < a.size(); ++j) {
            ASSERT_EQ(FloatBits(a[j]), FloatBits(b[j])) << "tensor " << k << " element " << j;
          }
        }
        ASSERT_EQ(kernel.in_situ.size(), model.in_situ.size());
        for (const auto& [op, stats] : kernel.in_situ) {
          const ErrorStatistics& other = model.in_situ.at(op);
          EXPECT_EQ(stats.n(), other.n()) << op;
          EXPECT_EQ(stats.max_ulp(), other.max_ulp()) << op;
          EXPECT_EQ(stats.mean_ulp(), other.mean_ulp()) << op;
          EXPECT_EQ(stats.correctly_rounded(), other.correctly_rounded()) << op;
        }
      }
    }
  }
}

ULPGATE_INSTANTIATE_PER_TARGET(HighwayTanhModelTest);
ULPGATE_INSTANTIATE_PER_TARGET(DriftModelRun);

}  // namespace
}  // namespace ulpgate
