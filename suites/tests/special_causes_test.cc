// Special mismatches by cause (oracles/ulp_metric.h SpecialCause), counted
// in the statistics and merged, and the text of ULP errors
// (suites/reports/number_text.h): hand-made exact values and outputs, one
// per cause, each derived beside it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "oracles/mpfr_number.h"
#include "oracles/ulp_metric.h"
#include "suites/engine/statistics.h"
#include "suites/reports/number_text.h"

namespace ulpgate {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

MpfrNumber Exact(double m, long e) {
  MpfrNumber x(256);
  mpfr_set_d(x.get(), m, MPFR_RNDN);
  mpfr_mul_2si(x.get(), x.get(), e, MPFR_RNDN);
  return x;
}
MpfrNumber Infinite(int sign) {
  MpfrNumber x(256);
  mpfr_set_inf(x.get(), sign);
  return x;
}
MpfrNumber Undefined() {
  MpfrNumber x(256);
  mpfr_set_nan(x.get());
  return x;
}

SpecialCause CauseOf(const MpfrNumber& x, double y) {
  const UlpError e = MeasureUlpError(x.get(), y, kBinary32);
  EXPECT_EQ(e.special_mismatch, e.special_cause != SpecialCause::kNone);
  return e.special_cause;
}

TEST(SpecialCauses, EachCauseFromItsExactValueAndOutput) {
  // tanh_bwd at grad = 0, t = 2^64: x = 0, but t*t overflows binary32 and
  // 0 * inf is NaN; at grad = 2^-10 the output is -inf where x = -2^118 is
  // well inside the range.
  EXPECT_EQ(CauseOf(Exact(0, 0), kNan), SpecialCause::kIntermediateRange);
  EXPECT_EQ(CauseOf(Exact(-1, 118), -kInf), SpecialCause::kIntermediateRange);
  EXPECT_EQ(CauseOf(Exact(1, 0), kInf), SpecialCause::kIntermediateRange);
  // Just below max + ulp/2 = (2 - 2^-24) 2^127, x rounds to the largest
  // finite value: an infinity there is an intermediate's.
  EXPECT_EQ(CauseOf(Exact(2 - 0x1p-23, 127), kInf), SpecialCause::kIntermediateRange);
  // x = 2^228, beyond the range: RN(x) = +inf, so +inf is right (0.5 ULP),
  // NaN and -inf are not.
  EXPECT_FALSE(MeasureUlpError(Exact(1, 228).get(), kInf, kBinary32).special_mismatch);
  EXPECT_EQ(CauseOf(Exact(1, 228), kNan), SpecialCause::kNanWhereFinite);
  EXPECT_EQ(CauseOf(Exact(1, 228), -kInf), SpecialCause::kInfinityWhereFinite);
  // At max + ulp/2 exactly the tie goes to the even infinity.
  EXPECT_EQ(CauseOf(Exact(2 - 0x1p-24, 127), kNan), SpecialCause::kNanWhereFinite);
  EXPECT_EQ(CauseOf(Infinite(1), 1.0), SpecialCause::kFiniteWhereInfinite);
  EXPECT_EQ(CauseOf(Infinite(-1), 0.0), SpecialCause::kFiniteWhereInfinite);
  EXPECT_EQ(CauseOf(Infinite(1), -kInf), SpecialCause::kWrongInfinity);
  EXPECT_EQ(CauseOf(Infinite(1), kNan), SpecialCause::kWrongInfinity);
  EXPECT_EQ(CauseOf(Undefined(), 0.0), SpecialCause::kNumberWhereUndefined);
  EXPECT_EQ(CauseOf(Undefined(), kInf), SpecialCause::kNumberWhereUndefined);
  // No special mismatch, no cause.
  EXPECT_EQ(CauseOf(Undefined(), kNan), SpecialCause::kNone);
  EXPECT_EQ(CauseOf(Infinite(1), kInf), SpecialCause::kNone);
  EXPECT_EQ(CauseOf(Exact(1, 0), 2.0), SpecialCause::kNone);
  // Through a quotient (an MSE loss's mean) as well.
  EXPECT_EQ(MeasureUlpErrorOfQuotient(Exact(3, 0).get(), 7, kNan, kBinary32).special_cause,
            SpecialCause::kIntermediateRange);
  // The same rules in bf16, whose range is binary32's but whose max + ulp/2
  // is (2 - 2^-8) 2^127.
  EXPECT_EQ(MeasureUlpError(Exact(2 - 0x1p-7, 127).get(), kInf, kBFloat16).special_cause,
            SpecialCause::kIntermediateRange);
  EXPECT_EQ(MeasureUlpError(Exact(2 - 0x1p-8, 127).get(), -kInf, kBFloat16).special_cause,
            SpecialCause::kInfinityWhereFinite);
}

TEST(SpecialCauses, KeysAndTextsAreDistinct) {
  for (int a = 0; a < kSpecialCauseCount; ++a) {
    EXPECT_EQ(SpecialCauseIndex(SpecialCauseAt(a)), a);
    for (int b = a + 1; b < kSpecialCauseCount; ++b) {
      EXPECT_STRNE(SpecialCauseKey(SpecialCauseAt(a)), SpecialCauseKey(SpecialCauseAt(b)));
      EXPECT_STRNE(SpecialCauseText(SpecialCauseAt(a)), SpecialCauseText(SpecialCauseAt(b)));
    }
  }
  EXPECT_STREQ(SpecialCauseKey(SpecialCause::kIntermediateRange), "intermediate_overflow");
}

UlpError Special(SpecialCause cause) {
  UlpError e;
  e.special_mismatch = true;
  e.special_cause = cause;
  return e;
}

TEST(SpecialCauses, StatisticsCountEachCauseWithItsFirstInputAndMergeExactly) {
  // Inputs 0..9: specials at 2 (intermediate), 3 (NaN where finite), 5
  // (intermediate), 8 (number where undefined); the rest measured.
  const auto fill = [](ErrorStatistics& s, uint64_t begin, uint64_t end) {
    for (uint64_t i = begin; i < end; ++i) {
      switch (i) {
        case 2: case 5: s.Add(Special(SpecialCause::kIntermediateRange), i); break;
        case 3: s.Add(Special(SpecialCause::kNanWhereFinite), i); break;
        case 8: s.Add(Special(SpecialCause::kNumberWhereUndefined), i); break;
        default: {
          UlpError e;
          e.ulp = 0.25;
          e.bin = 1;
          s.Add(e, i);
        }
      }
    }
  };
  ErrorStatistics whole;
  fill(whole, 0, 10);
  EXPECT_EQ(whole.special_mismatch(), 4u);
  EXPECT_EQ(whole.n(), 10u);
  const auto& c = whole.special_causes();
  const int intermediate = SpecialCauseIndex(SpecialCause::kIntermediateRange);
  EXPECT_EQ(c[intermediate].count, 2u);
  EXPECT_EQ(c[intermediate].first_index, 2);
  EXPECT_EQ(c[SpecialCauseIndex(SpecialCause::kNanWhereFinite)].count, 1u);
  EXPECT_EQ(c[SpecialCauseIndex(SpecialCause::kNanWhereFinite)].first_index, 3);
  EXPECT_EQ(c[SpecialCauseIndex(SpecialCause::kNumberWhereUndefined)].first_index, 8);
  EXPECT_EQ(c[SpecialCauseIndex(SpecialCause::kWrongInfinity)].count, 0u);
  EXPECT_EQ(c[SpecialCauseIndex(SpecialCause::kWrongInfinity)].first_index, -1);
  uint64_t sum = 0;
  for (const SpecialCauseCount& k : c) sum += k.count;
  EXPECT_EQ(sum, whole.special_mismatch());

  // In parts, merged in order: the same counts and first inputs.
  ErrorStatistics first, second;
  fill(first, 0, 4);
  fill(second, 4, 10);
  first.Merge(second);
  for (int k = 0; k < kSpecialCauseCount; ++k) {
    EXPECT_EQ(first.special_causes()[k].count, c[k].count) << k;
    EXPECT_EQ(first.special_causes()[k].first_index, c[k].first_index) << k;
  }
  // Merged out of order (shards): the lower first index wins.
  SpecialCauseCounts a = second.special_causes(), b = ErrorStatistics().special_causes();
  {
    ErrorStatistics early;
    fill(early, 0, 4);
    b = early.special_causes();
  }
  MergeSpecialCauses(a, b);
  EXPECT_EQ(a[intermediate].count, 2u);
  EXPECT_EQ(a[intermediate].first_index, 2);
  // Through State and back.
  const ErrorStatistics copy(kBinary32, whole.state());
  for (int k = 0; k < kSpecialCauseCount; ++k) {
    EXPECT_EQ(copy.special_causes()[k].count, c[k].count);
    EXPECT_EQ(copy.special_causes()[k].first_index, c[k].first_index);
  }
}

TEST(SpecialCauses, TheFirstSignedZeroIsKeptThroughMerges) {
  // x = +0 (grad (1 - t^2) at t = 1), y = -0: no special mismatch, error 0,
  // a signed-zero mismatch.
  const UlpError e = MeasureUlpError(Exact(0, 0).get(), -0.0, kBinary32);
  ASSERT_TRUE(e.signed_zero_mismatch);
  ASSERT_FALSE(e.special_mismatch);
  ErrorStatistics a, b;
  UlpError plain;
  a.Add(plain, 0);
  EXPECT_EQ(a.first_signed_zero_index(), -1);
  a.Add(e, 1);
  a.Add(e, 2);
  EXPECT_EQ(a.signed_zero_mismatch(), 2u);
  EXPECT_EQ(a.first_signed_zero_index(), 1);
  b.AddCounts(0, 1);  // a vectorized measure's count, its index offered apart
  b.OfferSignedZero(7);
  b.OfferSignedZero(9);
  EXPECT_EQ(b.first_signed_zero_index(), 7);
  ErrorStatistics merged;
  merged.Merge(a);
  merged.Merge(b);
  EXPECT_EQ(merged.first_signed_zero_index(), 1);
  EXPECT_EQ(merged.signed_zero_mismatch(), 3u);
  EXPECT_EQ(ErrorStatistics(kBinary32, b.state()).first_signed_zero_index(), 7);
}

TEST(FormatUlp, NeverReadsBelowTheValue) {
  EXPECT_EQ(FormatUlp(0.5), "0.5");
  EXPECT_EQ(FormatUlp(0.5 + 0x1p-40), "0.5001");
  EXPECT_EQ(FormatUlp(0.5000090599), "0.5001");
  EXPECT_EQ(FormatUlp(0.5 + 1e-7), "0.5001");
  EXPECT_EQ(FormatUlp(0.49999), "0.5");  // at most 0.5: still correctly rounded
  EXPECT_EQ(FormatUlp(1), "1");
  EXPECT_EQ(FormatUlp(0.25), "0.25");
  EXPECT_EQ(FormatUlp(1.2248274975240463), "1.225");
  EXPECT_EQ(FormatUlp(1.2245), "1.225");
  EXPECT_EQ(FormatUlp(6.3984), "6.399");
  EXPECT_EQ(FormatUlp(9.99951), "10");
  EXPECT_EQ(FormatUlp(16777216), "1.678e+07");
  EXPECT_EQ(FormatUlp(1.677e7), "1.677e+07");
  EXPECT_EQ(FormatUlp(12345), "1.235e+04");
  EXPECT_EQ(FormatUlp(3.0517578125e-05), "3.052e-05");
  EXPECT_EQ(FormatUlp(0.001), "0.001");
  EXPECT_EQ(FormatUlp(0), "0");
  EXPECT_EQ(FormatUlp(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(FormatUlp(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(FormatUlp(std::nan("")), "n/a");
  EXPECT_EQ(FormatUlp(-0.25000001), "-0.2501");  // outward
  // Everything printed reads back at or above the value, over many binades.
  for (double v = 0x1p-30; v < 0x1p40; v *= 1.0009765625 + 0x1p-30) {
    const std::string text = FormatUlp(v);
    ASSERT_GE(std::strtod(text.c_str(), nullptr), v) << std::hexfloat << v << " " << text;
    ASSERT_LE(std::strtod(text.c_str(), nullptr), v * 1.0011) << std::hexfloat << v << " " << text;
  }
}

}  // namespace
}  // namespace ulpgate
