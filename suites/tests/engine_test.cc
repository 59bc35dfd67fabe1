// The engine and its statistics: deterministic across thread counts, counts
// that add up, and statistics that match a direct recomputation.
#include "suites/tests/tanh_bwd_kernels.h"
#include "suites/engine/elementwise_cases.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "oracles/float_text.h"
#include "suites/reports/report.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/engine/tanh_bwd_oracle.h"
#include "suites/inputs/elementwise_suites.h"
#include "suites/inputs/tanh_bwd_suites.h"

namespace ulpgate {
namespace {

TEST(Engine, SameResultsWithOneThreadAndMany) {
  const InputSet inputs = GenerateTanhBwdSuite("adversarial", 3, 3 * kEngineChunk + 17);
  RunOptions one, many;
  one.threads = 1;
  many.threads = 3;
  const auto a = RunTanhBwd(inputs, one);
  const auto b = RunTanhBwd(inputs, many);
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(CaseJson(a[k], inputs).dump(), CaseJson(b[k], inputs).dump());
  }
}

TEST(Engine, CountsAddUpAndMatchADirectRecomputation) {
  const InputSet inputs = GenerateTanhBwdSuite("adversarial", 4, 5000);
  RunOptions options;
  options.keep_outputs = true;
  options.targets = {&BestTarget()};
  for (const CaseResult& r : RunTanhBwd(inputs, options)) {
    const ErrorStatistics& s = r.stats;
    uint64_t total = s.special_mismatch();
    for (uint64_t c : s.counts()) total += c;
    EXPECT_EQ(total, inputs.size()) << r.variant;
    EXPECT_EQ(s.counts().size(), s.bounds().size() + 1);
    // Recompute from the kept outputs, one input at a time.
    ErrorStatistics direct;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const MpfrNumber exact = TanhBwdExact(inputs.columns[0][i], inputs.columns[1][i]);
      direct.Add(MeasureUlpError(exact.get(), r.outputs[i]), i);
    }
    EXPECT_EQ(direct.counts(), s.counts()) << r.variant;
    EXPECT_EQ(direct.max_ulp(), s.max_ulp()) << r.variant;
    EXPECT_EQ(direct.max_index(), s.max_index()) << r.variant;
    EXPECT_EQ(direct.correctly_rounded(), s.correctly_rounded()) << r.variant;
    EXPECT_EQ(direct.special_mismatch(), s.special_mismatch()) << r.variant;
    EXPECT_EQ(direct.signed_zero_mismatch(), s.signed_zero_mismatch()) << r.variant;
  }
}

// The engine's fast tier (native models, errors and bound fractions from
// doubles: oracles/fast_ulp.h) against MPFR for every element (what
// RunOptions::details forces): the same report, field for field, for every
// op that has the tier (its own two-double exact value, or estimates of its
// factor and term magnitude), on every suite, every target this CPU runs and
// the others' models, with the map and without (the vectorized tier).
TEST(Engine, FastTierGivesTheReportOfMpfrEverywhere) {
  size_t ops_with_tier = 0;
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    std::vector<float> probe(op.arity(), 0.5f);
    double terms[8];
    const ElementwiseOracle& oracle = OracleOf(op);
    const bool factor_tier = oracle.HasFastFactor() && oracle.HasFastTermFactor();
    if (oracle.FastTermMagnitude(probe.data(), terms) == 0 && !factor_tier) continue;
    ++ops_with_tier;
    for (const FloatFormat* format : {&kBinary32, &kBFloat16, &kBinary16}) {
      for (const SuiteInfo& suite : ElementwiseSuites(op)) {
        const InputSet inputs =
            GenerateElementwiseSuite(op, *format, suite.name, 5, 2 * kEngineChunk + 9);
        RunOptions fast, slow;
        fast.format = slow.format = format;
        fast.map_operand = slow.map_operand = 1;
        std::vector<ElementDetail> details;
        slow.details = &details;
        const auto a = RunElementwise(op, inputs, fast);
        const auto b = RunElementwise(op, inputs, slow);
        // Without the map, an op with the vectorized tier runs through it.
        RunOptions unmapped = fast;
        unmapped.map_operand = -1;
        const auto v = RunElementwise(op, inputs, unmapped);
        ASSERT_EQ(a.size(), b.size());
        ASSERT_EQ(v.size(), b.size());
        for (size_t k = 0; k < a.size(); ++k) {
          ASSERT_EQ(CaseJson(a[k], inputs).dump(1), CaseJson(b[k], inputs).dump(1))
              << op.name << " " << format->name << " " << suite.name << " " << a[k].variant << "@"
              << a[k].target;
          CaseResult no_map = b[k];
          no_map.map_operand.clear();
          no_map.error_map = ErrorMap();
          ASSERT_EQ(CaseJson(v[k], inputs).dump(1), CaseJson(no_map, inputs).dump(1))
              << "unmapped: " << op.name << " " << format->name << " " << suite.name << " "
              << v[k].variant << "@" << v[k].target;
        }
      }
    }
  }
  EXPECT_GT(ops_with_tier, 0u);
}

// The largest bound fraction and the largest error, held by the same input
// at several places (in one unit and in another): the report names the
// first, in the vectorized tier (which measures the largest fraction
// exactly, after estimating every one, but not an estimate surely below a
// fraction another unit measured) as in MPFR's, whichever unit runs first.
TEST(Engine, TheFirstOfEqualLargestErrorsIsReported) {
  const ElementwiseOpInfo& op = *FindElementwiseOp("tanh_bwd");
  InputSet inputs = GenerateElementwiseSuite(op, kBinary32, "domain", 9, 2 * kEngineChunk + 100);
  RunOptions options;
  options.targets = {&BestTarget()};
  options.variants = {"mulsub"};
  std::vector<ElementDetail> details;
  RunOptions slow = options;
  slow.details = &details;
  const CaseResult first = RunElementwise(op, inputs, slow).at(0);
  for (const int64_t worst : {first.bound.max_index(), first.stats.max_index()}) {
    ASSERT_GE(worst, 0);
    InputSet copied = inputs;
    for (const size_t at : {size_t{7}, size_t{8}, kEngineChunk + 50, 2 * kEngineChunk + 99}) {
      for (size_t k = 0; k < copied.columns.size(); ++k) copied.columns[k][at] = inputs.columns[k][worst];
    }
    details.clear();
    const CaseResult exact = RunElementwise(op, copied, slow).at(0);
    for (const bool last_first : {false, true}) {
      RunOptions order = options;
      order.units_last_first = last_first;
      order.threads = last_first ? 1 : 0;
      const CaseResult fast = RunElementwise(op, copied, order).at(0);
      EXPECT_EQ(CaseJson(fast, copied).dump(1), CaseJson(exact, copied).dump(1)) << last_first;
      if (worst == first.bound.max_index()) {
        EXPECT_EQ(fast.bound.max_index(), std::min<int64_t>(7, worst)) << last_first;
      } else {
        EXPECT_EQ(fast.stats.max_index(), std::min<int64_t>(7, worst)) << last_first;
      }
    }
  }
}

TEST(Engine, TheMacFormIsASpecialMismatchAtInfiniteGrad) {
  // grad = inf, t = 0.5: the op is inf, the MAC form gives NaN (docs/design.md "Numerics").
  InputSet inputs;
  inputs.operand_names = {"grad", "t"};
  inputs.columns = {{std::numeric_limits<float>::infinity()}, {0.5f}};
  RunOptions options;
  options.targets = {&BestTarget()};
  options.variants = {"mac", "mulsub"};
  const auto results = RunTanhBwd(inputs, options);
  EXPECT_EQ(results[0].stats.special_mismatch(), 1u);
  EXPECT_EQ(results[1].stats.special_mismatch(), 0u);
  EXPECT_EQ(results[1].stats.correctly_rounded(), 1u);
}

// A 16-bit run takes only values of its format, and says which input is not.
TEST(Engine, InputsMustBeValuesOfTheRunsFormat) {
  InputSet inputs;
  inputs.operand_names = kTanhBwdOperands;
  inputs.columns = {{1.0f, 0x1.002p+0f}, {0.5f, 0.25f}};
  RunOptions options;
  options.format = &kBFloat16;
  options.targets = {&CompiledTargets().front()};
  try {
    RunTanhBwd(inputs, options);
    FAIL() << "0x1.002p+0 is not a bf16 value";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "input #1: grad = 0x1.002p+0 is not a bf16 value (rounded: 0x1p+0)");
  }
  inputs.columns[0][1] = 0x1.02p+0f;  // a bf16 value: runs
  EXPECT_EQ(RunTanhBwd(inputs, options).size(), kTanhBwdNarrowVariants.size());
}

TEST(Statistics, PercentilesAndMeanFollowTheData) {
  ErrorStatistics s;
  UlpError e;
  for (int i = 0; i < 1000; ++i) {
    e.ulp = (i < 900) ? 0.25 : 100.0;  // 90% at 0.25, 10% at 100
    e.bin = (i < 900) ? 1 : 9;
    s.Add(e, i);
  }
  EXPECT_NEAR(s.mean_ulp(), 0.9 * 0.25 + 0.1 * 100, 1e-12);
  // Percentiles are upper edges of 2^(1/16)-wide bins: within 4.4% above.
  EXPECT_GE(s.Percentile(50), 0.25);
  EXPECT_LE(s.Percentile(50), 0.25 * 1.045);
  EXPECT_GE(s.Percentile(99), 100.0 * 0.999);
  EXPECT_LE(s.Percentile(99), 100.0);
  EXPECT_EQ(s.max_index(), 900);  // the first input reaching the max
  EXPECT_EQ(s.counts()[1], 900u);
  EXPECT_EQ(s.counts()[9], 100u);
}


// The fine bin is 1 + clamp(ceil(16 (log2 e + 64)) - 1, 0, 4095) with the C
// library's log2, however FineBinOf computes it: over every binade, at random
// and on both sides of every bin edge 2^(k/16).
TEST(Statistics, FineBinIsItsLog2Definition) {
  const auto definition = [](double e) {
    if (e == 0) return 0;
    const double position = std::ceil((std::log2(e) + 64) * 16);
    return 1 + static_cast<int>(std::clamp(position - 1, 0.0, 4095.0));
  };
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(-80, 200);
  for (int i = 0; i < 1000000; ++i) {
    const double e = std::exp2(exponent(rng));
    ASSERT_EQ(ErrorStatistics::FineBinOf(e), definition(e)) << std::hexfloat << e;
  }
  for (int k = -80 * 16; k <= 200 * 16; ++k) {
    double e = std::exp2(k / 16.0);
    for (int s = 0; s < 4; ++s) e = std::nextafter(e, 0.0);
    for (int s = 0; s < 9; ++s, e = std::nextafter(e, HUGE_VAL)) {
      ASSERT_EQ(ErrorStatistics::FineBinOf(e), definition(e)) << std::hexfloat << e;
    }
  }
  EXPECT_EQ(ErrorStatistics::FineBinOf(0x1p-80), 1);
  EXPECT_EQ(ErrorStatistics::FineBinOf(1.0), 16 * 64);
}

}  // namespace
}  // namespace ulpgate
