// Test-only: in build/bin/ulpgate_mutant, ULPGATE_BLOCKQUANT_MUTANT=rceil_for_floor
// puts in the place of every target's block quantization kernels ones that,
// asked for OCP's floor rule, compute RCEIL (the scale bytes, those of every
// amax pattern, and the quantization), so that the tests can show run,
// check, sweep, golden check and the gate each catch a quantizer that uses
// RCEIL where it claims OCP's floor. Unset, it changes nothing. Never linked
// into ulpgate itself.

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "kernels/block_quant.h"

namespace ulpgate {
namespace {

constexpr size_t kMaxTargets = 64;  // one per bit of a Highway target mask
std::array<const BlockQuantKernels*, kMaxTargets> g_originals{};
std::array<BlockQuantKernels, kMaxTargets> g_mutants{};

ScaleRule Claimed(ScaleRule rule) { return rule == ScaleRule::kOcpFloor ? ScaleRule::kRceil : rule; }

template <size_t I>
void ScaleBytes(ScaleRule rule, const FloatFormat& element, const float* amax, size_t n,
                uint8_t* bytes) {
  g_originals[I]->mx_scale_bytes(Claimed(rule), element, amax, n, bytes);
}

template <size_t I>
void ScaleBytesOfPatterns(ScaleRule rule, const FloatFormat& element, uint32_t first, size_t n,
                          uint8_t* bytes) {
  g_originals[I]->mx_scale_bytes_of_patterns(Claimed(rule), element, first, n, bytes);
}

template <size_t I>
void Quantize(ScaleRule rule, const BlockSpec& spec, const float* in, size_t rows, size_t cols,
              BlockAxis axis, uint8_t* scales, uint8_t* codes) {
  g_originals[I]->mx_quantize(Claimed(rule), spec, in, rows, cols, axis, scales, codes);
}

template <size_t I>
void Install(const BlockQuantKernels* original) {
  g_originals[I] = original;
  g_mutants[I] = *original;
  g_mutants[I].mx_scale_bytes = &ScaleBytes<I>;
  g_mutants[I].mx_scale_bytes_of_patterns = &ScaleBytesOfPatterns<I>;
  g_mutants[I].mx_quantize = &Quantize<I>;
  ReplaceBlockQuantKernelsForTesting(original->target, &g_mutants[I]);
}

template <size_t... kI>
void InstallAll(std::index_sequence<kI...>) {
  // Target I is Highway's bit I, where one was compiled.
  (
      [] {
        const int64_t bit = int64_t{1} << kI;
        if (const BlockQuantKernels* k = FindBlockQuantKernels(bit)) Install<kI>(k);
      }(),
      ...);
}

const bool kInstalled = [] {
  const char* kind = std::getenv("ULPGATE_BLOCKQUANT_MUTANT");
  if (kind == nullptr || *kind == '\0') return false;
  if (std::strcmp(kind, "rceil_for_floor") != 0) std::abort();  // a typo must not test the right kernels
  InstallAll(std::make_index_sequence<kMaxTargets - 1>());
  return true;
}();

}  // namespace
}  // namespace ulpgate
