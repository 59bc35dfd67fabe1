// The reductions of a training step (linear layer forward and backward, MSE
// loss forward and backward): their op sequences, written once as templates
// (reduction_spec-inl.h), and the tables that name ops, variants and models.
//
// As for an elementwise op (kernels/ops/elementwise_spec.h), a sequence
// instantiated over Highway vectors is the SIMD kernel (kernels/linear-inl.h,
// kernels/mse-inl.h), over the binary32 emulation it is the variant's
// bit-exact model, and over exact MPFR numbers it is the real value the
// sequence stands for.
//
// Plain C++: no Highway types, so suites/ and tools/ include it directly.
#ifndef ULPGATE_KERNELS_REDUCTION_SPEC_H_
#define ULPGATE_KERNELS_REDUCTION_SPEC_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ulpgate {
namespace reduction_spec {

#include "kernels/reduction_spec-inl.h"  // IWYU pragma: export

}  // namespace reduction_spec

enum class ReductionOp {
  kLinearFwd,        // y = x W^T + b
  kLinearBwdInput,   // dx = dy W
  kLinearBwdWeight,  // dW = dy^T x
  kLinearBwdBias,    // db = column sums of dy
  kMseFwd,           // mean of (y - target)^2
  kMseBwd,           // dy = (2/N) (y - target) grad_out
};

// The order in which a variant combines the terms of one output.
enum class ReductionSchedule {
  kSequentialFused,    // acc = MulAdd(p_k, q_k, acc)
  kSequentialUnfused,  // acc = acc + RN(p_k q_k)
  kLaneParallel,       // one MulAdd accumulator per lane, then ReduceLanes
  kPairwise,           // cascade of the rounded terms
  kElementwise,        // no reduction (mse_bwd)
};
inline constexpr size_t kReductionScheduleCount =
    static_cast<size_t>(ReductionSchedule::kElementwise) + 1;

// How mse_fwd turns the sum into the mean; kNone for every other op.
enum class MeanScaling { kNone, kDivide, kReciprocal };
inline constexpr size_t kMeanScalingCount = static_cast<size_t>(MeanScaling::kReciprocal) + 1;
inline constexpr size_t kReductionOpCount = static_cast<size_t>(ReductionOp::kMseBwd) + 1;

// Whether an op has a kernel of that (scaling, schedule): the linear ops
// reduce with every schedule but kElementwise and take no scaling; mse_fwd
// reduces with either mean; mse_bwd is elementwise. The registry compiles a
// kernel for every such cell, and a variant row may name any of them.
constexpr bool HasReductionKernel(ReductionOp op, MeanScaling scaling, ReductionSchedule schedule) {
  const bool reduces = schedule != ReductionSchedule::kElementwise;
  switch (op) {
    case ReductionOp::kMseFwd:
      return scaling != MeanScaling::kNone && reduces;
    case ReductionOp::kMseBwd:
      return scaling == MeanScaling::kNone && !reduces;
    default:
      return scaling == MeanScaling::kNone && reduces;
  }
}

struct ReductionVariantInfo {
  std::string_view name;
  ReductionSchedule schedule;
  MeanScaling scaling;
  std::string_view op_sequence;
};

// The shapes a run and a kernel take. linear_*: batch B, in, out. mse_*: N in
// `batch` (in and out unused, 1).
struct ReductionShape {
  size_t batch = 1, in = 1, out = 1;
};

// How many extents an op's shape has: 1 for mse_* (N), 3 for linear_*.
constexpr size_t ReductionShapeRank(ReductionOp op) {
  return op == ReductionOp::kMseFwd || op == ReductionOp::kMseBwd ? 1 : 3;
}

struct ReductionOpInfo {
  ReductionOp op;
  std::string_view name;        // the CLI's name, e.g. "linear_fwd"
  std::string_view definition;  // in words and indices
  std::vector<ReductionVariantInfo> variants;
  // Operand tensors in the kernel's argument order, e.g. {"x", "w", "b"}.
  std::vector<std::string> operands;
  bool fused_matters;  // whether MulAdd occurs (not for the bias gradient)
};

// All six ops, in the order the CLI lists them.
const std::vector<ReductionOpInfo>& ReductionOps();
// nullptr when unknown.
const ReductionOpInfo* FindReductionOp(std::string_view name);
const ReductionOpInfo& GetReductionOp(ReductionOp op);
// -1 when the op has no such variant.
int ReductionVariantIndex(const ReductionOpInfo& op, std::string_view variant);

// Element counts of the operand tensors and of the output, row-major shapes.
std::vector<std::vector<size_t>> ReductionOperandShapes(ReductionOp op, const ReductionShape& shape);
std::vector<size_t> ReductionOutputShape(ReductionOp op, const ReductionShape& shape);
size_t ReductionOutputCount(ReductionOp op, const ReductionShape& shape);
// The number of terms one output sums: in, out, batch, batch, N, or 1.
size_t ReductionLength(ReductionOp op, const ReductionShape& shape);

// A bit-exact model: a variant's schedule evaluated in binary32 with MulAdd
// fused or not and, for the lane-parallel schedule, a lane count.
struct ReductionModel {
  ReductionSchedule schedule = ReductionSchedule::kSequentialUnfused;
  bool fused = false;  // MulAdd rounds once
  size_t lanes = 1;    // kLaneParallel only
  MeanScaling scaling = MeanScaling::kNone;

  // "sequential_fused", "sequential_unfused", "lane_parallel_x8_fused",
  // "pairwise", "framework"; mse_fwd appends "_recip" for the reciprocal.
  // The fused/unfused suffix is left out where the op has no MulAdd.
  std::string Name(const ReductionOpInfo& op) const;
};

// The model a variant should follow on a target with `lanes` float lanes whose
// MulAdd is fused or not (TargetInfo::f32_lanes, TargetInfo::fused_muladd).
ReductionModel ExpectedReductionModel(const ReductionOpInfo& op,
                                      const ReductionVariantInfo& variant,
                                      size_t lanes, bool fused_muladd);

// The models a variant is compared with: its schedule fused and unfused and,
// for the lane-parallel schedule, every x86 lane count (1, 4, 8, 16). The
// report lists each one the kernel matched on every output.
std::vector<ReductionModel> CandidateReductionModels(const ReductionOpInfo& op,
                                                     const ReductionVariantInfo& variant);

// The lane counts of the x86 targets Highway 1.0.3 compiles: SCALAR 1,
// SSSE3/SSE4 4, AVX2 8, AVX3/AVX3_DL 16.
inline constexpr size_t kX86LaneCounts[] = {1, 4, 8, 16};

// The largest N (or reduction length) the kernels accept: N must be exact in
// binary32 for the mean's scale, and n*u <= 1/2 keeps the error bound finite.
inline constexpr size_t kMaxReductionLength = size_t{1} << 22;

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_REDUCTION_SPEC_H_
