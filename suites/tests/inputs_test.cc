// Input generation and input files.
#include "suites/inputs/inputs.h"

#include <gtest/gtest.h>

#include "oracles/format.h"

#include <cmath>
#include <sstream>

#include "oracles/exact.h"
#include "oracles/float_text.h"
#include "suites/inputs/tanh_bwd_suites.h"

namespace ulpgate {
namespace {

TEST(Suites, AnInputIsAPureFunctionOfSuiteSeedAndIndex) {
  for (const SuiteInfo& suite : TanhBwdSuites()) {
    const InputSet all = GenerateTanhBwdSuite(suite.name, 9, 1000);
    for (uint64_t i : {0u, 1u, 499u, 999u}) {
      const auto one = TanhBwdInput(suite.name, 9, i);
      EXPECT_TRUE(SameFloat(one[0], all.columns[0][i])) << suite.name << " #" << i;
      EXPECT_TRUE(SameFloat(one[1], all.columns[1][i])) << suite.name << " #" << i;
    }
    // Another seed gives other inputs (past the fixed adversarial catalogue).
    const uint64_t i = TanhBwdAdversarialCatalogueSize() + 3;
    EXPECT_NE(FloatBits(TanhBwdInput(suite.name, 9, i)[0]),
              FloatBits(TanhBwdInput(suite.name, 10, i)[0]))
        << suite.name;
  }
}

TEST(Suites, DomainAndRandomStayInTheirRanges) {
  const InputSet domain = GenerateTanhBwdSuite("domain", 1, 20000);
  const InputSet random = GenerateTanhBwdSuite("random", 1, 20000);
  size_t negative_t = 0;
  for (size_t i = 0; i < 20000; ++i) {
    EXPECT_LE(std::fabs(domain.columns[1][i]), 1.0f);
    EXPECT_GE(std::fabs(domain.columns[0][i]), 0x1p-24f);
    EXPECT_LT(std::fabs(domain.columns[0][i]), 0x1p8f);
    negative_t += domain.columns[1][i] < 0;
    EXPECT_TRUE(std::isfinite(random.columns[0][i]));
    EXPECT_TRUE(std::isfinite(random.columns[1][i]));
  }
  EXPECT_GT(negative_t, 9000u);
  EXPECT_LT(negative_t, 11000u);
}

TEST(Suites, AdversarialCatalogueHasTheSpecials) {
  const InputSet set = GenerateTanhBwdSuite("adversarial", 1, TanhBwdAdversarialCatalogueSize());
  bool nan = false, inf = false, subnormal = false, max = false, negative_zero = false;
  for (float t : set.columns[1]) {
    nan |= std::isnan(t);
    inf |= std::isinf(t);
    subnormal |= t == 0x1p-149f;
    max |= t == -0x1.fffffep127f;
    negative_zero |= t == 0 && std::signbit(t);
  }
  EXPECT_TRUE(nan && inf && subnormal && max && negative_zero);
}

// The exact square of t, and the distance of its discarded part from a tie in
// units of the last discarded bit.
int64_t OffsetFromTie(float t) {
  ExactArith exact(128);
  const MpfrNumber square = exact.Mul(exact.FromFloat(t), exact.FromFloat(t));
  // square = m * 2^-48 with m < 2^48; discard below bit (bits(m) - 24).
  mpz_t m;
  mpz_init(m);
  MpfrNumber scaled(square);
  mpfr_mul_2si(scaled.get(), scaled.get(), 48, MPFR_RNDN);  // exact: a power of 2
  mpfr_get_z(m, scaled.get(), MPFR_RNDN);
  const size_t bits = mpz_sizeinbase(m, 2);
  const uint64_t value = mpz_get_ui(m);
  mpz_clear(m);
  const uint64_t discarded = value & ((uint64_t{1} << (bits - 24)) - 1);
  return static_cast<int64_t>(discarded) - static_cast<int64_t>(uint64_t{1} << (bits - 25));
}

TEST(Suites, TieSquareOperandsAreTiesAndNearTies) {
  for (uint64_t pick = 0; pick < 200; ++pick) {
    const float tie = TieSquareOperand(0, pick * 7919);
    EXPECT_GE(tie, 0.5f);
    EXPECT_LT(tie, 1.0f);
    EXPECT_EQ(OffsetFromTie(tie), 0) << HexFloat(tie);
    for (int64_t offset : {1, -7, 9, -15}) {
      const float near = TieSquareOperand(offset, pick * 104729 + offset);
      EXPECT_EQ(OffsetFromTie(near), offset) << HexFloat(near);
    }
  }
}

TEST(InputFile, ParsesHexDecimalSpecialsAndComments) {
  std::istringstream in(
      "# grad t\n"
      "0x1.8p-1 0x1p-149   # hex floats\n"
      "\n"
      "-2.5, 0.1\n"
      "inf\t-nan\n"
      "bits:0x80000000 -0\n");
  const InputSet set = ReadInputFile(in, {"grad", "t"}, "test");
  ASSERT_EQ(set.size(), 4u);
  EXPECT_EQ(set.columns[0][0], 0.75f);
  EXPECT_EQ(set.columns[1][0], 0x1p-149f);
  EXPECT_EQ(set.columns[0][1], -2.5f);
  EXPECT_EQ(set.columns[1][1], 0.1f);  // decimal: rounded to nearest once
  EXPECT_TRUE(std::isinf(set.columns[0][2]));
  EXPECT_TRUE(std::isnan(set.columns[1][2]));
  EXPECT_EQ(FloatBits(set.columns[0][3]), 0x80000000u);
  EXPECT_TRUE(std::signbit(set.columns[1][3]));
}

TEST(InputFile, RejectsBadLinesWithTheirPlace) {
  auto error_of = [](const std::string& text) {
    std::istringstream in(text);
    try {
      ReadInputFile(in, {"grad", "t"}, "f.txt");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of("1 2\n3\n"), "f.txt:2: expected 2 values (grad t), found 1");
  EXPECT_EQ(error_of("1 2 3\n"), "f.txt:1: expected 2 values (grad t), found 3");
  EXPECT_NE(error_of("1 abc\n").find("f.txt:1: t: 'abc' is not a number"), std::string::npos);
  EXPECT_NE(error_of("0x1.000001p0 1\n").find("not exactly representable"), std::string::npos);
  EXPECT_EQ(error_of("# nothing\n"), "f.txt: no inputs in the file");
  EXPECT_THROW(ReadInputFile("/nonexistent/inputs.txt", {"grad", "t"}), InputError);
}

// The suites in bf16 and f16: every input a value of the format, a pure
// function of (format, suite, seed, index); the catalogue has the format's
// own extremes; the tie family's squares are exact ties in the format.
TEST(NarrowSuites, EveryInputIsAValueOfTheFormat) {
  for (const FloatFormat* format : {&kBFloat16, &kBinary16}) {
    for (const auto& suite : TanhBwdSuites()) {
      const InputSet set = GenerateTanhBwdSuite(*format, suite.name, 3, 5000);
      for (size_t i = 0; i < set.size(); ++i) {
        for (int k = 0; k < 2; ++k) {
          ASSERT_TRUE(IsRepresentable(*format, set.columns[k][i]))
              << format->name << " " << suite.name << " #" << i << " " << set.columns[k][i];
        }
        const auto one = TanhBwdInput(*format, suite.name, 3, i);
        ASSERT_EQ(FloatBits(one[0]), FloatBits(set.columns[0][i]));
        ASSERT_EQ(FloatBits(one[1]), FloatBits(set.columns[1][i]));
      }
    }
  }
}

TEST(NarrowSuites, CatalogueHasTheFormatsExtremes) {
  struct Extremes { const FloatFormat* format; float max, min_subnormal, below_one; };
  for (const Extremes& e : {Extremes{&kBFloat16, 0x1.fep127f, 0x1p-133f, 0x1.fep-1f},
                            Extremes{&kBinary16, 65504.0f, 0x1p-24f, 0x1.ffcp-1f}}) {
    const InputSet set = GenerateTanhBwdSuite(*e.format, "adversarial", 1,
                                              TanhBwdAdversarialCatalogueSize(*e.format));
    bool max = false, sub = false, below_one = false, nan = false;
    for (float t : set.columns[1]) {
      max |= t == -e.max;
      sub |= t == e.min_subnormal;
      below_one |= t == e.below_one;
      nan |= std::isnan(t);
    }
    EXPECT_TRUE(max && sub && below_one && nan) << e.format->name;
  }
}

TEST(NarrowSuites, TieOperandsSquareToTiesOfTheFormat) {
  for (const FloatFormat* format : {&kBFloat16, &kBinary16}) {
    for (uint64_t pick = 0; pick < 20; ++pick) {
      const float t = NarrowTieSquareOperand(*format, true, pick);
      ASSERT_GE(t, 0.5f);
      ASSERT_LT(t, 1.0f);
      // t*t is exact in double, in [1/4, 1): normal in both formats. A tie
      // is an odd multiple of half the format's ulp there.
      const double square = static_cast<double>(t) * t;
      int exponent = 0;
      std::frexp(square, &exponent);  // square in [2^(exponent-1), 2^exponent)
      const double half_ulp = std::ldexp(1.0, exponent - 1 - format->precision);
      const double halves = square / half_ulp;
      EXPECT_EQ(halves, std::floor(halves));
      EXPECT_EQ(std::fmod(halves, 2.0), 1.0)
          << format->name << " t = " << t;
    }
  }
}

}  // namespace
}  // namespace ulpgate
