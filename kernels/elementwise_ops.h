// The registered elementwise ops (kernels/ops/registered_ops.h) as run-time
// data: what the commands, the engine and the oracle side ask of an op by its
// name. Plain C++, no Highway and no MPFR.
#ifndef ULPGATE_KERNELS_ELEMENTWISE_OPS_H_
#define ULPGATE_KERNELS_ELEMENTWISE_OPS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/ops/elementwise_spec.h"

namespace ulpgate {

struct ElementwiseOpInfo {
  size_t index = 0;  // in ElementwiseOps()
  std::string_view name;
  std::string_view definition;
  std::vector<OperandInfo> operands;
  std::vector<ElementwiseVariantInfo> variants;   // f32
  std::vector<ElementwiseModelInfo> models;       // f32
  std::vector<ModelSequenceInfo> model_sequences;  // sequences no kernel runs
  std::vector<NamedConstant> constants;            // that the sequences' texts name
  std::vector<NarrowVariantInfo> narrow_variants;  // bf16, f16
  std::vector<double> landmarks;                   // of the last operand
  bool exact_definition = true;
  int bound_roundings = 0;
  OwnTiers own_tiers;  // the tiers written for this op alone (elementwise_spec.h)

  std::vector<std::string> operand_names() const;
  size_t arity() const { return operands.size(); }
  // -1 when there is no such row.
  int VariantIndex(std::string_view variant) const;
  // A sequence as the op's templates number them: a variant's index, else
  // variants.size() plus the row of model_sequences.
  int SequenceIndex(std::string_view sequence) const;
  int ModelIndex(std::string_view model) const;
  int NarrowVariantIndex(std::string_view variant) const;
};

// In ULPGATE_ELEMENTWISE_OPS' order.
const std::vector<ElementwiseOpInfo>& ElementwiseOps();
// nullptr for a name that is not a registered elementwise op.
const ElementwiseOpInfo* FindElementwiseOp(std::string_view name);
// The op commands and specs take when none is given: the first registered.
const ElementwiseOpInfo& DefaultElementwiseOp();

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_ELEMENTWISE_OPS_H_
