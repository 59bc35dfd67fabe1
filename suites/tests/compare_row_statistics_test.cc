// `compare` on a row reduction whose sides follow none of the schedules'
// models (suites/investigate/compare.h, RunReductionCompare): the cause from
// the outputs with the row statistics set free
// (suites/engine/reductions/row_statistics.h). Planted sides: one epilogue
// with row sums moved by tens of ULPs on some rows (no schedule's sum is that
// far) must give "tree"; the same sums through RMSNorm's other finish (x/s
// against x RN(1/s)) "formula"; softmax's backward multiplied out and
// contracted, as Inductor compiles it, "formula"; outputs moved by noise
// "unknown", with what was searched; log-softmax's log-sum moved "unknown"
// (its statistic absorbs exp and log); log-softmax's backward with an exp of
// its own on both sides, contracted on one, "fusion" (the exp's values set
// free, shared), and with two exps of their own "unknown".

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/reductions/reduction_spec.h"
#include "kernels/reductions/row_ops.h"
#include "kernels/reductions/row_sequences.h"
#include "oracles/ieee_emulation.h"
#include "suites/engine/reductions/row_models.h"
#include "suites/engine/reductions/row_statistics.h"
#include "suites/investigate/compare.h"

namespace ulpgate {
namespace {

constexpr size_t kRows = 4;
constexpr size_t kN = 37;  // odd: no lane count divides it

// One instance of `op` [kRows, kN] with operands drawn from a fixed seed:
// x and dy normal, g near 1, y a softmax-like row of positive values.
ReductionInputSet Inputs(const char* op_name) {
  ReductionInputSet in;
  in.op = FindReductionOp(op_name);
  EXPECT_NE(in.op, nullptr) << op_name;
  in.format = &kBinary32;
  in.shape.rank = 2;
  in.shape[0] = kRows;
  in.shape[1] = kN;
  in.source = "planted";
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> unit(0.5f, 1.5f);
  ReductionInstance instance;
  for (const std::string& name : in.op->operands) {
    const bool weight = name == "g";
    std::vector<float> t(weight ? kN : kRows * kN);
    for (float& v : t) v = name == "g" ? unit(rng) : name == "y" ? unit(rng) / kN : normal(rng);
    instance.operands.push_back(t);
  }
  in.instances.push_back(instance);
  return in;
}

// Every row's outputs by `finish`/`step` from the sequential sums moved by
// shift[r] ULPs (each statistic), MulAdd fused or not.
std::vector<float> Planted(const ReductionInputSet& in, RowFinish finish, RowEpilogueStep step, bool fused,
                           const std::vector<int64_t>& shift) {
  const RowOpInfo& op = *FindRowOp(in.op->name);
  const NativeBinary32Arith unfused(false), arith(fused);
  std::vector<const float*> tensors;
  for (const auto& t : in.instances[0].operands) tensors.push_back(t.data());
  std::vector<float> out;
  for (size_t r = 0; r < kRows; ++r) {
    const RowOperands row = RowOperandsOf(op, tensors, r, kN);
    RowStatistics s = RowStatisticsOf(unfused, op, op.variants.front(), 1, row, kN);
    for (size_t k = 0; k < op.statistics.size(); ++k) {
      s.value[k] = FloatFromOrdered(OrderedFloat(s.value[k]) + shift[r]);
    }
    RowEpilogue(arith, op, finish, step, row, kN, kDefaultRmsNormEps, s, [&](size_t, float y) {
      out.push_back(y);
      return true;
    });
  }
  return out;
}

CompareResult Compare(const ReductionInputSet& in, const std::vector<float>& a, const std::vector<float>& b) {
  ReductionCompareRequest request;
  request.inputs = &in;
  request.a = {"a", "outputs", a, "a", false};
  request.b = {"b", "outputs", b, "b", false};
  return RunReductionCompare(request);
}

TEST(compare_row_statistics, TreeWhereOneEpilogueTakesDifferentRowSums) {
  const ReductionInputSet in = Inputs("rmsnorm_fwd");
  const std::vector<int64_t> none = {20, 20, 20, 20}, moved = {20, 35, 20, 5};
  const auto a = Planted(in, RowFinish::kRsqrt, RowEpilogueStep::kVariant, false, moved);
  const auto b = Planted(in, RowFinish::kRsqrt, RowEpilogueStep::kVariant, false, none);
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_TRUE(r.a.matching.empty()) << "a planted off every schedule";
  EXPECT_EQ(r.cause.cause, kCauseTree) << r.cause.detail;
  EXPECT_EQ(r.cause.basis, "row statistics set free");
  EXPECT_NE(r.cause.detail.find("2 of 4 rows"), std::string::npos) << r.cause.detail;
}

TEST(compare_row_statistics, TreeWithTwoStatisticsPerRow) {
  // RMSNorm's backward: its mean of squares and its mean of RN(g dy) x, both
  // moved on rows 1 and 3.
  const ReductionInputSet in = Inputs("rmsnorm_bwd");
  const auto a = Planted(in, RowFinish::kRsqrt, RowEpilogueStep::kVariant, true, {12, 25, 12, 0});
  const auto b = Planted(in, RowFinish::kRsqrt, RowEpilogueStep::kVariant, true, {12, 12, 12, 12});
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseTree) << r.cause.detail;
  EXPECT_EQ(r.cause.model_a, "rsqrt_fused");
  EXPECT_NE(r.cause.detail.find("2 of 4 rows"), std::string::npos) << r.cause.detail;
}

TEST(compare_row_statistics, FormulaWhereTheSameSumsFinishOtherwise) {
  const ReductionInputSet in = Inputs("rmsnorm_fwd");
  const std::vector<int64_t> shift = {20, -20, 30, 5};
  // x / RN(sqrt v) against x RN(1/RN(sqrt v)): XLA's division by a broadcast value.
  const auto a = Planted(in, RowFinish::kSqrtDivide, RowEpilogueStep::kVariant, false, shift);
  const auto b = Planted(in, RowFinish::kRsqrt, RowEpilogueStep::kVariant, false, shift);
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseFormula) << r.cause.detail;
  EXPECT_EQ(r.cause.model_a.rfind("sqrt_divide", 0), 0u) << r.cause.model_a;
  EXPECT_EQ(r.cause.model_b.rfind("rsqrt", 0), 0u) << r.cause.model_b;
}

TEST(compare_row_statistics, TreeAndFormulaTogether) {
  const ReductionInputSet in = Inputs("rmsnorm_fwd");
  const auto a = Planted(in, RowFinish::kSqrtDivide, RowEpilogueStep::kVariant, false, {20, 35, 20, 20});
  const auto b = Planted(in, RowFinish::kRsqrt, RowEpilogueStep::kVariant, false, {20, 20, 20, 20});
  const CompareResult r = Compare(in, a, b);
  EXPECT_EQ(r.cause.cause, std::string(kCauseTree) + " + " + kCauseFormula) << r.cause.detail;
}

TEST(compare_row_statistics, FormulaWhereSoftmaxBackwardIsMultipliedOut) {
  const ReductionInputSet in = Inputs("softmax_bwd");
  const std::vector<int64_t> shift = {7, 7, -7, 7};
  const auto a = Planted(in, RowFinish::kPlain, RowEpilogueStep::kVariant, false, shift);
  const auto b = Planted(in, RowFinish::kPlain, RowEpilogueStep::kProductDifference, true, shift);
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseFormula) << r.cause.detail;
  EXPECT_EQ(r.cause.model_b, "product_difference_fused");
}

TEST(compare_row_statistics, UnknownWhereNoiseFollowsNoEpilogue) {
  const ReductionInputSet in = Inputs("rmsnorm_fwd");
  const std::vector<int64_t> shift = {20, 20, 20, 20};
  const auto b = Planted(in, RowFinish::kRsqrt, RowEpilogueStep::kVariant, false, shift);
  std::vector<float> a = b;
  std::mt19937 rng(3);
  for (size_t i = 0; i < a.size(); i += 3) a[i] = FloatFromOrdered(OrderedFloat(a[i]) + 1 + rng() % 3);
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseUnknown) << r.cause.detail;
  EXPECT_NE(r.cause.detail.find("no epilogue of rmsnorm_fwd"), std::string::npos) << r.cause.detail;
}

TEST(compare_row_statistics, UnknownWhereTheStatisticAbsorbsFunctions) {
  // log-softmax's elements take Log(S) whole: a sum moved and a log of other
  // code look alike, so the one epilogue with other values is not a tree.
  const ReductionInputSet in = Inputs("log_softmax_fwd");
  const auto a = Planted(in, RowFinish::kPlain, RowEpilogueStep::kVariant, false, {20, 35, 20, 20});
  const auto b = Planted(in, RowFinish::kPlain, RowEpilogueStep::kVariant, false, {20, 20, 20, 20});
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseUnknown) << r.cause.detail;
  EXPECT_NE(r.cause.detail.find("not told apart"), std::string::npos) << r.cause.detail;
}

TEST(compare_row_statistics, FusionWhereBothCallAnotherExp) {
  // Both sides call one exp that is not Highway's (every third value a ULP
  // off), with one row sum; a contracts dy - e G, b rounds the product.
  const ReductionInputSet in = Inputs("log_softmax_bwd");
  const RowOpInfo& op = *FindRowOp("log_softmax_bwd");
  const NativeBinary32Arith unfused(false);
  const row_models_detail::RowFunctionArith<NativeBinary32Arith> highway(unfused);
  std::vector<const float*> tensors;
  for (const auto& t : in.instances[0].operands) tensors.push_back(t.data());
  std::vector<float> a, b;
  for (size_t r = 0; r < kRows; ++r) {
    const RowOperands row = RowOperandsOf(op, tensors, r, kN);
    std::vector<float> e(kN);
    for (size_t i = 0; i < kN; ++i) {
      e[i] = FloatFromOrdered(OrderedFloat(highway.Exp(row.y[i])) + (i % 3 == 0 ? 1 : 0));
    }
    const RowStatistics s = RowStatisticsOf(unfused, op, op.variants.front(), 1, row, kN);
    for (const auto& [step, out] : {std::pair<RowEpilogueStep, std::vector<float>*>{RowEpilogueStep::kContracted, &a},
                                    {RowEpilogueStep::kVariant, &b}}) {
      RowEpilogue(unfused, op, RowFinish::kPlain, step, row, kN, kDefaultRmsNormEps, s,
                  [&, out = out](size_t, float y) {
                    out->push_back(y);
                    return true;
                  },
                  e.data());
    }
  }
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseFusion) << r.cause.detail;
  EXPECT_EQ(r.cause.model_a.rfind("contracted", 0), 0u) << r.cause.model_a;
  EXPECT_NE(r.cause.detail.find("same exp(y) on both sides"), std::string::npos) << r.cause.detail;
}

TEST(compare_row_statistics, SoftmaxFormulaWhereBothCallAnotherExp) {
  // Softmax's sides share one exp of RN(x - max) that is not Highway's
  // (every third value a ULP off) and one row sum; a multiplies by RN(1/S),
  // b divides by S (PyTorch's eager kernel against Inductor's).
  const ReductionInputSet in = Inputs("softmax_fwd");
  const RowOpInfo& op = *FindRowOp("softmax_fwd");
  const NativeBinary32Arith unfused(false);
  const row_models_detail::RowFunctionArith<NativeBinary32Arith> highway(unfused);
  std::vector<const float*> tensors;
  for (const auto& t : in.instances[0].operands) tensors.push_back(t.data());
  std::vector<float> a, b;
  for (size_t r = 0; r < kRows; ++r) {
    const RowOperands row = RowOperandsOf(op, tensors, r, kN);
    const RowStatistics s = RowStatisticsOf(unfused, op, op.variants.front(), 1, row, kN);
    std::vector<float> e(kN);
    for (size_t i = 0; i < kN; ++i) {
      e[i] = FloatFromOrdered(OrderedFloat(highway.Exp(unfused.Sub(row.x[i], s.max))) + (i % 3 == 0 ? 1 : 0));
    }
    for (const auto& [finish, out] : {std::pair<RowFinish, std::vector<float>*>{RowFinish::kReciprocal, &a},
                                      {RowFinish::kDivide, &b}}) {
      RowEpilogue(unfused, op, finish, RowEpilogueStep::kVariant, row, kN, kDefaultRmsNormEps, s,
                  [&, out = out](size_t, float y) {
                    out->push_back(y);
                    return true;
                  },
                  e.data());
    }
  }
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseFormula) << r.cause.detail;
  EXPECT_EQ(r.cause.model_a.rfind("reciprocal", 0), 0u) << r.cause.model_a;
  EXPECT_EQ(r.cause.model_b.rfind("divide", 0), 0u) << r.cause.model_b;
  EXPECT_NE(r.cause.detail.find("same exp(x - max) on both sides"), std::string::npos) << r.cause.detail;
}

TEST(compare_row_statistics, UnknownWhereTheSidesCallDifferentExps) {
  // The control of the shared exponentials: two exps of their own, one
  // epilogue and one sum. No shared value explains both, so no cause.
  const ReductionInputSet in = Inputs("log_softmax_bwd");
  const RowOpInfo& op = *FindRowOp("log_softmax_bwd");
  const NativeBinary32Arith unfused(false);
  const row_models_detail::RowFunctionArith<NativeBinary32Arith> highway(unfused);
  std::vector<const float*> tensors;
  for (const auto& t : in.instances[0].operands) tensors.push_back(t.data());
  std::vector<float> a, b;
  for (size_t r = 0; r < kRows; ++r) {
    const RowOperands row = RowOperandsOf(op, tensors, r, kN);
    std::vector<float> ea(kN), eb(kN);
    for (size_t i = 0; i < kN; ++i) {
      ea[i] = FloatFromOrdered(OrderedFloat(highway.Exp(row.y[i])) + (i % 3 == 0 ? 1 : 0));
      eb[i] = FloatFromOrdered(OrderedFloat(highway.Exp(row.y[i])) + (i % 2 == 0 ? -1 : 0));
    }
    const RowStatistics s = RowStatisticsOf(unfused, op, op.variants.front(), 1, row, kN);
    RowEpilogue(unfused, op, RowFinish::kPlain, RowEpilogueStep::kVariant, row, kN, kDefaultRmsNormEps, s,
                [&](size_t, float y) {
                  a.push_back(y);
                  return true;
                },
                ea.data());
    RowEpilogue(unfused, op, RowFinish::kPlain, RowEpilogueStep::kVariant, row, kN, kDefaultRmsNormEps, s,
                [&](size_t, float y) {
                  b.push_back(y);
                  return true;
                },
                eb.data());
  }
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseUnknown) << r.cause.detail;
  EXPECT_NE(r.cause.detail.find("no pair of epilogues gives both sides"), std::string::npos) << r.cause.detail;
}

TEST(compare_row_statistics, OrderedFloatCountsUlps) {
  EXPECT_EQ(OrderedFloat(1.0f) - OrderedFloat(0x1.fffffep-1f), 1);
  EXPECT_EQ(OrderedFloat(0x1p-149f) - OrderedFloat(-0x1p-149f), 2);
  EXPECT_EQ(FloatFromOrdered(OrderedFloat(-3.5f)), -3.5f);
}

}  // namespace
}  // namespace ulpgate
