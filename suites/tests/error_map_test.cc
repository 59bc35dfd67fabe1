// Error maps (`run --by`): buckets follow the real line, the map partitions
// the case's statistics exactly, recomputes from the outputs, does not depend
// on the thread count, and shows tanh_bwd's error living next to |t| = 1.
#include "suites/tests/tanh_bwd_kernels.h"
#include "suites/engine/error_map.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "oracles/float_text.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/tanh_bwd_oracle.h"
#include "suites/inputs/tanh_bwd_suites.h"

namespace ulpgate {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(ErrorMapTest, BucketsFollowTheRealLine) {
  const float ordered[] = {-kInf, -0x1.fffffep127f, -1.5f, -1.0f, -0.75f, -0x1p-126f,
                           -0x1p-149f, -0.0f, 0.0f, 0x1p-149f, 0x1.fffffcp-127f, 0x1p-126f,
                           0.75f, 1.0f, 0x1.fffffep127f, kInf,
                           std::numeric_limits<float>::quiet_NaN()};
  for (size_t i = 1; i < std::size(ordered); ++i) {
    EXPECT_LE(BinadeBucket(ordered[i - 1]), BinadeBucket(ordered[i])) << HexFloat(ordered[i]);
  }
  EXPECT_EQ(BinadeBucket(-1.5f), BinadeBucket(-1.0f));
  EXPECT_NE(BinadeBucket(-0.0f), BinadeBucket(0.0f));
  EXPECT_EQ(BinadeLabel(BinadeBucket(0.75f)), "[2^-1, 2^0)");
  EXPECT_EQ(BinadeLabel(BinadeBucket(0x1.fffffep-1f)), "[2^-1, 2^0)");
  EXPECT_EQ(BinadeLabel(BinadeBucket(-0.75f)), "(-2^0, -2^-1]");
  EXPECT_EQ(BinadeLabel(BinadeBucket(1.0f)), "[2^0, 2^1)");
  EXPECT_EQ(BinadeLabel(BinadeBucket(0x1p-126f)), "[2^-126, 2^-125)");
  EXPECT_EQ(BinadeLabel(BinadeBucket(0x1p-130f)), "(0, 2^-126)");
  EXPECT_EQ(BinadeLabel(BinadeBucket(-0x1p-130f)), "(-2^-126, 0)");
  EXPECT_EQ(BinadeLabel(BinadeBucket(0x1.fffffep127f)), "[2^127, 2^128)");
  EXPECT_EQ(BinadeLabel(BinadeBucket(-0.0f)), "-0");
  EXPECT_EQ(BinadeLabel(BinadeBucket(-kInf)), "-inf");
  EXPECT_EQ(BinadeLabel(BinadeBucket(std::numeric_limits<float>::quiet_NaN())), "NaN");
}

std::vector<CaseResult> RunMapped(const InputSet& inputs, unsigned threads, bool keep_outputs) {
  RunOptions options;
  options.map_operand = 1;  // t
  options.threads = threads;
  options.keep_outputs = keep_outputs;
  return RunTanhBwd(inputs, options);
}

TEST(ErrorMapTest, PartitionsTheStatisticsAndRecomputesFromOutputs) {
  const InputSet inputs = GenerateTanhBwdSuite("adversarial", 3, 9000);  // specials included
  const std::vector<CaseResult> results = RunMapped(inputs, 2, true);
  for (const CaseResult& r : results) {
    SCOPED_TRACE(r.variant + "@" + r.target);
    EXPECT_EQ(r.map_operand, "t");
    uint64_t n = 0, special = 0, correct = 0;
    double max_ulp = -1;
    int64_t max_index = -1;
    for (const auto& [bucket, b] : r.error_map) {
      n += b.n;
      special += b.special_mismatch;
      correct += b.correctly_rounded;
      if (b.max_index >= 0) {
        EXPECT_EQ(BinadeBucket(inputs.columns[1][b.max_index]), bucket);
        if (b.max_ulp > max_ulp || (b.max_ulp == max_ulp && b.max_index < max_index)) {
          max_ulp = b.max_ulp;
          max_index = b.max_index;
        }
      }
    }
    EXPECT_EQ(n, r.stats.n());
    EXPECT_EQ(special, r.stats.special_mismatch());
    EXPECT_EQ(correct, r.stats.correctly_rounded());
    EXPECT_EQ(max_ulp, r.stats.max_ulp());
    EXPECT_EQ(max_index, r.stats.max_index());
    // Each bucket, recomputed from the kept outputs.
    ErrorMap recomputed;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const float grad = inputs.columns[0][i], t = inputs.columns[1][i];
      recomputed[BinadeBucket(t)].Add(MeasureUlpError(TanhBwdExact(grad, t).get(), r.outputs[i]), i);
    }
    ASSERT_EQ(recomputed.size(), r.error_map.size());
    for (const auto& [bucket, b] : recomputed) {
      const BucketStatistics& got = r.error_map.at(bucket);
      EXPECT_EQ(got.n, b.n) << BinadeLabel(bucket);
      EXPECT_EQ(got.max_ulp, b.max_ulp) << BinadeLabel(bucket);
      EXPECT_EQ(got.max_index, b.max_index) << BinadeLabel(bucket);
      EXPECT_EQ(got.above_one_ulp, b.above_one_ulp) << BinadeLabel(bucket);
      // Summed per chunk and merged, not in one pass: equal to rounding.
      EXPECT_NEAR(got.mean_ulp(), b.mean_ulp(), 1e-12 * b.mean_ulp()) << BinadeLabel(bucket);
    }
  }
}

TEST(ErrorMapTest, IndependentOfThreadCount) {
  const InputSet inputs = GenerateTanhBwdSuite("random", 5, 3 * kEngineChunk + 77);
  const auto one = RunMapped(inputs, 1, false);
  const auto two = RunMapped(inputs, 2, false);
  ASSERT_EQ(one.size(), two.size());
  for (size_t k = 0; k < one.size(); ++k) {
    ASSERT_EQ(one[k].error_map.size(), two[k].error_map.size());
    for (const auto& [bucket, b] : one[k].error_map) {
      const BucketStatistics& c = two[k].error_map.at(bucket);
      EXPECT_EQ(b.n, c.n);
      EXPECT_EQ(b.max_ulp, c.max_ulp);
      EXPECT_EQ(b.max_index, c.max_index);
      EXPECT_EQ(b.sum_ulp, c.sum_ulp);  // per chunk, merged in chunk order, either way
    }
  }
}

TEST(ErrorMapTest, TanhBwdErrorLivesNextToOne) {
  const InputSet inputs = GenerateTanhBwdSuite("domain", 1, 20000);
  for (const CaseResult& r : RunMapped(inputs, 0, false)) {
    if (r.variant == "mulsub_fma" && r.conformance.model() == "mulsub_fused") continue;
    SCOPED_TRACE(r.variant + "@" + r.target);
    double near_one = 0, elsewhere = 0;
    for (const auto& [bucket, b] : r.error_map) {
      const std::string label = BinadeLabel(bucket);
      const bool next_to_one = label == "[2^-1, 2^0)" || label == "(-2^0, -2^-1]";
      (next_to_one ? near_one : elsewhere) = std::max(next_to_one ? near_one : elsewhere, b.max_ulp);
    }
    EXPECT_GT(near_one, 100 * elsewhere) << near_one << " vs " << elsewhere;
  }
}

TEST(ErrorMapTest, OffUnlessAsked) {
  const InputSet inputs = GenerateTanhBwdSuite("domain", 1, 100);
  RunOptions options;
  for (const CaseResult& r : RunTanhBwd(inputs, options)) {
    EXPECT_TRUE(r.error_map.empty());
    EXPECT_TRUE(r.map_operand.empty());
  }
  options.map_operand = 2;
  EXPECT_THROW(RunTanhBwd(inputs, options), InputError);
}

}  // namespace
}  // namespace ulpgate
