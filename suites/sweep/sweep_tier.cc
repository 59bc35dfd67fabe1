// Compiles suites/sweep/sweep_tier-inl.h for every Highway target and dispatches to
// the best one this CPU runs (after ULPGATE_CPU_TARGETS, which the registry
// passes to Highway).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "suites/sweep/sweep_tier.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "suites/sweep/sweep_tier-inl.h"

#if HWY_ONCE
#include "kernels/registry.h"

namespace ulpgate {

HWY_EXPORT(SweepTierExactValues);
HWY_EXPORT(SweepTierScaledExactValues);
HWY_EXPORT(SweepTierMeasure);
HWY_EXPORT(SweepTierModelOutputs);
HWY_EXPORT(SweepTierCanonicalNans);
HWY_EXPORT(SweepTierDecodeNarrow);
HWY_EXPORT(SweepTierMismatches);
HWY_EXPORT(SweepTierScaledFloats);
HWY_EXPORT(SweepTierFactorsScale);
HWY_EXPORT(SweepTierDigest);

namespace {
// The registry applies the target restriction to Highway when first used;
// dispatch must come after it.
void EnsureRegistry() {
  static const bool ready = (CompiledTargets(), true);
  (void)ready;
}
}  // namespace

void SweepExactValues(const FloatFormat& format, const float* grad, const float* t, size_t n,
                      SweepExactTile* out) {
  EnsureRegistry();
  HWY_DYNAMIC_DISPATCH(SweepTierExactValues)(format, grad, t, n, out);
}

void SweepScaledExactValues(const FloatFormat& format, const float* grad,
                            const SweepFactorColumns& f, size_t n, SweepExactTile* out) {
  EnsureRegistry();
  HWY_DYNAMIC_DISPATCH(SweepTierScaledExactValues)(format, grad, f, n, out);
}

void SweepMeasure(const FloatFormat& format, const SweepExactTile& tile, const float* y,
                  uint64_t key_high, const uint64_t* key_low, size_t n, SweepErrorTile* out,
                  SweepErrorSums* sums, SweepFineCounts* fine, bool every_ulp, bool totals) {
  HWY_DYNAMIC_DISPATCH(SweepTierMeasure)(format, tile, y, key_high, key_low, n, out, sums, fine,
                                         every_ulp || !totals, totals);
}

void SweepModelOutputs(const FloatFormat& format, const float* grad, const float* t,
                       const uint16_t* grad_bits, const uint16_t* t_bits, size_t n,
                       float* const* models, const uint8_t* wanted) {
  EnsureRegistry();
  HWY_DYNAMIC_DISPATCH(SweepTierModelOutputs)(format, grad, t, grad_bits, t_bits, n, models, wanted);
}

void SweepCanonicalNans(float* y, size_t n) { HWY_DYNAMIC_DISPATCH(SweepTierCanonicalNans)(y, n); }

void SweepDecodeNarrow(const FloatFormat& format, const uint16_t* bits, size_t n, float* out) {
  HWY_DYNAMIC_DISPATCH(SweepTierDecodeNarrow)(format, bits, n, out);
}

uint64_t SweepMismatches(const float* a, const float* b, size_t n, int64_t* first) {
  return HWY_DYNAMIC_DISPATCH(SweepTierMismatches)(a, b, n, first);
}

bool SweepScaledFloats(const float* v, float p, size_t n, bool specials, float low, float high,
                       float* out) {
  return HWY_DYNAMIC_DISPATCH(SweepTierScaledFloats)(v, p, n, specials, low, high, out);
}

bool SweepFactorsScale(const uint64_t* kind, const double* f0, size_t n, double small, double large,
                       double low, double high) {
  return HWY_DYNAMIC_DISPATCH(SweepTierFactorsScale)(kind, f0, n, small, large, low, high);
}

uint64_t SweepDigest(const float* y, uint64_t key_high, const uint64_t* key_low, size_t n) {
  return HWY_DYNAMIC_DISPATCH(SweepTierDigest)(y, key_high, key_low, n);
}

std::string_view SweepTierTarget() {
  EnsureRegistry();
  // Dispatch picks the best (lowest bit) of the supported compiled targets,
  // SetSupportedTargetsForTest's included. (Not a per-target export: the
  // exported functions are those called only on the dispatched target.)
  const int64_t targets = hwy::SupportedTargets() & HWY_TARGETS;
  return hwy::TargetName(targets & -targets);
}

}  // namespace ulpgate
#endif  // HWY_ONCE
