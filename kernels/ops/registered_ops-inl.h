// The templates of every registered op (registered_ops.h), compiled for the
// current Highway target: each in its own namespace of
// ulpgate::HWY_NAMESPACE, inside HWY_BEFORE_NAMESPACE so that they carry the
// target's code-generation attributes and can call Highway ops.

#if defined(ULPGATE_KERNELS_OPS_REGISTERED_OPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_OPS_REGISTERED_OPS_INL_H_
#undef ULPGATE_KERNELS_OPS_REGISTERED_OPS_INL_H_
#else
#define ULPGATE_KERNELS_OPS_REGISTERED_OPS_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/ops/registered_ops.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

namespace tanh_bwd_spec {
#include "kernels/ops/tanh_bwd/tanh_bwd_spec-inl.h"
}  // namespace tanh_bwd_spec
namespace sigmoid_bwd_spec {
#include "kernels/ops/sigmoid_bwd/sigmoid_bwd_spec-inl.h"
}  // namespace sigmoid_bwd_spec
namespace silu_bwd_spec {
#include "kernels/ops/silu_bwd/silu_bwd_spec-inl.h"
}  // namespace silu_bwd_spec
namespace gelu_bwd_spec {
#include "kernels/ops/gelu_bwd/gelu_bwd_spec-inl.h"
}  // namespace gelu_bwd_spec
namespace gelu_tanh_bwd_spec {
#include "kernels/ops/gelu_tanh_bwd/gelu_tanh_bwd_spec-inl.h"
}  // namespace gelu_tanh_bwd_spec

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_OPS_REGISTERED_OPS_INL_H_
