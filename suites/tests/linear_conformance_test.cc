// Sampled tier, per target: every linear-layer variant conforms bit for bit to
// its model on every suite, never breaks the classical error bound, is exact
// on the exact fill, and computes tails and misaligned inputs as the body.
// The Eigen peer is run and reported beside the kernels, never gated.
#include <gtest/gtest.h>

#include <iostream>

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
    for (const ReductionOpInfo* op : testing_support::LinearOps()) params.push_back({t, op});
  }
  return params;
}

std::string ParamName(const ::testing::TestParamInfo<Param>& info) {
  return info.param.target->name + "_" + std::string(info.param.op->name);
}

ReductionShape Shape(size_t batch, size_t in, size_t out) {
  return LinearShape{batch, in, out}.Extents();
}

class LinearTargetTest : public ::testing::TestWithParam<Param> {
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

TEST_P(LinearTargetTest, ConformsAndStaysWithinBoundOnEverySuite) {
  std::vector<ReductionShape> shapes = {Shape(1, 1, 1), Shape(9, 17, 33), Shape(5, 40, 3)};
  for (const ReductionShape& s : TrainingShapes(*GetParam().op)) shapes.push_back(s);
  for (const std::string& suite : testing_support::SuiteNames()) {
    for (const ReductionShape& shape : shapes) {
      const ReductionInputSet inputs = GenerateReductionSuite(
          *GetParam().op, shape, suite, 7, testing_support::InstancesFor(suite));
      const ReductionRun run = RunOnTarget(inputs, target());
      ExpectConformsAndBounded(inputs, run);
      if (shape[1] == 17) {  // one summary per suite
        std::cout << op().name << " on " << target().name << ", " << suite << ", shape "
                  << ShapeText(*inputs.op, shape) << ":\n";
        for (const auto& r : run.cases) std::cout << CaseLine(r) << '\n';
      }
    }
  }
}

TEST_P(LinearTargetTest, ExactFillGivesZeroError) {
  const bool peer = GetParam().op == &testing_support::Reduction("linear_fwd");
  for (const ReductionShape& shape :
       {Shape(1, 1, 1), Shape(8, 4, 4), Shape(8, 4, 2), Shape(31, 31, 31), Shape(3, 300, 5)}) {
    const ReductionInputSet inputs = GenerateReductionSuite(*GetParam().op, shape, "exact", 3, 2);
    const ReductionRun run = RunOnTarget(inputs, target(), peer);
    for (size_t c = 0; c < run.cases.size(); ++c) {
      const CaseResult& r = run.cases[c];
      if (r.kind == CaseKind::kPeer) {
        std::cout << "Eigen peer (reported, not gated) on the exact fill, shape "
                  << ShapeText(*inputs.op, shape) << ":\n"
                  << CaseLine(r) << '\n';
        continue;
      }
      EXPECT_EQ(r.stats.counts()[0], r.n)
          << r.n - r.stats.counts()[0] << " outputs have a nonzero error on the exact fill; "
          << "worst:\n"
          << DescribeElement(inputs, run, c, r.stats.max_index());
      EXPECT_EQ(r.stats.special_mismatch(), 0u)
          << DescribeElement(inputs, run, c, r.stats.first_special_index());
      EXPECT_EQ(r.bound.max_fraction(), 0.0);
    }
  }
}

TEST_P(LinearTargetTest, TailsAndMisalignedStarts) {
  // Every odd size up to twice the widest vector (16 lanes), so every lane
  // count meets every tail length, and ragged shapes where the reduction and
  // the output extents have different tails.
  std::vector<ReductionShape> shapes = TailShapes(*GetParam().op);
  for (size_t s = 1; s <= 31; s += 6) shapes.push_back(Shape(s % 5 + 1, 33 - s, s + 2));
  for (const ReductionShape& shape : shapes) {
    const ReductionInputSet inputs =
        GenerateReductionSuite(*GetParam().op, shape, "cancellation", 11, 1);
    const ReductionRun run = RunOnTarget(inputs, target());
    ExpectConformsAndBounded(inputs, run);
    // The same kernels on operands and outputs that start 1, 2, 3 and 5
    // floats past a 64-byte boundary give the same bits.
    for (size_t misalign : {1, 2, 3, 5}) {
      for (size_t c = 0; c < run.cases.size(); ++c) {
        const CaseResult& r = run.cases[c];
        const std::vector<float> shifted = RunReductionKernel(
            op(), r.variant, target(), shape, inputs.instances[0], misalign);
        const std::vector<float>& aligned = run.outputs[0][c];
        ASSERT_EQ(shifted.size(), aligned.size());
        for (size_t e = 0; e < aligned.size(); ++e) {
          if (FloatBits(shifted[e]) != FloatBits(aligned[e])) {
            ADD_FAILURE() << "misaligned by " << misalign << " floats, "
                          << ElementName(*inputs.op, shape, e) << " is " << HexFloat(shifted[e])
                          << " (" << BitsHex(shifted[e]) << ") instead of "
                          << HexFloat(aligned[e]) << "; aligned case:\n"
                          << DescribeElement(inputs, run, c, static_cast<int64_t>(e));
            break;
          }
        }
      }
    }
  }
  std::cout << op().name << " on " << target().name << ": " << shapes.size()
            << " tail shapes conform; misaligned by 1, 2, 3 and 5 floats, bit-identical\n";
}

INSTANTIATE_TEST_SUITE_P(Sampled, LinearTargetTest, ::testing::ValuesIn(Params()), ParamName);

TEST(LinearPeerTest, EigenPeerIsReportedBesideTheKernels) {
  ReductionShape shape = Shape(16, 64, 8);
  const ReductionInputSet inputs =
      GenerateReductionSuite(testing_support::Reduction("linear_fwd"), shape, "cancellation", 5, 2);
  ReductionRunOptions options;
  options.threads = 1;
  options.all_candidate_models = false;
  const ReductionRun run = RunReduction(inputs, options);
  ASSERT_FALSE(run.cases.empty());
  const CaseResult& peer = run.cases.back();
  ASSERT_EQ(peer.kind, CaseKind::kPeer) << "with all variants, the Eigen peer comes last";
  EXPECT_EQ(peer.variant, kEigenPeerVariant);
  EXPECT_EQ(peer.n, inputs.instances.size() * inputs.outputs_per_instance());
  EXPECT_TRUE(peer.conformance.expected_model.empty()) << "the peer has no model";
  std::cout << "linear_fwd, cancellation, shape 16,64,8 (the peer is not gated):\n";
  for (const auto& r : run.cases) std::cout << CaseLine(r) << '\n';
}

}  // namespace
}  // namespace ulpgate
