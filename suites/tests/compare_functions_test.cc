// `compare` where neither side follows a built-in model because its exp is
// not Highway's (suites/investigate/compare.h, RunCompare's second look: the
// op's sequences with their functions free). Planted silu_bwd sides in f32,
// each the op's sequence with an exp of its own (the binary32 nearest exp,
// one ULP up or down from it, or eight up): the same sequence with two exps
// must give "function implementation"; the fused and the unfused sequence
// with one exp "fusion"; with two exps "fusion + function implementation";
// an exp eight ULPs off (beyond the four a free function may be) "unknown",
// saying what was tried.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/elementwise_ops.h"
#include "suites/inputs/elementwise_suites.h"
#include "suites/investigate/compare.h"

namespace ulpgate {
namespace {

// exp(v)'s nearest binary32 moved by `ulps`.
float ExpOff(float v, int ulps) {
  float e = static_cast<float>(std::exp(static_cast<double>(v)));
  for (; ulps > 0; --ulps) e = std::nextafter(e, std::numeric_limits<float>::infinity());
  for (; ulps < 0; ++ulps) e = std::nextafter(e, -std::numeric_limits<float>::infinity());
  return e;
}

// silu_bwd's sequences in binary32 (the build contracts nothing): torch's
// 1 + x*(1 - sig) rounded twice, muladd's in one fused multiply-add.
float Silu(float grad, float x, int exp_ulps, bool fused) {
  const float e = ExpOff(-x, exp_ulps);
  const float sig = 1.0f / (1.0f + e);
  const float p = grad * sig;
  const float w = fused ? std::fma(x, 1.0f - sig, 1.0f) : 1.0f + x * (1.0f - sig);
  return p * w;
}

// A comparison of two saved silu_bwd sides in binary32 on `count` inputs of
// the domain suite, the sides' outputs left to fill.
CompareRequest SiluRequest(size_t count) {
  const ElementwiseOpInfo& op = *FindElementwiseOp("silu_bwd");
  CompareRequest r;
  r.op = &op;
  r.format = &kBinary32;
  r.inputs = GenerateElementwiseSuite(op, kBinary32, "domain", 3, count);
  r.threads = 1;
  r.a.label = "a";
  r.b.label = "b";
  r.a.door = r.b.door = "outputs";
  return r;
}

CompareResult Compare(int ulps_a, bool fused_a, int ulps_b, bool fused_b) {
  CompareRequest r = SiluRequest(3000);
  for (auto [side, ulps, fused] : {std::tuple<CompareSide*, int, bool>{&r.a, ulps_a, fused_a}, {&r.b, ulps_b, fused_b}}) {
    for (size_t i = 0; i < r.inputs.size(); ++i) {
      side->outputs.push_back(Silu(r.inputs.columns[0][i], r.inputs.columns[1][i], ulps, fused));
    }
  }
  return RunCompare(r);
}

TEST(CompareFunctions, TheSameSequenceWithTwoExpsIsFunctionImplementation) {
  const CompareResult result = Compare(1, false, -1, false);
  ASSERT_GT(result.differing, 0u);
  EXPECT_EQ(result.cause.cause, kCauseFunction) << result.cause.detail;
  EXPECT_EQ(result.cause.model_a, "torch.free");
  EXPECT_EQ(result.cause.model_b, "torch.free");
  EXPECT_EQ(result.cause.basis, "all inputs, functions free");
  EXPECT_TRUE(result.a.matching.empty()) << "Highway's exp is not one ULP above the nearest everywhere";
}

TEST(CompareFunctions, FusedAgainstUnfusedWithOneExpIsFusion) {
  const CompareResult result = Compare(1, true, 1, false);
  ASSERT_GT(result.differing, 0u);
  EXPECT_EQ(result.cause.cause, kCauseFusion) << result.cause.detail;
  EXPECT_EQ(result.cause.model_a, "muladd_fma.free");
  EXPECT_EQ(result.cause.model_b, "torch.free");
  EXPECT_TRUE(result.cause.functions_apart.empty());
  EXPECT_GT(result.cause.functions_compared, 0u);
}

TEST(CompareFunctions, FusedAgainstUnfusedWithTwoExpsIsBoth) {
  const CompareResult result = Compare(1, true, -1, false);
  EXPECT_EQ(result.cause.cause, std::string(kCauseFusion) + kCauseJoin + kCauseFunction) << result.cause.detail;
  EXPECT_FALSE(result.cause.functions_apart.empty());
  EXPECT_NE(result.cause.expression_a.find("fma("), std::string::npos) << result.cause.expression_a;
}

TEST(CompareFunctions, AnExpBeyondFourUlpsStaysUnknown) {
  const CompareResult result = Compare(8, false, 0, false);
  ASSERT_GT(result.differing, 0u);
  EXPECT_EQ(result.cause.cause, kCauseUnknown) << result.cause.detail;
  EXPECT_NE(result.cause.detail.find("with their functions free"), std::string::npos) << result.cause.detail;
  EXPECT_TRUE(result.a.matching_free.empty());
  EXPECT_FALSE(result.b.matching_free.empty());
}

// A side whose exp is a formula of its own (1 + v + v*v*0.5, far from exp)
// follows no form with its functions free; written out as `exp(v) as ...`
// in a model, it is the same formula as the other side's with exp free, so
// the two differ by their exp's implementation, and an `as` call's value
// counts among the function values compared. Written out as plain
// arithmetic instead, the formulas part.
TEST(CompareFunctions, AnImplementationWrittenOutIsAFunctionOfTheModel) {
  CompareRequest r = SiluRequest(2000);
  for (size_t i = 0; i < r.inputs.size(); ++i) {
    const float grad = r.inputs.columns[0][i], x = r.inputs.columns[1][i];
    const float v = -x;
    const float e = (1.0f + v) + (v * v) * 0.5f;
    const float sig = 1.0f / (1.0f + e);
    r.a.outputs.push_back((grad * sig) * (1.0f + x * (1.0f - sig)));
    r.b.outputs.push_back(Silu(grad, x, 0, false));
  }
  const std::string rest = "sig = 1/(1 + e); p = grad*sig; w = 1 + x*(1 - sig); out = p*w";
  r.models = {"taylor: v = -x; e = exp(v) as 1 + v + v*v*0.5; " + rest, "library: v = -x; e = exp(v); " + rest};
  CompareResult result = RunCompare(r);
  ASSERT_GT(result.differing, 0u);
  EXPECT_EQ(result.cause.cause, kCauseFunction) << result.cause.detail;
  EXPECT_EQ(result.cause.model_a, "taylor");
  EXPECT_EQ(result.cause.model_b, "library");
  // Plain arithmetic is another formula.
  r.models[0] = "taylor: v = -x; e = 1 + v + v*v*0.5; " + rest;
  result = RunCompare(r);
  EXPECT_EQ(result.cause.cause, kCauseFormula) << result.cause.detail;
  // With a fused side against it, the written-out exp's values are compared with the free
  // one's at the same argument: far apart, so both causes.
  for (size_t i = 0; i < r.inputs.size(); ++i) r.b.outputs[i] = Silu(r.inputs.columns[0][i], r.inputs.columns[1][i], 0, true);
  r.models = {"taylor: v = -x; e = exp(v) as 1 + v + v*v*0.5; " + rest,
              "library: v = -x; e = exp(v); sig = 1/(1 + e); p = grad*sig; w = fma(x, 1 - sig, 1); out = p*w"};
  result = RunCompare(r);
  EXPECT_EQ(result.cause.cause, std::string(kCauseFusion) + kCauseJoin + kCauseFunction) << result.cause.detail;
  EXPECT_FALSE(result.cause.functions_apart.empty());
}

}  // namespace
}  // namespace ulpgate
