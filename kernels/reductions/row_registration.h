// The row reductions (row_ops.h: RMSNorm, softmax, log-softmax, forward and
// backward) as registered reductions (registered_reductions.h): their specs'
// tables and templates. Shapes [rows, n] (the extents "rows" R and "n" N), the
// reduction along n; every variant a row of kVariants whose form is its index
// in the family's table (RmsNormSpec, SoftmaxSpec), its model the variant's
// sequence over the binary32 emulation with the target's MulAdd and, for the
// lane-parallel statistic, its lane count (kExpectedModel). eps is
// kDefaultRmsNormEps for the registered ops.
//
// An element's terms (Gather): vectors the operands' rows in the spec's order
// (g whole), position the element's column, count n. Model runs the row's
// sequence (row_sequences.h) and takes the element; Exact asks the row
// oracle (suites/engine/reductions/row_oracle.h), which defines RowExactParts
// for MPFR's numbers: its bound the largest of the op's variants'.
#ifndef ULPGATE_KERNELS_REDUCTIONS_ROW_REGISTRATION_H_
#define ULPGATE_KERNELS_REDUCTIONS_ROW_REGISTRATION_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "kernels/reductions/reduction_spec.h"
#include "kernels/reductions/rmsnorm/rmsnorm_spec.h"
#include "kernels/reductions/row_ops.h"
#include "kernels/reductions/row_sequences.h"
#include "kernels/reductions/softmax/softmax_spec.h"

namespace ulpgate {

// The exact value and bound of one element of a row op (ElementTerms as
// RowTemplates::Gather makes them): defined for V = MpfrNumber by the row
// oracle.
template <class V>
ReductionExactParts<V> RowExactParts(RowOp op, const ElementTerms& terms);

namespace row_registration {

// The variants of an op in the registered form: the schedule is lane-parallel
// or sequential (MulAdd the target's), the form the index in the family's
// table, the model's suffix the variant's name.
template <size_t kCount>
constexpr std::array<ReductionVariantInfo, kCount> Variants(
    const std::array<RowVariant, kCount>& rows, const std::array<std::string_view, kCount>& suffixes,
    const std::array<std::string_view, kCount>& sequences) {
  std::array<ReductionVariantInfo, kCount> out{};
  for (size_t i = 0; i < kCount; ++i) {
    out[i] = {rows[i].name,
              rows[i].stat == RowStat::kLaneParallel ? ReductionSchedule::kLaneParallel
                                                     : ReductionSchedule::kSequentialFused,
              static_cast<int>(i), suffixes[i], sequences[i]};
  }
  return out;
}

// The target's MulAdd and, for the lane-parallel statistic, its lanes.
inline ReductionModel ExpectedModel(const ReductionOpInfo&, const ReductionVariantInfo& variant,
                                    size_t lanes, bool fused_muladd) {
  ReductionModel m;
  m.schedule = variant.schedule;
  m.fused = fused_muladd;
  m.lanes = variant.schedule == ReductionSchedule::kLaneParallel ? lanes : 1;
  m.form = variant.form;
  m.suffix = variant.model_suffix;
  return m;
}
inline std::vector<ReductionModel> CandidateModels(const ReductionOpInfo& op,
                                                   const ReductionVariantInfo& variant) {
  std::vector<ReductionModel> out;
  for (const bool fused : {false, true}) {
    if (variant.schedule == ReductionSchedule::kLaneParallel) {
      for (const size_t lanes : kX86LaneCounts) out.push_back(ExpectedModel(op, variant, lanes, fused));
    } else {
      out.push_back(ExpectedModel(op, variant, 1, fused));
    }
  }
  return out;
}

// What every row op's spec shares.
struct RowShapes {
  static constexpr uint8_t kRows = 0;
  static constexpr uint8_t kN = 1;
  static constexpr std::array<ReductionExtentInfo, 2> kExtents = {
      {{"rows", "R", 8}, {"n", "N", 64}}};
  static constexpr std::array<ReductionShape, 0> kTrainingShapes = {};
  // The goldens' shape: n odd, so that every lane width leaves a tail.
  static constexpr ReductionShape kGoldenShape = {{3, 37, 1, 1}, 2};
  static constexpr size_t kGoldenInstances = 2;
  static constexpr AdversarialDraw kAdversarialDraw = AdversarialDraw::kProducts;
  static constexpr ExactFill kExactFill = ExactFill::kProducts;
  static constexpr bool kEigenPeer = false;
  static constexpr bool kExactRounds = true;
  static constexpr bool kFusedMatters = true;
  static constexpr std::array<std::string_view, 5> kAdversarialFamilies = {
      "huge_range", "cancel_to_zero", "subnormal_products", "overflowing_partials",
      "cancel_leaving_tiny"};
  static constexpr int kReductionExtent = kN;
  static constexpr auto kExpectedModel = &ExpectedModel;
  static constexpr auto kCandidateModels = &CandidateModels;
};

inline constexpr ReductionOperandInfo kX = {"x", "the row's input", Extents(0, 1),
                                            OperandKind::kActivation, TermRole::kLeft, 1};
inline constexpr ReductionOperandInfo kG = {"g", "the per-column weight", Extents(1),
                                            OperandKind::kWeight, TermRole::kRight, 0};
inline constexpr ReductionOperandInfo kDy = {"dy", "the output's gradient", Extents(0, 1),
                                             OperandKind::kGradient, TermRole::kLeft, 1};
inline constexpr ReductionOperandInfo kY = {"y", "the forward output", Extents(0, 1),
                                            OperandKind::kActivation, TermRole::kRight, 1};

// Gather, Model and Exact of op kOp (RowOpInfo's operand order is the spec's).
template <RowOp kOp>
struct RowTemplates {
  static ElementTerms Gather(const std::vector<std::vector<float>>& operands,
                             const ReductionShape& shape, size_t element) {
    const RowOpInfo& op = GetRowOp(kOp);
    const size_t n = shape[1];
    const size_t row = element / n;
    ElementTerms t;
    for (size_t k = 0; k < op.operands.size(); ++k) {
      const std::vector<float>& tensor = operands[k];
      const size_t at = IsRowWeight(op, k) ? 0 : row * n;
      t.vectors.emplace_back(tensor.begin() + static_cast<std::ptrdiff_t>(at),
                             tensor.begin() + static_cast<std::ptrdiff_t>(at + n));
    }
    t.scalars = {kDefaultRmsNormEps};
    t.count = n;
    t.position = element % n;
    return t;
  }
  static RowOperands Operands(const ElementTerms& t) {
    const RowOpInfo& op = GetRowOp(kOp);
    RowOperands row;
    for (size_t k = 0; k < op.operands.size(); ++k) {
      const std::string_view name = op.operands[k];
      const float* p = t.vectors[k].data();
      if (name == "x") row.x = p;
      if (name == "g") row.g = p;
      if (name == "dy") row.dy = p;
      if (name == "y") row.y = p;
    }
    return row;
  }
  template <class A>
  static typename A::Value Model(A& a, const ReductionModel& m, const ElementTerms& t) {
    const RowOpInfo& op = GetRowOp(kOp);
    const size_t n = t.vectors[0].size();
    return RowSequenceOutputs(a, op, op.variants.at(static_cast<size_t>(m.form)), m.lanes,
                              Operands(t), n, t.scalars[0])[t.position];
  }
  template <class E>
  static ReductionExactParts<typename E::Value> Exact(E&, const ElementTerms& t) {
    return RowExactParts<typename E::Value>(kOp, t);
  }
};

}  // namespace row_registration

struct RmsNormFwdSpec : row_registration::RowShapes {
  static constexpr std::string_view kName = "rmsnorm_fwd";
  static constexpr std::string_view kFamily = "rmsnorm";
  static constexpr std::string_view kDefinition =
      "y_i = g_i x_i / sqrt(mean_j(x_j^2) + eps) along each row: x [R, N], g [N], eps = "
      "1e-6 as binary32";
  static constexpr std::array<ReductionOperandInfo, 2> kOperands = {
      {row_registration::kX, row_registration::kG}};
  static constexpr ReductionOutputInfo kOutput = {"y", Extents(0, 1)};
  static constexpr std::array<ReductionVariantInfo, 6> kVariants = row_registration::Variants(
      RmsNormSpec::kVariants,
      {"_sequential_rsqrt", "_sequential_div", "_lane_parallel_rsqrt", "_lane_parallel_div",
       "_welford_rsqrt", "_welford_div"},
      {"v = RN(RN(sum MulAdd(x, x)) / N + eps); y = RN(RN(x RN(1/RN(sqrt v))) g)",
       "v as sequential; y = RN(RN(x / RN(sqrt v)) g)",
       "lane sums of MulAdd(x, x), halving tree; y as sequential_rsqrt",
       "lane sums, halving tree; y as sequential_div",
       "m = RN(m + RN(RN(RN(x x) - m) / k)); v = RN(m + eps); y as sequential_rsqrt",
       "Welford's mean; y as sequential_div"});
  static constexpr uint64_t kInputStream = 101;
};

struct RmsNormBwdSpec : row_registration::RowShapes {
  static constexpr std::string_view kName = "rmsnorm_bwd";
  static constexpr std::string_view kFamily = "rmsnorm";
  static constexpr std::string_view kDefinition =
      "dx_i = r g_i dy_i - r^3 x_i mean_j(g_j dy_j x_j), r = 1/sqrt(mean_j(x_j^2) + eps): "
      "dy [R, N], x [R, N], g [N], eps = 1e-6 as binary32";
  static constexpr std::array<ReductionOperandInfo, 3> kOperands = {
      {row_registration::kDy, row_registration::kX, row_registration::kG}};
  static constexpr ReductionOutputInfo kOutput = {"dx", Extents(0, 1)};
  static constexpr std::array<ReductionVariantInfo, 6> kVariants = row_registration::Variants(
      RmsNormSpec::kVariants,
      {"_sequential_rsqrt", "_sequential_div", "_lane_parallel_rsqrt", "_lane_parallel_div",
       "_welford_rsqrt", "_welford_div"},
      {"means of x^2 and RN(g dy) x by MulAdd; k = RN(RN(RN(r r) r) c); "
       "dx = MulAdd(-k, x, RN(RN(g dy) r))",
       "means as sequential; k = RN(c / RN(RN(s s) s)); dx = MulAdd(-k, x, RN(RN(g dy) / s))",
       "lane sums, halving tree; as sequential_rsqrt", "lane sums; as sequential_div",
       "Welford's means; as sequential_rsqrt", "Welford's means; as sequential_div"});
  static constexpr uint64_t kInputStream = 102;
};

struct SoftmaxFwdSpec : row_registration::RowShapes {
  static constexpr std::string_view kName = "softmax_fwd";
  static constexpr std::string_view kFamily = "softmax";
  static constexpr std::string_view kDefinition =
      "y_i = exp(x_i - max) / sum_j exp(x_j - max) along each row: x [R, N]";
  static constexpr std::array<ReductionOperandInfo, 1> kOperands = {{row_registration::kX}};
  static constexpr ReductionOutputInfo kOutput = {"y", Extents(0, 1)};
  static constexpr std::array<ReductionVariantInfo, 6> kVariants = row_registration::Variants(
      SoftmaxSpec::kForwardVariants,
      {"_two_pass_div", "_two_pass_recip", "_lane_parallel_div", "_lane_parallel_recip",
       "_online_div", "_online_recip"},
      {"M = max; S = sum RN(Exp(RN(x - M))); y = RN(Exp(RN(x - M)) / S)",
       "as two_pass_div; y = RN(Exp(RN(x - M)) RN(1 / S))",
       "lane sums of the exponentials, halving tree; y = RN(e / S)",
       "lane sums; y = RN(e RN(1 / S))",
       "m' = max(m, x); S = MulAdd(S, Exp(RN(m - m')), Exp(RN(x - m'))); y = RN(e / S)",
       "online; y = RN(e RN(1 / S))"});
  static constexpr uint64_t kInputStream = 103;
};

struct SoftmaxBwdSpec : row_registration::RowShapes {
  static constexpr std::string_view kName = "softmax_bwd";
  static constexpr std::string_view kFamily = "softmax";
  static constexpr std::string_view kDefinition =
      "dx_i = y_i (dy_i - sum_j dy_j y_j) along each row: dy [R, N], y [R, N]";
  static constexpr std::array<ReductionOperandInfo, 2> kOperands = {
      {row_registration::kDy, row_registration::kY}};
  static constexpr ReductionOutputInfo kOutput = {"dx", Extents(0, 1)};
  static constexpr std::array<ReductionVariantInfo, 2> kVariants = row_registration::Variants(
      SoftmaxSpec::kBackwardVariants, {"_sequential", "_lane_parallel"},
      {"D = sum MulAdd(dy, y); dx = RN(y RN(dy - D))", "lane sums, halving tree; as sequential"});
  static constexpr uint64_t kInputStream = 104;
};

struct LogSoftmaxFwdSpec : row_registration::RowShapes {
  static constexpr std::string_view kName = "log_softmax_fwd";
  static constexpr std::string_view kFamily = "softmax";
  static constexpr std::string_view kDefinition =
      "y_i = x_i - max - log(sum_j exp(x_j - max)) along each row: x [R, N]";
  static constexpr std::array<ReductionOperandInfo, 1> kOperands = {{row_registration::kX}};
  static constexpr ReductionOutputInfo kOutput = {"y", Extents(0, 1)};
  static constexpr std::array<ReductionVariantInfo, 3> kVariants = row_registration::Variants(
      SoftmaxSpec::kLogForwardVariants, {"_two_pass", "_lane_parallel", "_online"},
      {"M = max; S = sum RN(Exp(RN(x - M))); y = RN(RN(x - M) - Log(S))",
       "lane sums, halving tree; as two_pass", "online max and sum; as two_pass"});
  static constexpr uint64_t kInputStream = 105;
};

struct LogSoftmaxBwdSpec : row_registration::RowShapes {
  static constexpr std::string_view kName = "log_softmax_bwd";
  static constexpr std::string_view kFamily = "softmax";
  static constexpr std::string_view kDefinition =
      "dx_i = dy_i - exp(y_i) sum_j dy_j along each row: dy [R, N], y [R, N]";
  static constexpr std::array<ReductionOperandInfo, 2> kOperands = {
      {row_registration::kDy, row_registration::kY}};
  static constexpr ReductionOutputInfo kOutput = {"dx", Extents(0, 1)};
  static constexpr std::array<ReductionVariantInfo, 2> kVariants = row_registration::Variants(
      SoftmaxSpec::kBackwardVariants, {"_sequential", "_lane_parallel"},
      {"G = sum dy; dx = RN(dy - RN(Exp(y) G))", "lane sums, halving tree; as sequential"});
  static constexpr uint64_t kInputStream = 106;
};

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_REDUCTIONS_ROW_REGISTRATION_H_
