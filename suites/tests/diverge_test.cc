// diverge: from a random seed it finds the catastrophic region of mac_unfused
// (|t| within a few ULP of 1, millions of ULP) within 10^5 evaluations; what it
// reports is recomputed from the models; the search is deterministic, keeps to
// its budget and finds the peak of a synthetic landscape; the worst-case file
// reads back as an input file.
#include "suites/investigate/diverge.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

#include "kernels/ops/tanh_bwd/tanh_bwd_spec.h"
#include "oracles/float_text.h"
#include "oracles/ieee_emulation.h"
#include "oracles/mpfr_number.h"
#include "oracles/ulp_metric.h"
#include "suites/inputs/counter_rng.h"
#include "suites/inputs/inputs.h"
#include "suites/engine/tanh_bwd_oracle.h"
#include "suites/inputs/tanh_bwd_suites.h"

namespace ulpgate {
namespace {

DivergeSide Side(const std::string& variant, const TargetInfo& target) {
  return DivergeSide{variant, &target};
}

std::string ExpectedModel(const DivergeSide& side) {
  const auto& info = kTanhBwdVariants[TanhBwdVariantIndex(side.variant)];
  return std::string(side.target->fused_negmuladd ? info.model_fused_target
                                                  : info.model_unfused_target);
}

std::string Describe(const DivergePoint& p) {
  std::ostringstream s;
  s << "grad=" << HexFloat(p.operands[0]) << " t=" << HexFloat(p.operands[1]) << ": "
    << p.evaluation.ulp << " ULP, a=" << HexFloat(p.evaluation.a)
    << " b=" << HexFloat(p.evaluation.b) << ", found at " << p.found_at;
  return s.str();
}

// Every reported point, recomputed from the bit-exact models (the kernels
// conform to them) and the ULP metric.
void ExpectReportedPointsRecompute(const DivergeResult& r, const DivergeSide& a,
                                   const DivergeSide& b) {
  for (const DivergePoint& p : r.worst) {
    SCOPED_TRACE(Describe(p));
    const float grad = p.operands[0], t = p.operands[1];
    const float ya = TanhBwdModel(ExpectedModel(a), grad, t);
    EXPECT_TRUE(SameFloat(p.evaluation.a, ya));
    UlpError e;
    if (b.exact()) {
      e = MeasureUlpError(TanhBwdExact(grad, t).get(), ya);
    } else {
      const float yb = TanhBwdModel(ExpectedModel(b), grad, t);
      EXPECT_TRUE(SameFloat(p.evaluation.b, yb));
      const MpfrNumber reference(24, yb);
      e = MeasureUlpError(reference.get(), ya);
    }
    EXPECT_FALSE(e.special_mismatch);
    EXPECT_EQ(p.evaluation.ulp, e.ulp);
  }
  for (size_t i = 1; i < r.worst.size(); ++i) {
    EXPECT_GE(r.worst[i - 1].evaluation.ulp, r.worst[i].evaluation.ulp);
  }
}

// The acceptance: mac_unfused against mulsub_fma on this CPU's best
// target, >= 10^6 ULP within 10^5 evaluations from a random seed, < 10 s.
TEST(DivergeTest, FindsTheCatastrophicRegionOfMacUnfusedFromRandomSeeds) {
  const DivergeSide a = Side("mac_unfused", BestTarget());
  const DivergeSide b = Side("mulsub_fma", BestTarget());
  for (uint64_t seed : {1, 2, 3, 0x5eed}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    DivergeOptions options;
    options.evaluations = 100000;
    options.seed = seed;
    const auto start = std::chrono::steady_clock::now();
    const DivergeResult r = DivergeElementwise(*FindElementwiseOp("tanh_bwd"), a, b, options);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 10.0);
    EXPECT_EQ(r.evaluations, options.evaluations);
    ASSERT_FALSE(r.worst.empty());
    const DivergePoint& worst = r.worst.front();
    EXPECT_GE(worst.evaluation.ulp, 1e6) << Describe(worst);
    const uint64_t reached = r.FirstReaching(1e6);
    EXPECT_GT(reached, 0u);
    EXPECT_LE(reached, options.evaluations);
    // The known region: |t| within 2^-10 of 1, where grad - grad*RN(t*t)
    // cancels the rounding of grad*r into the result.
    EXPECT_LT(std::fabs(std::fabs(worst.operands[1]) - 1.0f), 0x1p-10f) << Describe(worst);
    ExpectReportedPointsRecompute(r, a, b);
    std::cout << "[diverge] seed " << seed << ": " << Describe(worst) << "; >= 1e6 ULP first at evaluation "
              << reached << ", " << seconds << " s\n";
  }
}

// grad = 1.5, t = 1 - 2^-24 (explain_test derives it): mac_unfused gives
// 2^-22, mulsub_fma 1.5*2^-23 where fused (else mulsub's, the same here), the
// exact value is 1.5*(2^-23 - 2^-48). In ULPs of b (2^-46): 2^-24 / 2^-46 =
// 2^22; in ULPs of a (2^-45) it would be 2^21.
TEST(DivergeTest, ScorerMeasuresInUlpsOfTheBSide) {
  const DivergeSide a = Side("mac_unfused", BestTarget());
  const std::vector<std::vector<float>> input = {{1.5f, 1.0f}, {0x1.fffffep-1f, 0.5f}};
  std::vector<DivergeEvaluation> results(2);
  ElementwiseDivergeScorer(*FindElementwiseOp("tanh_bwd"), a, Side("mulsub_fma", BestTarget()))(input, &results);
  EXPECT_EQ(results[0].a, 0x1p-22f);
  EXPECT_EQ(results[0].b, 0x1.8p-23f);
  EXPECT_EQ(results[0].ulp, 0x1p22);
  EXPECT_EQ(results[1].ulp, 0);  // 1 - 1/4 = 3/4 exactly either way
  ElementwiseDivergeScorer(*FindElementwiseOp("tanh_bwd"), a, DivergeSide{})(input, &results);
  EXPECT_EQ(results[0].ulp, 0x1p22 + 0.375);
  EXPECT_EQ(results[0].b, 0x1.8p-23f);  // the exact value, rounded
  // A special mismatch is flagged, not ranked: inf - inf*(1/4) is NaN.
  const std::vector<std::vector<float>> special = {{std::numeric_limits<float>::infinity()}, {0.5f}};
  std::vector<DivergeEvaluation> one(1);
  ElementwiseDivergeScorer(*FindElementwiseOp("tanh_bwd"), a, DivergeSide{})(special, &one);
  EXPECT_TRUE(one[0].special);
  EXPECT_TRUE(std::isnan(one[0].a));
}

TEST(DivergeTest, AgainstTheExactValue) {
  const DivergeSide a = Side("mac_unfused", BestTarget());
  const DivergeSide exact;
  DivergeOptions options;
  options.evaluations = 100000;
  options.seed = 42;
  const DivergeResult r = DivergeElementwise(*FindElementwiseOp("tanh_bwd"), a, exact, options);
  ASSERT_FALSE(r.worst.empty());
  EXPECT_GE(r.worst.front().evaluation.ulp, 1e6) << Describe(r.worst.front());
  ExpectReportedPointsRecompute(r, a, exact);
  for (const DivergePoint& p : r.worst) {
    // b is the exact value rounded, for display.
    EXPECT_TRUE(SameFloat(p.evaluation.b,
                          RoundToBinary32(TanhBwdExact(p.operands[0], p.operands[1]).get())));
  }
}

TEST(DivergeTest, SameModelOnTwoTargetsNeverDisagrees) {
  // mulsub has no NegMulAdd: every target computes the same three roundings.
  const DivergeSide a = Side("mulsub", CompiledTargets().front());
  const DivergeSide b = Side("mulsub", BestTarget());
  DivergeOptions options;
  options.evaluations = 20000;
  const DivergeResult r = DivergeElementwise(*FindElementwiseOp("tanh_bwd"), a, b, options);
  EXPECT_EQ(r.special_mismatches, 0u);
  for (const DivergePoint& p : r.worst) EXPECT_EQ(p.evaluation.ulp, 0) << Describe(p);
}

// docs/design.md "Models and conformance": for RN(t*t) in [1/2, 2], 1 - RN(t*t) is exact (Sterbenz), so the
// fused mac and mulsub agree bit for bit there; every disagreement diverge
// finds must lie outside.
TEST(DivergeTest, FusedMacAndMulSubDisagreeOnlyOutsideSterbenz) {
  const TargetInfo& best = BestTarget();
  if (!best.fused_negmuladd) GTEST_SKIP() << best.name << " has no fused NegMulAdd";
  DivergeOptions options;
  options.evaluations = 50000;
  options.keep = 64;
  const DivergeResult r = DivergeElementwise(*FindElementwiseOp("tanh_bwd"), Side("mac", best), Side("mulsub", best), options);
  ASSERT_FALSE(r.worst.empty());
  EXPECT_GT(r.worst.front().evaluation.ulp, 0);
  for (const DivergePoint& p : r.worst) {
    if (p.evaluation.ulp == 0) continue;
    const float t = p.operands[1];
    const MpfrNumber t2(48, t);
    MpfrNumber r2(48);
    mpfr_mul(r2.get(), t2.get(), t2.get(), MPFR_RNDN);  // exact: 48 bits
    const float rounded_square = RoundToBinary32(r2.get());
    EXPECT_TRUE(rounded_square < 0.5f || rounded_square > 2.0f) << Describe(p);
  }
}

TEST(DivergeTest, DeterministicForASeed) {
  const DivergeSide a = Side("mac_unfused", BestTarget());
  const DivergeSide b = Side("mulsub", BestTarget());
  DivergeOptions options;
  options.evaluations = 30000;
  options.seed = 7;
  const DivergeResult first = DivergeElementwise(*FindElementwiseOp("tanh_bwd"), a, b, options);
  const DivergeResult second = DivergeElementwise(*FindElementwiseOp("tanh_bwd"), a, b, options);
  ASSERT_EQ(first.worst.size(), second.worst.size());
  for (size_t i = 0; i < first.worst.size(); ++i) {
    EXPECT_EQ(FloatBits(first.worst[i].operands[0]), FloatBits(second.worst[i].operands[0]));
    EXPECT_EQ(FloatBits(first.worst[i].operands[1]), FloatBits(second.worst[i].operands[1]));
    EXPECT_EQ(first.worst[i].found_at, second.worst[i].found_at);
  }
  EXPECT_EQ(first.improvements, second.improvements);
}

// A landscape with one peak: the score falls off as 2^32 / (1 + distance in
// floats) from a point, in both operands. Only climbing (or refinement) gets
// to the exact peak; the budget is kept to the input.
TEST(DivergeTest, SearchClimbsToThePeakAndKeepsToItsBudget) {
  const int64_t peak[3] = {FloatKey(0x1.23456p-3f), FloatKey(-0x1.fedcbap+40f), FloatKey(7.0f)};
  uint64_t scored = 0;
  const DivergeScorer scorer = [&](const std::vector<std::vector<float>>& columns,
                                   std::vector<DivergeEvaluation>* results) {
    for (size_t i = 0; i < columns[0].size(); ++i) {
      double distance = 0;
      for (size_t d = 0; d < 3; ++d) {
        distance += std::fabs(static_cast<double>(FloatKey(columns[d][i]) - peak[d]));
      }
      (*results)[i].ulp = 0x1p32 / (1 + distance);
      ++scored;
    }
  };
  for (uint64_t budget : {1, 17, 1000, 60000}) {
    scored = 0;
    DivergeOptions options;
    options.evaluations = budget;
    options.keep = 4;
    const DivergeResult r = SearchDivergence(3, scorer, options);
    EXPECT_EQ(r.evaluations, budget);
    EXPECT_EQ(scored, budget);
    EXPECT_LE(r.worst.size(), std::min<uint64_t>(budget, 4));
    if (budget == 60000) {
      ASSERT_FALSE(r.worst.empty());
      for (size_t d = 0; d < 3; ++d) {
        EXPECT_EQ(FloatKey(r.worst.front().operands[d]), peak[d]) << "operand " << d;
      }
    }
  }
}

TEST(DivergeTest, FloatKeysAreMonotoneAndRoundTrip) {
  CounterRng rng(3, StreamId("keys"), 0);
  for (int i = 0; i < 100000; ++i) {
    const float x = FloatFromBits(rng.Next32());
    const float y = FloatFromBits(rng.Next32());
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    EXPECT_EQ(x < y, FloatKey(x) < FloatKey(y));
    EXPECT_EQ(x == y, FloatKey(x) == FloatKey(y));  // -0 and +0 share a key
    EXPECT_LE(std::abs(FloatKey(x)), kMaxDivergeKey);
    if (x != 0) {
      EXPECT_EQ(FloatBits(KeyFloat(FloatKey(x))), FloatBits(x));
    }
  }
  EXPECT_EQ(KeyFloat(kMaxDivergeKey), 0x1.fffffep127f);
  EXPECT_EQ(KeyFloat(-kMaxDivergeKey), -0x1.fffffep127f);
  EXPECT_EQ(FloatKey(1.0f) - FloatKey(0x1.fffffep-1f), 1);
}

TEST(DivergeTest, WorstCaseFileReadsBackAsAnInputFile) {
  const DivergeSide a = Side("mac_unfused", BestTarget());
  const DivergeSide b = Side("mulsub_fma", BestTarget());
  DivergeOptions options;
  options.evaluations = 20000;
  options.keep = 8;
  const DivergeResult r = DivergeElementwise(*FindElementwiseOp("tanh_bwd"), a, b, options);
  const std::string text =
      DivergeInputFileText(r, kTanhBwdOperands, {"produced by a test", "regenerate: nothing"});
  EXPECT_EQ(text.rfind("# produced by a test\n# regenerate: nothing\n# columns: grad t", 0), 0u)
      << text;
  std::istringstream in(text);
  const InputSet read = ReadInputFile(in, kTanhBwdOperands, "diverge output");
  ASSERT_EQ(read.size(), r.worst.size());
  for (size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(FloatBits(read.columns[0][i]), FloatBits(r.worst[i].operands[0]));
    EXPECT_EQ(FloatBits(read.columns[1][i]), FloatBits(r.worst[i].operands[1]));
  }
}

TEST(DivergeTest, RejectsAnExactASide) {
  DivergeOptions options;
  EXPECT_THROW(DivergeElementwise(*FindElementwiseOp("tanh_bwd"), DivergeSide{}, DivergeSide{}, options), std::invalid_argument);
  EXPECT_THROW(DivergeElementwise(*FindElementwiseOp("tanh_bwd"), Side("fused", BestTarget()), DivergeSide{}, options),
               std::invalid_argument);
}

}  // namespace
}  // namespace ulpgate
