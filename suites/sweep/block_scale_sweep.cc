#include "suites/sweep/block_scale_sweep.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <thread>
#include <utility>
#include <vector>

#include "oracles/block_scale_steps.h"

namespace ulpgate {

ScaleByteSweep SweepScaleBytes(const BlockQuantKernels& kernels, ScaleRule rule,
                               const FloatFormat& element, unsigned threads) {
  const std::vector<std::pair<uint32_t, uint8_t>> steps = ScaleByteSteps(rule, element);
  constexpr uint64_t kChunk = uint64_t{1} << 16;
  constexpr uint64_t kPatterns = uint64_t{1} << 31;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const auto start = std::chrono::steady_clock::now();
  std::atomic<uint64_t> next{0}, mismatches{0};
  std::atomic<uint64_t> first{std::numeric_limits<uint64_t>::max()};
  const auto work = [&] {
    std::vector<uint8_t> got(kChunk), want(kChunk);
    for (uint64_t c = next++; c < kPatterns / kChunk; c = next++) {
      const uint64_t p = c * kChunk;
      kernels.mx_scale_bytes_of_patterns(rule, element, static_cast<uint32_t>(p), kChunk,
                                         got.data());
      // The step holding p, then each step's run of bytes.
      size_t s = static_cast<size_t>(
          std::upper_bound(steps.begin(), steps.end(), std::make_pair(static_cast<uint32_t>(p), uint8_t{255})) -
          steps.begin() - 1);
      uint64_t q = p;
      while (q < p + kChunk) {
        const uint64_t step_end = s + 1 < steps.size() ? steps[s + 1].first : uint64_t{1} << 32;
        const uint64_t stop = std::min<uint64_t>(step_end, p + kChunk);
        std::memset(want.data() + (q - p), steps[s].second, stop - q);
        q = stop;
        if (q == step_end) ++s;
      }
      if (std::memcmp(got.data(), want.data(), kChunk) == 0) continue;
      for (uint64_t i = 0; i < kChunk; ++i) {
        if (got[i] == want[i]) continue;
        ++mismatches;
        uint64_t seen = first.load();
        while (p + i < seen && !first.compare_exchange_weak(seen, p + i)) {
        }
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  ScaleByteSweep r;
  r.steps = steps.size();
  r.mismatches = mismatches.load();
  if (r.mismatches != 0) {
    const uint32_t pattern = static_cast<uint32_t>(first.load());
    uint8_t kernel_byte = 0;
    // Recomputed at the pattern alone: the kernel takes runs of 64.
    std::vector<uint8_t> run(64);
    kernels.mx_scale_bytes_of_patterns(rule, element, pattern & ~uint32_t{63}, 64, run.data());
    kernel_byte = run[pattern & 63];
    uint8_t want_byte = 0;
    for (const auto& [begin, byte] : steps) {
      if (begin <= pattern) want_byte = byte;
    }
    r.first = ScaleByteMismatch{pattern, kernel_byte, want_byte};
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace ulpgate
