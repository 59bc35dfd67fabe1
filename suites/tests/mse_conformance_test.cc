// Sampled tier, per target: every MSE loss variant (forward: four schedules,
// divide by N or multiply by RN(1/N); backward: the framework's order)
// conforms bit for bit to its model on every suite, never breaks the classical
// error bound, is exact on the exact fill when N is a power of two, and
// computes tails and misaligned inputs as the body.
#include <gtest/gtest.h>

#include <iostream>

#include "kernels/reductions/mse/mse_spec.h"
#include "suites/tests/reduction_test_support.h"

namespace ulpgate {
namespace {

using testing_support::AllTargets;
using testing_support::CaseLine;
using testing_support::DescribeElement;
using testing_support::ExpectConformsAndBounded;
using testing_support::RunOnTarget;

struct Param {
  const TargetInfo* target;
  const ReductionOpInfo* op;
};

// Test names and ctest names show "AVX2 linear_fwd", not the bytes of Param.
void PrintTo(const Param& p, std::ostream* out) {
  *out << p.target->name << " " << p.op->name;
}

std::vector<Param> Params() {
  std::vector<Param> params;
  for (const TargetInfo* t : AllTargets()) {
    for (const ReductionOpInfo* op : testing_support::FamilyOps("mse")) params.push_back({t, op});
  }
  return params;
}

std::string ParamName(const ::testing::TestParamInfo<Param>& info) {
  return info.param.target->name + "_" + std::string(info.param.op->name);
}

ReductionShape N(size_t n) { return {{n, 1, 1, 1}, 1}; }

class MseTargetTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    if (!GetParam().target->supported) {
      GTEST_SKIP() << GetParam().target->name
                   << " is " << NotRunnableReason(*GetParam().target)
                   << "; its 16-lane model is checked in linear_targets_test";
    }
  }
  const ReductionOpInfo& op() const { return *GetParam().op; }
  const TargetInfo& target() const { return *GetParam().target; }
};

TEST_P(MseTargetTest, ConformsAndStaysWithinBoundOnEverySuite) {
  for (const std::string& suite : testing_support::SuiteNames()) {
    for (size_t n : {1, 2, 16, 33, 257, 1000}) {
      // Many instances: the forward op has one output per instance.
      const size_t instances = suite == "adversarial" ? 20 : 8;
      const ReductionInputSet inputs = GenerateReductionSuite(*GetParam().op, N(n), suite, 7, instances);
      const ReductionRun run = RunOnTarget(inputs, target());
      ExpectConformsAndBounded(inputs, run);
      if (n == 257) {
        std::cout << op().name << " on " << target().name << ", " << suite << ", N " << n << ":\n";
        for (const auto& r : run.cases) std::cout << CaseLine(r) << '\n';
      }
    }
  }
}

TEST_P(MseTargetTest, ExactFillGivesZeroErrorWhenNIsAPowerOfTwo) {
  // Integers keep every sum exact; the mean's scale 1/N (and 2/N) is exact
  // only for N a power of two, so only then is every variant exact.
  for (size_t n : {1, 2, 4, 16, 64, 256, 1024}) {
    const ReductionInputSet inputs = GenerateReductionSuite(*GetParam().op, N(n), "exact", 3, 6);
    const ReductionRun run = RunOnTarget(inputs, target());
    for (size_t c = 0; c < run.cases.size(); ++c) {
      const CaseResult& r = run.cases[c];
      EXPECT_EQ(r.stats.counts()[0], r.n)
          << "N = " << n << ": " << r.n - r.stats.counts()[0]
          << " outputs have a nonzero error on the exact fill; worst:\n"
          << DescribeElement(inputs, run, c, r.stats.max_index());
      EXPECT_EQ(r.bound.max_fraction(), 0.0);
    }
  }
  // Otherwise the sum is still exact, so a single correctly rounded division
  // makes the divide variants of mse_fwd correctly rounded.
  if (GetParam().op == &testing_support::Reduction("mse_fwd")) {
    for (size_t n : {3, 31, 1000}) {
      const ReductionInputSet inputs = GenerateReductionSuite(*GetParam().op, N(n), "exact", 3, 6);
      const ReductionRun run = RunOnTarget(inputs, target());
      for (size_t c = 0; c < run.cases.size(); ++c) {
        const CaseResult& r = run.cases[c];
        const auto& variant = op().variants[ReductionVariantIndex(op(), r.variant)];
        if (variant.form != kMeanByDivision) continue;
        EXPECT_EQ(r.stats.correctly_rounded(), r.n)
            << "N = " << n << ", worst:\n"
            << DescribeElement(inputs, run, c, r.stats.max_index());
      }
    }
  }
}

TEST_P(MseTargetTest, TailsAndMisalignedStarts) {
  std::vector<ReductionShape> shapes = TailShapes(*GetParam().op);
  shapes.push_back(N(33));
  for (const ReductionShape& shape : shapes) {
    const ReductionInputSet inputs =
        GenerateReductionSuite(*GetParam().op, shape, "cancellation", 11, 3);
    const ReductionRun run = RunOnTarget(inputs, target());
    ExpectConformsAndBounded(inputs, run);
    for (size_t misalign : {1, 2, 3, 5}) {
      for (size_t c = 0; c < run.cases.size(); ++c) {
        for (size_t i = 0; i < inputs.instances.size(); ++i) {
          const std::vector<float> shifted = RunReductionKernel(
              op(), run.cases[c].variant, target(), inputs.shape, inputs.instances[i], misalign);
          const std::vector<float>& aligned = run.outputs[i][c];
          for (size_t e = 0; e < aligned.size(); ++e) {
            if (FloatBits(shifted[e]) != FloatBits(aligned[e])) {
              ADD_FAILURE() << "misaligned by " << misalign << " floats, "
                            << ElementName(*inputs.op, inputs.shape, e) << " is "
                            << HexFloat(shifted[e]) << " instead of " << HexFloat(aligned[e])
                            << "; aligned case:\n"
                            << DescribeElement(inputs, run, c,
                                               static_cast<int64_t>(i * aligned.size() + e));
              break;
            }
          }
        }
      }
    }
  }
  std::cout << op().name << " on " << target().name << ": N = 1, 3, ..., 31, 33 conform; "
            << "misaligned by 1, 2, 3 and 5 floats, bit-identical\n";
}

INSTANTIATE_TEST_SUITE_P(Sampled, MseTargetTest, ::testing::ValuesIn(Params()), ParamName);

}  // namespace
}  // namespace ulpgate
