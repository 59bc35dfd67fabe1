// The block quantization ops (mx_quantize: dtype an MX spec, variant a scale
// rule; nvfp4_quantize: dtype nvfp4, one variant, torchao's sequence): a
// seeded tensor, the model (oracles/block_scale.h) and each target's kernel
// (kernels/block_quant.h), and where the kernel's outputs first leave the
// model. Shared by `run`, `blockquant`, goldens and the gate.
#ifndef ULPGATE_SUITES_ENGINE_BLOCK_QUANT_CASES_H_
#define ULPGATE_SUITES_ENGINE_BLOCK_QUANT_CASES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "oracles/block_scale.h"

namespace ulpgate {

inline constexpr const char* kMxQuantizeOp = "mx_quantize";
inline constexpr const char* kNvfp4QuantizeOp = "nvfp4_quantize";
inline constexpr const char* kNvfp4Variant = "torchao";
// The one suite: SeededBlockTensor's.
inline constexpr const char* kBlockQuantSuite = "seeded";
// Goldens and the gate quantize [n, 64] tensors blocked along rows.
inline constexpr size_t kBlockQuantCols = 64;

// The specs of an op (mx_quantize: the MX ones; nvfp4_quantize: nvfp4) and
// the variants of a spec (the scale rules' names; "torchao" for NVFP4).
std::vector<std::string> BlockQuantSpecNames(const std::string& op);
std::vector<std::string> BlockQuantVariants(const BlockSpec& spec);

// A seeded tensor whose blocks have amaxes across binary32's range, every
// third one at or next to M 2^k, where the rules part; every fifth element a
// halfway case of the element grid once scaled.
std::vector<float> SeededBlockTensor(const BlockSpec& spec, const BlockShape& shape, uint64_t seed);

// The model's outputs under `variant` (a rule, or "torchao" for NVFP4; the
// elements to nearest even, saturating, as the kernels round them).
BlockQuantized BlockQuantModel(const BlockSpec& spec, const std::string& variant, const float* t,
                               const BlockShape& shape);

// A target's kernel on the tensor (NVFP4 under `tensor_scale`); nullopt when
// the target has no kernels.
std::optional<BlockQuantized> RunBlockQuantKernel(const BlockSpec& spec, const std::string& variant,
                                                  const float* t, const BlockShape& shape,
                                                  const TargetInfo& target, float tensor_scale);

// Where outputs leave the model's: blocks that differ (scale or an element),
// the first of them in words ("block 3 (amax 0x1.2p+8): scale 0x86, the
// model's 0x87") and its first differing output (an index into scales then
// codes).
struct BlockDifference {
  uint64_t blocks = 0;
  std::string first;
  uint64_t first_output = 0;
};
BlockDifference CompareBlockOutputs(const BlockShape& shape, const float* t,
                                    const BlockQuantized& want, const std::vector<uint8_t>& scales,
                                    const std::vector<uint8_t>& codes);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_ENGINE_BLOCK_QUANT_CASES_H_
