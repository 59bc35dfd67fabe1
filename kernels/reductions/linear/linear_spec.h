// The linear layer's reductions, forward and backward: y = x W^T + b,
// dx = dy W, dW = dy^T x, db = column sums of dy, with x [B, in], W [out, in],
// b [out], dy [B, out]. Sums of products (and one plain sum), so their
// templates (linear_spec-inl.h) run the schedules of
// kernels/reductions/sum_of_terms-inl.h; their kernels are linear-inl.h.
//
// ElementTerms of one output (Gather): vectors {p, q} (the dot product's
// operands; {p} for the bias gradient), scalars {bias} for linear_fwd.
#ifndef ULPGATE_KERNELS_REDUCTIONS_LINEAR_LINEAR_SPEC_H_
#define ULPGATE_KERNELS_REDUCTIONS_LINEAR_LINEAR_SPEC_H_

#include <array>
#include <string_view>
#include <vector>

#include "kernels/reductions/reduction_spec.h"
#include "kernels/reductions/sum_of_terms.h"

namespace ulpgate {

// The linear layer's shape by name, as code written for the layer (the drift
// network) holds it; Extents() is the same shape as the ops' extents.
struct LinearShape {
  size_t batch = 1, in = 1, out = 1;
  ReductionShape Extents() const { return {{batch, in, out, 1}, 3}; }
};

struct LinearShapes {
  static constexpr uint8_t kBatch = 0, kIn = 1, kOut = 2;
  static constexpr std::array<ReductionExtentInfo, 3> kExtents = {{
      {"batch", "B", 32},
      {"in", "IN", 32},
      {"out", "OUT", 32},
  }};
  // The drift model's layers: 8x4 -> 4 and 8x4 -> 2.
  static constexpr std::array<ReductionShape, 2> kTrainingShapes = {{
      {{8, 4, 4, 1}, 3},
      {{8, 4, 2, 1}, 3},
  }};
  // The goldens' shape and instances: odd extents, so that every lane width
  // (1, 4, 8, 16) leaves a tail.
  static constexpr ReductionShape kGoldenShape = {{7, 13, 9, 1}, 3};
  static constexpr size_t kGoldenInstances = 2;
  static constexpr std::array<std::string_view, 5> kAdversarialFamilies = {
      "huge_range", "cancel_to_zero", "subnormal_products", "overflowing_partials",
      "cancel_leaving_tiny"};
  static constexpr AdversarialDraw kAdversarialDraw = AdversarialDraw::kProducts;
};

// The four schedules of a dot product; p_k q_k is the op's term.
inline constexpr std::array<ReductionVariantInfo, 4> kDotVariants = {{
    {"sequential_fma", ReductionSchedule::kSequentialFused, 0, "",
     "acc = 0; acc = MulAdd(p_k, q_k, acc) for k = 0..n-1"},
    {"sequential_unfused", ReductionSchedule::kSequentialUnfused, 0, "",
     "acc = 0; acc = acc + RN(p_k*q_k) for k = 0..n-1"},
    {"lane_parallel", ReductionSchedule::kLaneParallel, 0, "",
     "lane j: acc_j = MulAdd(p_k, q_k, acc_j) for k = j mod L (L = target lanes, +0 "
     "padding); then halving tree acc_j += acc_(j+w), w = L/2..1"},
    {"pairwise", ReductionSchedule::kPairwise, 0, "",
     "cascade of RN(p_k*q_k): left half = largest power of two below n"},
}};

struct LinearFwdSpec : LinearShapes {
  static constexpr std::string_view kName = "linear_fwd";
  static constexpr std::string_view kFamily = "linear";
  static constexpr std::string_view kDefinition =
      "y[b,o] = RN(sum_k x[b,k] w[o,k]) + b[o]: x [B,in], w [out,in], b [out]; "
      "the bias added once after the dot product";
  static constexpr std::array<ReductionOperandInfo, 3> kOperands = {{
      {"x", "the layer's input", Extents(kBatch, kIn),
       OperandKind::kActivation, TermRole::kLeft, 1},
      {"w", "the weights", Extents(kOut, kIn), OperandKind::kWeight, TermRole::kRight, 1},
      {"b", "the bias", Extents(kOut), OperandKind::kBias, TermRole::kOutside, -1},
  }};
  static constexpr ReductionOutputInfo kOutput = {"y", Extents(kBatch, kOut)};
  static constexpr int kReductionExtent = kIn;
  static constexpr std::array<ReductionVariantInfo, 4> kVariants = {{
      {"sequential_fma", ReductionSchedule::kSequentialFused, 0, "",
       "dot = 0; dot = MulAdd(x_k, w_k, dot), k = 0..in-1; y = dot + b"},
      {"sequential_unfused", ReductionSchedule::kSequentialUnfused, 0, "",
       "dot = 0; dot = dot + RN(x_k*w_k), k = 0..in-1; y = dot + b"},
      {"lane_parallel", ReductionSchedule::kLaneParallel, 0, "",
       "lane j: acc_j = MulAdd(x_k, w_k, acc_j), k = j mod L (+0 padding); halving tree "
       "of the L lanes; y = dot + b"},
      {"pairwise", ReductionSchedule::kPairwise, 0, "",
       "dot = cascade of RN(x_k*w_k); y = dot + b"},
  }};
  static constexpr bool kFusedMatters = true;
  static constexpr uint64_t kInputStream = 0;
  static constexpr ExactFill kExactFill = ExactFill::kProducts;
  static constexpr bool kEigenPeer = true;
};

struct LinearBwdInputSpec : LinearShapes {
  static constexpr std::string_view kName = "linear_bwd_input";
  static constexpr std::string_view kFamily = "linear";
  static constexpr std::string_view kDefinition =
      "dx[b,i] = sum_o dy[b,o] w[o,i]: dy [B,out], w [out,in]";
  static constexpr std::array<ReductionOperandInfo, 2> kOperands = {{
      {"dy", "the output's gradient", Extents(kBatch, kOut),
       OperandKind::kGradient, TermRole::kLeft, 1},
      {"w", "the weights", Extents(kOut, kIn), OperandKind::kWeight, TermRole::kRight, 0},
  }};
  static constexpr ReductionOutputInfo kOutput = {"dx", Extents(kBatch, kIn)};
  static constexpr int kReductionExtent = kOut;
  static constexpr auto kVariants = kDotVariants;
  static constexpr bool kFusedMatters = true;
  static constexpr uint64_t kInputStream = 1;
  static constexpr ExactFill kExactFill = ExactFill::kProducts;
  static constexpr bool kEigenPeer = false;
};

struct LinearBwdWeightSpec : LinearShapes {
  static constexpr std::string_view kName = "linear_bwd_weight";
  static constexpr std::string_view kFamily = "linear";
  static constexpr std::string_view kDefinition =
      "dw[o,i] = sum_b dy[b,o] x[b,i]: dy [B,out], x [B,in]";
  static constexpr std::array<ReductionOperandInfo, 2> kOperands = {{
      {"dy", "the output's gradient", Extents(kBatch, kOut),
       OperandKind::kGradient, TermRole::kLeft, 0},
      {"x", "the layer's input", Extents(kBatch, kIn),
       OperandKind::kActivation, TermRole::kRight, 0},
  }};
  static constexpr ReductionOutputInfo kOutput = {"dw", Extents(kOut, kIn)};
  static constexpr int kReductionExtent = kBatch;
  static constexpr auto kVariants = kDotVariants;
  static constexpr bool kFusedMatters = true;
  static constexpr uint64_t kInputStream = 2;
  static constexpr ExactFill kExactFill = ExactFill::kProducts;
  static constexpr bool kEigenPeer = false;
};

struct LinearBwdBiasSpec : LinearShapes {
  static constexpr std::string_view kName = "linear_bwd_bias";
  static constexpr std::string_view kFamily = "linear";
  static constexpr std::string_view kDefinition = "db[o] = sum_b dy[b,o]: dy [B,out]";
  static constexpr std::array<ReductionOperandInfo, 1> kOperands = {{
      {"dy", "the output's gradient", Extents(kBatch, kOut),
       OperandKind::kGradient, TermRole::kLeft, 0},
  }};
  static constexpr ReductionOutputInfo kOutput = {"db", Extents(kOut)};
  static constexpr int kReductionExtent = kBatch;
  // A plain sum: its sequential schedule has no MulAdd to fuse.
  static constexpr std::array<ReductionVariantInfo, 3> kVariants = {{
      {"sequential", ReductionSchedule::kSequentialFused, 0, "",
       "acc = 0; acc = acc + dy_b for b = 0..B-1"},
      {"lane_parallel", ReductionSchedule::kLaneParallel, 0, "",
       "lane j: acc_j = acc_j + dy_b, b = j mod L (+0 padding); halving tree"},
      {"pairwise", ReductionSchedule::kPairwise, 0, "",
       "cascade: left half = largest power of two below B"},
  }};
  static constexpr bool kFusedMatters = false;
  static constexpr uint64_t kInputStream = 3;
  static constexpr ExactFill kExactFill = ExactFill::kPlainSum;
  static constexpr bool kEigenPeer = false;
};

namespace linear_spec {
#include "kernels/reductions/linear/linear_spec-inl.h"  // IWYU pragma: export
}  // namespace linear_spec

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_REDUCTIONS_LINEAR_LINEAR_SPEC_H_
