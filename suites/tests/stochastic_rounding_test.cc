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

class StochasticKernels : public PerTargetTest {};

TEST_P(StochasticKernels, FollowTheirPolicyBitForBit) {
  for (const StochasticCastInfo& info : StochasticCastKernels()) {
    const FloatFormat& to = *FindFormat(info.to);
    const std::optional<CastPolicy> policy = ParseCastPolicy(info.policy);
    ASSERT_TRUE(policy.has_value()) << info.policy;
    const StochasticCastKernel kernel = FindStochasticCastKernel(info.to, GetParam()->bits);
    ASSERT_NE(kernel, nullptr) << info.to;
    const StochasticExactCheck check = CheckStochasticExact(to, *policy, kernel);
    EXPECT_GT(check.checked, 10000u);
    EXPECT_EQ(check.mismatches, 0u) << info.to << " " << info.policy << " on "
                                    << GetParam()->name << ": " << check.first;
  }
}

// The check itself: a kernel that drops the lowest random bit is not
// stochastic16 and must be told so.
TEST_P(StochasticKernels, ExactCheckCatchesOneBitTooFew) {
  for (const StochasticCastInfo& info : StochasticCastKernels()) {
    const StochasticCastKernel kernel = FindStochasticCastKernel(info.to, GetParam()->bits);
    const StochasticKernelCall short_one = [kernel](const float* in, const uint32_t* random,
                                                    void* out, size_t n) {
      std::vector<uint32_t> r(random, random + n);
      for (uint32_t& w : r) w &= ~1u;
      kernel(in, r.data(), out, n);
    };
    const StochasticExactCheck check =
        CheckStochasticExact(*FindFormat(info.to), *ParseCastPolicy(info.policy), short_one);
    EXPECT_GT(check.mismatches, 0u) << info.to;
    EXPECT_NE(check.first.find("random 0x"), std::string::npos) << check.first;
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
