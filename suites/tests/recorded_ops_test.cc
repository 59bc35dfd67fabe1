// The causes drift --compare names between two implementations' models of an
// op (suites/investigate/recorded_ops.h): read from the models' tables, so a
// multiply-add fused in one is fusion even where the fused sequence is written
// as another variant (mulsub_fma's NegMulAdd is mulsub's 1 - t*t), binary32
// opmath against per-op rounding is the rounding format, another sequence is
// the formula, another summation order the tree; and between two recorded ops
// a model in common is none, a side that follows none settles only with
// evidence.
#include "suites/investigate/recorded_ops.h"

#include <gtest/gtest.h>

#include "oracles/format.h"

namespace ulpgate {
namespace {

std::vector<ModelCause> Causes(const std::string& op, const FloatFormat& format, const std::string& a,
                               const std::string& b) {
  const auto causes = ModelDifference(op, format, a, b);
  EXPECT_TRUE(causes.has_value()) << op << ": " << a << " or " << b << " is not a model";
  return causes.value_or(std::vector<ModelCause>{});
}

using C = ModelCause;

TEST(RecordedOps, TanhBwdBinary32Causes) {
  EXPECT_EQ(Causes("tanh_bwd", kBinary32, "mulsub_fused", "mulsub"), std::vector<C>{C::kFusion});
  EXPECT_EQ(Causes("tanh_bwd", kBinary32, "mac_fused", "mac_unfused"), std::vector<C>{C::kFusion});
  EXPECT_EQ(Causes("tanh_bwd", kBinary32, "mac_left_fused", "mac_left_unfused"),
            std::vector<C>{C::kFusion});
  EXPECT_EQ(Causes("tanh_bwd", kBinary32, "mac_unfused", "mulsub"), std::vector<C>{C::kFormula});
  EXPECT_EQ(Causes("tanh_bwd", kBinary32, "mac_fused", "mulsub"),
            (std::vector<C>{C::kFormula, C::kFusion}));
  EXPECT_EQ(Causes("tanh_bwd", kBinary32, "mulsub", "mulsub"), std::vector<C>{});
  EXPECT_FALSE(ModelDifference("tanh_bwd", kBinary32, "mulsub", "no_such_model").has_value());
}

TEST(RecordedOps, TanhBwdNarrowCauses) {
  EXPECT_EQ(Causes("tanh_bwd", kBFloat16, "mulsub_opmath", "mulsub_per_op"),
            std::vector<C>{C::kRoundingFormat});
  EXPECT_EQ(Causes("tanh_bwd", kBFloat16, "mulsub_opmath", "mulsub_fused_opmath"),
            std::vector<C>{C::kFusion});
  EXPECT_EQ(Causes("tanh_bwd", kBFloat16, "mac_unfused_opmath", "mulsub_opmath"),
            std::vector<C>{C::kFormula});
}

TEST(RecordedOps, ReductionCauses) {
  EXPECT_EQ(Causes("linear_fwd", kBinary32, "sequential_fused", "sequential_unfused"),
            std::vector<C>{C::kFusion});
  EXPECT_EQ(Causes("linear_fwd", kBinary32, "sequential_unfused", "pairwise"), std::vector<C>{C::kTree});
  EXPECT_EQ(Causes("linear_fwd", kBinary32, "lane_parallel_x8_fused", "lane_parallel_x16_fused"),
            std::vector<C>{C::kTree});
}

RecordedOpModels Recorded(std::vector<std::string> matching, std::string nearest = "",
                          uint64_t above_bound = 0, const std::string& dtype = "f32") {
  RecordedOpModels m;
  m.op.op = "tanh_bwd";
  m.op.dtype = dtype;
  m.outputs = 320;
  m.matching = std::move(matching);
  m.nearest = std::move(nearest);
  m.above_bound = above_bound;
  return m;
}

TEST(RecordedOps, CompareOpModels) {
  // The seed's finding: eager multiply-add fused, compiled not.
  OpModelDifference d = CompareOpModels(Recorded({"mulsub_fused"}), Recorded({"mulsub"}));
  ASSERT_TRUE(d.cause.has_value());
  EXPECT_EQ(*d.cause, C::kFusion);
  EXPECT_EQ(d.evidence, "models");
  EXPECT_EQ(d.model_a, "mulsub_fused");
  EXPECT_EQ(d.model_b, "mulsub");
  // A model in common: none.
  d = CompareOpModels(Recorded({"mac_fused", "mulsub"}), Recorded({"mulsub"}));
  EXPECT_EQ(d.cause, std::optional<C>(C::kNone));
  // The pair that parts in the fewest places is the one named.
  d = CompareOpModels(Recorded({"mac_fused", "mulsub_fused"}), Recorded({"mulsub"}));
  EXPECT_EQ(d.cause, std::optional<C>(C::kFusion));
  EXPECT_EQ(d.model_a, "mulsub_fused");
  // One follows none: fusion only with evidence.
  d = CompareOpModels(Recorded({"mulsub"}), Recorded({}, "mac_fused", 0));
  EXPECT_FALSE(d.cause.has_value());
  d = CompareOpModels(Recorded({"mulsub"}), Recorded({}, "mulsub", 0));
  EXPECT_EQ(d.cause, std::optional<C>(C::kFusion));
  EXPECT_EQ(d.evidence, "nearest model");
  d = CompareOpModels(Recorded({"mulsub"}), Recorded({}, "mac_fused", 5));
  EXPECT_EQ(d.cause, std::optional<C>(C::kFusion));
  EXPECT_EQ(d.evidence, "exceeds bound");
  // Above the bound in bf16 could be per-op rounding: not settled.
  d = CompareOpModels(Recorded({"mulsub_opmath"}, "", 0, "bf16"),
                      Recorded({}, "mac_per_op", 5, "bf16"));
  EXPECT_FALSE(d.cause.has_value());
}

TEST(RecordedOps, CauseNames) {
  for (C c : {C::kNone, C::kFusion, C::kRoundingFormat, C::kFormula, C::kFunctionImplementation,
              C::kFlushToZero, C::kTree}) {
    EXPECT_EQ(ParseModelCause(ModelCauseName(c)), std::optional<C>(c));
  }
  EXPECT_STREQ(ModelCauseName(C::kRoundingFormat), "rounding format");
  EXPECT_FALSE(ParseModelCause("fused").has_value());
}

}  // namespace
}  // namespace ulpgate
