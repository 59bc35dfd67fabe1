// Each MX scale rule's byte is a step function of the block's amax. Its
// steps are derived here from the rules' definitions alone (exact reasoning
// on binary32 patterns and in double, not by calling the code under test):
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
#include "oracles/float_text.h"
#include "oracles/format.h"

namespace ulpgate {
namespace {

constexpr uint32_t kInfinity = 0x7f800000u;
const FloatFormat* const kElements[] = {&kFloat8E4M3FN, &kFloat8E5M2, &kFloat6E2M3FN,
                                        &kFloat6E3M2FN, &kFloat4E2M1FN};

uint32_t PowerOfTwoPattern(int k) {  // 2^k, -149 <= k <= 127
  return k >= -126 ? static_cast<uint32_t>(k + 127) << 23 : uint32_t{1} << (k + 149);
}

// The least binary32 pattern whose value is above v (v >= 0, a double);
// infinity's when none is.
uint32_t FirstAbove(double v) {
  if (v >= std::numeric_limits<float>::max()) return kInfinity;
  float f = static_cast<float>(v);
  if (static_cast<double>(f) <= v) f = std::nextafter(f, HUGE_VALF);
  return FloatBits(f);
}

// RN32(q) > 2^j, for j >= -127, holds exactly when q exceeds the midpoint
// of 2^j and the next binary32 above it: the tie rounds to 2^j, whose
// pattern is even (mantissa 0, or 0x400000 for 2^-127).
double MidpointAbove(int j) {
  const double step = j >= -126 ? std::ldexp(1.0, j - 23) : 0x1p-149;
  return std::ldexp(1.0, j) + step / 2;
}

// T[b], b = 1..255: the least pattern whose byte is at least b (infinity's
// where no finite amax reaches b); T[0] = 0.
std::vector<uint32_t> Thresholds(ScaleRule rule, const FloatFormat& f) {
  std::vector<uint32_t> t(256, kInfinity);
  t[0] = 0;
  const double m = LargestFinite(f);
  // RN32(1/M): a double quotient rounded to binary32 (innocuous double
  // rounding: 53 >= 2*24 + 2).
  const double reciprocal = static_cast<float>(1.0 / m);
  for (int b = 1; b <= 254; ++b) {
    switch (rule) {
      case ScaleRule::kOcpFloor: {  // floor(log2 a) >= b - 127 + emax
        const int k = b - 127 + f.emax;
        if (k <= 127) t[b] = PowerOfTwoPattern(k);
        break;
      }
      case ScaleRule::kCeil: {  // a > 2^(b - 128 + emax)
        const int k = b - 128 + f.emax;
        if (k <= 127) t[b] = PowerOfTwoPattern(k) + 1;
        break;
      }
      case ScaleRule::kEven: {
        // R(a) >= 2^(k+1), k = b - 128 + emax: a at or above 2^(k+1) less
        // half a unit of p bits in binade k, 2^(k-p).
        const int k = b - 128 + f.emax;
        if (k + 1 <= 127) {
          const double carry = std::ldexp(1.0, k + 1) - std::ldexp(1.0, k - f.precision);
          t[b] = FloatBits(static_cast<float>(carry));  // exact: p + 1 bits
        }
        break;
      }
      case ScaleRule::kRceil:  // RN32(a / M) > 2^(b - 128): a > M mid (exact in double)
        t[b] = FirstAbove(m * MidpointAbove(b - 128));
        break;
      case ScaleRule::kReciprocal: {  // RN32(a r) > 2^(b - 128): a r > mid, a r exact in double
        const double mid = MidpointAbove(b - 128);
        uint32_t p = FirstAbove(mid / reciprocal);
        const auto above = [&](uint32_t a) {
          return static_cast<double>(FloatFromBits(a)) * reciprocal > mid;
        };
        while (p > 0 && p < kInfinity && above(p - 1)) --p;
        while (p < kInfinity && !above(p)) ++p;
        t[b] = p;
        break;
      }
    }
  }
  // 0xff: infinity and NaN, and EVEN's carry to 2^128 from 2^128 - 2^(127-p).
  t[255] = rule == ScaleRule::kEven
               ? FloatBits(static_cast<float>(0x1p128 - std::ldexp(1.0, 127 - f.precision)))
               : kInfinity;
  return t;
}

// The step function: (first pattern, byte) for each step, byte(p) = max{b :
// T[b] <= p}, ending with infinity's step (0xff).
std::vector<std::pair<uint32_t, uint8_t>> Steps(ScaleRule rule, const FloatFormat& f) {
  const std::vector<uint32_t> t = Thresholds(rule, f);
  std::vector<uint32_t> starts(t.begin(), t.end());
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  std::vector<std::pair<uint32_t, uint8_t>> steps;
  for (uint32_t s : starts) {
    int byte = 0;
    for (int b = 0; b < 256; ++b) {
      if (t[static_cast<size_t>(b)] <= s) byte = b;
    }
    if (steps.empty() || steps.back().second != byte) {
      steps.emplace_back(s, static_cast<uint8_t>(byte));
    }
  }
  return steps;
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
  constexpr size_t kChunk = size_t{1} << 16;
  constexpr uint64_t kPatterns = uint64_t{1} << 31;
  const auto start = std::chrono::steady_clock::now();
  for (const FloatFormat* f : kElements) {
    for (ScaleRule rule : kScaleRules) {
      const auto steps = Steps(rule, *f);
      const auto combo_start = std::chrono::steady_clock::now();
      // Two threads, each half of the patterns; each reports its first
      // mismatch (pattern, kernel byte, expected byte).
      struct Mismatch {
        bool found = false;
        uint32_t pattern = 0;
        int got = 0, want = 0;
      };
      Mismatch mismatches[2];
      auto run = [&](int half) {
        std::vector<uint8_t> got(kChunk), want(kChunk);
        const uint64_t begin = half * (kPatterns / 2), end = begin + kPatterns / 2;
        // The step holding `begin`.
        size_t s = 0;
        while (s + 1 < steps.size() && steps[s + 1].first <= begin) ++s;
        for (uint64_t p = begin; p < end; p += kChunk) {
          k->mx_scale_bytes_of_patterns(rule, *f, static_cast<uint32_t>(p), kChunk, got.data());
          uint64_t q = p;
          while (q < p + kChunk) {
            const uint64_t next = s + 1 < steps.size() ? steps[s + 1].first : uint64_t{1} << 32;
            const uint64_t stop = std::min<uint64_t>(next, p + kChunk);
            std::memset(want.data() + (q - p), steps[s].second, stop - q);
            q = stop;
            if (q == next) ++s;
          }
          if (std::memcmp(got.data(), want.data(), kChunk) != 0) {
            for (size_t i = 0; i < kChunk; ++i) {
              if (got[i] != want[i]) {
                mismatches[half] = {true, static_cast<uint32_t>(p + i), got[i], want[i]};
                return;
              }
            }
          }
        }
      };
      std::thread second(run, 1);
      run(0);
      second.join();
      for (const Mismatch& m : mismatches) {
        EXPECT_FALSE(m.found) << f->name << " " << ScaleRuleName(rule) << " on "
                              << BestTarget().name << ": amax "
                              << HexFloat(FloatFromBits(m.pattern)) << " (0x" << std::hex
                              << m.pattern << "): kernel byte 0x" << m.got << ", the steps say 0x"
                              << m.want;
      }
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - combo_start).count();
      std::printf("%-14s %-10s %zu steps, 2^31 amax in %.2f s\n", f->name, ScaleRuleName(rule),
                  steps.size(), seconds);
    }
  }
  const double total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("every non-negative binary32 amax, 5 rules x 5 formats, on %s: %.1f s\n",
              BestTarget().name.c_str(), total);
}

}  // namespace
}  // namespace ulpgate
