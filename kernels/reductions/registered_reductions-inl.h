// The kernels of every registered reduction (registered_reductions.h),
// compiled for the current Highway target: each family's kernels in their
// namespace of ulpgate::HWY_NAMESPACE, and the 16-bit kernels made from them.

#if defined(ULPGATE_KERNELS_REDUCTIONS_REGISTERED_REDUCTIONS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_REDUCTIONS_REGISTERED_REDUCTIONS_INL_H_
#undef ULPGATE_KERNELS_REDUCTIONS_REGISTERED_REDUCTIONS_INL_H_
#else
#define ULPGATE_KERNELS_REDUCTIONS_REGISTERED_REDUCTIONS_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/reductions/linear/linear-inl.h"
#include "kernels/reductions/mse/mse-inl.h"
#include "kernels/reductions/reduction_narrow-inl.h"
#include "kernels/reductions/row_registration-inl.h"
#include "kernels/reductions/registered_reductions.h"

#endif  // ULPGATE_KERNELS_REDUCTIONS_REGISTERED_REDUCTIONS_INL_H_
