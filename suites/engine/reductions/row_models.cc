#include "suites/engine/reductions/row_models.h"

#include "kernels/reductions/row_sequences.h"
#include "oracles/ieee_emulation.h"

namespace ulpgate {

RowOperands RowOperandsOf(const RowOpInfo& op, const std::vector<const float*>& tensors,
                          size_t r, size_t n) {
  RowOperands row;
  for (size_t k = 0; k < op.operands.size(); ++k) {
    const std::string_view name = op.operands[k];
    const float* p = tensors.at(k) + (IsRowWeight(op, k) ? 0 : r * n);
    if (name == "x") row.x = p;
    else if (name == "g") row.g = p;
    else if (name == "dy") row.dy = p;
    else if (name == "y") row.y = p;
  }
  return row;
}

std::string RowModel::Name(const RowVariant& variant) const {
  std::string name(variant.name);
  if (variant.stat == RowStat::kLaneParallel) name += "_x" + std::to_string(lanes);
  return name + (fused ? "_fused" : "_unfused");
}

RowModel ExpectedRowModel(bool fused_muladd, size_t f32_lanes) {
  return {fused_muladd, RowParallelLanes(f32_lanes)};
}

std::vector<float> RowModelOutputs(const RowOpInfo& op, const RowVariant& variant,
                                   const RowModel& model, const RowOperands& in, size_t n,
                                   float eps) {
  const Binary32Arith emulation(model.fused);
  return RowSequenceOutputs(emulation, op, variant, model.lanes, in, n, eps);
}

}  // namespace ulpgate
