// The fast exact tier (oracles/fast_ulp.h) against MPFR: on every tanh_bwd
// suite in every format, for outputs that are the models', their neighbours a
// few ULPs away, the correctly rounded value, zeros, infinities and NaN, every
// field of the UlpError it gives equals MeasureUlpError(TanhBwdExact(...)) bit
// for bit; and it decides most of them (it may defer, never differ). The
// native binary32 models equal the MPFR-emulated ones.
#include "suites/tests/tanh_bwd_kernels.h"
#include "suites/tests/format_steps.h"
#include "oracles/fast_ulp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "oracles/float_text.h"
#include "kernels/elementwise_ops.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/engine/tanh_bwd_oracle.h"
#include "suites/inputs/tanh_bwd_suites.h"

namespace ulpgate {
namespace {

// Inputs per (format, suite); ULPGATE_FAST_ULP_N raises it (the exhaustive
// label runs 2,500,000: 10^7 per format).
size_t InputsPerSuite() {
  const char* n = std::getenv("ULPGATE_FAST_ULP_N");
  return n != nullptr ? std::strtoull(n, nullptr, 10) : 60000;
}

void ExpectSame(const UlpError& fast, const UlpError& exact, const std::string& where) {
  ASSERT_EQ(fast.ulp, exact.ulp) << where;
  ASSERT_EQ(std::signbit(fast.ulp), std::signbit(exact.ulp)) << where;
  ASSERT_EQ(fast.bin, exact.bin) << where;
  ASSERT_EQ(fast.special_mismatch, exact.special_mismatch) << where;
  ASSERT_EQ(fast.signed_zero_mismatch, exact.signed_zero_mismatch) << where;
  ASSERT_EQ(fast.correctly_rounded, exact.correctly_rounded) << where;
}

class FastUlpTest : public ::testing::TestWithParam<const FloatFormat*> {};

TEST_P(FastUlpTest, EqualsMpfrOnEverySuite) {
  const FloatFormat& format = *GetParam();
  uint64_t measured = 0, decided = 0, inputs_deferred = 0, inputs_total = 0;
  for (const SuiteInfo& suite : TanhBwdSuites()) {
    const InputSet inputs = GenerateTanhBwdSuite(format, suite.name, 7, InputsPerSuite());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const float grad = inputs.columns[0][i], t = inputs.columns[1][i];
      const MpfrNumber exact = TanhBwdExact(grad, t);
      const auto x = FastTanhBwdExactValue(grad, t, format);
      ++inputs_total;
      if (!x) {
        ++inputs_deferred;
        continue;
      }
      std::vector<double> ys = {RoundToFormat(format, exact.get()), 0.0, -0.0, INFINITY, -INFINITY, NAN};
      for (float m : TanhBwdModelOutputs(format, grad, t)) ys.push_back(m);
      const double base = ys.front();
      if (std::isfinite(base)) {
        for (int k : {-3, -1, 1, 2}) ys.push_back(Step(format, base, k));
      }
      for (double y : ys) {
        const UlpError reference = MeasureUlpError(exact.get(), y, format);
        const auto fast = FastUlpError(*x, y, format);
        ++measured;
        if (!fast) continue;
        ++decided;
        ExpectSame(*fast, reference,
                   format.name + std::string(" ") + suite.name + " grad=" + HexFloat(grad) +
                       " t=" + HexFloat(t) + " y=" + HexFloat(static_cast<float>(y)));
      }
    }
  }
  const double share = static_cast<double>(decided) / static_cast<double>(measured);
  std::printf("%s: exact value held in doubles for %llu of %llu inputs; %llu of %llu "
              "measurements of those decided without MPFR (%.2f%%)\n",
              format.name, static_cast<unsigned long long>(inputs_total - inputs_deferred),
              static_cast<unsigned long long>(inputs_total), static_cast<unsigned long long>(decided),
              static_cast<unsigned long long>(measured), 100 * share);
  EXPECT_GT(share, 0.5);
  EXPECT_LT(inputs_deferred, inputs_total / 2);
}

// The bound fraction from doubles (FastBoundFraction) against
// MeasureBoundFraction over tanh_bwd's own bound, on every suite in every
// format, for the same outputs as above: equal wherever it decides, and it
// decides nearly all of them.
TEST_P(FastUlpTest, BoundFractionEqualsMpfrOnEverySuite) {
  const FloatFormat& format = *GetParam();
  const ElementwiseOpInfo& op = *FindElementwiseOp("tanh_bwd");
  uint64_t measured = 0, decided = 0;
  for (const SuiteInfo& suite : TanhBwdSuites()) {
    const InputSet inputs = GenerateTanhBwdSuite(format, suite.name, 11, InputsPerSuite() / 4);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const float operands[2] = {inputs.columns[0][i], inputs.columns[1][i]};
      const auto x = FastTanhBwdExactValue(operands[0], operands[1], format);
      double terms[4];
      if (!x || !FastTanhBwdTermMagnitude(operands[0], operands[1], terms)) continue;
      const MpfrNumber exact = TanhBwdExact(operands[0], operands[1]);
      const auto bound = ElementwiseBound(op, operands, format);
      ASSERT_TRUE(bound.has_value());
      std::vector<double> ys = {RoundToFormat(format, exact.get()), 0.0, -0.0};
      for (float m : TanhBwdModelOutputs(format, operands[0], operands[1])) ys.push_back(m);
      const double base = ys.front();
      if (std::isfinite(base)) {
        for (int k : {-1000, -3, -1, 1, 2, 1 << 20}) ys.push_back(Step(format, base, k));
      }
      for (double y : ys) {
        if (!std::isfinite(y)) continue;
        const BoundFraction reference =
            MeasureBoundFraction(exact.get(), 1, static_cast<float>(y), *bound, format);
        const auto fast =
            FastBoundFraction(*x, y, terms, 2, static_cast<uint64_t>(op.bound_roundings), format);
        ++measured;
        if (!fast) continue;
        ++decided;
        const std::string where = std::string(suite.name) + " grad=" + HexFloat(operands[0]) +
                                  " t=" + HexFloat(operands[1]) +
                                  " y=" + HexFloat(static_cast<float>(y));
        ASSERT_EQ(fast->fraction, reference.fraction) << where;
        ASSERT_EQ(fast->bin, reference.bin) << where;
        ASSERT_EQ(fast->above_one, reference.above_one) << where;
        ASSERT_EQ(fast->overflow_exempt, reference.overflow_exempt) << where;
      }
    }
  }
  std::printf("%s bound fraction: %llu of %llu measurements decided without MPFR\n", format.name,
              static_cast<unsigned long long>(decided), static_cast<unsigned long long>(measured));
  EXPECT_GT(decided, measured * 99 / 100);
}

INSTANTIATE_TEST_SUITE_P(Formats, FastUlpTest,
                         ::testing::Values(&kBinary32, &kBFloat16, &kBinary16),
                         [](const auto& p) { return std::string(p.param->name); });

TEST(FastUlpTest, EdgesEqualMpfr) {
  const float edges[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 2.0f, 1.0f + 0x1p-23f, 1.0f - 0x1p-24f,
                         0x1p-149f, -0x1p-149f, 0x1p-126f, 0x1.fffffep127f, -0x1.fffffep127f,
                         0x1p-75f, 0x1p64f, 0x1.6a09e6p-1f, 3.0f, 0x1p-12f, 0x1.8p-1f};
  for (const FloatFormat* format : {&kBinary32, &kBFloat16, &kBinary16}) {
    for (float grad : edges) {
      for (float t : edges) {
        const float g = static_cast<float>(RoundToFormat(*format, grad));
        const float u = static_cast<float>(RoundToFormat(*format, t));
        if (!std::isfinite(g) || !std::isfinite(u)) continue;
        const MpfrNumber exact = TanhBwdExact(g, u);
        const auto x = FastTanhBwdExactValue(g, u, *format);
        if (!x) continue;
        const double rounded = RoundToFormat(*format, exact.get());
        for (double y : {rounded, Step(*format, rounded, 1), Step(*format, rounded, -1), 0.0, -0.0}) {
          const auto fast = FastUlpError(*x, y, *format);
          if (!fast) continue;
          ExpectSame(*fast, MeasureUlpError(exact.get(), y, *format),
                     format->name + std::string(" grad=") + HexFloat(g) + " t=" + HexFloat(u) +
                         " y=" + HexFloat(static_cast<float>(y)));
        }
      }
    }
  }
}

TEST(FastUlpTest, NativeNarrowModelsEqualTheEmulatedOnes) {
  for (const FloatFormat* format : {&kBFloat16, &kBinary16}) {
    for (const SuiteInfo& suite : TanhBwdSuites()) {
      const InputSet inputs = GenerateTanhBwdSuite(*format, suite.name, 3, 20000);
      for (size_t i = 0; i < inputs.size(); ++i) {
        const auto g = static_cast<uint16_t>(EncodeBits(*format, inputs.columns[0][i]));
        const auto t = static_cast<uint16_t>(EncodeBits(*format, inputs.columns[1][i]));
        const std::vector<float> native = TanhBwdNarrowModelsNative(*format, g, t);
        const std::vector<float> emulated = TanhBwdNarrowModels(*format, g, t);
        ASSERT_EQ(native.size(), emulated.size());
        for (size_t m = 0; m < native.size(); ++m) {
          ASSERT_TRUE(SameFloat(native[m], emulated[m]))
              << format->name << " " << suite.name << " model "
              << TanhBwdNarrowModelNames(*format)[m] << " grad=" << HexFloat(inputs.columns[0][i])
              << " t=" << HexFloat(inputs.columns[1][i]) << ": " << HexFloat(native[m]) << " vs "
              << HexFloat(emulated[m]);
        }
      }
    }
  }
}

TEST(FastUlpTest, NativeModelsEqualTheEmulatedOnes) {
  for (const SuiteInfo& suite : TanhBwdSuites()) {
    const InputSet inputs = GenerateTanhBwdSuite(suite.name, 3, 20000);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const float grad = inputs.columns[0][i], t = inputs.columns[1][i];
      const auto native = TanhBwdModelsNative(grad, t);
      const auto emulated = TanhBwdModels(grad, t);
      for (size_t m = 0; m < native.size(); ++m) {
        ASSERT_TRUE(SameFloat(native[m], emulated[m]))
            << suite.name << " model " << m << " grad=" << HexFloat(grad) << " t=" << HexFloat(t)
            << ": " << HexFloat(native[m]) << " vs " << HexFloat(emulated[m]);
      }
    }
  }
}

}  // namespace
}  // namespace ulpgate
