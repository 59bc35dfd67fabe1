// The row reductions' bit-exact models: kernels/reductions/row_sequences.h
// over the binary32 emulation (oracles/ieee_emulation.h), MulAdd (and
// Highway's Exp and Log) fused or not, the lane-parallel statistic over the
// target's lane count.
#ifndef ULPGATE_SUITES_ENGINE_REDUCTIONS_ROW_MODELS_H_
#define ULPGATE_SUITES_ENGINE_REDUCTIONS_ROW_MODELS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/reductions/row_ops.h"
#include "kernels/reductions/row_sequences.h"  // IWYU pragma: export (RowOperands)

namespace ulpgate {

// The operands of row r of a [rows, n] problem whose tensors are `tensors`
// (operand k of the op, in RowOpInfo::operands order; g is [n]).
RowOperands RowOperandsOf(const RowOpInfo& op, const std::vector<const float*>& tensors,
                          size_t r, size_t n);

// A model: a variant's sequence with MulAdd (and Highway's Exp and Log) fused
// or not, its lane-parallel statistic over `lanes` lanes.
struct RowModel {
  bool fused = false;
  size_t lanes = 1;
  std::string Name(const RowVariant& variant) const;  // e.g. "lane_parallel_rsqrt_x8_fused"
};

// The model a target's kernel must follow: its MulAdd and its lanes.
RowModel ExpectedRowModel(bool fused_muladd, size_t f32_lanes);

// The n binary32 outputs of one row. Throws std::invalid_argument for n = 0 or
// n > kMaxRowLength.
std::vector<float> RowModelOutputs(const RowOpInfo& op, const RowVariant& variant,
                                   const RowModel& model, const RowOperands& row, size_t n,
                                   float eps);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_ENGINE_REDUCTIONS_ROW_MODELS_H_
