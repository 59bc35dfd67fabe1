// The linear ops on block-quantized operands: each multiplied operand of a
// suite's instances quantized to an MX or NVFP4 block format along the
// dimension the op reduces, and replaced by its dequantized values. A
// product of MX operands is then today's product of those values: an MX
// element (at most 4 significant bits) times a power of two is exact in
// binary32, so a kernel that scales blocks inside its accumulation and one
// that dequantizes first and runs the binary32 product compute the same
// products, and the models, the exact oracle and the bound of the f32 linear
// ops apply unchanged, with binary32 accumulation as MX GEMMs specify it.
// NVFP4's dequantized value, element times E4M3 block scale times the
// tensor's binary32 scale, can need more than 24 bits: it is rounded to
// binary32 once, as torchao's NVFP4 reference (dequantize, then matmul) does.
#ifndef ULPGATE_SUITES_INPUTS_BLOCK_OPERANDS_H_
#define ULPGATE_SUITES_INPUTS_BLOCK_OPERANDS_H_

#include <optional>
#include <string>
#include <string_view>

#include "oracles/block_format.h"
#include "oracles/cast_policy.h"
#include "suites/inputs/reduction_problem.h"

namespace ulpgate {

struct BlockOperands {
  const BlockSpec* spec = nullptr;
  ScaleRule rule = ScaleRule::kOcpFloor;  // MX only; NVFP4 has its own two-level rule
  CastPolicy elements;                    // nearest_even.saturate: OCP's conversion

  // "mxfp8_e4m3/ocp_floor", "nvfp4".
  std::string Name() const;
};

// "SPEC" or "SPEC/RULE" (`ulpgate list` names the specs and rules). Throws
// InputError naming the specs and rules for anything else.
BlockOperands ParseBlockOperands(std::string_view text);

// Quantizes and dequantizes the multiplied operands of every instance of
// `set` along its reduced dimension (linear_fwd's x and w along IN,
// linear_bwd_input's dy and w along OUT, linear_bwd_weight's dy and x and
// linear_bwd_bias's dy along the batch); the bias stays as it is. Throws
// InputError for the MSE ops, for a reduced dimension that is not a multiple
// of the block size, and where a dequantized value is not a value of the
// set's format.
void QuantizeOperands(const BlockOperands& block, ReductionInputSet* set);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_INPUTS_BLOCK_OPERANDS_H_
