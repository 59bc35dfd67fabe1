// The elementwise ops ulpgate knows: one entry each. An op is its folder
// (kernels/ops/<op>/: the spec's tables and templates, elementwise_spec.h
// says what they hold); registering it is its include here, the include of
// its templates in registered_ops-inl.h (compiled once per Highway target),
// and its entry in ULPGATE_ELEMENTWISE_OPS. From that list the registry
// compiles its kernels on every target and in every format, the oracle side
// (suites/engine/elementwise_oracle.h) its exact values and models, and every
// command, golden and budget takes it by name.
#ifndef ULPGATE_KERNELS_OPS_REGISTERED_OPS_H_
#define ULPGATE_KERNELS_OPS_REGISTERED_OPS_H_

#include "kernels/ops/gelu_bwd/gelu_bwd_spec.h"
#include "kernels/ops/gelu_tanh_bwd/gelu_tanh_bwd_spec.h"
#include "kernels/ops/sigmoid_bwd/sigmoid_bwd_spec.h"
#include "kernels/ops/silu_bwd/silu_bwd_spec.h"
#include "kernels/ops/tanh_bwd/tanh_bwd_spec.h"

// X(Spec, the namespace its templates are included in), in the order lists
// and reports give the ops.
#define ULPGATE_ELEMENTWISE_OPS(X)     \
  X(TanhBwdSpec, tanh_bwd_spec)         \
  X(SigmoidBwdSpec, sigmoid_bwd_spec)   \
  X(SiluBwdSpec, silu_bwd_spec)         \
  X(GeluBwdSpec, gelu_bwd_spec)         \
  X(GeluTanhBwdSpec, gelu_tanh_bwd_spec)

namespace ulpgate {
#define ULPGATE_COUNT_OP(Spec, ns) +1
inline constexpr size_t kElementwiseOpCount = 0 ULPGATE_ELEMENTWISE_OPS(ULPGATE_COUNT_OP);
#undef ULPGATE_COUNT_OP

// Whether at most one op declares each of the tiers of elementwise_spec.h's
// OwnTiers: such a tier is code written for one op, and the generic paths
// hand it whichever op declares it.
constexpr bool OwnTiersHaveOneOpEach() {
  int suites = 0, two_double_exact = 0, vector_sweep = 0;
#define ULPGATE_COUNT_OWN_TIERS(Spec, ns)                               \
  suites += OwnTiersOf<Spec>::kTiers.suites ? 1 : 0;                     \
  two_double_exact += OwnTiersOf<Spec>::kTiers.two_double_exact ? 1 : 0; \
  vector_sweep += OwnTiersOf<Spec>::kTiers.vector_sweep ? 1 : 0;
  ULPGATE_ELEMENTWISE_OPS(ULPGATE_COUNT_OWN_TIERS)
#undef ULPGATE_COUNT_OWN_TIERS
  return suites <= 1 && two_double_exact <= 1 && vector_sweep <= 1;
}
static_assert(OwnTiersHaveOneOpEach(), "two ops declare one of the tiers written for one op");
}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_OPS_REGISTERED_OPS_H_
