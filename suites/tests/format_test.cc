// Formats as a parameter (oracles/format.h) and the ULP metric in every
// format, against independent derivations: the classic bit manipulations of
// bf16, the compiler's own _Float16 conversions, hand-derived values, and
// errors recomputed in long double where they are exact there.
#include "oracles/format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "oracles/float_text.h"
#include "oracles/ieee_emulation.h"
#include "oracles/mpfr_number.h"
#include "oracles/round_bits.h"
#include "oracles/ulp_metric.h"

namespace ulpgate {
namespace {

TEST(Format, EveryHalfWidthPatternRoundTrips) {
  for (const FloatFormat* f : {&kBFloat16, &kBinary16}) {
    for (uint64_t bits = 0; bits < 0x10000; ++bits) {
      const double v = DecodeBits(*f, bits);
      if (std::isnan(v)) continue;
      ASSERT_TRUE(IsRepresentable(*f, v)) << f->name << " " << BitsText(*f, bits);
      ASSERT_EQ(EncodeBits(*f, v), bits) << f->name << " " << BitsText(*f, bits);
    }
  }
}

TEST(Format, HandDerivedValues) {
  EXPECT_EQ(DecodeBits(kBinary16, 0x3c00), 1.0);
  EXPECT_EQ(DecodeBits(kBinary16, 0x7bff), 65504.0);
  EXPECT_EQ(DecodeBits(kBinary16, 0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(DecodeBits(kBinary16, 0x0400), std::ldexp(1.0, -14));
  EXPECT_EQ(DecodeBits(kBinary16, 0xfc00), -HUGE_VAL);
  EXPECT_TRUE(std::isnan(DecodeBits(kBinary16, 0x7e00)));
  EXPECT_EQ(DecodeBits(kBFloat16, 0x3f80), 1.0);
  EXPECT_EQ(DecodeBits(kBFloat16, 0x7f7f), std::ldexp(255.0, 127 - 7));  // 0x1.fep127
  EXPECT_EQ(DecodeBits(kBFloat16, 0x0001), std::ldexp(1.0, -133));
  EXPECT_EQ(DecodeBits(kBFloat16, 0x8000), 0.0);
  EXPECT_TRUE(std::signbit(DecodeBits(kBFloat16, 0x8000)));
  EXPECT_EQ(BitsText(kBFloat16, 0x3f80), "0x3f80");
  EXPECT_EQ(BitsText(kBinary32, 0x3f800000), "0x3f800000");
  EXPECT_EQ(FindFormat("bf16"), &kBFloat16);
  EXPECT_EQ(FindFormat("f8"), nullptr);
  EXPECT_THROW(EncodeBits(kBFloat16, 1.0 + std::ldexp(1.0, -8)), std::invalid_argument);
}

TEST(Format, Binary32AgreesWithTheHost) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t bits = static_cast<uint32_t>(rng());
    const float x = FloatFromBits(bits);
    const double v = DecodeBits(kBinary32, bits);
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(v));
      continue;
    }
    ASSERT_EQ(v, static_cast<double>(x)) << BitsHex(x);
    ASSERT_EQ(EncodeBits(kBinary32, v), bits) << BitsHex(x);
  }
}

// Round to nearest even from binary32 to bf16 as every framework writes it:
// add 0x7fff plus the lowest kept bit, drop 16 bits.
uint32_t Bf16BitsByBitTrick(float x) {
  const uint32_t bits = FloatBits(x);
  return (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
}

TEST(Format, RoundingToBf16IsTheFrameworksBitTrick) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 400000; ++i) {
    const float x = FloatFromBits(static_cast<uint32_t>(rng()));
    if (std::isnan(x)) continue;
    const double r = RoundToFormat(kBFloat16, static_cast<double>(x));
    ASSERT_EQ(EncodeBits(kBFloat16, r), Bf16BitsByBitTrick(x)) << HexFloat(x);
  }
}

TEST(Format, RoundingToF16IsTheCompilers) {
  std::mt19937_64 rng(13);
  for (int i = 0; i < 400000; ++i) {
    const float x = FloatFromBits(static_cast<uint32_t>(rng()) >> (i % 4));  // many magnitudes
    if (std::isnan(x)) continue;
    const _Float16 h = static_cast<_Float16>(x);  // libgcc: round to nearest even
    uint16_t bits;
    std::memcpy(&bits, &h, sizeof bits);
    const double r = RoundToFormat(kBinary16, static_cast<double>(x));
    ASSERT_EQ(EncodeBits(kBinary16, r), bits) << HexFloat(x);
  }
}

TEST(Format, TruncationDropsTheLowBits) {
  std::mt19937_64 rng(17);
  for (int i = 0; i < 100000; ++i) {
    const float x = FloatFromBits(static_cast<uint32_t>(rng()));
    if (std::isnan(x) || std::isinf(x)) continue;
    MpfrNumber exact(24, x);
    const double t = TruncateToFormat(kBFloat16, exact.get());
    const uint32_t bits = FloatBits(x) >> 16;  // bf16 truncation: the high half
    if (std::isinf(DecodeBits(kBFloat16, bits))) continue;  // RZ never overflows
    ASSERT_EQ(EncodeBits(kBFloat16, t), bits) << HexFloat(x);
  }
}

// oracles/round_bits.h's rounding by the bits against RoundDouble's by
// double arithmetic, to nearest and toward zero, in bf16, f16 and a format of
// 5 bits and exponents -6..7 that nothing else registers (its traits are all
// the rounding reads): a strided sweep over every binary32 pattern, and every
// pattern within 8 of a boundary of each format (its binades, midpoints of
// its top and bottom, its overflow threshold).
TEST(Format, RoundingByTheBitsIsRoundDouble) {
  constexpr FloatFormat kTiny{"tiny", 5, -6, 7, 9};
  for (const FloatFormat* f : {&kBFloat16, &kBinary16, &kTiny}) {
    const RoundingBits rounding = RoundingBitsOf(*f);
    const auto check = [&](uint32_t bits) {
      const float x = FloatFromBits(bits);
      if (std::isnan(x)) {
        ASSERT_TRUE(std::isnan(RoundBinary32ToFormat(rounding, x)));
        return;
      }
      const float nearest = RoundBinary32ToFormat(rounding, x);
      const double want = RoundDouble(*f, x);
      ASSERT_TRUE(FloatBits(nearest) == FloatBits(static_cast<float>(want)))
          << f->name << " " << HexFloat(x) << " " << HexFloat(nearest);
      const float toward_zero = TruncateBinary32ToFormat(rounding, x);
      const double want_rz = RoundDouble(*f, x, /*toward_zero=*/true);
      ASSERT_TRUE(FloatBits(toward_zero) == FloatBits(static_cast<float>(want_rz)))
          << f->name << " RZ " << HexFloat(x) << " " << HexFloat(toward_zero);
    };
    for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4099) check(static_cast<uint32_t>(bits));
    for (int e = f->emin - f->precision - 2; e <= f->emax + 1; ++e) {
      for (const double m : {1.0, 1.5, 2.0 - std::ldexp(1.0, -f->precision)}) {
        const uint32_t center = FloatBits(static_cast<float>(std::ldexp(m, e)));
        for (uint32_t d = 0; d <= 16; ++d) {
          check(center + d - 8);
          check((center + d - 8) | 0x80000000u);
        }
      }
    }
  }
}

TEST(UlpMetricInFormats, HandDerivedErrors) {
  // bf16: p = 8, ulp(1) = 2^-7. x = 1 + 2^-8 is a tie between 1 and 1 + 2^-7.
  MpfrNumber tie(64);
  mpfr_set_d(tie.get(), 1.0 + std::ldexp(1.0, -8), MPFR_RNDN);
  UlpError e = MeasureUlpError(tie.get(), 1.0, kBFloat16);
  EXPECT_EQ(e.ulp, 0.5);
  EXPECT_TRUE(e.correctly_rounded);  // ties to even: 1.0
  e = MeasureUlpError(tie.get(), 1.0 + std::ldexp(1.0, -7), kBFloat16);
  EXPECT_EQ(e.ulp, 0.5);
  EXPECT_FALSE(e.correctly_rounded);
  // f16: ulp(0) is the smallest subnormal 2^-24; y = 3 * 2^-24 against 0.
  MpfrNumber zero(64);
  mpfr_set_zero(zero.get(), 1);
  e = MeasureUlpError(zero.get(), 3 * std::ldexp(1.0, -24), kBinary16);
  EXPECT_EQ(e.ulp, 3.0);
  // f16 overflow: x = 65520 rounds to inf (the midpoint past 65504 rounds up).
  MpfrNumber big(64);
  mpfr_set_d(big.get(), 65520.0, MPFR_RNDN);
  e = MeasureUlpError(big.get(), HUGE_VAL, kBinary16);
  EXPECT_FALSE(e.special_mismatch);
  EXPECT_EQ(e.ulp, 0.5);
  e = MeasureUlpError(big.get(), 65504.0, kBinary16);
  EXPECT_EQ(e.ulp, 0.5);  // |65504 - 65520| / ulp = 16 / 32
  EXPECT_FALSE(e.correctly_rounded);
  // Histogram bounds go to 2^p: 2 + p + 1 of them.
  EXPECT_EQ(HistogramBoundCount(kBFloat16), 11);
  EXPECT_EQ(HistogramBoundCount(kBinary16), 14);
}

// e = |y - x| / ulp(x) recomputed in long double (64-bit significand: exact
// for the differences here) for random x and the format's values near it.
TEST(UlpMetricInFormats, AgreesWithLongDouble) {
  std::mt19937_64 rng(19);
  for (const FloatFormat* f : {&kBFloat16, &kBinary16}) {
    for (int i = 0; i < 50000; ++i) {
      // x: 30 random bits at an exponent inside the format's normal range.
      const int exponent = f->emin + static_cast<int>(rng() % (f->emax - f->emin));
      const double x = std::ldexp(static_cast<double>((rng() >> 34) | (uint64_t{1} << 29)),
                                  exponent - 29);
      MpfrNumber exact(64);
      mpfr_set_d(exact.get(), x, MPFR_RNDN);
      const double nearest = RoundToFormat(*f, x);
      if (std::isinf(nearest)) continue;
      const uint64_t bits = EncodeBits(*f, nearest);
      for (int step = -2; step <= 2; ++step) {
        const double y = DecodeBits(*f, bits + static_cast<uint64_t>(step));
        if (std::isinf(y) || std::isnan(y) || std::signbit(y) != std::signbit(x)) continue;
        const long double ulp = std::ldexp(1.0L, std::max(exponent, f->emin) - f->precision + 1);
        const long double expected = std::fabs(static_cast<long double>(y) - x) / ulp;
        const UlpError e = MeasureUlpError(exact.get(), y, *f);
        ASSERT_EQ(static_cast<long double>(e.ulp), static_cast<double>(expected))
            << f->name << " x=" << x << " y=" << y;
        ASSERT_EQ(e.correctly_rounded, y == nearest) << f->name << " x=" << x << " y=" << y;
      }
    }
  }
}

}  // namespace
}  // namespace ulpgate

namespace ulpgate {
namespace {

// A random value of the format with an exponent in [lo, hi] (normal range).
double RandomValue(const FloatFormat& f, std::mt19937_64& rng, int lo, int hi) {
  const int exponent = lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
  const uint64_t mantissa = rng() & ((uint64_t{1} << f.mantissa_bits()) - 1);
  const double v = std::ldexp(static_cast<double>(mantissa | (uint64_t{1} << f.mantissa_bits())),
                              exponent - f.mantissa_bits());
  return (rng() & 1) ? -v : v;
}

// Binary32 results rounded to bf16 or f16 are correctly rounded results of
// those formats for +, -, *, / and sqrt: 24 >= 2p + 2 bits make the double
// rounding innocuous (Figueroa, "When is double rounding innocuous?", 1995).
// So the host's float arithmetic, then the frameworks' bf16 bit trick or the
// compiler's _Float16 conversion, is an independent oracle for FormatArith.
double NarrowFromFloat(const FloatFormat& f, float x) {
  if (&f == &kBFloat16) {
    const uint32_t bits = FloatBits(x);
    return DecodeBits(f, (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
  }
  return static_cast<double>(static_cast<_Float16>(x));
}

TEST(FormatArith, NarrowFormatsAgreeWithFloatThenNarrowed) {
  std::mt19937_64 rng(23);
  for (const FloatFormat* f : {&kBFloat16, &kBinary16}) {
    const FormatArith a(*f, /*fused_negmuladd=*/true);
    // Results stay in the normal range of both the format and binary32.
    const int lo = f == &kBinary16 ? -6 : -40, hi = f == &kBinary16 ? 6 : 40;
    for (int i = 0; i < 100000; ++i) {
      const double x = RandomValue(*f, rng, lo, hi), y = RandomValue(*f, rng, lo, hi);
      const float fx = static_cast<float>(x), fy = static_cast<float>(y);
      ASSERT_EQ(a.Add(x, y), NarrowFromFloat(*f, fx + fy)) << f->name << " " << x << " + " << y;
      ASSERT_EQ(a.Sub(x, y), NarrowFromFloat(*f, fx - fy)) << f->name << " " << x << " - " << y;
      ASSERT_EQ(a.Mul(x, y), NarrowFromFloat(*f, fx * fy)) << f->name << " " << x << " * " << y;
      ASSERT_EQ(a.Div(x, y), NarrowFromFloat(*f, fx / fy)) << f->name << " " << x << " / " << y;
      ASSERT_EQ(a.Sqrt(std::fabs(x)), NarrowFromFloat(*f, std::sqrt(std::fabs(fx))))
          << f->name << " sqrt " << x;
      // A fused product-sum is exact in a double when z is within 2^8 of the
      // product's binade (at most 2p + 9 bits), so one rounding of the double
      // is the oracle.
      const int e = std::ilogb(x * y);
      const double z = RandomValue(*f, rng, e - 8, e + 8);
      ASSERT_EQ(a.MulAdd(x, y, z), RoundToFormat(*f, std::fma(x, y, z))) << f->name;
      ASSERT_EQ(a.NegMulAdd(x, y, z), RoundToFormat(*f, std::fma(-x, y, z))) << f->name;
    }
  }
}

TEST(FormatArith, Binary32IsBinary32Arith) {
  std::mt19937_64 rng(29);
  for (bool fused : {false, true}) {
    const FormatArith a(kBinary32, fused);
    const Binary32Arith b(fused);
    for (int i = 0; i < 100000; ++i) {
      // Every finite bit pattern: subnormals, overflow and cancellation included.
      const float x = FloatFromBits(static_cast<uint32_t>(rng()) & 0xff7fffffu);
      const float y = FloatFromBits(static_cast<uint32_t>(rng()) & 0xff7fffffu);
      const float z = FloatFromBits(static_cast<uint32_t>(rng()) & 0xff7fffffu);
      auto same = [](double u, float v) { return std::isnan(u) ? std::isnan(v) : u == v && std::signbit(u) == std::signbit(v); };
      ASSERT_TRUE(same(a.Add(x, y), b.Add(x, y))) << HexFloat(x) << " " << HexFloat(y);
      ASSERT_TRUE(same(a.Mul(x, y), b.Mul(x, y))) << HexFloat(x) << " " << HexFloat(y);
      ASSERT_TRUE(same(a.Div(x, y), b.Div(x, y))) << HexFloat(x) << " " << HexFloat(y);
      ASSERT_TRUE(same(a.NegMulAdd(x, y, z), b.NegMulAdd(x, y, z)))
          << HexFloat(x) << " " << HexFloat(y) << " " << HexFloat(z);
    }
  }
}

// In the subnormal range of f16 (2^-24 .. 2^-14), which binary32 holds exactly.
TEST(FormatArith, F16Subnormals) {
  const FormatArith a(kBinary16, false);
  std::mt19937_64 rng(31);
  for (int i = 0; i < 50000; ++i) {
    const double x = RandomValue(kBinary16, rng, -14, -10), y = RandomValue(kBinary16, rng, -14, -10);
    ASSERT_EQ(a.Sub(x, y), NarrowFromFloat(kBinary16, static_cast<float>(x) - static_cast<float>(y)));
    ASSERT_EQ(a.Mul(x, 0.0078125), NarrowFromFloat(kBinary16, static_cast<float>(x) * 0.0078125f));
  }
}

}  // namespace
}  // namespace ulpgate
