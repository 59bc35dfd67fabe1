// The binary32 emulation against the host's IEEE arithmetic (SSE, correctly
// rounded, compiled with -ffp-contract=off) and against std::fmaf, on inputs
// that exercise subnormals, overflow and ties.
#include "oracles/ieee_emulation.h"

#include <gtest/gtest.h>

#include <cmath>

#include "oracles/float_text.h"
#include "suites/inputs/counter_rng.h"

namespace ulpgate {
namespace {

// Any finite float, biased so that a quarter are tiny or huge.
float Operand(CounterRng& rng) {
  for (;;) {
    float x = FloatFromBits(rng.Next32());
    if (!std::isfinite(x)) continue;
    return x;
  }
}

// The host computes these in SSE registers with one rounding each; volatile
// keeps the compiler from folding or reassociating them.
float HostSub(volatile float a, volatile float b) { return a - b; }
float HostMul(volatile float a, volatile float b) { return a * b; }
float HostDiv(volatile float a, volatile float b) { return a / b; }

void ExpectSame(float expected, float got, const char* op, float a, float b) {
  ASSERT_TRUE(SameFloat(expected, got))
      << op << "(" << HexFloat(a) << ", " << HexFloat(b) << "): host " << HexFloat(expected)
      << " (" << BitsHex(expected) << "), emulation " << HexFloat(got) << " (" << BitsHex(got)
      << ")";
}

TEST(Binary32Emulation, MatchesHostArithmeticBitForBit) {
  const Binary32Arith arith(false);
  for (uint64_t i = 0; i < 200000; ++i) {
    CounterRng rng(7, 1, i);
    float a = Operand(rng), b = Operand(rng);
    // Every 4th pair has operands within 2^24 of each other's exponent, so
    // sums round in interesting ways instead of returning the bigger one.
    if (i % 4 == 0) b = std::ldexp(b, std::ilogb(a) - std::ilogb(b) + int(rng.Below(48)) - 24);
    ExpectSame(a + b, arith.Add(a, b), "add", a, b);
    ExpectSame(HostSub(a, b), arith.Sub(a, b), "sub", a, b);
    ExpectSame(HostMul(a, b), arith.Mul(a, b), "mul", a, b);
    ExpectSame(HostDiv(a, b), arith.Div(a, b), "div", a, b);
    ExpectSame(std::sqrt(std::fabs(a)), arith.Sqrt(std::fabs(a)), "sqrt", a, 0);
  }
}

TEST(Binary32Emulation, FusedMatchesFmafAndUnfusedRoundsTwice) {
  const Binary32Arith fused(true), unfused(false);
  for (uint64_t i = 0; i < 100000; ++i) {
    CounterRng rng(8, 2, i);
    const float a = Operand(rng), b = Operand(rng);
    // c near -a*b so that the fused and unfused results differ often.
    const float c = (i % 2) ? -HostMul(a, b) * (1.0f + 0x1p-20f * float(rng.Below(8)))
                            : Operand(rng);
    ExpectSame(std::fma(a, b, c), fused.MulAdd(a, b, c), "fma", a, b);
    ExpectSame(std::fma(-a, b, c), fused.NegMulAdd(a, b, c), "fnma", a, b);
    ExpectSame(HostSub(c, HostMul(a, b)), unfused.NegMulAdd(a, b, c), "c - a*b", a, b);
  }
}

TEST(Binary32Emulation, KnownRoundings) {
  const Binary32Arith fused(true), unfused(false);
  // (1 + 2^-23)(1 - 2^-23) = 1 - 2^-46: one rounding keeps the -2^-46, two lose it.
  const float a = 1.0f + 0x1p-23f, b = 1.0f - 0x1p-23f;
  EXPECT_EQ(fused.MulAdd(a, b, -1.0f), -0x1p-46f);
  EXPECT_EQ(unfused.MulAdd(a, b, -1.0f), 0.0f);
  // Gradual underflow: 2^-75 * 2^-75 = 2^-150 is a tie between 0 and 2^-149;
  // ties-to-even gives +0. 1.5 * 2^-150 rounds up to 2^-149.
  EXPECT_EQ(FloatBits(fused.Mul(0x1p-75f, 0x1p-75f)), 0u);
  EXPECT_EQ(fused.Mul(0x1.8p-75f, 0x1p-75f), 0x1p-149f);  // 0.75 * 2^-149
  // Overflow: max * 2 = inf; max + half an ulp of max (2^103) ties to even: inf.
  EXPECT_TRUE(std::isinf(fused.Mul(0x1.fffffep127f, 2.0f)));
  EXPECT_TRUE(std::isinf(fused.MulAdd(0x1p103f, 1.0f, 0x1.fffffep127f)));
  // Signed zeros of fma: -(+0 * 1) + (-0) = -0; c - a*b with a*b = c: +0.
  EXPECT_TRUE(std::signbit(fused.NegMulAdd(0.0f, 1.0f, -0.0f)));
  EXPECT_FALSE(std::signbit(fused.NegMulAdd(2.0f, 3.0f, 6.0f)));
}

}  // namespace
}  // namespace ulpgate
