// sweep: a range spanning several blocks gives what one run of the engine over
// the same inputs gives (counts, histogram, maximum and where, conformance, the
// mean up to the 2^-32 ULP truncation of each block's sum); shards cover the
// range, cut at blocks; a report reads back to the same report; merging
// reports of the shards gives the report of the whole.
#include "suites/sweep.h"

#include <gtest/gtest.h>

#include <cmath>

#include "suites/inputs.h"
#include "suites/tanh_bwd_cases.h"

namespace ulpgate {
namespace {

// Not block-aligned at either end: four blocks, two of them partial.
constexpr uint64_t kBegin = 0x3f7f1234, kEnd = 0x3f82abcd;

SweepOptions Options(uint64_t begin, uint64_t end) {
  SweepOptions o;
  o.domain = MakeSweepDomain(kBFloat16, SweepDomain::Kind::kPairs, {});
  o.begin = begin;
  o.end = end;
  o.variants = {"mulsub_per_op", "mac_opmath"};
  o.targets = {&CompiledTargets().front()};
  return o;
}

TEST(SweepTest, EqualsOneRunOfTheEngineOverTheSameInputs) {
  const SweepOptions o = Options(kBegin, kEnd);
  const SweepResult sweep = RunSweep(o);
  InputSet inputs;
  inputs.operand_names = {"grad", "t"};
  inputs.columns.assign(2, std::vector<float>(kEnd - kBegin));
  o.domain.Inputs(kBegin, kEnd - kBegin, inputs.columns[0].data(), inputs.columns[1].data());
  RunOptions run;
  run.format = o.domain.format;
  run.variants = o.variants;
  run.targets = o.targets;
  const std::vector<CaseResult> whole = RunTanhBwd(inputs, run);
  ASSERT_EQ(sweep.cases.size(), whole.size());
  for (size_t c = 0; c < whole.size(); ++c) {
    const SweepCase& s = sweep.cases[c];
    const CaseResult& r = whole[c];
    SCOPED_TRACE(r.variant);
    EXPECT_EQ(s.variant, r.variant);
    EXPECT_EQ(s.stats.n(), kEnd - kBegin);
    EXPECT_EQ(s.stats.counts(), r.stats.counts());
    EXPECT_EQ(s.stats.special_mismatch(), r.stats.special_mismatch());
    EXPECT_EQ(s.stats.correctly_rounded(), r.stats.correctly_rounded());
    EXPECT_EQ(s.stats.max_ulp(), r.stats.max_ulp());
    EXPECT_EQ(s.stats.max_index(), r.stats.max_index() + static_cast<int64_t>(kBegin));
    EXPECT_EQ(s.stats.Percentile(99), r.stats.Percentile(99));
    EXPECT_EQ(s.conformance.matching, r.conformance.matching);
    EXPECT_EQ(s.conformance.mismatches, r.conformance.mismatches);
    // Truncating 4 block sums to 2^-32 ULP moves the mean by < 4 * 2^-32 / n.
    EXPECT_NEAR(s.mean_ulp(), r.stats.mean_ulp(), 1e-12);
    EXPECT_GT(s.mean_ulp(), 0);
  }
}

TEST(SweepTest, ShardsCoverTheRangeCutAtBlocks) {
  for (uint64_t n : {1, 2, 3, 4, 7, 100}) {
    uint64_t at = kBegin;
    for (uint64_t k = 0; k < n; ++k) {
      const auto [b, e] = SweepShard(kBegin, kEnd, k, n);
      EXPECT_EQ(b, at) << k << "/" << n;
      EXPECT_LE(b, e);
      if (b != kBegin) {
        EXPECT_EQ(b % kSweepBlock, 0u) << k << "/" << n;
      }
      at = e;
    }
    EXPECT_EQ(at, kEnd) << n;
  }
  EXPECT_THROW(SweepShard(kBegin, kEnd, 3, 3), InputError);
}

TEST(SweepTest, ShardsMergeIntoTheWholeAndReportsReadBack) {
  const SweepResult whole = RunSweep(Options(kBegin, kEnd));
  const nlohmann::ordered_json whole_json = SweepJson(whole);
  EXPECT_EQ(SweepJson(SweepFromJson("whole.json", whole_json)), whole_json);
  std::vector<std::pair<std::string, SweepResult>> parts;
  for (uint64_t k : {2, 0, 1}) {
    const auto [b, e] = SweepShard(kBegin, kEnd, k, 3);
    parts.emplace_back("shard" + std::to_string(k),
                       SweepFromJson("shard", SweepJson(RunSweep(Options(b, e)))));
  }
  EXPECT_EQ(SweepJson(MergeSweeps(parts)), whole_json);
  parts.pop_back();  // shard 1: a gap between 0 and 2
  EXPECT_THROW(MergeSweeps(parts), InputError);
}

TEST(SweepTest, DomainsEnumerateTheirInputs) {
  const SweepDomain pairs = MakeSweepDomain(kBinary16, SweepDomain::Kind::kPairs, {});
  float grad, t;
  pairs.Input(0x3c00c000, &grad, &t);  // f16 1.0 and -2.0
  EXPECT_EQ(grad, 1.0f);
  EXPECT_EQ(t, -2.0f);
  const SweepDomain over_t = MakeSweepDomain(kBinary32, SweepDomain::Kind::kOverT, {1.0f, 0.5f});
  EXPECT_EQ(over_t.size(), uint64_t{2} << 32);
  over_t.Input((uint64_t{1} << 32) | 0x3f800000, &grad, &t);
  EXPECT_EQ(grad, 0.5f);
  EXPECT_EQ(t, 1.0f);
  EXPECT_THROW(MakeSweepDomain(kBinary32, SweepDomain::Kind::kPairs, {}), InputError);
  EXPECT_THROW(MakeSweepDomain(kBFloat16, SweepDomain::Kind::kOverT, {1.0f}), InputError);
}

}  // namespace
}  // namespace ulpgate
