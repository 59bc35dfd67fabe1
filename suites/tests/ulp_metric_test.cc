// The ULP metric on hand-checked cases: every expected value below is derived
// in the comment beside it from the definition in docs/design.md "Numerics".
#include "oracles/ulp_metric.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "oracles/mpfr_number.h"

namespace ulpgate {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// x = m * 2^e exactly, at 512 bits.
MpfrNumber Exact(double m, long e) {
  MpfrNumber x(512);
  mpfr_set_d(x.get(), m, MPFR_RNDN);
  mpfr_mul_2si(x.get(), x.get(), e, MPFR_RNDN);
  return x;
}

TEST(UlpMetric, UlpExponentFollowsTheDefinition) {
  // ulp(1) = 2^(0 - 23); ulp(1.5) too; ulp(0.75) = 2^(-1 - 23).
  EXPECT_EQ(UlpExponent(Exact(1, 0).get()), -23);
  EXPECT_EQ(UlpExponent(Exact(1.5, 0).get()), -23);
  EXPECT_EQ(UlpExponent(Exact(0.75, 0).get()), -24);
  // Below the normal range the exponent is clamped at emin: ulp = 2^-149.
  EXPECT_EQ(UlpExponent(Exact(1, -130).get()), -149);
  EXPECT_EQ(UlpExponent(Exact(1, -200).get()), -149);
  // ulp(0) is the smallest subnormal.
  EXPECT_EQ(UlpExponent(Exact(0, 0).get()), -149);
  // Above the finite range E is capped at emax = 127: ulp = 2^104.
  EXPECT_EQ(UlpExponent(Exact(1, 300).get()), 104);
}

TEST(UlpMetric, HalfUlpAboveOneIsHalfAnUlpAndNotCorrectlyRounded) {
  // x = 1 + 2^-24 (half an ulp above 1, a tie); y = 1: e = 2^-24 / 2^-23 = 0.5.
  // RN-even(x) = 1, so y is correctly rounded, and e sits exactly on the
  // bound 0.5: bin 1 = (0, 0.5].
  const MpfrNumber x = Exact(1 + std::ldexp(1.0, -24), 0);
  const UlpError e = MeasureUlpError(x.get(), 1.0f);
  EXPECT_EQ(e.ulp, 0.5);
  EXPECT_EQ(e.bin, 1);
  EXPECT_TRUE(e.correctly_rounded);
  // y = 1 + 2^-23: also 0.5 ulp away but not the even neighbour.
  const UlpError odd = MeasureUlpError(x.get(), 1.0f + 0x1p-23f);
  EXPECT_EQ(odd.ulp, 0.5);
  EXPECT_FALSE(odd.correctly_rounded);
}

TEST(UlpMetric, AHairAboveABoundGoesToTheNextBin) {
  // x = 1 + 2^-24 + 2^-300; y = 1 + 2^-23: e = (2^-24 - 2^-300) / 2^-23 is a
  // hair below 0.5 -> bin 1, while y = 1 gives 0.5 + 2^-277 -> bin 2, though
  // both round to 0.5 in double.
  MpfrNumber x = Exact(1 + std::ldexp(1.0, -24), 0);
  MpfrNumber tiny = Exact(1, -300);
  mpfr_add(x.get(), x.get(), tiny.get(), MPFR_RNDN);
  const UlpError below = MeasureUlpError(x.get(), 1.0f + 0x1p-23f);
  const UlpError above = MeasureUlpError(x.get(), 1.0f);
  EXPECT_EQ(below.ulp, 0.5);
  EXPECT_EQ(above.ulp, 0.5);
  EXPECT_EQ(below.bin, 1);
  EXPECT_EQ(above.bin, 2);
}

TEST(UlpMetric, AnExactValueFarBelowTheOutputStillSettlesTheBin) {
  // x = +-2^-100000 (the exact value of a function op far out in its tail),
  // y = 4 * 2^-149: e = (y -+ |x|) / 2^-149 = 4 -+ 2^-99851, 4 in double, and
  // 4 is the bound of bin 4 ((2, 4]): x of y's sign leaves e a hair below it
  // (bin 4), x of the other sign a hair above (bin 5). The exact difference
  // spans 100000 bits; the answer must not depend on computing all of them.
  const float y = 4 * 0x1p-149f;
  const MpfrNumber below = Exact(1, -100000);
  const MpfrNumber above = Exact(-1, -100000);
  const UlpError e_below = MeasureUlpError(below.get(), y);
  const UlpError e_above = MeasureUlpError(above.get(), y);
  EXPECT_EQ(e_below.ulp, 4.0);
  EXPECT_EQ(e_above.ulp, 4.0);
  EXPECT_EQ(e_below.bin, 4);
  EXPECT_EQ(e_above.bin, 5);
  // y = 0: x rounds to 0 (correctly rounded), e = 2^-99851 is 0 in double.
  const UlpError zero = MeasureUlpError(below.get(), 0.0f);
  EXPECT_TRUE(zero.correctly_rounded);
  EXPECT_EQ(zero.ulp, 0.0);
}

TEST(UlpMetric, Subnormals) {
  // x = 3 * 2^-150 (1.5 min subnormals), y = 2^-149: |y - x| = 2^-150, ulp
  // 2^-149: e = 0.5, and RN-even(x) = 2 * 2^-149, so y is not correctly rounded.
  const MpfrNumber x = Exact(3, -150);
  const UlpError e = MeasureUlpError(x.get(), 0x1p-149f);
  EXPECT_EQ(e.ulp, 0.5);
  EXPECT_FALSE(e.correctly_rounded);
  EXPECT_TRUE(MeasureUlpError(x.get(), 0x1p-148f).correctly_rounded);
  // x = 2^-160: y = 0 is correctly rounded with e = 2^-160 / 2^-149 = 2^-11.
  const UlpError zero = MeasureUlpError(Exact(1, -160).get(), 0.0f);
  EXPECT_EQ(zero.ulp, std::ldexp(1.0, -11));
  EXPECT_TRUE(zero.correctly_rounded);
  EXPECT_FALSE(zero.signed_zero_mismatch);
}

TEST(UlpMetric, Overflow) {
  // x = 2^128 rounds to +inf: y = +inf gets e = 0.5 and is correctly rounded.
  const MpfrNumber big = Exact(1, 128);
  const UlpError inf = MeasureUlpError(big.get(), kInf);
  EXPECT_FALSE(inf.special_mismatch);
  EXPECT_EQ(inf.ulp, 0.5);
  EXPECT_TRUE(inf.correctly_rounded);
  // The largest finite value against x = 2^128: |y - x| = 2^104 = 1 ulp.
  EXPECT_EQ(MeasureUlpError(big.get(), 0x1.fffffep127f).ulp, 1.0);
  // x = max finite rounds to itself: y = inf is a special mismatch.
  const MpfrNumber max = Exact(0x1.fffffep127, 0);
  EXPECT_TRUE(MeasureUlpError(max.get(), kInf).special_mismatch);
  // The wrong infinity is a special mismatch too.
  EXPECT_TRUE(MeasureUlpError(big.get(), -kInf).special_mismatch);
}

TEST(UlpMetric, SignedZero) {
  MpfrNumber plus_zero(64), minus_zero(64);
  mpfr_set_zero(plus_zero.get(), +1);
  mpfr_set_zero(minus_zero.get(), -1);
  const UlpError wrong = MeasureUlpError(minus_zero.get(), 0.0f);
  EXPECT_EQ(wrong.ulp, 0.0);
  EXPECT_EQ(wrong.bin, 0);
  EXPECT_TRUE(wrong.signed_zero_mismatch);
  EXPECT_TRUE(wrong.correctly_rounded);  // a zero of either sign matches a zero
  EXPECT_FALSE(MeasureUlpError(plus_zero.get(), 0.0f).signed_zero_mismatch);
  // x = -2^-160 rounds to -0: +0 is a signed-zero mismatch with e = 2^-11.
  const UlpError tiny = MeasureUlpError(Exact(-1, -160).get(), 0.0f);
  EXPECT_TRUE(tiny.signed_zero_mismatch);
  EXPECT_EQ(tiny.ulp, std::ldexp(1.0, -11));
}

TEST(UlpMetric, NanAndInfinity) {
  MpfrNumber nan(64), inf(64);
  mpfr_set_nan(nan.get());
  mpfr_set_inf(inf.get(), -1);
  EXPECT_TRUE(MeasureUlpError(nan.get(), kNan).correctly_rounded);
  EXPECT_FALSE(MeasureUlpError(nan.get(), kNan).special_mismatch);
  EXPECT_TRUE(MeasureUlpError(nan.get(), 1.0f).special_mismatch);
  EXPECT_TRUE(MeasureUlpError(nan.get(), kInf).special_mismatch);
  EXPECT_FALSE(MeasureUlpError(inf.get(), -kInf).special_mismatch);
  EXPECT_TRUE(MeasureUlpError(inf.get(), kInf).special_mismatch);
  EXPECT_TRUE(MeasureUlpError(inf.get(), kNan).special_mismatch);
  EXPECT_TRUE(MeasureUlpError(Exact(1, 0).get(), kNan).special_mismatch);
}

TEST(UlpMetric, LargeErrorsLandInTheirBins) {
  // x = 1, y = 1 + 3 * 2^-23: e = 3 -> bin (2, 4] = index 4.
  const UlpError three = MeasureUlpError(Exact(1, 0).get(), 1.0f + 3 * 0x1p-23f);
  EXPECT_EQ(three.ulp, 3.0);
  EXPECT_EQ(three.bin, 4);
  // x = 2^-30, y = 1: e = (1 - 2^-30) / 2^-53 = 2^53 - 2^23 > 2^24: last bin.
  const UlpError huge = MeasureUlpError(Exact(1, -30).get(), 1.0f);
  EXPECT_EQ(huge.bin, HistogramBoundCount());
  EXPECT_EQ(huge.ulp, std::ldexp(1.0, 53) - std::ldexp(1.0, 23));
}

// The bin of an error read from its double is the least bound at or above it:
// checked against the bounds themselves at every bound, its neighbours and
// points between, in every format.
TEST(UlpMetric, LeastBoundAtOrAboveIsTheFirstBoundNotBelow) {
  for (const FloatFormat* format : {&kBinary32, &kBFloat16, &kBinary16}) {
    const int count = HistogramBoundCount(*format);
    auto by_definition = [&](double e) {
      for (int i = 1; i < count; ++i) {
        if (e <= HistogramBound(i)) return i;
      }
      return count;
    };
    std::vector<double> probes = {0x1p-1074, 1e-300, 0.1, 0.75, 3.0, 1e9, 1e300, INFINITY};
    for (int i = 1; i < count; ++i) {
      const double b = HistogramBound(i);
      probes.insert(probes.end(), {b, std::nextafter(b, 0.0), std::nextafter(b, INFINITY),
                                   b * 1.5, b * 0.75});
    }
    for (const double e : probes) {
      EXPECT_EQ(LeastBoundAtOrAbove(e, count), by_definition(e)) << format->name << " " << e;
    }
    EXPECT_EQ(LeastBoundAtOrAbove(NAN, count), count);
  }
}

}  // namespace
}  // namespace ulpgate
