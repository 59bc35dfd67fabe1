// Compiles gelu_bwd_factor-inl.h for every Highway target and dispatches to
// the best one this CPU runs (after ULPGATE_CPU_TARGETS, which the registry
// passes to Highway).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "suites/engine/ops/gelu_bwd/gelu_bwd_factor_vectors.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "suites/engine/ops/gelu_bwd/gelu_bwd_factor-inl.h"

#if HWY_ONCE
#include "kernels/registry.h"

namespace ulpgate {

HWY_EXPORT(GeluBwdMainFactors);

bool MainFactorVectors(const float* x, size_t n, const FactorEstimateColumns& out) {
  // The registry applies the target restriction to Highway when first used;
  // dispatch must come after it.
  static const bool ready = (CompiledTargets(), true);
  (void)ready;
  return HWY_DYNAMIC_DISPATCH(GeluBwdMainFactors)(x, n, out);
}

}  // namespace ulpgate
#endif  // HWY_ONCE
