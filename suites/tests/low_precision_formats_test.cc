// The 8-, 6- and 4-bit formats' traits and the cast policies, against
// values read from the OCP OFP8 and MX v1.0 specifications and derived by
// hand (each expectation says where it comes from), and against an
// independent decoding written here from the field layout alone.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "oracles/cast_policy.h"
#include "oracles/format.h"

namespace ulpgate {
namespace {

const FloatFormat* const kLowFormats[] = {&kFloat8E4M3FN, &kFloat8E4M3FNUZ, &kFloat8E5M2,
                                          &kFloat8E5M2FNUZ, &kFloat6E2M3FN, &kFloat6E3M2FN,
                                          &kFloat4E2M1FN, &kFloat8E8M0FNU};

TEST(LowPrecisionFormats, SpecificationFacts) {
  // OFP8 Table 1: E4M3 max 448 (S.1111.110), min subnormal 2^-9; E5M2 max
  // 57344, min subnormal 2^-16.
  EXPECT_EQ(LargestFinite(kFloat8E4M3FN), 448.0);
  EXPECT_EQ(DecodeBits(kFloat8E4M3FN, 0x7e), 448.0);
  EXPECT_TRUE(std::isnan(DecodeBits(kFloat8E4M3FN, 0x7f)));
  EXPECT_TRUE(std::isnan(DecodeBits(kFloat8E4M3FN, 0xff)));
  EXPECT_EQ(DecodeBits(kFloat8E4M3FN, 0x78), 256.0);  // the top binade is normal
  EXPECT_EQ(DecodeBits(kFloat8E4M3FN, 0x01), 0x1p-9);
  EXPECT_EQ(DecodeBits(kFloat8E4M3FN, 0x38), 1.0);  // bias 7
  EXPECT_EQ(LargestFinite(kFloat8E5M2), 57344.0);
  EXPECT_EQ(DecodeBits(kFloat8E5M2, 0x7c), HUGE_VAL);
  EXPECT_TRUE(std::isnan(DecodeBits(kFloat8E5M2, 0x7d)));
  EXPECT_EQ(DecodeBits(kFloat8E5M2, 0x01), 0x1p-16);
  // FNUZ (LLVM APFloat's Float8E4M3FNUZ/E5M2FNUZ): bias 8 / 16, 0x80 NaN,
  // no infinity, largest 240 / 57344, min subnormal 2^-10 / 2^-17.
  EXPECT_EQ(LargestFinite(kFloat8E4M3FNUZ), 240.0);
  EXPECT_EQ(DecodeBits(kFloat8E4M3FNUZ, 0x40), 1.0);
  EXPECT_TRUE(std::isnan(DecodeBits(kFloat8E4M3FNUZ, 0x80)));
  EXPECT_EQ(DecodeBits(kFloat8E4M3FNUZ, 0x7f), 240.0);
  EXPECT_EQ(DecodeBits(kFloat8E4M3FNUZ, 0x01), 0x1p-10);
  EXPECT_EQ(LargestFinite(kFloat8E5M2FNUZ), 57344.0);
  EXPECT_EQ(DecodeBits(kFloat8E5M2FNUZ, 0x01), 0x1p-17);
  // MX v1.0 section 5.3: E2M3 max 7.5, min subnormal 0.125; E3M2 max 28,
  // min subnormal 0.0625; E2M1 max 6, min subnormal 0.5; no NaN, no inf.
  EXPECT_EQ(LargestFinite(kFloat6E2M3FN), 7.5);
  EXPECT_EQ(DecodeBits(kFloat6E2M3FN, 0x1f), 7.5);
  EXPECT_EQ(DecodeBits(kFloat6E2M3FN, 0x01), 0.125);
  EXPECT_EQ(DecodeBits(kFloat6E2M3FN, 0x3f), -7.5);
  EXPECT_EQ(LargestFinite(kFloat6E3M2FN), 28.0);
  EXPECT_EQ(DecodeBits(kFloat6E3M2FN, 0x01), 0.0625);
  EXPECT_EQ(LargestFinite(kFloat4E2M1FN), 6.0);
  EXPECT_EQ(DecodeBits(kFloat4E2M1FN, 0x1), 0.5);
  EXPECT_EQ(DecodeBits(kFloat4E2M1FN, 0x7), 6.0);
  EXPECT_EQ(DecodeBits(kFloat4E2M1FN, 0xf), -6.0);
  // E8M0: 2^(e - 127), 0xff NaN, no sign, no zero.
  EXPECT_EQ(DecodeBits(kFloat8E8M0FNU, 0x7f), 1.0);
  EXPECT_EQ(DecodeBits(kFloat8E8M0FNU, 0x00), 0x1p-127);
  EXPECT_EQ(DecodeBits(kFloat8E8M0FNU, 0xfe), 0x1p127);
  EXPECT_TRUE(std::isnan(DecodeBits(kFloat8E8M0FNU, 0xff)));
  EXPECT_EQ(EncodeBits(kFloat8E8M0FNU, 0x1p-3), 0x7cu);
  EXPECT_EQ(BitsText(kFloat4E2M1FN, 0x7), "0x7");
  EXPECT_EQ(BitsText(kFloat8E4M3FN, 0x7e), "0x7e");
  EXPECT_EQ(kFloat4E2M1FN.StorageSize(5), 3u);
  EXPECT_EQ(kFloat6E2M3FN.StorageSize(5), 5u);
}

// An independent decoding from the field layout: sign, e exponent bits, m
// mantissa bits, bias; the specials by the rules each format's document states.
double ReferenceDecode(int bits, int e, int m, int bias, bool sign, const char* specials,
                       uint32_t code) {
  const bool negative = sign && ((code >> (bits - 1)) & 1);
  const uint32_t magnitude = code & ((1u << (bits - (sign ? 1 : 0))) - 1);
  const uint32_t exponent = magnitude >> m;
  const uint32_t mantissa = magnitude & ((1u << m) - 1);
  const std::string s = specials;
  if (s == "ieee" && exponent == (1u << e) - 1) {
    return mantissa ? NAN : (negative ? -INFINITY : INFINITY);
  }
  if (s == "fn" && magnitude == (1u << (bits - (sign ? 1 : 0))) - 1) return NAN;
  if (s == "fnuz" && negative && magnitude == 0) return NAN;
  double v;
  if (s == "e8m0") {
    v = std::ldexp(1.0, static_cast<int>(exponent) - bias);
  } else if (exponent == 0) {
    v = std::ldexp(static_cast<double>(mantissa), 1 - bias - m);
  } else {
    v = std::ldexp(static_cast<double>(mantissa + (1u << m)), static_cast<int>(exponent) - bias - m);
  }
  return negative ? -v : v;
}

TEST(LowPrecisionFormats, EveryCodeDecodesAsItsLayoutSaysAndRoundTrips) {
  struct Layout {
    const FloatFormat* f;
    int e, m, bias;
    bool sign;
    const char* specials;
  };
  const Layout layouts[] = {
      {&kFloat8E4M3FN, 4, 3, 7, true, "fn"},     {&kFloat8E4M3FNUZ, 4, 3, 8, true, "fnuz"},
      {&kFloat8E5M2, 5, 2, 15, true, "ieee"},    {&kFloat8E5M2FNUZ, 5, 2, 16, true, "fnuz"},
      {&kFloat6E2M3FN, 2, 3, 1, true, "none"},   {&kFloat6E3M2FN, 3, 2, 3, true, "none"},
      {&kFloat4E2M1FN, 2, 1, 1, true, "none"},   {&kFloat8E8M0FNU, 8, 0, 127, false, "fn"},
  };
  for (const Layout& l : layouts) {
    const bool e8m0 = l.f == &kFloat8E8M0FNU;
    for (uint32_t code = 0; code < (1u << l.f->bits); ++code) {
      const double want =
          ReferenceDecode(l.f->bits, l.e, l.m, l.bias, l.sign, e8m0 ? "e8m0" : l.specials, code);
      const double got = DecodeBits(*l.f, code);
      if (e8m0 && code == 0xff) {
        ASSERT_TRUE(std::isnan(got));
        continue;
      }
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(got)) << l.f->name << " " << code;
        continue;
      }
      ASSERT_EQ(got, want) << l.f->name << " " << BitsText(*l.f, code);
      ASSERT_EQ(std::signbit(got), std::signbit(want)) << l.f->name << " " << code;
      ASSERT_TRUE(IsRepresentable(*l.f, got)) << l.f->name << " " << code;
      ASSERT_EQ(EncodeBits(*l.f, got), code) << l.f->name << " " << BitsText(*l.f, code);
      ASSERT_EQ(RoundToFormat(*l.f, got), got) << l.f->name << " " << code;
    }
  }
}

TEST(LowPrecisionFormats, RoundingToNearestAtTheEdges) {
  // OFP8: under nearest even 464 (448 + half of E4M3's ulp 32 there) is a
  // tie that goes to 448 (mantissa 110 is even); 465 overflows, to NaN (no
  // infinity) by the format's default.
  EXPECT_EQ(RoundToFormat(kFloat8E4M3FN, 464.0), 448.0);
  EXPECT_TRUE(std::isnan(RoundToFormat(kFloat8E4M3FN, 465.0)));
  // E5M2: 61440 = 57344 + 4096 (half its ulp 8192) is a tie to the even
  // 65536 = 2^16, the overflow: infinity.
  EXPECT_EQ(RoundToFormat(kFloat8E5M2, 61439.0), 57344.0);
  EXPECT_EQ(RoundToFormat(kFloat8E5M2, 61440.0), HUGE_VAL);
  // FNUZ: no -0.
  EXPECT_FALSE(std::signbit(RoundToFormat(kFloat8E4M3FNUZ, -0x1p-20)));
  EXPECT_FALSE(IsRepresentable(kFloat8E4M3FNUZ, -0.0));
  // FP4 has no NaN or infinity: its overflow saturates.
  EXPECT_EQ(RoundToFormat(kFloat4E2M1FN, 1e9), 6.0);
  EXPECT_EQ(RoundToFormat(kFloat4E2M1FN, 5.0), 4.0);  // tie between 4 (1.0b) and 6 (1.1b)
  // E8M0: p = 1, so a tie 1.5 * 2^k goes to 2^(k+1) (significand 1 is odd);
  // below 2^-127 the smallest; zero and negatives have no value.
  EXPECT_EQ(RoundToFormat(kFloat8E8M0FNU, 1.5), 2.0);
  EXPECT_EQ(RoundToFormat(kFloat8E8M0FNU, 1.4), 1.0);
  EXPECT_EQ(RoundToFormat(kFloat8E8M0FNU, 0x1p-130), 0x1p-127);
  EXPECT_TRUE(std::isnan(RoundToFormat(kFloat8E8M0FNU, 0.0)));
  EXPECT_TRUE(std::isnan(RoundToFormat(kFloat8E8M0FNU, -1.0)));
  EXPECT_TRUE(std::isnan(RoundToFormat(kFloat8E8M0FNU, 0x1.8p127)));
}

TEST(LowPrecisionFormats, ARegisteredFormatIsFoundByName) {
  constexpr FloatFormat kThrowaway{"float7_e3m3_test", 4, -2, 4, 7, NanEncoding::kNone};
  EXPECT_EQ(FindFormat("float7_e3m3_test"), nullptr);
  {
    ScopedFormatRegistration registration(kThrowaway);
    EXPECT_EQ(FindFormat("float7_e3m3_test"), &kThrowaway);
    EXPECT_THROW(ScopedFormatRegistration again(kThrowaway), std::invalid_argument);
    EXPECT_EQ(LargestFinite(kThrowaway), 30.0);  // 1.111b x 2^4
  }
  EXPECT_EQ(FindFormat("float7_e3m3_test"), nullptr);
}

// Casts under each policy at inputs whose answers follow from the
// definitions by hand.
TEST(CastPolicies, HandDerivedCasts) {
  const CastPolicy rne_sat{};
  const CastPolicy rne_nan{CastRounding::kNearestEven, CastOverflow::kNan};
  const CastPolicy away{CastRounding::kNearestAway, CastOverflow::kSaturate};
  const CastPolicy trunc{CastRounding::kTowardZero, CastOverflow::kSaturate};
  const FloatFormat& f32 = kBinary32;
  const FloatFormat& e4m3 = kFloat8E4M3FN;
  // 1 + 2^-4 is the midpoint of 1 and 1 + 2^-3 (E4M3's ulp at 1).
  EXPECT_EQ(CastValue(f32, e4m3, 1.0625, rne_sat), 1.0);
  EXPECT_EQ(CastValue(f32, e4m3, 1.0625, away), 1.125);
  EXPECT_EQ(CastValue(f32, e4m3, 1.1875, rne_sat), 1.25);  // 1.001b1 -> even 1.010b
  // A sticky bit far below the rounding bit breaks the tie.
  EXPECT_EQ(CastValue(f32, e4m3, 1.0625 + 0x1p-23, rne_sat), 1.125);
  EXPECT_EQ(CastValue(f32, e4m3, 1.0625 + 0x1p-23, trunc), 1.0);
  EXPECT_EQ(CastValue(f32, e4m3, -1.0625 - 0x1p-23, trunc), -1.0);
  // Saturation threshold: 464 ties to 448 under either overflow policy; 465
  // saturates or overflows to NaN; infinity saturates or is NaN.
  EXPECT_EQ(CastValue(f32, e4m3, 464.0, rne_nan), 448.0);
  EXPECT_EQ(CastValue(f32, e4m3, 465.0, rne_sat), 448.0);
  EXPECT_TRUE(std::isnan(CastValue(f32, e4m3, 465.0, rne_nan)));
  EXPECT_EQ(CastValue(f32, e4m3, -HUGE_VAL, rne_sat), -448.0);
  EXPECT_EQ(CastValue(f32, e4m3, 1e30, trunc), 448.0);
  // Up and down.
  const CastPolicy up{CastRounding::kUp, CastOverflow::kSaturate};
  const CastPolicy down{CastRounding::kDown, CastOverflow::kSaturate};
  EXPECT_EQ(CastValue(f32, e4m3, 1.0 + 0x1p-20, up), 1.125);
  EXPECT_EQ(CastValue(f32, e4m3, -1.0 - 0x1p-20, up), -1.0);
  EXPECT_EQ(CastValue(f32, e4m3, -1.0 - 0x1p-20, down), -1.125);
  // E5M2 with infinities: IEEE overflow, and inward directed roundings stop
  // at the largest finite value.
  const CastPolicy rne_inf{CastRounding::kNearestEven, CastOverflow::kInfinity};
  const CastPolicy trunc_inf{CastRounding::kTowardZero, CastOverflow::kInfinity};
  EXPECT_EQ(CastValue(f32, kFloat8E5M2, 1e6, rne_inf), HUGE_VAL);
  EXPECT_EQ(CastValue(f32, kFloat8E5M2, 1e6, trunc_inf), 57344.0);
  // Subnormals: E4M3's smallest subnormal 2^-9, normal 2^-6.
  const CastPolicy flush_out{CastRounding::kNearestEven, CastOverflow::kSaturate,
                             CastSubnormals::kFlushOutput};
  EXPECT_EQ(CastValue(f32, e4m3, 0x1.8p-9, rne_sat), 0x1p-8);  // 1.5 quanta: tie to even 2
  EXPECT_EQ(CastValue(f32, e4m3, 0x1p-8, flush_out), 0.0);
  EXPECT_EQ(CastValue(f32, e4m3, 0x1p-6, flush_out), 0x1p-6);
  const CastPolicy flush_in{CastRounding::kNearestEven, CastOverflow::kSaturate,
                            CastSubnormals::kFlushInput};
  EXPECT_EQ(CastValue(kBinary16, e4m3, 0x1p-20, flush_in), 0.0);  // f16 subnormal
  EXPECT_EQ(CastValue(kBinary16, kFloat8E5M2, 0x1p-14, flush_in), 0x1p-14);  // f16 normal
  // Through bf16 first: 1 + 2^-4 + 2^-9 rounds to bf16's 1 + 2^-4 (its ulp
  // at 1 is 2^-7), a tie that E4M3 then rounds to even 1: double rounding;
  // directly it is above the tie, 1.125.
  CastPolicy via_bf16 = rne_sat;
  via_bf16.route = &kBFloat16;
  EXPECT_EQ(CastValue(f32, e4m3, 1.0625 + 0x1p-9, rne_sat), 1.125);
  EXPECT_EQ(CastValue(f32, e4m3, 1.0625 + 0x1p-9, via_bf16), 1.0);
  // Stochastic, 4 random bits: 1 + 2^-5 is a quarter of the way from 1 to
  // 1.125: floor(0.25 * 16) = 4, up iff 4 + r >= 16, r >= 12.
  CastPolicy sr{CastRounding::kStochastic, CastOverflow::kSaturate};
  sr.random_bits = 4;
  EXPECT_EQ(CastValue(f32, e4m3, 1.03125, sr, 11), 1.0);
  EXPECT_EQ(CastValue(f32, e4m3, 1.03125, sr, 12), 1.125);
  EXPECT_EQ(CastValue(f32, e4m3, 1.0, sr, 15), 1.0);  // exact stays
  // Specials by the formats' traits.
  EXPECT_EQ(CastCode(f32, e4m3, NAN, rne_sat), 0x7fu);
  EXPECT_EQ(CastCode(f32, kFloat8E4M3FNUZ, NAN, rne_sat), 0x80u);
  EXPECT_EQ(CastCode(f32, kFloat8E4M3FNUZ, -0.0, rne_sat), 0x00u);
  EXPECT_EQ(CastCode(f32, kFloat4E2M1FN, NAN, rne_sat), 0x8u);  // ml_dtypes' -0
  EXPECT_EQ(CastCode(f32, kFloat8E8M0FNU, 0.0, rne_nan), 0xffu);
  EXPECT_EQ(CastCode(f32, kFloat8E8M0FNU, 3.0, rne_nan), 0x81u);  // tie up to 4
}

TEST(CastPolicies, NamesParseBackAndBadOnesAreRefused) {
  for (const FloatFormat* to : kLowFormats) {
    const auto policies = CastPolicies(kBinary32, *to);
    ASSERT_FALSE(policies.empty());
    EXPECT_EQ(policies.front().Name(), "nearest_even.saturate");
    for (const CastPolicy& p : policies) {
      const auto back = ParseCastPolicy(p.Name());
      ASSERT_TRUE(back.has_value()) << p.Name();
      EXPECT_TRUE(*back == p) << p.Name();
      EXPECT_EQ(CastPolicyProblem(kBinary32, *to, p), "") << p.Name();
    }
  }
  EXPECT_EQ(ParseCastPolicy("toward_zero.nan.flush_output.via_bf16")->Name(),
            "toward_zero.nan.flush_output.via_bf16");
  EXPECT_EQ(ParseCastPolicy("stochastic16.saturate")->random_bits, 16);
  for (const char* bad : {"", "nearest_even", "nearest.saturate", "stochastic.saturate",
                          "stochastic33.saturate", "nearest_even.saturate.via_f8",
                          "nearest_even.saturate.bogus", "nearest_even.saturate.flush_input.x"}) {
    EXPECT_FALSE(ParseCastPolicy(bad).has_value()) << bad;
  }
  const CastPolicy inf{CastRounding::kNearestEven, CastOverflow::kInfinity};
  EXPECT_NE(CastPolicyProblem(kBinary32, kFloat8E4M3FN, inf), "");
  const CastPolicy nan{CastRounding::kNearestEven, CastOverflow::kNan};
  EXPECT_NE(CastPolicyProblem(kBinary32, kFloat4E2M1FN, nan), "");
  CastPolicy via_f32{};
  via_f32.route = &kBinary32;
  EXPECT_NE(CastPolicyProblem(kBinary32, kFloat8E4M3FN, via_f32), "");  // not narrower than f32
  EXPECT_EQ(CastPolicyProblem(kBinary64, kFloat8E4M3FN, via_f32), "");
}

// Nearest-even with the format's own overflow is RoundToFormat, on every
// f32 value near each format's range: two roads to one rounding.
TEST(CastPolicies, NearestEvenIsRoundToFormat) {
  std::mt19937 rng(11);
  for (const FloatFormat* to : kLowFormats) {
    CastPolicy p{};
    p.overflow = to->has_infinity() ? CastOverflow::kInfinity
                 : to->has_nan()    ? CastOverflow::kNan
                                    : CastOverflow::kSaturate;
    for (int i = 0; i < 200000; ++i) {
      float x;
      const uint32_t bits = (rng() & 0x80ffffffu) | ((100 + rng() % 60) << 23);
      std::memcpy(&x, &bits, sizeof x);
      if (!to->has_sign && x <= 0) continue;
      const double want = RoundToFormat(*to, static_cast<double>(x));
      const double got = CastValue(kBinary32, *to, x, p);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(got)) << to->name << " " << x;
      } else {
        ASSERT_EQ(got, want) << to->name << " " << std::hexfloat << x;
        ASSERT_EQ(std::signbit(got), std::signbit(want)) << to->name << " " << x;
      }
    }
  }
}

}  // namespace
}  // namespace ulpgate
