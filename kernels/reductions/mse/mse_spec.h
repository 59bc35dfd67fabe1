// The MSE loss, forward (a reduction to one scalar) and backward
// (elementwise): loss = (1/N) sum_i (y_i - t_i)^2 and dy_i = (2/N) (y_i - t_i)
// grad_out, y and target [N]. The forward pass is a sum of squares, so its
// templates (mse_spec-inl.h) run the schedules of
// kernels/reductions/sum_of_terms-inl.h; its kernels are mse-inl.h.
//
// ElementTerms of one output (Gather): mse_fwd vectors {y, target}, count N;
// mse_bwd dy[i] vectors {{y[i]}, {target[i]}}, scalars {grad_out}, count N.
#ifndef ULPGATE_KERNELS_REDUCTIONS_MSE_MSE_SPEC_H_
#define ULPGATE_KERNELS_REDUCTIONS_MSE_MSE_SPEC_H_

#include <array>
#include <string_view>
#include <vector>

#include "kernels/reductions/reduction_spec.h"
#include "kernels/reductions/sum_of_terms.h"

namespace ulpgate {

struct MseShapes {
  static constexpr uint8_t kN = 0;
  static constexpr std::array<ReductionExtentInfo, 1> kExtents = {{{"n", "N", 1000}}};
  // The drift model's output, [8, 2], flattened.
  static constexpr std::array<ReductionShape, 1> kTrainingShapes = {{{{16, 1, 1, 1}, 1}}};
  // The goldens' shape and instances: N odd, so that every lane width leaves
  // a tail.
  static constexpr ReductionShape kGoldenShape = {{37, 1, 1, 1}, 1};
  static constexpr size_t kGoldenInstances = 4;
  static constexpr AdversarialDraw kAdversarialDraw = AdversarialDraw::kDifferences;
  static constexpr ExactFill kExactFill = ExactFill::kSquaredDifferences;
  static constexpr bool kEigenPeer = false;
};

// The mean's two forms (ReductionVariantInfo::form).
inline constexpr int kMeanByDivision = 0;
inline constexpr int kMeanByReciprocal = 1;

struct MseFwdSpec : MseShapes {
  static constexpr std::string_view kName = "mse_fwd";
  static constexpr std::string_view kFamily = "mse";
  static constexpr std::string_view kDefinition =
      "loss = (1/N) sum_i (y_i - t_i)^2: y [N], target [N]; the sum, then the division by N "
      "(or the product with RN(1/N) in the _recip variants)";
  static constexpr std::array<ReductionOperandInfo, 2> kOperands = {{
      {"y", "the prediction", Extents(kN), OperandKind::kPrediction, TermRole::kLeft, 0},
      {"target", "the target", Extents(kN), OperandKind::kTarget, TermRole::kRight, 0},
  }};
  static constexpr ReductionOutputInfo kOutput = {"loss", ScalarShape()};
  static constexpr int kReductionExtent = kN;
  static constexpr std::array<ReductionVariantInfo, 8> kVariants = {{
      {"sequential_fma", ReductionSchedule::kSequentialFused, kMeanByDivision, "",
       "d = RN(y_i - t_i); acc = MulAdd(d, d, acc); mean = RN(acc / N)"},
      {"sequential_unfused", ReductionSchedule::kSequentialUnfused, kMeanByDivision, "",
       "d = RN(y_i - t_i); acc = acc + RN(d*d); mean = RN(acc / N)"},
      {"lane_parallel", ReductionSchedule::kLaneParallel, kMeanByDivision, "",
       "lane j: acc_j = MulAdd(d_i, d_i, acc_j), i = j mod L (+0 padding); halving tree; "
       "mean = RN(sum / N)"},
      {"pairwise", ReductionSchedule::kPairwise, kMeanByDivision, "",
       "cascade of RN(d_i*d_i); mean = RN(sum / N)"},
      {"sequential_fma_recip", ReductionSchedule::kSequentialFused, kMeanByReciprocal, "_recip",
       "d = RN(y_i - t_i); acc = MulAdd(d, d, acc); mean = RN(acc * RN(1/N))"},
      {"sequential_unfused_recip", ReductionSchedule::kSequentialUnfused, kMeanByReciprocal,
       "_recip", "d = RN(y_i - t_i); acc = acc + RN(d*d); mean = RN(acc * RN(1/N))"},
      {"lane_parallel_recip", ReductionSchedule::kLaneParallel, kMeanByReciprocal, "_recip",
       "lane j: acc_j = MulAdd(d_i, d_i, acc_j), i = j mod L (+0 padding); halving tree; "
       "mean = RN(sum * RN(1/N))"},
      {"pairwise_recip", ReductionSchedule::kPairwise, kMeanByReciprocal, "_recip",
       "cascade of RN(d_i*d_i); mean = RN(sum * RN(1/N))"},
  }};
  static constexpr bool kFusedMatters = true;
  static constexpr uint64_t kInputStream = 4;
  static constexpr std::array<std::string_view, 5> kAdversarialFamilies = {
      "huge_range", "equal", "subnormal_differences", "overflowing_partials", "near_equal"};
};

struct MseBwdSpec : MseShapes {
  static constexpr std::string_view kName = "mse_bwd";
  static constexpr std::string_view kFamily = "mse";
  static constexpr std::string_view kDefinition =
      "dy_i = (2/N) (y_i - t_i) grad_out: y [N], target [N], grad_out a scalar";
  static constexpr std::array<ReductionOperandInfo, 3> kOperands = {{
      {"y", "the prediction", Extents(kN), OperandKind::kPrediction, TermRole::kLeft, 0},
      {"target", "the target", Extents(kN), OperandKind::kTarget, TermRole::kRight, 0},
      {"grad_out", "the loss's gradient", ScalarShape(), OperandKind::kGradOut,
       TermRole::kOutside, -1},
  }};
  static constexpr ReductionOutputInfo kOutput = {"dy", Extents(kN)};
  static constexpr int kReductionExtent = -1;  // elementwise
  static constexpr std::array<ReductionVariantInfo, 1> kVariants = {{
      {"framework", ReductionSchedule::kElementwise, 0, "",
       "s = RN(2/N); dy = RN(RN(s * RN(y - t)) * grad_out)"},
  }};
  static constexpr bool kFusedMatters = false;
  static constexpr uint64_t kInputStream = 5;
  static constexpr std::array<std::string_view, 5> kAdversarialFamilies = {
      "huge_range", "equal", "subnormal_differences", "overflowing_difference",
      "extreme_grad_out"};
};

namespace mse_spec {
#include "kernels/reductions/mse/mse_spec-inl.h"  // IWYU pragma: export
}  // namespace mse_spec

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_REDUCTIONS_MSE_MSE_SPEC_H_
