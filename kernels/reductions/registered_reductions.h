// The reductions ulpgate knows: one entry each. A reduction is an op of a
// family folder, kernels/reductions/<family>/ (linear/: the linear layer's
// four, mse/: the MSE loss's two); from this list the registry compiles its
// kernels on every target and in every format (ReductionKernel), the oracle
// (suites/engine/reduction_oracle.h) its exact values, error bounds and
// models, the suites its inputs, and every command, golden and budget takes
// it by name. No generic code names an op.
//
// How to add a reduction (a family of one op or more):
//   1. kernels/reductions/<family>/<family>_spec.h: per op a struct of tables
//      (what kernels/reductions/reduction_spec.h's ReductionOpInfo lists):
//        kName, kFamily, kDefinition;
//        kExtents       its shape's extents {name, letters, default size};
//        kOperands      {name, role, shape (Extents(...) of kExtents' indices),
//                        OperandKind, TermRole, reduction axis};
//        kOutput        {name, shape};
//        kReductionExtent  the extent its outputs reduce (-1: elementwise);
//        kVariants      {name, schedule, form, model suffix, op sequence};
//        kFusedMatters  whether a MulAdd occurs (the models' fused/unfused);
//        kInputStream   a number no other op uses (its inputs' random stream:
//                       never change it, the goldens depend on it);
//        kAdversarialFamilies, kAdversarialDraw, kExactFill: how the suites
//                       draw it (suites/inputs/reduction_suites.cc);
//        kTrainingShapes, kEigenPeer;
//      optionally kExpectedModel and kCandidateModels (its own model rule,
//      for schedules the generic rule does not know) and kExactRounds (an
//      exact value that needs sqrt, exp or log: the oracle evaluates it with
//      ExactArith::Rounding);
//      then the include of its templates into ulpgate::<family>_spec.
//   2. <family>_spec-inl.h: per op a struct of templates: Gather (the
//      element's terms), Model (a model over the binary32 emulation), Exact
//      (the exact value and bound over ExactArith), written once over an
//      arithmetic.
//   3. <family>-inl.h: per op a struct with Kernel<kVariant> (Highway, f32),
//      the generic signature; the 16-bit kernels are made from it
//      (kernels/reductions/reduction_narrow-inl.h).
//   4. Here: the spec header's include and one line per op of
//      ULPGATE_REDUCTION_OPS; in registered_reductions-inl.h the include of
//      the kernels.
//   5. The Python rechecks' own definition (tools/python/recheck_dump.py:
//      REDUCTIONS and its elements(); recheck_check.py's operand names) and
//      `golden bless --op NAME`, then its budgets.
#ifndef ULPGATE_KERNELS_REDUCTIONS_REGISTERED_REDUCTIONS_H_
#define ULPGATE_KERNELS_REDUCTIONS_REGISTERED_REDUCTIONS_H_

#include <cstddef>

#include "kernels/reductions/linear/linear_spec.h"
#include "kernels/reductions/mse/mse_spec.h"
#include "kernels/reductions/row_registration.h"

// X(Spec, its templates (scalar side), its kernels (in ulpgate::HWY_NAMESPACE)),
// in the order lists and reports give the ops.
#define ULPGATE_REDUCTION_OPS(X)                                                         \
  X(LinearFwdSpec, linear_spec::LinearFwd, linear_kernels::LinearFwd)                    \
  X(LinearBwdInputSpec, linear_spec::LinearBwdInput, linear_kernels::LinearBwdInput)     \
  X(LinearBwdWeightSpec, linear_spec::LinearBwdWeight, linear_kernels::LinearBwdWeight)  \
  X(LinearBwdBiasSpec, linear_spec::LinearBwdBias, linear_kernels::LinearBwdBias)        \
  X(MseFwdSpec, mse_spec::MseFwd, mse_kernels::MseFwd)                                   \
  X(MseBwdSpec, mse_spec::MseBwd, mse_kernels::MseBwd)                                   \
  X(RmsNormFwdSpec, row_registration::RowTemplates<RowOp::kRmsNormFwd>,                  \
    row_registered_kernels::RmsNormFwd)                                                  \
  X(RmsNormBwdSpec, row_registration::RowTemplates<RowOp::kRmsNormBwd>,                  \
    row_registered_kernels::RmsNormBwd)                                                  \
  X(SoftmaxFwdSpec, row_registration::RowTemplates<RowOp::kSoftmaxFwd>,                  \
    row_registered_kernels::SoftmaxFwd)                                                  \
  X(SoftmaxBwdSpec, row_registration::RowTemplates<RowOp::kSoftmaxBwd>,                  \
    row_registered_kernels::SoftmaxBwd)                                                  \
  X(LogSoftmaxFwdSpec, row_registration::RowTemplates<RowOp::kLogSoftmaxFwd>,            \
    row_registered_kernels::LogSoftmaxFwd)                                               \
  X(LogSoftmaxBwdSpec, row_registration::RowTemplates<RowOp::kLogSoftmaxBwd>,            \
    row_registered_kernels::LogSoftmaxBwd)

namespace ulpgate {
#define ULPGATE_COUNT_REDUCTION(Spec, templates, kernels) +1
inline constexpr size_t kReductionOpCount = 0 ULPGATE_REDUCTION_OPS(ULPGATE_COUNT_REDUCTION);
#undef ULPGATE_COUNT_REDUCTION

// Whether every op's input stream is its own.
constexpr bool InputStreamsDiffer() {
  const uint64_t streams[] = {
#define ULPGATE_REDUCTION_STREAM(Spec, templates, kernels) Spec::kInputStream,
      ULPGATE_REDUCTION_OPS(ULPGATE_REDUCTION_STREAM)
#undef ULPGATE_REDUCTION_STREAM
  };
  for (size_t i = 0; i < kReductionOpCount; ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (streams[i] == streams[j]) return false;
    }
  }
  return true;
}
static_assert(InputStreamsDiffer(), "two reductions draw their inputs from one stream");
}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_REDUCTIONS_REGISTERED_REDUCTIONS_H_
