// Each MX scale rule's byte is a step function of the block's amax. Its
// steps are derived from the rules' definitions alone (oracles/block_scale_steps.h:
// exact reasoning on binary32 patterns and in double, not by calling the code under test):
// the model (ScaleByte) is held to them on both sides of every step, and the
// kernel (mx_scale_bytes_of_patterns) over every non-negative binary32
// pattern, 2^31 per rule and format (the EveryAmax test, label exhaustive).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/block_quant.h"
#include "kernels/registry.h"
#include "oracles/block_scale.h"
#include "oracles/block_scale_steps.h"
#include "oracles/float_text.h"
#include "oracles/format.h"
#include "suites/sweep/block_scale_sweep.h"

namespace ulpgate {
namespace {

const FloatFormat* const kElements[] = {&kFloat8E4M3FN, &kFloat8E5M2, &kFloat6E2M3FN,
                                        &kFloat6E3M2FN, &kFloat4E2M1FN};

std::vector<std::pair<uint32_t, uint8_t>> Steps(ScaleRule rule, const FloatFormat& f) {
  return ScaleByteSteps(rule, f);
}

TEST(BlockScaleSteps, ModelStepsWhereTheDefinitionsSay) {
  for (const FloatFormat* f : kElements) {
    for (ScaleRule rule : kScaleRules) {
      const auto steps = Steps(rule, *f);
      SCOPED_TRACE(testing::Message() << f->name << " " << ScaleRuleName(rule));
      ASSERT_EQ(steps.front(), std::make_pair(uint32_t{0}, uint8_t{0}));
      ASSERT_EQ(steps.back().second, 0xff);
      for (size_t i = 0; i < steps.size(); ++i) {
        const float at = FloatFromBits(steps[i].first);
        EXPECT_EQ(ScaleByte(rule, *f, at), steps[i].second) << HexFloat(at);
        if (i > 0) {
          const float below = FloatFromBits(steps[i].first - 1);
          EXPECT_EQ(ScaleByte(rule, *f, below), steps[i - 1].second) << HexFloat(below);
          // Bytes only grow, the NaN byte apart from the others.
          EXPECT_GT(steps[i].second, steps[i - 1].second);
        }
      }
      EXPECT_EQ(ScaleByte(rule, *f, std::numeric_limits<float>::quiet_NaN()), 0xff);
    }
  }
}

TEST(BlockScaleSteps, RceilAndReciprocalStepTogether) {
  // RN32(1/M) lies above 1/M by under 2^-24 relative for every MX element
  // format (M = 448, 57344, 7.5, 28, 6), too little to move a step: the two
  // forms give the same byte for every binary32 amax.
  for (const FloatFormat* f : kElements) {
    EXPECT_EQ(Steps(ScaleRule::kRceil, *f), Steps(ScaleRule::kReciprocal, *f)) << f->name;
  }
}

TEST(BlockScaleSteps, EveryAmaxOnTheKernel) {
  const BlockQuantKernels* k = FindBlockQuantKernels(BestTarget().bits);
  ASSERT_NE(k, nullptr);
  const auto start = std::chrono::steady_clock::now();
  for (const FloatFormat* f : kElements) {
    for (ScaleRule rule : kScaleRules) {
      const ScaleByteSweep r = SweepScaleBytes(*k, rule, *f, 2);
      EXPECT_EQ(r.mismatches, 0u) << f->name << " " << ScaleRuleName(rule) << " on "
                                  << BestTarget().name;
      if (r.first) {
        ADD_FAILURE() << "first: amax " << HexFloat(FloatFromBits(r.first->pattern)) << " (0x"
                      << std::hex << r.first->pattern << "): kernel byte 0x" << int{r.first->kernel}
                      << ", the steps say 0x" << int{r.first->steps};
      }
      std::printf("%-14s %-10s %zu steps, 2^31 amax in %.2f s\n", f->name, ScaleRuleName(rule),
                  r.steps, r.seconds);
    }
  }
  const double total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("every non-negative binary32 amax, 5 rules x 5 formats, on %s: %.1f s\n",
              BestTarget().name.c_str(), total);
}

}  // namespace
}  // namespace ulpgate
