// Summation orders as data (suites/engine/reductions/sum_orders.h) and
// `compare` on a row reduction whose sides' exps are written out
// (row_model_fit.h): the orders against sums derived by hand and written
// again from their definitions; planted softmax sides that differ in their
// exp, their order and their epilogue name all three, one that differs in its
// epilogue alone "formula", and a side whose exp no model writes "unknown".

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/reductions/reduction_spec.h"
#include "kernels/reductions/row_ops.h"
#include "kernels/reductions/row_sequences.h"
#include "oracles/format.h"
#include "oracles/ieee_emulation.h"
#include "suites/engine/reductions/row_model_fit.h"
#include "suites/engine/reductions/row_models.h"
#include "suites/engine/reductions/sum_orders.h"
#include "suites/investigate/compare.h"

namespace ulpgate {
namespace {

TEST(SumOrders, NamesAndTheirGrammar) {
  const std::vector<std::string> names = SumOrderNames(256);
  for (const char* want : {"sequential", "accumulators_2_in_turn", "accumulators_256_halving",
                           "accumulators_16_groups_4_halving", "accumulators_128_groups_2_in_turn", "numpy_pairwise",
                           "binary64_rounded_once"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  // Groups only where L G divides the count.
  EXPECT_EQ(std::find(names.begin(), names.end(), "accumulators_128_groups_4_halving"), names.end());
  for (const std::string& n : names) EXPECT_TRUE(IsSumOrder(n)) << n;
  for (const char* bad : {"accumulators_3_in_turn", "accumulators_16_groups_3_halving", "accumulators_16",
                          "accumulators_16_sideways", "accumulators__in_turn", "pairwise", ""}) {
    EXPECT_FALSE(IsSumOrder(bad)) << bad;
    EXPECT_THROW(SumInOrder(bad, std::vector<float>{1.0f, 2.0f}), std::invalid_argument) << bad;
  }
}

TEST(SumOrders, FourTermsByHand) {
  // 1 and three halves of its ULP: 1 + 2^-24 is a tie that rounds to 1
  // (even); 2^-24 + 2^-24 = 2^-23 is exact and 1 + 2^-23 too; 1 + 3 2^-24,
  // halfway between 1 + 2^-23 and 1 + 2^-22, rounds to the even 1 + 2^-22.
  const float h = std::ldexp(1.0f, -24);
  const std::vector<float> t = {1.0f, h, h, h};
  const float one = 1.0f, up1 = 1.0f + std::ldexp(1.0f, -23), up2 = 1.0f + std::ldexp(1.0f, -22);
  EXPECT_EQ(SumInOrder("sequential", t), one);
  EXPECT_EQ(SumInOrder("accumulators_2_in_turn", t), up1);   // (1 + h) + (h + h)
  EXPECT_EQ(SumInOrder("accumulators_2_halving", t), up1);
  EXPECT_EQ(SumInOrder("accumulators_4_in_turn", t), one);   // ((1 + h) + h) + h
  EXPECT_EQ(SumInOrder("accumulators_4_halving", t), up1);   // (1 + h) + (h + h)
  EXPECT_EQ(SumInOrder("numpy_pairwise", t), one);           // under 8 terms: in turn
  EXPECT_EQ(SumInOrder("binary64_rounded_once", t), up2);
}

// YNNPACK's loop and NumPy's pairwise sum written again from their
// descriptions, on random terms: blocks of 16 in groups of 4, then the
// lanes halved; two halves of 128, each 8 accumulators joined in pairs.
TEST(SumOrders, GroupedAndPairwiseAsTheirDefinitions) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> t(256);
    for (float& v : t) v = std::ldexp(u(rng), static_cast<int>(rng() % 20) - 10);
    float lanes[16] = {};
    for (int g = 0; g < 4; ++g) {
      float group[16];
      for (int j = 0; j < 16; ++j) {
        group[j] = t[static_cast<size_t>(64 * g + j)];
        for (int b = 1; b < 4; ++b) group[j] += t[static_cast<size_t>(64 * g + 16 * b + j)];
        lanes[j] = g == 0 ? group[j] : lanes[j] + group[j];
      }
    }
    for (int w = 8; w >= 1; w /= 2) {
      for (int j = 0; j < w; ++j) lanes[j] += lanes[j + w];
    }
    EXPECT_EQ(SumInOrder("accumulators_16_groups_4_halving", t), lanes[0]) << trial;
    auto half = [&](size_t from) {
      float r[8];
      for (size_t k = 0; k < 8; ++k) r[k] = t[from + k];
      for (size_t i = 8; i < 128; i += 8) {
        for (size_t k = 0; k < 8; ++k) r[k] += t[from + i + k];
      }
      return ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    };
    EXPECT_EQ(SumInOrder("numpy_pairwise", t), half(0) + half(128)) << trial;
  }
}

constexpr size_t kRows = 4;
constexpr size_t kN = 64;

ReductionInputSet SoftmaxInputs() {
  ReductionInputSet in;
  in.op = FindReductionOp("softmax_fwd");
  in.format = &kBinary32;
  in.shape.rank = 2;
  in.shape[0] = kRows;
  in.shape[1] = kN;
  in.source = "planted";
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-3.0f, 0.0f);
  ReductionInstance instance;
  std::vector<float> x(kRows * kN);
  for (float& v : x) v = u(rng);
  instance.operands.push_back(x);
  in.instances.push_back(instance);
  return in;
}

// Two "exps" of a kernel's own, apart on some terms: the same quadratic
// rounded twice, and with its steps fused.
const char* kTwice = "two_roundings: out = 1 + z*(1 + z*0.5)";
const char* kFused = "fused_steps: out = fma(z, fma(z, 0.5, 1), 1)";

// Every row's outputs: the terms by `spec`'s program of z = RN(x - max),
// summed in `order`, finished by `finish`.
std::vector<float> PlantedSoftmax(const ReductionInputSet& in, const char* spec, const char* order, RowFinish finish) {
  const RowOpInfo& op = *FindRowOp("softmax_fwd");
  const RowFunctionModel f = ParseRowFunctionModel(op, spec);
  const NativeBinary32Arith arith(false);
  std::vector<const float*> tensors = {in.instances[0].operands[0].data()};
  std::vector<float> out;
  for (size_t r = 0; r < kRows; ++r) {
    const RowOperands row = RowOperandsOf(op, tensors, r, kN);
    float m = row.x[0];
    for (size_t i = 1; i < kN; ++i) m = std::max(m, row.x[i]);
    std::vector<float> e(kN);
    for (size_t i = 0; i < kN; ++i) {
      const double z = row.x[i] - m;
      e[i] = static_cast<float>(f.program->Evaluate(&z));
    }
    RowStatistics s;
    s.max = m;
    s.value[0] = SumInOrder(order, e);
    RowEpilogue(
        arith, op, finish, RowEpilogueStep::kVariant, row, kN, kDefaultRmsNormEps, s,
        [&](size_t, float y) {
          out.push_back(y);
          return true;
        },
        e.data());
  }
  return out;
}

CompareResult CompareWith(const ReductionInputSet& in, const std::vector<float>& a, const std::vector<float>& b,
                          const std::vector<const char*>& specs) {
  ReductionCompareRequest request;
  request.inputs = &in;
  request.a = {"a", "outputs", a, "a", false};
  request.b = {"b", "outputs", b, "b", false};
  for (const char* spec : specs) request.row_functions.push_back(ParseRowFunctionModel(*FindRowOp("softmax_fwd"), spec));
  return RunReductionCompare(request);
}

TEST(CompareRowModels, ExpOrderAndEpilogueEachNamed) {
  const ReductionInputSet in = SoftmaxInputs();
  const auto a = PlantedSoftmax(in, kTwice, "numpy_pairwise", RowFinish::kDivide);
  const auto b = PlantedSoftmax(in, kFused, "accumulators_16_groups_4_halving", RowFinish::kReciprocal);
  const CompareResult r = CompareWith(in, a, b, {kTwice, kFused});
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.basis, "row models") << r.cause.detail;
  EXPECT_EQ(r.cause.cause, "tree + formula + function implementation") << r.cause.detail;
  ASSERT_EQ(r.cause.row_models.size(), 2u);
  EXPECT_EQ(r.cause.row_models[0].function, "two_roundings");
  EXPECT_EQ(r.cause.row_models[1].function, "fused_steps");
  EXPECT_EQ(r.cause.row_models[0].epilogue, "divide_unfused");
  EXPECT_EQ(r.cause.row_models[1].epilogue, "reciprocal_unfused");
  EXPECT_NE(r.cause.detail.find("no one order gives both sides"), std::string::npos) << r.cause.detail;
  // The order found gives the side's statistic on every row.
  EXPECT_EQ(r.cause.row_models[0].statistic.size(), kRows);
}

TEST(CompareRowModels, OneExpAndOneOrderPartOnTheirEpilogueAlone) {
  const ReductionInputSet in = SoftmaxInputs();
  const auto a = PlantedSoftmax(in, kFused, "numpy_pairwise", RowFinish::kDivide);
  const auto b = PlantedSoftmax(in, kFused, "numpy_pairwise", RowFinish::kReciprocal);
  const CompareResult r = CompareWith(in, a, b, {kTwice, kFused});
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseFormula) << r.cause.detail;
  EXPECT_EQ(r.cause.model_a.substr(0, 11), "fused_steps") << r.cause.model_a;
}

TEST(CompareRowModels, UnknownWhereNoModelWritesASidesExp) {
  const ReductionInputSet in = SoftmaxInputs();
  const auto a = PlantedSoftmax(in, kTwice, "numpy_pairwise", RowFinish::kDivide);
  const auto b = PlantedSoftmax(in, kFused, "sequential", RowFinish::kDivide);
  const CompareResult r = CompareWith(in, a, b, {kFused});
  ASSERT_GT(r.differing, 0u);
  EXPECT_EQ(r.cause.cause, kCauseUnknown) << r.cause.detail;
  EXPECT_NE(r.cause.detail.find("no model gives a's outputs"), std::string::npos) << r.cause.detail;
}

TEST(CompareRowModels, AModelMustWriteItsFunctionOut) {
  const RowOpInfo& softmax = *FindRowOp("softmax_fwd");
  EXPECT_THROW(ParseRowFunctionModel(softmax, "free: out = exp(z)"), std::invalid_argument);
  EXPECT_THROW(ParseRowFunctionModel(*FindRowOp("rmsnorm_fwd"), "m: out = z"), std::invalid_argument);
  EXPECT_NO_THROW(ParseRowFunctionModel(softmax, "written: out = exp(z) as 1 + z"));
  // Softmax's terms are fitted only with an exp written out.
  const ReductionInputSet in = SoftmaxInputs();
  EXPECT_THROW(SearchRowModels(in, std::vector<float>(kRows * kN), {}), std::invalid_argument);
}

}  // namespace
}  // namespace ulpgate
