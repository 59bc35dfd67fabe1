#include "kernels/elementwise_ops.h"

#include "kernels/ops/registered_ops.h"

namespace ulpgate {
namespace {

template <class Row>
int IndexIn(const std::vector<Row>& rows, std::string_view name) {
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

template <class Spec>
ElementwiseOpInfo InfoOf(size_t index) {
  ElementwiseOpInfo op;
  op.index = index;
  op.name = Spec::kName;
  op.definition = Spec::kDefinition;
  op.operands.assign(Spec::kOperands.begin(), Spec::kOperands.end());
  op.variants.assign(Spec::kVariants.begin(), Spec::kVariants.end());
  op.models.assign(Spec::kModels.begin(), Spec::kModels.end());
  const auto& model_sequences = ModelSequencesOf<Spec>::kRows;
  op.model_sequences.assign(model_sequences.begin(), model_sequences.end());
  const auto& constants = ConstantsOf<Spec>::kRows;
  op.constants.assign(constants.begin(), constants.end());
  op.narrow_variants.assign(Spec::kNarrowVariants.begin(), Spec::kNarrowVariants.end());
  op.landmarks.assign(Spec::kLandmarks.begin(), Spec::kLandmarks.end());
  op.exact_definition = Spec::kExactDefinition;
  op.bound_roundings = Spec::kBoundRoundings;
  op.own_tiers = OwnTiersOf<Spec>::kTiers;
  return op;
}

}  // namespace

std::vector<std::string> ElementwiseOpInfo::operand_names() const {
  std::vector<std::string> names;
  for (const OperandInfo& o : operands) names.emplace_back(o.name);
  return names;
}

int ElementwiseOpInfo::VariantIndex(std::string_view variant) const {
  return IndexIn(variants, variant);
}
int ElementwiseOpInfo::SequenceIndex(std::string_view sequence) const {
  const int variant = IndexIn(variants, sequence);
  if (variant >= 0) return variant;
  const int model_only = IndexIn(model_sequences, sequence);
  return model_only < 0 ? -1 : static_cast<int>(variants.size()) + model_only;
}
int ElementwiseOpInfo::ModelIndex(std::string_view model) const {
  return IndexIn(models, model);
}
int ElementwiseOpInfo::NarrowVariantIndex(std::string_view variant) const {
  return IndexIn(narrow_variants, variant);
}

const std::vector<ElementwiseOpInfo>& ElementwiseOps() {
  static const std::vector<ElementwiseOpInfo> ops = [] {
    std::vector<ElementwiseOpInfo> all;
#define ULPGATE_OP_INFO(Spec, ns) all.push_back(InfoOf<Spec>(all.size()));
    ULPGATE_ELEMENTWISE_OPS(ULPGATE_OP_INFO)
#undef ULPGATE_OP_INFO
    return all;
  }();
  return ops;
}

const ElementwiseOpInfo& DefaultElementwiseOp() { return ElementwiseOps().front(); }

const ElementwiseOpInfo* FindElementwiseOp(std::string_view name) {
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

}  // namespace ulpgate
