// Test-only (kernels/testing/cast_mutants.h): the mutant cast kernels, for
// every target.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "kernels/testing/cast_mutants.h"

#ifndef ULPGATE_KERNELS_TESTING_CAST_MUTANT_TYPES_
#define ULPGATE_KERNELS_TESTING_CAST_MUTANT_TYPES_
namespace ulpgate {
namespace cast_mutant_detail {
struct TargetMutants {
  int64_t target;
  // [destination][mutant], kCastDestinations and kCastMutants order.
  std::array<std::array<CastKernel, 4>, kCastDestinations.size()> kernels;
};
}  // namespace cast_mutant_detail
}  // namespace ulpgate
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/testing/cast_mutants.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/cast-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

template <size_t... kTo>
constexpr std::array<std::array<CastKernel, 4>, sizeof...(kTo)> MutantsOf(
    std::index_sequence<kTo...>) {
  return {{{{&cast::CastKernelOf<&kBinary32, kCastDestinations[kTo], CastRoundingMode::kTiesAway>,
             &cast::CastKernelOf<&kBinary32, kCastDestinations[kTo],
                                 CastRoundingMode::kStickyDropped>,
             &cast::CastKernelOf<&kBinary32, kCastDestinations[kTo],
                                 CastRoundingMode::kOverflowNan>,
             &cast::CastKernelOf<&kBinary32, kCastDestinations[kTo],
                                 CastRoundingMode::kNearestEven, true>}}...}};
}

const ::ulpgate::cast_mutant_detail::TargetMutants* GetCastMutants() {
  static constexpr ::ulpgate::cast_mutant_detail::TargetMutants kMutants{
      HWY_TARGET, MutantsOf(std::make_index_sequence<kCastDestinations.size()>())};
  return &kMutants;
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ulpgate {

HWY_EXPORT(GetCastMutants);

CastKernel FindCastMutantKernel(std::string_view to, CastMutant mutant, int64_t target) {
  size_t t = 0;
  while (t < kCastDestinations.size() && to != kCastDestinations[t]->name) ++t;
  if (t == kCastDestinations.size()) return nullptr;
  for (const auto& entry : HWY_DISPATCH_TABLE(GetCastMutants)) {
    if (entry == nullptr || entry == HWY_DISPATCH_TABLE(GetCastMutants)[0]) continue;
    const cast_mutant_detail::TargetMutants* m = entry();
    if (m->target == target) return m->kernels[t][static_cast<size_t>(mutant)];
  }
  return nullptr;
}

namespace {

// In the mutant build (build/bin/ulpgate_mutant), ULPGATE_CAST_MUTANT=KIND
// (ties_away, sticky_dropped, overflow_nan, via_bf16) puts that mutant in the place of
// every rne_sat kernel from f32, on every target, before main runs; unset, it
// changes nothing (the tests that link these kernels call them by name).
const bool kInstalled = [] {
  const char* kind = std::getenv("ULPGATE_CAST_MUTANT");
  if (kind == nullptr || *kind == '\0') return false;
  for (CastMutant m : kCastMutants) {
    if (std::strcmp(kind, CastMutantName(m)) != 0) continue;
    for (const auto& entry : HWY_DISPATCH_TABLE(GetCastMutants)) {
      if (entry == nullptr || entry == HWY_DISPATCH_TABLE(GetCastMutants)[0]) continue;
      const cast_mutant_detail::TargetMutants* t = entry();
      for (size_t d = 0; d < kCastDestinations.size(); ++d) {
        ReplaceCastKernelForTesting("f32", kCastDestinations[d]->name, "rne_sat", t->target,
                                    t->kernels[d][static_cast<size_t>(m)]);
      }
    }
    return true;
  }
  std::abort();  // a typo must not silently test the right kernels
}();

}  // namespace

}  // namespace ulpgate
#endif  // HWY_ONCE
