// The stochastic rounding kernels: with their random bits as an operand, bit
// for bit the exact "stochastic16" policy of oracles/cast_policy.h on every
// target, lanes, tails and misaligned starts included; drawing their own
// bits, judged over many draws (suites/investigate/stochastic_rounding.h),
// which must pass them and fail a kernel that always rounds down or uses one
// random bit too few.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <vector>

#include "kernels/registry.h"
#include "kernels/stochastic_cast.h"
#include "oracles/cast_policy.h"
#include "oracles/float_text.h"
#include "oracles/format.h"
#include "suites/inputs/counter_rng.h"
#include "suites/investigate/stochastic_rounding.h"
#include "suites/tests/test_targets.h"

namespace ulpgate {
namespace {

float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// Every code's value of `to` and its binary32 neighbours, the points a
// quarter, half and three quarters to the next code with theirs, the largest
// finite value and past it, signed zeros, infinities, NaN payloads, binary32
// subnormals and random bit patterns.
std::vector<float> Inputs(const FloatFormat& to) {
  std::vector<float> x;
  auto with_neighbours = [&](double v) {
    const float f = static_cast<float>(v);
    for (float g : {f, std::nextafter(f, 0.0f), std::nextafter(f, HUGE_VALF)}) {
      x.push_back(g);
      x.push_back(-g);
    }
  };
  // The positive half; of bf16's 32,768 codes every 16th and the first and
  // last 64 (subnormals, the overflow's edge), so the test stays fast.
  const uint64_t codes = uint64_t{1} << (to.bits - 1);
  const uint64_t stride = codes > 2048 ? codes / 2048 : 1;
  for (uint64_t c = 0; c < codes; ++c) {
    if (c % stride != 0 && c >= 64 && c + 64 < codes) continue;
    const double v = DecodeBits(to, c);
    if (!std::isfinite(v)) continue;
    with_neighbours(v);
    const double next = DecodeBits(to, c + 1);
    if (!std::isfinite(next)) continue;
    for (double f : {0.25, 0.5, 0.75}) with_neighbours(v + f * (next - v));
  }
  with_neighbours(LargestFinite(to) * 1.0625);
  with_neighbours(LargestFinite(to) * 4);
  for (uint32_t b : {0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u, 0x7f800001u,
                     0x00000001u, 0x807fffffu, 0x7f7fffffu}) {
    x.push_back(FromBits(b));
  }
  CounterRng rng(1, StreamId("stochastic inputs"), 0);
  for (int i = 0; i < 4096; ++i) x.push_back(FromBits(rng.Next32()));
  return x;
}

class StochasticKernels : public PerTargetTest {};

TEST_P(StochasticKernels, FollowTheirPolicyBitForBit) {
  for (const StochasticCastInfo& info : StochasticCastKernels()) {
    const FloatFormat& to = *FindFormat(info.to);
    const std::optional<CastPolicy> policy = ParseCastPolicy(info.policy);
    ASSERT_TRUE(policy.has_value()) << info.policy;
    const StochasticCastKernel kernel = FindStochasticCastKernel(info.to, GetParam()->bits);
    ASSERT_NE(kernel, nullptr) << info.to;
    const std::vector<float> inputs = Inputs(to);
    // Each input with several random words, their high bits set too: the
    // kernels must use the low 16 only.
    std::vector<float> in;
    std::vector<uint32_t> random;
    CounterRng rng(2, StreamId(info.to), 0);
    for (float v : inputs) {
      for (uint32_t r : {0u, 0xffffu, 0x8000u, 0xffff0000u, rng.Next32(), rng.Next32()}) {
        in.push_back(v);
        random.push_back(r);
      }
    }
    const int bytes = to.storage_bytes();
    std::vector<unsigned char> out(in.size() * bytes);
    kernel(in.data(), random.data(), out.data(), in.size());
    int failures = 0;
    for (size_t i = 0; i < in.size() && failures < 5; ++i) {
      uint64_t got = 0;
      for (int b = 0; b < bytes; ++b) got |= uint64_t{out[i * bytes + b]} << (8 * b);
      const uint64_t want = CastCode(kBinary32, to, in[i], *policy, random[i]);
      if (got != want) {
        std::ostringstream m;
        m << info.to << " " << info.policy << " on " << GetParam()->name << ": input "
          << HexFloat(in[i]) << " random 0x" << std::hex << random[i] << " gave 0x" << got
          << ", the policy 0x" << want;
        ADD_FAILURE() << m.str();
        ++failures;
      }
    }
  }
}

// Every length up to two vectors and a few more, from misaligned starts,
// against the same kernel on one element at a time, with guard values after
// the end that must survive.
TEST_P(StochasticKernels, TailsAndMisalignedStarts) {
  for (const StochasticCastInfo& info : StochasticCastKernels()) {
    const FloatFormat& to = *FindFormat(info.to);
    const StochasticCastKernel kernel = FindStochasticCastKernel(info.to, GetParam()->bits);
    ASSERT_NE(kernel, nullptr);
    const int bytes = to.storage_bytes();
    const size_t lanes = GetParam()->f32_lanes;
    CounterRng rng(3, StreamId(info.to), 0);
    std::vector<float> in(3 * lanes + 8);
    std::vector<uint32_t> random(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      in[i] = static_cast<float>(std::ldexp(1.0 + rng.Unit(), static_cast<int>(rng.Below(8))));
      random[i] = rng.Next32();
    }
    for (size_t start = 0; start < 3; ++start) {
      for (size_t n = 0; n <= 2 * lanes + 3; ++n) {
        std::vector<unsigned char> out((n + 4) * bytes, 0xa5);
        kernel(in.data() + start, random.data() + start, out.data(), n);
        for (size_t i = 0; i < n; ++i) {
          std::vector<unsigned char> one(bytes);
          kernel(in.data() + start + i, random.data() + start + i, one.data(), 1);
          ASSERT_EQ(0, std::memcmp(one.data(), out.data() + i * bytes, bytes))
              << info.to << " n " << n << " start " << start << " element " << i;
        }
        for (size_t g = n * bytes; g < out.size(); ++g) {
          ASSERT_EQ(out[g], 0xa5) << info.to << " wrote past n = " << n;
        }
      }
    }
  }
}

ULPGATE_INSTANTIATE_PER_TARGET(StochasticKernels);

// The best target's kernel drawing its own bits: a counter-based stream,
// `mask` applied to each word (the mutants), `always_down` zeroing them.
StochasticRounder Rounder(const char* to, uint32_t mask) {
  const StochasticCastKernel kernel = FindStochasticCastKernel(to, BestTarget().bits);
  auto counter = std::make_shared<uint64_t>(0);
  return [kernel, mask, counter](const float* in, void* out, size_t n) {
    std::vector<uint32_t> random(n);
    CounterRng rng(4, StreamId("draws"), (*counter)++);
    for (uint32_t& r : random) r = rng.Next32() & mask;
    kernel(in, random.data(), out, n);
  };
}

StochasticOptions Quick() {
  StochasticOptions o;
  o.draws = uint64_t{1} << 20;  // f = 2^-16 then rounds up 16 times on average
  o.bias_inputs = size_t{1} << 16;
  return o;
}

TEST(StochasticJudge, PassesTheKernels) {
  for (const StochasticCastInfo& info : StochasticCastKernels()) {
    const StochasticVerdict v = JudgeStochastic(*FindFormat(info.to), Rounder(info.to, ~0u), Quick());
    EXPECT_TRUE(v.passed) << StochasticVerdictText(v);
    EXPECT_EQ(v.shown_bits, 16) << StochasticVerdictText(v);
    // With more than 16 bits below the quantum, dropping them biases toward
    // zero by less than 2^-16 quantum.
    EXPECT_LE(v.expected_bias, 0);
    EXPECT_GT(v.expected_bias, -0x1p-16);
  }
}

TEST(StochasticJudge, FailsAKernelThatAlwaysRoundsDown) {
  for (const StochasticCastInfo& info : StochasticCastKernels()) {
    const StochasticVerdict v = JudgeStochastic(*FindFormat(info.to), Rounder(info.to, 0u), Quick());
    EXPECT_FALSE(v.passed) << StochasticVerdictText(v);
    EXPECT_EQ(v.shown_bits, 0);
    EXPECT_TRUE(v.bias_failed) << StochasticVerdictText(v);
    EXPECT_LT(v.bias, -0.4);  // about half a quantum
  }
}

TEST(StochasticJudge, FailsAKernelWithOneRandomBitTooFew) {
  for (const StochasticCastInfo& info : StochasticCastKernels()) {
    const StochasticVerdict v =
        JudgeStochastic(*FindFormat(info.to), Rounder(info.to, ~1u), Quick());
    EXPECT_FALSE(v.passed) << StochasticVerdictText(v);
    EXPECT_EQ(v.shown_bits, 15) << StochasticVerdictText(v);
    // Claimed as 15 bits, the same outputs pass.
    StochasticOptions fifteen = Quick();
    fifteen.claimed_bits = 15;
    const StochasticVerdict w = JudgeStochastic(*FindFormat(info.to), Rounder(info.to, ~1u), fifteen);
    EXPECT_TRUE(w.passed) << StochasticVerdictText(w);
  }
}

TEST(StochasticJudge, RejectsFormatsItCannotJudge) {
  EXPECT_THROW(JudgeStochastic(kFloat8E8M0FNU, Rounder("bf16", ~0u)), std::invalid_argument);
  StochasticOptions bad;
  bad.claimed_bits = 0;
  EXPECT_THROW(JudgeStochastic(kBFloat16, Rounder("bf16", ~0u), bad), std::invalid_argument);
}

}  // namespace
}  // namespace ulpgate
