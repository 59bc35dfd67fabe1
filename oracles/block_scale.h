// Block quantization as a model: OCP Microscaling (MX v1.0) blocks of 32
// elements sharing one E8M0 scale, and NVIDIA's NVFP4 (blocks of 16 FP4
// E2M1 elements, an E4M3 scale each, one f32 scale per tensor). The scale
// rule and the elements' cast policy are the model's parts, and outputs made
// elsewhere are named by them as casts are (oracles/cast_policy.h).
//
// MX scale rules, for a block's amax = max |x| (an f32 value; NaN when a
// element is NaN), element format with largest finite value M = m 2^emax
// (1 <= m < 2) and p - 1 mantissa bits; the byte is X + 127 for the scale
// 2^X, X clamped to [-127, 127]; an infinite or NaN amax gives the NaN byte
// 0xff under every rule, a zero amax the byte 0 (2^-127: torchao's, which
// reads the zero's exponent field; OCP MX v1.0 leaves it open):
//   ocp_floor   X = floor(log2 amax) - emax          (OCP MX v1.0 section 6.3;
//               torchao ScaleCalculationMode.FLOOR); elements above M clip.
//   ceil        X = ceil(log2 amax) - emax           (torchao CEIL: the
//               exponent field plus one where the mantissa field is nonzero).
//   even        X = floor(log2 R(amax)) - emax, R rounding amax to p
//               significant bits half away from zero (torchao EVEN: adds
//               2^(22 - (p-1)) to amax's bits and keeps the exponent field; a
//               carry to binary32's infinity pattern gives 0xff).
//   rceil       q = RN32(amax / M), the scale q rounded up to E8M0 (the cuBLAS
//               and cuDNN block scaling "quantize_round_up(amax / vmax)";
//               torchao RCEIL on Blackwell, cvt.rp.ue8m0x2.f32): X =
//               ceil(log2 q), q <= 2^-127 (zero and binary32 subnormals
//               included) giving byte 0.
//   reciprocal  q = RN32(amax * RN32(1/M)), rounded up as rceil (torchao's
//               RCEIL fallback, _to_mx_rceil: max_abs * (1.0 / max_pos)).
// Elements: x / 2^X exactly, cast from binary32 under the element policy
// (nearest_even.saturate by default: OCP's); every element of a 0xff block is
// the cast of a NaN (the element format's NaN, or the sign bit alone where
// it has none).
#ifndef ULPGATE_ORACLES_BLOCK_SCALE_H_
#define ULPGATE_ORACLES_BLOCK_SCALE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oracles/block_format.h"
#include "oracles/cast_policy.h"
#include "oracles/float_format.h"

namespace ulpgate {

// "ocp_floor", "ceil", "even", "rceil", "reciprocal".
const char* ScaleRuleName(ScaleRule rule);
std::optional<ScaleRule> ParseScaleRule(std::string_view name);

// The E8M0 byte of a block of `element` values whose amax is `amax` (>= 0,
// +infinity or NaN), under `rule`: exact (the binary32 quotient and product
// are formed in double and rounded once to binary32, innocuous double
// rounding since 53 >= 2*24 + 2).
uint8_t ScaleByte(ScaleRule rule, const FloatFormat& element, float amax);

// The MX specs, then NVFP4.
const std::vector<const BlockSpec*>& BlockSpecs();
const BlockSpec* FindBlockSpec(std::string_view name);

// A tensor's shape and where its blocks lie (BlockAxis).
struct BlockShape {
  size_t rows = 0;
  size_t cols = 0;
  BlockAxis axis = BlockAxis::kRows;
  int block_size = 32;

  size_t blocks() const { return rows * cols / static_cast<size_t>(block_size); }
  // Element j (0 <= j < block_size) of block b, as an index into the tensor.
  size_t ElementIndex(size_t block, int j) const;
  // "" when the shape tiles into blocks, else why not.
  std::string Problem() const;
};

// A quantized tensor: one scale code per block (in BlockShape's scale
// order), one element code per element (unpacked, one per byte, in the
// tensor's order: FP4's nibble pairs are a storage matter) and, for NVFP4,
// the tensor's binary32 scale.
struct BlockQuantized {
  std::vector<uint8_t> scales;
  std::vector<uint8_t> codes;
  float tensor_scale = 1.0f;
};

// The amax of a block: max |x|, NaN when any element is NaN.
float BlockAmax(const float* values, const BlockShape& shape, size_t block);

// MX quantization under `rule` and the elements' `policy` (a flush_input
// policy flushes binary32 subnormal inputs to zeros of their sign before the
// amax and the scaling). Throws std::invalid_argument for a shape that does
// not tile or an NVFP4 spec.
BlockQuantized MxQuantize(const BlockSpec& spec, ScaleRule rule, const CastPolicy& policy,
                          const float* values, const BlockShape& shape);

// NVFP4, as torchao's nvfp4_quantize with a per-tensor scale (two-level
// scaling), each step one binary32 operation:
//   ts = RN32(tensor_amax / 2688)     (2688 = 448 * 6: per_tensor_amax_to_scale)
//   s  = E4M3(clamp(RN32(RN32(block_amax / 6) / ts), 2^-6, 448))  to nearest even
//   r  = RN32(RN32(1 / ts) / s)
//   e  = FP4(clamp(RN32(x * r), -6, 6))  under the elements' policy
// NaN carried through the clamps as torch.clamp carries it. The tensor scale
// is ts from the tensor's own amax unless given.
float Nvfp4TensorScale(float tensor_amax);
BlockQuantized Nvfp4Quantize(const CastPolicy& policy, const float* values,
                             const BlockShape& shape, std::optional<float> tensor_scale = {});

// The exact values a quantized tensor stands for: element value times its
// block's scale (times the tensor scale for NVFP4), NaN for a NaN scale.
std::vector<double> BlockDequantize(const BlockSpec& spec, const BlockQuantized& q,
                                    const BlockShape& shape);

// One (scale rule, element policy) pair as a model of MX outputs.
struct BlockModel {
  ScaleRule rule;
  CastPolicy policy;
  std::string Name() const;  // "ocp_floor/nearest_even.saturate"
};

// How a model fits outputs: blocks reproduced bit for bit (scale and every
// element), and the first that is not, with what broke in it.
struct BlockModelFit {
  BlockModel model;
  size_t blocks_matched = 0;
  std::optional<size_t> first_broken_block;
  std::string why;  // empty when every block matched
};

struct BlockNaming {
  std::vector<BlockModel> exact;  // every model that reproduces the outputs
  BlockModelFit nearest;          // the first exact model, else the most blocks matched
};

// Every (scale rule, element policy) pair, over CastPolicies(f32, element),
// whose MxQuantize reproduces `scales` and `codes` bit for bit.
BlockNaming NameScaleRules(const BlockSpec& spec, const float* values, const BlockShape& shape,
                           const std::vector<uint8_t>& scales, const std::vector<uint8_t>& codes);

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_BLOCK_SCALE_H_
