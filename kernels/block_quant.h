// The block quantization kernels per target (kernels/block_quant-inl.h):
// MX (E8M0 scales under a scale rule) and NVFP4, over a row-major binary32
// tensor blocked along its rows or its columns, and their models in
// oracles/block_scale.h. Compiled by kernels/block_quant.cc apart from the
// registry's table, found by target as the registry's kernels are.
//
// Plain C++: no Highway types.
#ifndef ULPGATE_KERNELS_BLOCK_QUANT_H_
#define ULPGATE_KERNELS_BLOCK_QUANT_H_

#include <cstddef>
#include <cstdint>

#include "oracles/block_format.h"
#include "oracles/float_format.h"

namespace ulpgate {

struct BlockQuantKernels {
  int64_t target;
  // The E8M0 bytes of n amax values (>= 0, +infinity or NaN) under `rule`
  // for elements of `element`.
  void (*mx_scale_bytes)(ScaleRule rule, const FloatFormat& element, const float* amax, size_t n,
                         uint8_t* bytes);
  // The same for the amax values whose binary32 patterns are first, first +
  // 1, ..., first + n - 1 (made in registers: the sweep over every amax
  // reads no input); n a multiple of 64, first + n <= 2^32.
  void (*mx_scale_bytes_of_patterns)(ScaleRule rule, const FloatFormat& element, uint32_t first,
                                     size_t n, uint8_t* bytes);
  // MX quantization of a [rows, cols] tensor blocked along `axis` (block
  // spec.block_size, dividing the blocked dimension): scales in the order of
  // BlockShape's, element codes unpacked in the tensor's order; elements
  // rounded to nearest even, saturating.
  void (*mx_quantize)(ScaleRule rule, const BlockSpec& spec, const float* in, size_t rows,
                      size_t cols, BlockAxis axis, uint8_t* scales, uint8_t* codes);
  // NVFP4 (kNvfp4) under the per-tensor scale `tensor_scale`, torchao's
  // sequence (oracles/block_scale.h Nvfp4Quantize), elements to nearest even.
  void (*nvfp4_quantize)(const float* in, size_t rows, size_t cols, BlockAxis axis,
                         float tensor_scale, uint8_t* scales, uint8_t* codes);
  // The binary32 values an MX tensor stands for: element times 2^X rounded
  // once to binary32 (exact unless it leaves binary32's normal range), NaN
  // for a NaN scale or element.
  void (*mx_dequantize)(const BlockSpec& spec, const uint8_t* scales, const uint8_t* codes,
                        size_t rows, size_t cols, BlockAxis axis, float* out);
};

// nullptr when the target was not compiled.
const BlockQuantKernels* FindBlockQuantKernels(int64_t target);

// Test-only (build/bin/ulpgate_mutant, kernels/testing/block_quant_mutant.cc):
// from then on FindBlockQuantKernels(target) returns `kernels`. Call before
// main, as the mutants do; production code never calls it.
void ReplaceBlockQuantKernelsForTesting(int64_t target, const BlockQuantKernels* kernels);

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_BLOCK_QUANT_H_
