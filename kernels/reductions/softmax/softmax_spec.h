// Softmax and log-softmax over the last dimension, forward and backward
// (kernels/reductions/row_ops.h): their variants and op sequences
// (softmax_spec-inl.h).
//
// Forward variants: two passes (the maximum, then the sum of exponentials,
// sequential or lane-parallel) or the online pass (running maximum and
// rescaled sum), each followed by the final pass; softmax divides each
// exponential by the sum or multiplies it by the sum's reciprocal. Backward
// variants: the row's sum sequential or lane-parallel.
#ifndef ULPGATE_KERNELS_REDUCTIONS_SOFTMAX_SOFTMAX_SPEC_H_
#define ULPGATE_KERNELS_REDUCTIONS_SOFTMAX_SOFTMAX_SPEC_H_

#include <array>
#include <cstddef>
#include <limits>

#include "kernels/reductions/row_ops.h"

namespace ulpgate {

struct SoftmaxSpec {
  static constexpr std::array<RowVariant, 6> kForwardVariants = {{
      {"two_pass_div", RowStat::kSequential, RowFinish::kDivide},
      {"two_pass_recip", RowStat::kSequential, RowFinish::kReciprocal},
      {"lane_parallel_div", RowStat::kLaneParallel, RowFinish::kDivide},
      {"lane_parallel_recip", RowStat::kLaneParallel, RowFinish::kReciprocal},
      {"online_div", RowStat::kOnline, RowFinish::kDivide},
      {"online_recip", RowStat::kOnline, RowFinish::kReciprocal},
  }};
  static constexpr std::array<RowVariant, 3> kLogForwardVariants = {{
      {"two_pass", RowStat::kSequential, RowFinish::kPlain},
      {"lane_parallel", RowStat::kLaneParallel, RowFinish::kPlain},
      {"online", RowStat::kOnline, RowFinish::kPlain},
  }};
  static constexpr std::array<RowVariant, 2> kBackwardVariants = {{
      {"sequential", RowStat::kSequential, RowFinish::kPlain},
      {"lane_parallel", RowStat::kLaneParallel, RowFinish::kPlain},
  }};
  // The backward epilogues other implementations write with the same row
  // sum: torch._decomp's _softmax_backward_data (what Inductor compiles)
  // multiplies out y (dy - D) as dy y - y D, the second product joined by
  // the arithmetic's MulAdd; a compiler that contracts log-softmax's last
  // step rounds dy - Exp(y) G once.
  static constexpr std::array<RowEpilogueForm, 1> kBackwardEpilogues = {{
      {"product_difference", RowEpilogueStep::kProductDifference, "formula",
       "dx = MulAdd(-y, D, RN(dy y))", RowFormRounding::kAny},
  }};
  static constexpr std::array<RowEpilogueForm, 1> kLogBackwardEpilogues = {{
      {"contracted", RowEpilogueStep::kContracted, "fusion", "dx = MulAdd(-Exp(y), G, dy), fused",
       RowFormRounding::kAny},
  }};
  // ATen's log_softmax in bf16 and f16 keeps the row's sum of exponentials
  // and its log in the tensor's type (its temporaries are scalar_t) and
  // computes x - max - log in binary32, rounding the element once: where
  // Inductor, which keeps both in binary32, gives the plain finish.
  static constexpr std::array<RowEpilogueForm, 1> kLogForwardEpilogues = {{
      {"statistic_in_format", RowEpilogueStep::kVariant, "rounding format",
       "L = fmt(Log(fmt(S))), y = RN(RN(x - M) - L): the sum and its log in the format, each element in binary32",
       RowFormRounding::kStatisticInFormat},
  }};
};

namespace softmax_spec {
#include "kernels/reductions/row_schedules-inl.h"  // IWYU pragma: export
#include "kernels/reductions/softmax/softmax_spec-inl.h"  // IWYU pragma: export
}  // namespace softmax_spec

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_REDUCTIONS_SOFTMAX_SOFTMAX_SPEC_H_
