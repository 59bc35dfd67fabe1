#include "suites/inputs/block_operands.h"

#include <fmt/format.h>

#include "oracles/block_scale.h"
#include "oracles/format.h"
#include "suites/inputs/inputs.h"

namespace ulpgate {
namespace {

std::string SpecNames() {
  std::string names;
  for (const BlockSpec* s : BlockSpecs()) names += (names.empty() ? "" : ", ") + std::string(s->name);
  return names;
}

std::string RuleNames() {
  std::string names;
  for (ScaleRule r : kScaleRules) names += (names.empty() ? "" : ", ") + std::string(ScaleRuleName(r));
  return names;
}

// Where an operand's blocks lie: the tensor's [rows, cols] and whether the
// reduced dimension runs along its rows or down its columns.
struct OperandBlocks {
  size_t operand;
  size_t rows, cols;
  BlockAxis axis;
};

// The matrices inside an op's terms (TermRole left or right), blocked along
// the axis its spec reduces them: x[B, IN] . w[OUT, IN] along IN for
// linear_fwd, dy[B, OUT]^T . x[B, IN] along B for linear_bwd_weight. An op
// without such matrices (the MSE's vectors) has none.
std::vector<OperandBlocks> MultipliedOperands(const ReductionOpInfo& op, const ReductionShape& s) {
  std::vector<OperandBlocks> blocks;
  for (size_t k = 0; k < op.operand_info.size(); ++k) {
    const ReductionOperandInfo& operand = op.operand_info[k];
    if (operand.term_role == TermRole::kOutside || operand.shape.rank != 2 ||
        operand.reduction_axis < 0) {
      continue;
    }
    blocks.push_back({k, s[operand.shape.extent[0]], s[operand.shape.extent[1]],
                      operand.reduction_axis == 1 ? BlockAxis::kRows : BlockAxis::kColumns});
  }
  return blocks;
}

}  // namespace

std::string BlockOperands::Name() const {
  if (spec->tensor_scale) return spec->name;
  return fmt::format("{}/{}", spec->name, ScaleRuleName(rule));
}

BlockOperands ParseBlockOperands(std::string_view text) {
  BlockOperands b;
  const size_t slash = text.find('/');
  b.spec = FindBlockSpec(text.substr(0, slash));
  if (b.spec == nullptr) {
    throw InputError(fmt::format("unknown block format '{}' (the block formats: {}; an MX one "
                                 "may name its scale rule, SPEC/RULE: {})",
                                 text.substr(0, slash), SpecNames(), RuleNames()));
  }
  if (slash != std::string_view::npos) {
    const std::optional<ScaleRule> rule = ParseScaleRule(text.substr(slash + 1));
    if (!rule || b.spec->tensor_scale) {
      throw InputError(fmt::format(
          "'{}': {}", text,
          b.spec->tensor_scale ? "NVFP4's scales follow its own two-level rule, named by none"
                               : "unknown scale rule (" + RuleNames() + ")"));
    }
    b.rule = *rule;
  }
  return b;
}

void QuantizeOperands(const BlockOperands& block, ReductionInputSet* set) {
  const std::vector<OperandBlocks> operands = MultipliedOperands(*set->op, set->shape);
  if (operands.empty()) {
    throw InputError(fmt::format("block-quantized operands scale the matrices whose products "
                                 "an op sums (the linear ops'); {} multiplies none",
                                 set->op->name));
  }
  const BlockSpec& spec = *block.spec;
  const std::vector<std::string>& names = set->op->operands;
  for (const OperandBlocks& o : operands) {
    BlockShape shape;
    shape.rows = o.rows;
    shape.cols = o.cols;
    shape.axis = o.axis;
    shape.block_size = spec.block_size;
    const size_t reduced = o.axis == BlockAxis::kRows ? o.cols : o.rows;
    if (reduced % static_cast<size_t>(spec.block_size) != 0) {
      throw InputError(fmt::format(
          "{} blocks {} elements along the reduced dimension of {}, whose extent is {}: use a "
          "shape whose reduced extent is a multiple of {}",
          spec.name, spec.block_size, ShapeText(*set->op, set->shape), reduced, spec.block_size));
    }
    for (ReductionInstance& instance : set->instances) {
      std::vector<float>& values = instance.operands[o.operand];
      const BlockQuantized q =
          spec.tensor_scale ? Nvfp4Quantize(block.elements, values.data(), shape)
                            : MxQuantize(spec, block.rule, block.elements, values.data(), shape);
      const std::vector<double> exact = BlockDequantize(spec, q, shape);
      for (size_t i = 0; i < values.size(); ++i) {
        // Exact for MX (see the header); NVFP4's one rounding to binary32.
        const float v = static_cast<float>(exact[i]);
        if (!IsRepresentable(*set->format, v)) {
          throw InputError(fmt::format(
              "{} of {} in {}: the dequantized value {} of {}[{}] is not a value of {}", spec.name,
              ShapeText(*set->op, set->shape), set->format->name, v, names[o.operand], i,
              set->format->name));
        }
        values[i] = v;
      }
    }
  }
  set->operands = block.Name();
}

}  // namespace ulpgate
