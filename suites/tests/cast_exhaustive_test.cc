// Every binary32 pattern (2^32) through each cast kernel from f32, on every
// target, against the exact cast model: the model over binary32 is a step
// function of the pattern (oracles/cast_reference.h), so each block of
// patterns gets its expected codes as runs, and the kernel's codes are
// compared with them byte for byte, on every core. The reference itself is
// held to CastCode by cast_kernels_test (CastReference.EqualsTheModel) and
// here on millions of patterns (EqualsTheModelOnMillions). Label exhaustive; docs/sweeps.md has
// the times.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <ostream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "kernels/cast.h"
#include "oracles/cast_policy.h"
#include "oracles/cast_reference.h"
#include "oracles/format.h"
#include "suites/tests/test_targets.h"

namespace ulpgate {
namespace {

double ValueOf(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return static_cast<double>(f);
}

struct ExhaustiveParam {
  const TargetInfo* target;
  const FloatFormat* to;
  const CastVariantInfo* variant;
};

void PrintTo(const ExhaustiveParam& p, std::ostream* out) {
  *out << p.target->name << " " << p.to->name << " " << p.variant->name;
}

std::vector<ExhaustiveParam> Params() {
  std::vector<ExhaustiveParam> out;
  for (const TargetInfo* t : CompiledTestTargets()) {
    for (const FloatFormat* to : kCastDestinations) {
      for (const CastVariantInfo& v : kCastVariants) {
        if (CastVariantApplies(kBinary32, *to, v.variant)) out.push_back({t, to, &v});
      }
    }
  }
  return out;
}

class CastExhaustiveTest : public testing::TestWithParam<ExhaustiveParam> {
 protected:
  void SetUp() override {
    if (!GetParam().target->supported) {
      GTEST_SKIP() << GetParam().target->name << " is " << NotRunnableReason(*GetParam().target);
    }
  }
};

TEST_P(CastExhaustiveTest, EveryBinary32Pattern) {
  const ExhaustiveParam& p = GetParam();
  const CastKernel kernel = FindCastKernel("f32", p.to->name, p.variant->name, p.target->bits);
  ASSERT_NE(kernel, nullptr);
  const CastPolicy policy = *ParseCastPolicy(p.variant->policy);
  const Binary32CastReference reference(*p.to, policy);
  constexpr uint64_t kBlock = 1 << 16;
  constexpr uint64_t kBlocks = (uint64_t{1} << 32) / kBlock;
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> wrong{0};
  std::atomic<uint64_t> first_wrong{std::numeric_limits<uint64_t>::max()};
  const auto work = [&] {
    std::vector<uint32_t> in(kBlock);
    std::vector<uint8_t> got(kBlock), want(kBlock);
    for (uint64_t b = next++; b < kBlocks; b = next++) {
      const uint32_t base = static_cast<uint32_t>(b * kBlock);
      for (uint32_t j = 0; j < kBlock; ++j) in[j] = base + j;
      kernel(in.data(), got.data(), kBlock);
      reference.Fill(base, kBlock, want.data());
      if (std::memcmp(got.data(), want.data(), kBlock) == 0) continue;
      for (uint32_t j = 0; j < kBlock; ++j) {
        if (got[j] == want[j]) continue;
        ++wrong;
        uint64_t seen = first_wrong.load();
        while (base + j < seen && !first_wrong.compare_exchange_weak(seen, base + j)) {
        }
      }
    }
  };
  const auto start = std::chrono::steady_clock::now();
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << fmt::format("{} f32 -> {} {}: 2^32 patterns in {:.2f} s on {} threads\n",
                           p.target->name, p.to->name, p.variant->name, seconds, threads);
  RecordProperty("seconds", fmt::format("{:.2f}", seconds));
  if (wrong != 0) {
    const uint32_t b = static_cast<uint32_t>(first_wrong.load());
    uint8_t got;
    kernel(&b, &got, 1);
    ADD_FAILURE() << wrong << " patterns off " << policy.Name() << "; the first, 0x" << std::hex
                  << b << " = " << std::hexfloat << ValueOf(b) << ": kernel 0x" << int{got}
                  << ", model 0x" << CastCode(kBinary32, *p.to, ValueOf(b), policy)
                  << ", reference 0x" << int{reference.Code(b)};
  }
}

INSTANTIATE_TEST_SUITE_P(PerTarget, CastExhaustiveTest, testing::ValuesIn(Params()),
                         [](const testing::TestParamInfo<ExhaustiveParam>& param) {
                           return fmt::format("{}_{}_{}", param.param.target->name,
                                              param.param.to->name, param.param.variant->name);
                         });

// The reference against the model on 2^22 patterns per (destination,
// variant): an odd stride through every binade and sign, NaNs included.
TEST(CastReference, EqualsTheModelOnMillions) {
  for (const FloatFormat* to : kCastDestinations) {
    for (const CastVariantInfo& v : kCastVariants) {
      if (!CastVariantApplies(kBinary32, *to, v.variant)) continue;
      const CastPolicy policy = *ParseCastPolicy(v.policy);
      const Binary32CastReference reference(*to, policy);
      size_t wrong = 0;
      for (uint64_t i = 0; i < (uint64_t{1} << 22); ++i) {
        const uint32_t b = static_cast<uint32_t>(i * 1021 + (i >> 12) * 0x9e3779b1u);
        if (reference.Code(b) != CastCode(kBinary32, *to, ValueOf(b), policy) && ++wrong <= 3) {
          ADD_FAILURE() << to->name << " " << v.name << " 0x" << std::hex << b;
        }
      }
      EXPECT_EQ(wrong, 0u) << to->name << " " << v.name;
    }
  }
}

}  // namespace
}  // namespace ulpgate
