// FastExactSum (oracles/fast_ulp.h), the exact value of a sum of exact
// doubles as the in-situ errors of a training run use it (dot products of
// binary32 values plus a bias, w - lr g, 2/N (y - t)): every field of the
// UlpError it gives with FastUlpError equals MeasureUlpError of the MPFR sum,
// for outputs at the correctly rounded value, a few places around it, zeros
// and infinities, in every format; and it decides most of them.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "suites/tests/format_steps.h"
#include "oracles/fast_ulp.h"
#include "oracles/float_text.h"
#include "oracles/mpfr_number.h"
#include "oracles/ulp_metric.h"
#include "suites/inputs/counter_rng.h"

namespace ulpgate {
namespace {

// A value of the format, with the magnitudes of a training run (2^-40 ..
// 2^8) most of the time and the format's extremes now and then.
double Draw(const FloatFormat& format, CounterRng& rng) {
  const uint64_t r = rng.Next();
  const int exponent = (r & 15) == 0 ? static_cast<int>((r >> 4) % 240) - 140
                                     : static_cast<int>((r >> 4) % 48) - 40;
  const double m = 1.0 + static_cast<double>((r >> 16) & 0xffffff) * 0x1p-24;
  const double v = std::ldexp((r >> 63) ? -m : m, exponent);
  return RoundToFormat(format, v);
}

class FastExactSumTest : public ::testing::TestWithParam<const FloatFormat*> {};

TEST_P(FastExactSumTest, EqualsMpfrOnSumsOfProducts) {
  const FloatFormat& format = *GetParam();
  uint64_t measured = 0, decided = 0;
  for (uint64_t i = 0; i < 40000; ++i) {
    CounterRng rng(11, 0x73756d, i);
    // 1 to 16 products of two values (binary32 operands: exact in a double),
    // a bias half the time, and now and then a term that cancels the others.
    const size_t n = 1 + rng.Next() % 16;
    std::vector<double> terms;
    MpfrNumber exact(2048);
    mpfr_set_zero(exact.get(), +1);
    for (size_t k = 0; k < n; ++k) {
      const double a = Draw(kBinary32, rng), b = Draw(kBinary32, rng);
      terms.push_back(a * b);
      mpfr_add_d(exact.get(), exact.get(), a * b, MPFR_RNDN);  // exact at 2048 bits
    }
    if (rng.Next() % 2) {
      terms.push_back(Draw(kBinary32, rng));
      mpfr_add_d(exact.get(), exact.get(), terms.back(), MPFR_RNDN);
    }
    if (rng.Next() % 8 == 0) {
      // Cancel the largest part of the sum: a tiny or zero result.
      const double cancel = -static_cast<float>(mpfr_get_d(exact.get(), MPFR_RNDN));
      terms.push_back(cancel);
      mpfr_add_d(exact.get(), exact.get(), cancel, MPFR_RNDN);
    }
    const double rounded = RoundToFormat(format, exact.get());
    std::vector<double> outputs = {0.0, -0.0, INFINITY, -INFINITY};
    if (std::isfinite(rounded)) {
      for (int s = -3; s <= 3; ++s) outputs.push_back(Step(format, rounded, s));
    }
    for (double y : outputs) {
      const UlpError want = MeasureUlpError(exact.get(), y, format);
      std::vector<double> copy = terms;
      const auto x = FastExactSum(copy.data(), copy.size(), format);
      ++measured;
      if (!x) continue;
      const auto got = FastUlpError(*x, y, format);
      if (!got) continue;
      ++decided;
      const std::string where = "sum " + std::to_string(i) + ", y = " + std::to_string(y);
      ASSERT_EQ(got->ulp, want.ulp) << where;
      ASSERT_EQ(got->bin, want.bin) << where;
      ASSERT_EQ(got->special_mismatch, want.special_mismatch) << where;
      ASSERT_EQ(got->signed_zero_mismatch, want.signed_zero_mismatch) << where;
      ASSERT_EQ(got->correctly_rounded, want.correctly_rounded) << where;
    }
  }
  // Deferring is allowed, differing never. The draws here spread over far
  // more binades than a training run's (where nearly every sum is two
  // doubles' worth); still, a good part must be decided, or the test tests
  // nothing.
  EXPECT_GT(decided, measured / 4) << decided << " of " << measured;
}

INSTANTIATE_TEST_SUITE_P(Formats, FastExactSumTest,
                         ::testing::Values(&kBinary32, &kBFloat16, &kBinary16),
                         [](const auto& p) { return std::string(p.param->name); });

}  // namespace
}  // namespace ulpgate
