// The row reductions' kernels as registered reductions (row_registration.h):
// Kernel<kVariant> with the one signature of every reduction, extents {rows,
// n}, eps kDefaultRmsNormEps; the binary32 kernels of row_kernels-inl.h. The
// 16-bit kernels are made from these by reduction_narrow-inl.h.

#if defined(ULPGATE_KERNELS_REDUCTIONS_ROW_REGISTRATION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_REDUCTIONS_ROW_REGISTRATION_INL_H_
#undef ULPGATE_KERNELS_REDUCTIONS_ROW_REGISTRATION_INL_H_
#else
#define ULPGATE_KERNELS_REDUCTIONS_ROW_REGISTRATION_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/reductions/row_kernels-inl.h"
#include "kernels/reductions/row_registration.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {
namespace row_registered_kernels {

template <RowOp kOp, class Spec>
struct Of {
  template <size_t kVariant>
  static void Kernel(const void* const* operands, void* out, const size_t* extents) {
    // The registered variant's form is its row in the family's table.
    constexpr int kRow = Spec::kVariants[kVariant].form;
    constexpr RowVariant kFamilyRow = [] {
      if constexpr (kOp == RowOp::kRmsNormFwd || kOp == RowOp::kRmsNormBwd) {
        return RmsNormSpec::kVariants[kRow];
      } else if constexpr (kOp == RowOp::kSoftmaxFwd) {
        return SoftmaxSpec::kForwardVariants[kRow];
      } else if constexpr (kOp == RowOp::kLogSoftmaxFwd) {
        return SoftmaxSpec::kLogForwardVariants[kRow];
      } else {
        return SoftmaxSpec::kBackwardVariants[kRow];
      }
    }();
    RowF32<kOp, kFamilyRow.stat, kFamilyRow.finish>(operands, out, extents[0], extents[1],
                                                    kDefaultRmsNormEps);
  }
};

using RmsNormFwd = Of<RowOp::kRmsNormFwd, RmsNormFwdSpec>;
using RmsNormBwd = Of<RowOp::kRmsNormBwd, RmsNormBwdSpec>;
using SoftmaxFwd = Of<RowOp::kSoftmaxFwd, SoftmaxFwdSpec>;
using SoftmaxBwd = Of<RowOp::kSoftmaxBwd, SoftmaxBwdSpec>;
using LogSoftmaxFwd = Of<RowOp::kLogSoftmaxFwd, LogSoftmaxFwdSpec>;
using LogSoftmaxBwd = Of<RowOp::kLogSoftmaxBwd, LogSoftmaxBwdSpec>;

}  // namespace row_registered_kernels
}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_REDUCTIONS_ROW_REGISTRATION_INL_H_
