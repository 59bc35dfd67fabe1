// Sampled tier, per (target, format): the linear and MSE kernels with bf16 or
// f16 operands and outputs and binary32 accumulation conform bit for bit to
// their binary32 model rounded once to the format, never break the classical
// bound widened by that rounding, and are exact on the exact fill; every
// suite's operands are values of the format. Plus the widened bound itself
// against values worked out by hand.
#include <gtest/gtest.h>

#include <iostream>

#include "oracles/format.h"
#include "oracles/reduction_bound.h"
#include "suites/tests/reduction_test_support.h"

namespace ulpgate {
namespace {

using testing_support::AllTargets;
using testing_support::CaseLine;
using testing_support::ExpectConformsAndBounded;
using testing_support::RunOnTarget;

struct Param {
  const TargetInfo* target;
  const FloatFormat* format;
};

void PrintTo(const Param& p, std::ostream* out) {
  *out << p.target->name << " " << p.format->name;
}

std::vector<Param> Params() {
  std::vector<Param> params;
  for (const TargetInfo* t : AllTargets()) {
    for (const FloatFormat* f : {&kBFloat16, &kBinary16}) params.push_back({t, f});
  }
  return params;
}

std::string ParamName(const ::testing::TestParamInfo<Param>& info) {
  return info.param.target->name + "_" + info.param.format->name;
}

std::vector<const ReductionOpInfo*> AllOps() {
  std::vector<const ReductionOpInfo*> ops;
  for (const ReductionOpInfo& op : ReductionOps()) ops.push_back(&op);
  return ops;
}

// Shapes of the op's rank: N = 1, 17, 33, 64 for one extent, else the first
// extents of 1x1x1, 9x17x33, 5x40x3.
std::vector<ReductionShape> Shapes(const ReductionOpInfo* op) {
  const size_t rank = op->extents.size();
  if (rank == 1) {
    return {{{1, 1, 1, 1}, 1}, {{17, 1, 1, 1}, 1}, {{33, 1, 1, 1}, 1}, {{64, 1, 1, 1}, 1}};
  }
  return {{{1, 1, 1, 1}, rank}, {{9, 17, 33, 1}, rank}, {{5, 40, 3, 1}, rank}};
}

class ReductionNarrowTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    if (!GetParam().target->supported) {
      GTEST_SKIP() << GetParam().target->name << " is " << NotRunnableReason(*GetParam().target);
    }
  }
};

TEST_P(ReductionNarrowTest, ConformsAndStaysWithinTheWidenedBoundOnEverySuite) {
  const FloatFormat& format = *GetParam().format;
  for (const ReductionOpInfo* op : AllOps()) {
    for (const std::string& suite : testing_support::SuiteNames()) {
      for (const ReductionShape& shape : Shapes(op)) {
        const ReductionInputSet inputs = GenerateReductionSuite(*op, shape, suite, 7, testing_support::InstancesFor(suite), format);
        ASSERT_EQ(inputs.format, &format);
        for (const ReductionInstance& instance : inputs.instances) {
          for (const std::vector<float>& operand : instance.operands) {
            for (float v : operand) {
              ASSERT_TRUE(IsRepresentable(format, v))
                  << op->name << " " << suite << ": " << HexFloat(v)
                  << " is not a " << format.name << " value";
            }
          }
        }
        const ReductionRun run = RunOnTarget(inputs, *GetParam().target);
        ASSERT_EQ(run.cases.size(), op->variants.size());
        for (const CaseResult& r : run.cases) EXPECT_EQ(r.dtype, format.name);
        ExpectConformsAndBounded(inputs, run);
        const bool linear = op->family == "linear";
        if (suite == "exact" && linear) {
          for (const CaseResult& r : run.cases) {
            EXPECT_EQ(r.stats.max_ulp(), 0.0) << CaseLine(r);
          }
        }
      }
    }
  }
}

// A 16-bit kernel is the binary32 kernel on promoted operands with its outputs
// rounded once: so it cannot be more accurate than that rounding allows, and
// where the binary32 result is already a value of the format they agree.
TEST_P(ReductionNarrowTest, EqualsTheBinary32KernelRoundedOnce) {
  const FloatFormat& format = *GetParam().format;
  for (const ReductionOpInfo* op : AllOps()) {
    const ReductionOpInfo& info = *op;
    for (const ReductionShape& shape : Shapes(op)) {
      const ReductionInputSet inputs = GenerateReductionSuite(*op, shape, "training", 3, 2, format);
      for (const ReductionVariantInfo& variant : info.variants) {
        for (const ReductionInstance& instance : inputs.instances) {
          const std::vector<float> wide =
              RunReductionKernel(info, variant.name, *GetParam().target, shape, instance);
          const std::vector<float> narrow = RunReductionKernel(
              info, variant.name, *GetParam().target, shape, instance, 3, format);
          ASSERT_EQ(wide.size(), narrow.size());
          for (size_t e = 0; e < wide.size(); ++e) {
            const float expected = static_cast<float>(RoundToFormat(format, wide[e]));
            ASSERT_TRUE(SameFloat(narrow[e], expected))
                << info.name << " " << variant.name << " in " << format.name << " on "
                << GetParam().target->name << ", instance " << instance.index << " "
                << ElementName(info, shape, e) << ": " << HexFloat(narrow[e])
                << ", binary32 kernel rounded once: " << HexFloat(expected);
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(PerTargetAndFormat, ReductionNarrowTest, ::testing::ValuesIn(Params()),
                         ParamName);

// One term, no rounding inside (m = 0): the whole bound is the final
// rounding's, u |x| + U. x = 1 + 3 * 2^-10 rounds to 1 in bf16 (3/8 of its
// ulp 2^-7), an error of 3 * 2^-10 against u |x| + U = 2^-8 (1 + 3 * 2^-10) +
// 2^-134: fraction 3 * 2^-10 / (2^-8 + 3 * 2^-18 + 2^-134). In f16 (ulp
// 2^-10 at 1) x is a value: y = x, fraction 0.
TEST(NarrowBoundFraction, IsTheFinalRoundingsShareWhenTheSumIsExact) {
  MpfrNumber x(64);
  mpfr_set_d(x.get(), 1 + 3 * 0x1p-10, MPFR_RNDN);
  ReductionBound bound(64);
  mpfr_set_d(bound.abs_sum.get(), 1 + 3 * 0x1p-10, MPFR_RNDN);
  bound.roundings = 0;
  mpfr_set_zero(bound.underflow.get(), 1);
  mpfr_set_d(bound.peak.get(), 1 + 3 * 0x1p-10, MPFR_RNDN);

  const BoundFraction bf16 = MeasureBoundFraction(x.get(), 1, 1.0f, bound, kBFloat16);
  const long double expected =
      (3 * 0x1p-10L) / (0x1p-8L + 3 * 0x1p-18L + 0x1p-134L);  // 0.7478...
  EXPECT_NEAR(bf16.fraction, static_cast<double>(expected), 1e-15);
  EXPECT_FALSE(bf16.above_one);
  // In binary32 the same error is not allowed at all (m = 0: bound 0).
  EXPECT_TRUE(MeasureBoundFraction(x.get(), 1, 1.0f, bound).above_one);

  const BoundFraction f16 = MeasureBoundFraction(x.get(), 1, 1 + 3 * 0x1p-10f, bound, kBinary16);
  EXPECT_EQ(f16.fraction, 0.0);
  // One f16 ulp off (2^-10) is more than the final rounding allows (at most
  // u |x| = 2^-11 (1 + ...)): above 1.
  EXPECT_TRUE(MeasureBoundFraction(x.get(), 1, 1 + 4 * 0x1p-10f, bound, kBinary16).above_one);
}

// f16 overflows at 65520 (the midpoint above 65504), binary32 far above: an
// infinity is exempt in f16 only where the exact intermediates come near it.
TEST(NarrowBoundFraction, JudgesOverflowAgainstTheFormatsRange) {
  MpfrNumber x(64);
  mpfr_set_d(x.get(), 65536.0, MPFR_RNDN);
  ReductionBound bound(64);
  mpfr_set_d(bound.abs_sum.get(), 65536.0, MPFR_RNDN);
  bound.roundings = 1;
  mpfr_set_zero(bound.underflow.get(), 1);
  mpfr_set_d(bound.peak.get(), 65536.0, MPFR_RNDN);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(MeasureBoundFraction(x.get(), 1, inf, bound, kBinary16).overflow_exempt);
  const BoundFraction wide = MeasureBoundFraction(x.get(), 1, inf, bound);
  EXPECT_FALSE(wide.overflow_exempt);
  EXPECT_TRUE(wide.above_one);
  mpfr_set_d(bound.peak.get(), 60000.0, MPFR_RNDN);  // (1 + gamma_1) 60000 < 65520
  EXPECT_TRUE(MeasureBoundFraction(x.get(), 1, inf, bound, kBinary16).above_one);
}

}  // namespace
}  // namespace ulpgate
