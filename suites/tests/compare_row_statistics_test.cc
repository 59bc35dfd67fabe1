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
// free, shared), and with two exps of their own "unknown". In 16 bits, every
// operation and the exp rounded to the format (NumPy's, ml_dtypes', XLA's):
// softmax divided against multiplied by RN16(1/S) "formula"; sums many bf16
// values apart "rounding format", one value apart (two binary32 sums rounded
// to neighbours) "tree"; RMSNorm's x / RN16(sqrt v) against x RN16(rsqrt v)
// "formula"; log-softmax's bf16 sums eight values apart "rounding format"
// (farther than exps and logs within 4 ULPs could move them), three apart
// "unknown"; its sum and log kept in bf16 against binary32 ones (ATen's
// kernel against Inductor's) "rounding format". Beside the row reductions, two other looks at saved outputs: a
// plain sum (linear_bwd_bias) by the binary32 orders of its terms, "tree",
// and "unknown" where a side is the binary64 sum rounded once; a bf16
// product whose bias joins after its rounding, "rounding format".

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/reductions/reduction_spec.h"
#include "kernels/reductions/row_ops.h"
#include "kernels/reductions/row_sequences.h"
#include "oracles/format.h"
#include "oracles/highway_math.h"
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

// One epilogue of a row op: a variant's finish, or a declared form's step.
struct Epilogue {
  RowFinish finish;
  RowEpilogueStep step;
};

// Two sides of `op` that call an exp of their own (every third value a ULP
// above Highway's; of y for log-softmax backward, of RN(x - max) for softmax)
// with one row sum, finished by `ea` and `eb`; unless `shared`, b's exp is
// another (every other value a ULP below Highway's).
std::array<std::vector<float>, 2> SidesWithAnotherExp(const ReductionInputSet& in, const RowOpInfo& op, Epilogue ea,
                                                      Epilogue eb, bool shared = true) {
  const NativeBinary32Arith unfused(false);
  const row_models_detail::RowFunctionArith<NativeBinary32Arith> highway(unfused);
  std::vector<const float*> tensors;
  for (const auto& t : in.instances[0].operands) tensors.push_back(t.data());
  std::array<std::vector<float>, 2> sides;
  for (size_t r = 0; r < kRows; ++r) {
    const RowOperands row = RowOperandsOf(op, tensors, r, kN);
    const RowStatistics s = RowStatisticsOf(unfused, op, op.variants.front(), 1, row, kN);
    std::array<std::vector<float>, 2> e{std::vector<float>(kN), std::vector<float>(kN)};
    for (size_t i = 0; i < kN; ++i) {
      const float argument = op.op == RowOp::kSoftmaxFwd ? unfused.Sub(row.x[i], s.max) : row.y[i];
      const int64_t nearest = OrderedFloat(highway.Exp(argument));
      e[0][i] = FloatFromOrdered(nearest + (i % 3 == 0 ? 1 : 0));
      e[1][i] = shared ? e[0][i] : FloatFromOrdered(nearest + (i % 2 == 0 ? -1 : 0));
    }
    for (int side = 0; side < 2; ++side) {
      const Epilogue& ep = side == 0 ? ea : eb;
      RowEpilogue(unfused, op, ep.finish, ep.step, row, kN, kDefaultRmsNormEps, s,
                  [&](size_t, float y) {
                    sides[side].push_back(y);
                    return true;
                  },
                  e[side].data());
    }
  }
  return sides;
}

TEST(compare_row_statistics, FusionWhereBothCallAnotherExp) {
  // Both sides call one exp that is not Highway's, with one row sum; a
  // contracts dy - e G, b rounds the product.
  const ReductionInputSet in = Inputs("log_softmax_bwd");
  const auto [a, b] = SidesWithAnotherExp(in, *FindRowOp("log_softmax_bwd"),
                                             {RowFinish::kPlain, RowEpilogueStep::kContracted},
                                             {RowFinish::kPlain, RowEpilogueStep::kVariant});
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseFusion) << r.cause.detail;
  EXPECT_EQ(r.cause.model_a.rfind("contracted", 0), 0u) << r.cause.model_a;
  EXPECT_NE(r.cause.detail.find("same exp(y) on both sides"), std::string::npos) << r.cause.detail;
}

TEST(compare_row_statistics, SoftmaxFormulaWhereBothCallAnotherExp) {
  // Softmax's sides share one exp of RN(x - max) that is not Highway's and
  // one row sum; a multiplies by RN(1/S), b divides by S (PyTorch's eager
  // kernel against Inductor's).
  const ReductionInputSet in = Inputs("softmax_fwd");
  const auto [a, b] = SidesWithAnotherExp(in, *FindRowOp("softmax_fwd"),
                                             {RowFinish::kReciprocal, RowEpilogueStep::kVariant},
                                             {RowFinish::kDivide, RowEpilogueStep::kVariant});
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
  const auto [a, b] = SidesWithAnotherExp(in, *FindRowOp("log_softmax_bwd"),
                                          {RowFinish::kPlain, RowEpilogueStep::kVariant},
                                          {RowFinish::kPlain, RowEpilogueStep::kVariant}, false);
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseUnknown) << r.cause.detail;
  EXPECT_NE(r.cause.detail.find("no pair of epilogues gives both sides"), std::string::npos) << r.cause.detail;
}

// Softmax in a 16-bit format as NumPy's float16 and ml_dtypes' bfloat16
// compute it and XLA's 16-bit code (every operation in binary32, its result
// rounded to the format, exp included: e_i = RN16(Exp(RN16(x_i - M)))), each
// row's sum of the e_i in binary32 rounded once to the format and moved by
// steps[r] of the format's values, then each e_i divided by the sum or
// multiplied by RN16(1/S). Written out here, not through RowEpilogue, so
// that the search's per-op arithmetic is held to it.
ReductionInputSet Inputs16(const FloatFormat& format) {
  ReductionInputSet in = Inputs("softmax_fwd");
  in.format = &format;
  for (float& v : in.instances[0].operands[0]) v = static_cast<float>(RoundToFormat(format, 2.0 * v));
  return in;
}

std::vector<float> PlantedSoftmax16(const ReductionInputSet& in, bool reciprocal, const std::vector<int>& steps) {
  const FloatFormat& f = *in.format;
  auto round = [&](float v) { return static_cast<float>(RoundToFormat(f, static_cast<double>(v))); };
  const std::vector<float>& x = in.instances[0].operands[0];
  std::vector<float> out;
  for (size_t r = 0; r < kRows; ++r) {
    const float* row = x.data() + r * kN;
    float max = row[0];
    for (size_t i = 1; i < kN; ++i) max = row[i] > max ? row[i] : max;
    std::vector<float> e(kN);
    float sum = 0;
    for (size_t i = 0; i < kN; ++i) {
      e[i] = round(ExpOfSequences(round(row[i] - max), false));
      sum += e[i];
    }
    // A 16-bit value's neighbours: 2^(24 - p) binary32 values on.
    const float s = FloatFromOrdered(OrderedFloat(round(sum)) + steps[r] * (int64_t{1} << (24 - f.precision)));
    const float inverse = round(1.0f / s);
    for (size_t i = 0; i < kN; ++i) out.push_back(round(reciprocal ? e[i] * inverse : e[i] / s));
  }
  return out;
}

TEST(compare_row_statistics, FormulaWhereSixteenBitSoftmaxMultipliesByTheReciprocal) {
  // JAX's f16 softmax: NumPy divides, XLA multiplies by the rounded
  // reciprocal; exp and the sums agree.
  const ReductionInputSet in = Inputs16(kBinary16);
  const auto a = PlantedSoftmax16(in, false, {0, 0, 0, 0});
  const auto b = PlantedSoftmax16(in, true, {0, 0, 0, 0});
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseFormula) << r.cause.detail;
  EXPECT_EQ(r.cause.model_a, "divide_unfused_per_op") << r.cause.detail;
  EXPECT_EQ(r.cause.model_b, "reciprocal_unfused_per_op") << r.cause.detail;
  EXPECT_NE(r.cause.detail.find("every row's statistics can be the same"), std::string::npos) << r.cause.detail;
}

TEST(compare_row_statistics, RoundingFormatWhereSixteenBitSumsPartFarThanOneRounding) {
  // NumPy's bf16 sum rounds every addition: rows' sums many bf16 values
  // from a binary32 sum's rounding.
  const ReductionInputSet in = Inputs16(kBFloat16);
  const auto a = PlantedSoftmax16(in, false, {0, 6, 0, -5});
  const auto b = PlantedSoftmax16(in, false, {0, 0, 0, 0});
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseRoundingFormat) << r.cause.detail;
  EXPECT_EQ(r.cause.model_a, "divide_unfused_per_op") << r.cause.detail;
}

TEST(compare_row_statistics, TreeWhereSixteenBitSumsPartByOneRounding) {
  // Two binary32 sums a few ULPs apart can round to neighbouring bf16
  // values: one value apart is no evidence of a narrower accumulator.
  const ReductionInputSet in = Inputs16(kBFloat16);
  const auto a = PlantedSoftmax16(in, false, {0, 1, 0, -1});
  const auto b = PlantedSoftmax16(in, false, {0, 0, 0, 0});
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseTree) << r.cause.detail;
}

TEST(compare_row_statistics, FormulaWhereSixteenBitRmsNormTakesRsqrtAsOneOperation) {
  // JAX's f16 RMSNorm: NumPy's x / RN16(sqrt v) against XLA's x * RN16(rsqrt v),
  // the reciprocal square root computed in binary32 and rounded once; one
  // mean, every operation rounded to f16. Written out here.
  ReductionInputSet in = Inputs("rmsnorm_fwd");
  in.format = &kBinary16;
  for (auto& t : in.instances[0].operands) {
    for (float& v : t) v = static_cast<float>(RoundToFormat(kBinary16, v));
  }
  auto round = [](float v) { return static_cast<float>(RoundToFormat(kBinary16, static_cast<double>(v))); };
  const std::vector<float>& x = in.instances[0].operands[0];
  const std::vector<float>& g = in.instances[0].operands[1];
  std::vector<float> a, b;
  for (size_t r = 0; r < kRows; ++r) {
    float sum = 0;
    for (size_t i = 0; i < kN; ++i) sum += round(x[r * kN + i] * x[r * kN + i]);
    const float v = round(round(round(sum) / static_cast<float>(kN)) + kDefaultRmsNormEps);
    const float root = round(std::sqrt(v)), inverse = round(1.0f / std::sqrt(v));
    for (size_t i = 0; i < kN; ++i) {
      a.push_back(round(round(x[r * kN + i] / root) * g[i]));
      b.push_back(round(round(x[r * kN + i] * inverse) * g[i]));
    }
  }
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseFormula) << r.cause.detail;
  EXPECT_EQ(r.cause.model_a, "sqrt_divide_unfused_per_op") << r.cause.detail;
  EXPECT_EQ(r.cause.model_b, "rsqrt_function_unfused_per_op") << r.cause.detail;
}

TEST(compare_row_statistics, RsqrtFunctionIsSearchedPerOpAlone) {
  // In binary32 it is the rsqrt finish: not a candidate of its own there.
  const RowOpInfo& op = *FindRowOp("rmsnorm_fwd");
  for (const RowEpilogueCandidate& c : RowEpilogueCandidates(op)) EXPECT_NE(c.form, "rsqrt_function");
  size_t found = 0;
  for (const RowEpilogueCandidate& c : RowEpilogueCandidates(op, true)) found += c.form == "rsqrt_function";
  EXPECT_EQ(found, 2u);
}

// Log-softmax in bf16 three ways, from the row sum S of Exp(z_k):
// kPerOp, every operation, exp and log rounded to the format (NumPy's,
// ml_dtypes'): z_i = RN16(x_i - M), the exps rounded, S rounded and moved by
// steps[r] values of the format, y_i = RN16(z_i - RN16(Log(S)));
// kSumAndLogInFormat, ATen's kernel: z_i = RN(x_i - M) in binary32, S and
// its log kept in the format, y_i = RN16(RN(z_i - RN16(Log(RN16(S)))));
// kBinary32, Inductor's code: y_i = RN16(RN(z_i - Log(S))).
enum class LogSoftmax16 { kPerOp, kSumAndLogInFormat, kBinary32 };

std::vector<float> PlantedLogSoftmax16(const ReductionInputSet& in, LogSoftmax16 kind,
                                       const std::vector<int>& steps = {0, 0, 0, 0}) {
  const FloatFormat& f = *in.format;
  auto round = [&](float v) { return static_cast<float>(RoundToFormat(f, static_cast<double>(v))); };
  const bool per_op = kind == LogSoftmax16::kPerOp;
  auto op = [&](float v) { return per_op ? round(v) : v; };
  const std::vector<float>& x = in.instances[0].operands[0];
  std::vector<float> out;
  for (size_t r = 0; r < kRows; ++r) {
    const float* row = x.data() + r * kN;
    float max = row[0];
    for (size_t i = 1; i < kN; ++i) max = row[i] > max ? row[i] : max;
    float sum = 0;
    for (size_t i = 0; i < kN; ++i) sum += op(ExpOfSequences(op(row[i] - max), false));
    float s = kind == LogSoftmax16::kBinary32 ? sum : round(sum);
    s = FloatFromOrdered(OrderedFloat(s) + steps[r] * (int64_t{1} << (24 - f.precision)));
    const float log_sum = kind == LogSoftmax16::kBinary32 ? HighwayLog(s, false) : round(HighwayLog(s, false));
    for (size_t i = 0; i < kN; ++i) out.push_back(round(op(row[i] - max) - log_sum));
  }
  return out;
}

ReductionInputSet LogSoftmaxInputs16() {
  ReductionInputSet in = Inputs("log_softmax_fwd");
  in.format = &kBFloat16;
  for (float& v : in.instances[0].operands[0]) v = static_cast<float>(RoundToFormat(kBFloat16, 2.0 * v));
  return in;
}

TEST(compare_row_statistics, RoundingFormatWhereBf16LogSumsPartFartherThanTheirFunctionsCan) {
  // JAX's bf16 log-softmax: NumPy's sum rounds every addition. The
  // statistic absorbs exp and log, but exps and logs within 4 ULPs, rounded
  // to bf16, move it by a value of the format or so, not by eight.
  const ReductionInputSet in = LogSoftmaxInputs16();
  const auto a = PlantedLogSoftmax16(in, LogSoftmax16::kPerOp, {0, 8, 0, -8});
  const auto b = PlantedLogSoftmax16(in, LogSoftmax16::kPerOp);
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseRoundingFormat) << r.cause.detail;
  EXPECT_EQ(r.cause.model_a, "plain_unfused_per_op") << r.cause.detail;
}

TEST(compare_row_statistics, UnknownWhereBf16LogSumsPartAsTheirFunctionsCould) {
  // A few values of the format apart: another log could give that.
  const ReductionInputSet in = LogSoftmaxInputs16();
  const auto a = PlantedLogSoftmax16(in, LogSoftmax16::kPerOp, {0, 3, 0, -3});
  const auto b = PlantedLogSoftmax16(in, LogSoftmax16::kPerOp);
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseUnknown) << r.cause.detail;
  EXPECT_NE(r.cause.detail.find("not told apart"), std::string::npos) << r.cause.detail;
}

TEST(compare_row_statistics, RoundingFormatWhereOneSideKeepsItsLogSumInBf16) {
  // One sum on both sides: the rows part only where ATen's rounded sum and
  // log do, so no row's sums are apart once b's is rounded as a's was.
  const ReductionInputSet in = LogSoftmaxInputs16();
  const auto a = PlantedLogSoftmax16(in, LogSoftmax16::kSumAndLogInFormat);
  const auto b = PlantedLogSoftmax16(in, LogSoftmax16::kBinary32);
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseRoundingFormat) << r.cause.detail;
  EXPECT_EQ(r.cause.model_a, "statistic_in_format_unfused") << r.cause.detail;
  EXPECT_EQ(r.cause.model_b, "plain_unfused") << r.cause.detail;
  EXPECT_NE(r.cause.detail.find("every row's statistics can be the same"), std::string::npos) << r.cause.detail;
}

// A plain sum (linear_bwd_bias: db[o] = sum_b dy[b, o]) whose sides follow
// no schedule: the binary32 orders of the terms that give each side. Eager
// ATen's 4 strided accumulators added in turn against a sequential loop;
// the control, a binary64 accumulator rounded once, is not told from an order.
ReductionInputSet BiasInputs() {
  ReductionInputSet in;
  in.op = FindReductionOp("linear_bwd_bias");
  in.format = &kBinary32;
  in.shape.rank = 3;
  in.shape[0] = 16;  // B: the terms of each sum
  in.shape[1] = 4;
  in.shape[2] = 12;  // OUT: the sums
  in.source = "planted";
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  ReductionInstance instance;
  std::vector<float> dy(16 * 12);
  for (float& v : dy) v = normal(rng) * (rng() % 4 == 0 ? 1024.0f : 1.0f);
  instance.operands.push_back(dy);
  in.instances.push_back(instance);
  return in;
}

// Each column's sum, written out here: `lanes` accumulators (term b into
// b mod lanes) added in turn, or binary64 rounded once.
std::vector<float> ColumnSums(const ReductionInputSet& in, size_t lanes, bool binary64) {
  const std::vector<float>& dy = in.instances[0].operands[0];
  std::vector<float> out;
  for (size_t o = 0; o < 12; ++o) {
    double wide = 0;
    std::vector<float> acc(lanes, 0.0f);
    for (size_t b = 0; b < 16; ++b) {
      acc[b % lanes] += dy[b * 12 + o];
      wide += dy[b * 12 + o];
    }
    float sum = acc[0];
    for (size_t j = 1; j < lanes; ++j) sum += acc[j];
    out.push_back(binary64 ? static_cast<float>(wide) : sum);
  }
  return out;
}

TEST(compare_sum_orders, TreeWhereEachSideIsAnOrderOfBinary32Additions) {
  const ReductionInputSet in = BiasInputs();
  const auto a = ColumnSums(in, 4, false), b = ColumnSums(in, 1, false);
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_TRUE(r.a.matching.empty()) << "a planted off every schedule";
  EXPECT_EQ(r.cause.cause, kCauseTree) << r.cause.detail;
  EXPECT_EQ(r.cause.basis, "summation orders");
  EXPECT_EQ(r.cause.model_a, "accumulators_4_in_turn") << r.cause.detail;
  EXPECT_EQ(r.cause.model_b, "sequential") << r.cause.detail;
}

TEST(compare_sum_orders, UnknownWhereASideIsTheBinary64SumRoundedOnce) {
  const ReductionInputSet in = BiasInputs();
  const auto a = ColumnSums(in, 1, true), b = ColumnSums(in, 1, false);
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseUnknown) << r.cause.detail;
  EXPECT_NE(r.cause.detail.find("binary64_rounded_once"), std::string::npos) << r.cause.detail;
}

// A product and its bias in bf16 (linear_fwd): NumPy's matmul answers in
// binary32 and the bias joins before the one rounding; XLA rounds the
// product to bf16, then the sum. Written out here: the sequential sum of
// rounded products.
TEST(compare_bias_rounding, RoundingFormatWhereTheProductIsRoundedBeforeTheBias) {
  ReductionInputSet in;
  in.op = FindReductionOp("linear_fwd");
  in.format = &kBFloat16;
  in.shape.rank = 3;
  in.shape[0] = 4;   // B
  in.shape[1] = 16;  // IN
  in.shape[2] = 6;   // OUT
  in.source = "planted";
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto bf16 = [](float v) { return static_cast<float>(RoundToFormat(kBFloat16, static_cast<double>(v))); };
  ReductionInstance instance;
  for (const size_t count : {size_t{4 * 16}, size_t{6 * 16}, size_t{6}}) {
    std::vector<float> t(count);
    for (float& v : t) v = bf16(normal(rng) * 4.0f);
    instance.operands.push_back(t);
  }
  in.instances.push_back(instance);
  const auto& x = in.instances[0].operands[0];
  const auto& w = in.instances[0].operands[1];
  const auto& bias = in.instances[0].operands[2];
  std::vector<float> a, b;
  for (size_t i = 0; i < 4; ++i) {
    for (size_t o = 0; o < 6; ++o) {
      float dot = 0;
      for (size_t k = 0; k < 16; ++k) dot += x[i * 16 + k] * w[o * 16 + k];
      a.push_back(bf16(dot + bias[o]));
      b.push_back(bf16(bf16(dot) + bias[o]));
    }
  }
  const CompareResult r = Compare(in, a, b);
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseRoundingFormat) << r.cause.detail;
  EXPECT_EQ(r.cause.basis, "bias after the product's rounding") << r.cause.detail;
  EXPECT_EQ(r.cause.model_b, r.cause.model_a + "+rounded_product") << r.cause.detail;
}

TEST(compare_row_statistics, OrderedFloatCountsUlps) {
  EXPECT_EQ(OrderedFloat(1.0f) - OrderedFloat(0x1.fffffep-1f), 1);
  EXPECT_EQ(OrderedFloat(0x1p-149f) - OrderedFloat(-0x1p-149f), 2);
  EXPECT_EQ(FloatFromOrdered(OrderedFloat(-3.5f)), -3.5f);
}

}  // namespace
}  // namespace ulpgate
