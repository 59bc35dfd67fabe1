// RMSNorm over the last dimension, forward and backward (kernels/reductions/
// row_ops.h): its variants and its op sequences (rmsnorm_spec-inl.h).
//
// Variants: the mean square by a sequential sum (the target's MulAdd), a
// lane-parallel sum, or Welford's running mean; the scale by 1/sqrt(v)
// (r, two roundings, then products) or sqrt(v) (then a division per element).
// The backward pass takes its mean of g dy x by the same schedule as its mean
// square.
#ifndef ULPGATE_KERNELS_REDUCTIONS_RMSNORM_RMSNORM_SPEC_H_
#define ULPGATE_KERNELS_REDUCTIONS_RMSNORM_RMSNORM_SPEC_H_

#include <array>
#include <cstddef>
#include <limits>

#include "kernels/reductions/row_ops.h"

namespace ulpgate {

struct RmsNormSpec {
  static constexpr std::array<RowVariant, 6> kVariants = {{
      {"sequential_rsqrt", RowStat::kSequential, RowFinish::kRsqrt},
      {"sequential_div", RowStat::kSequential, RowFinish::kSqrtDivide},
      {"lane_parallel_rsqrt", RowStat::kLaneParallel, RowFinish::kRsqrt},
      {"lane_parallel_div", RowStat::kLaneParallel, RowFinish::kSqrtDivide},
      {"welford_rsqrt", RowStat::kWelford, RowFinish::kRsqrt},
      {"welford_div", RowStat::kWelford, RowFinish::kSqrtDivide},
  }};
  // The forward epilogue XLA writes for x / sqrt(v) * g: its algebraic
  // simplifier turns the division by a broadcast square root into a product
  // with rsqrt(v), one op, which its 16-bit code computes in binary32 and
  // rounds once (r = RN16(rsqrt v) where the kRsqrt finish rounds the root
  // and the reciprocal each).
  static constexpr std::array<RowEpilogueForm, 1> kForwardEpilogues = {{
      {"rsqrt_function", RowEpilogueStep::kRsqrtFunction, "formula",
       "v = RN(mean + eps), r = RN(rsqrt v) as one function, then products by r",
       RowFormRounding::kPerOpOnly},
  }};
};

namespace rmsnorm_spec {
#include "kernels/reductions/row_schedules-inl.h"  // IWYU pragma: export
#include "kernels/reductions/rmsnorm/rmsnorm_spec-inl.h"  // IWYU pragma: export
}  // namespace rmsnorm_spec

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_REDUCTIONS_RMSNORM_RMSNORM_SPEC_H_
