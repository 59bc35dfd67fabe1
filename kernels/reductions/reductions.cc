// The registered reductions as run-time descriptions (ReductionOpInfo), built
// from their specs' tables, and what follows from those tables alone: shapes,
// lengths, the schedules' model rule.
#include <stdexcept>

#include "kernels/reductions/reduction_spec.h"
#include "kernels/reductions/registered_reductions.h"

namespace ulpgate {
namespace {

template <class Spec, class Templates>
ReductionOpInfo MakeInfo(size_t index) {
  ReductionOpInfo op;
  op.index = index;
  op.name = Spec::kName;
  op.definition = Spec::kDefinition;
  op.family = Spec::kFamily;
  op.extents.assign(Spec::kExtents.begin(), Spec::kExtents.end());
  op.operand_info.assign(Spec::kOperands.begin(), Spec::kOperands.end());
  for (const ReductionOperandInfo& operand : Spec::kOperands) {
    op.operands.emplace_back(operand.name);
  }
  op.output = Spec::kOutput;
  op.reduction_extent = Spec::kReductionExtent;
  op.variants.assign(Spec::kVariants.begin(), Spec::kVariants.end());
  op.fused_matters = Spec::kFusedMatters;
  op.input_stream = Spec::kInputStream;
  for (std::string_view family : Spec::kAdversarialFamilies) {
    op.adversarial_families.emplace_back(family);
  }
  op.adversarial_draw = Spec::kAdversarialDraw;
  op.exact_fill = Spec::kExactFill;
  op.training_shapes.assign(Spec::kTrainingShapes.begin(), Spec::kTrainingShapes.end());
  op.golden_shape = Spec::kGoldenShape;
  op.golden_instances = Spec::kGoldenInstances;
  op.eigen_peer = Spec::kEigenPeer;
  op.gather = &Templates::Gather;
  if constexpr (HasOwnModels<Spec>::kValue) {
    op.expected_model = Spec::kExpectedModel;
    op.candidate_models = Spec::kCandidateModels;
  } else {
    op.expected_model = &ScheduleExpectedModel;
    op.candidate_models = &ScheduleCandidateModels;
  }
  for (const ReductionVariantInfo& v : Spec::kVariants) {
    if (v.schedule != ReductionSchedule::kElementwise && Spec::kReductionExtent < 0) {
      throw std::logic_error(std::string(Spec::kName) + ": a reducing schedule without a "
                             "reduction extent");
    }
  }
  return op;
}

std::vector<ReductionOpInfo> MakeOps() {
  std::vector<ReductionOpInfo> ops;
#define ULPGATE_REDUCTION_INFO(Spec, templates, kernels) \
  ops.push_back(MakeInfo<Spec, templates>(ops.size()));
  ULPGATE_REDUCTION_OPS(ULPGATE_REDUCTION_INFO)
#undef ULPGATE_REDUCTION_INFO
  return ops;
}

}  // namespace

const std::vector<ReductionOpInfo>& ReductionOps() {
  static const std::vector<ReductionOpInfo> ops = MakeOps();
  return ops;
}

const ReductionOpInfo* FindReductionOp(std::string_view name) {
  for (const auto& op : ReductionOps()) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

int ReductionVariantIndex(const ReductionOpInfo& op, std::string_view variant) {
  for (size_t v = 0; v < op.variants.size(); ++v) {
    if (op.variants[v].name == variant) return static_cast<int>(v);
  }
  return -1;
}

std::vector<size_t> TensorShape(const TensorExtents& t, const ReductionShape& shape) {
  std::vector<size_t> extents;
  for (size_t d = 0; d < t.rank; ++d) extents.push_back(shape[t.extent[d]]);
  return extents;
}

std::vector<std::vector<size_t>> ReductionOperandShapes(const ReductionOpInfo& op,
                                                        const ReductionShape& shape) {
  std::vector<std::vector<size_t>> shapes;
  for (const ReductionOperandInfo& operand : op.operand_info) {
    shapes.push_back(TensorShape(operand.shape, shape));
  }
  return shapes;
}

std::vector<size_t> ReductionOutputShape(const ReductionOpInfo& op, const ReductionShape& shape) {
  return TensorShape(op.output.shape, shape);
}

size_t ReductionOutputCount(const ReductionOpInfo& op, const ReductionShape& shape) {
  size_t count = 1;
  for (size_t extent : ReductionOutputShape(op, shape)) count *= extent;
  return count;
}

size_t ReductionLength(const ReductionOpInfo& op, const ReductionShape& shape) {
  return op.reduction_extent < 0 ? 1 : shape[static_cast<size_t>(op.reduction_extent)];
}

ReductionShape DefaultShape(const ReductionOpInfo& op) {
  ReductionShape shape;
  shape.rank = op.extents.size();
  for (size_t e = 0; e < shape.rank; ++e) shape[e] = op.extents[e].default_size;
  return shape;
}

std::string ReductionModel::Name(const ReductionOpInfo& op) const {
  std::string name;
  const char* fusion = fused ? "_fused" : "_unfused";
  switch (schedule) {
    case ReductionSchedule::kSequentialFused:
      name = op.fused_matters ? (fused ? "sequential_fused" : "sequential_unfused") : "sequential";
      break;
    case ReductionSchedule::kSequentialUnfused:
      name = op.fused_matters ? "sequential_unfused" : "sequential";
      break;
    case ReductionSchedule::kLaneParallel:
      name = "lane_parallel_x" + std::to_string(lanes) + (op.fused_matters ? fusion : "");
      break;
    case ReductionSchedule::kPairwise:
      name = "pairwise";
      break;
    case ReductionSchedule::kElementwise:
      name = "framework";
      break;
  }
  return name + std::string(suffix);
}

ReductionModel ScheduleExpectedModel(const ReductionOpInfo& op,
                                     const ReductionVariantInfo& variant, size_t lanes,
                                     bool fused_muladd) {
  ReductionModel m;
  m.schedule = variant.schedule;
  m.form = variant.form;
  m.suffix = variant.model_suffix;
  switch (variant.schedule) {
    case ReductionSchedule::kSequentialFused:
      // Where MulAdd is two roundings the fused schedule is the unfused one.
      if (!fused_muladd || !op.fused_matters) m.schedule = ReductionSchedule::kSequentialUnfused;
      m.fused = fused_muladd && op.fused_matters;
      break;
    case ReductionSchedule::kLaneParallel:
      m.lanes = lanes;
      m.fused = fused_muladd && op.fused_matters;
      break;
    default:
      break;
  }
  return m;
}

std::vector<ReductionModel> ScheduleCandidateModels(const ReductionOpInfo& op,
                                                    const ReductionVariantInfo& variant) {
  std::vector<ReductionModel> models;
  const bool fusions[] = {false, true};
  ReductionModel base;
  base.form = variant.form;
  base.suffix = variant.model_suffix;
  switch (variant.schedule) {
    case ReductionSchedule::kSequentialFused:
    case ReductionSchedule::kSequentialUnfused:
      for (bool fused : fusions) {
        if (fused && !op.fused_matters) continue;
        ReductionModel m = base;
        m.schedule = fused ? ReductionSchedule::kSequentialFused
                           : ReductionSchedule::kSequentialUnfused;
        m.fused = fused;
        models.push_back(m);
      }
      break;
    case ReductionSchedule::kLaneParallel:
      for (size_t lanes : kX86LaneCounts) {
        for (bool fused : fusions) {
          if (fused && !op.fused_matters) continue;
          ReductionModel m = base;
          m.schedule = ReductionSchedule::kLaneParallel;
          m.lanes = lanes;
          m.fused = fused;
          models.push_back(m);
        }
      }
      break;
    case ReductionSchedule::kPairwise:
    case ReductionSchedule::kElementwise: {
      ReductionModel m = base;
      m.schedule = variant.schedule;
      models.push_back(m);
      break;
    }
  }
  return models;
}

ReductionModel ExpectedReductionModel(const ReductionOpInfo& op,
                                      const ReductionVariantInfo& variant, size_t lanes,
                                      bool fused_muladd) {
  return op.expected_model(op, variant, lanes, fused_muladd);
}

std::vector<ReductionModel> CandidateReductionModels(const ReductionOpInfo& op,
                                                     const ReductionVariantInfo& variant) {
  return op.candidate_models(op, variant);
}

}  // namespace ulpgate
