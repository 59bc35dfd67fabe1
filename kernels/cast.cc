// Compiles the cast kernels (kernels/cast-inl.h) once per Highway target
// (foreach_target.h re-includes this file per target) and finds them by
// (source, destination, variant, target).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cast.h"

#ifndef ULPGATE_KERNELS_CAST_TYPES_
#define ULPGATE_KERNELS_CAST_TYPES_
namespace ulpgate {
namespace cast_detail {
// One target's kernels: [source][destination][variant] (kCastSources,
// kCastDestinations, kCastVariants order; nullptr where the variant does not
// apply), and the decoders per destination.
struct TargetCastKernels {
  int64_t target;
  std::array<std::array<std::array<CastKernel, kCastVariants.size()>, kCastDestinations.size()>,
             kCastSources.size()>
      cast;
  std::array<CastDecodeKernel, kCastDestinations.size()> decode;
};
}  // namespace cast_detail
}  // namespace ulpgate
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cast.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/cast-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

template <size_t kFrom, size_t kTo>
constexpr std::array<CastKernel, kCastVariants.size()> CastVariantsOf() {
  constexpr const FloatFormat* from = kCastSources[kFrom];
  constexpr const FloatFormat* to = kCastDestinations[kTo];
  std::array<CastKernel, kCastVariants.size()> k{};
  for (size_t v = 0; v < kCastVariants.size(); ++v) {
    switch (kCastVariants[v].variant) {
      case CastVariant::kRneSat:
        k[v] = &cast::CastKernelOf<from, to, CastRoundingMode::kNearestEven>;
        break;
      case CastVariant::kViaBf16:
        if constexpr (CastVariantApplies(*from, *to, CastVariant::kViaBf16)) {
          k[v] = &cast::CastKernelOf<from, to, CastRoundingMode::kNearestEven, true>;
        }
        break;
      case CastVariant::kTrunc:
        k[v] = &cast::CastKernelOf<from, to, CastRoundingMode::kTowardZero>;
        break;
    }
  }
  return k;
}

template <size_t kFrom, size_t... kTo>
constexpr std::array<std::array<CastKernel, kCastVariants.size()>, sizeof...(kTo)>
CastDestinationsOf(std::index_sequence<kTo...>) {
  return {{CastVariantsOf<kFrom, kTo>()...}};
}

template <size_t... kFrom>
constexpr auto CastSourcesOf(std::index_sequence<kFrom...>) {
  return std::array<std::array<std::array<CastKernel, kCastVariants.size()>,
                               kCastDestinations.size()>,
                    sizeof...(kFrom)>{
      {CastDestinationsOf<kFrom>(std::make_index_sequence<kCastDestinations.size()>())...}};
}

template <size_t... kTo>
constexpr std::array<CastDecodeKernel, sizeof...(kTo)> DecodersOf(std::index_sequence<kTo...>) {
  return {{&cast::DecodeKernelOf<kCastDestinations[kTo]>...}};
}

// A constant table's address, as the registry's accessors return one: the
// registry calls this for every compiled target, also those this CPU cannot
// run, and returning an address runs no target-specific instruction.
const ::ulpgate::cast_detail::TargetCastKernels* GetTargetCastKernels() {
  static constexpr ::ulpgate::cast_detail::TargetCastKernels kKernels{
      HWY_TARGET, CastSourcesOf(std::make_index_sequence<kCastSources.size()>()),
      DecodersOf(std::make_index_sequence<kCastDestinations.size()>())};
  return &kKernels;
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ulpgate {

HWY_EXPORT(GetTargetCastKernels);

namespace {

const cast_detail::TargetCastKernels* KernelsOf(int64_t target) {
  // Entry 0 of a dispatch table is the chooser; the others are the compiled
  // targets (nullptr where not compiled).
  for (const auto& entry : HWY_DISPATCH_TABLE(GetTargetCastKernels)) {
    if (entry == nullptr || entry == HWY_DISPATCH_TABLE(GetTargetCastKernels)[0]) continue;
    const cast_detail::TargetCastKernels* k = entry();
    if (k->target == target) return k;
  }
  return nullptr;
}

template <class Array>
int IndexByName(const Array& formats, std::string_view name) {
  for (size_t i = 0; i < formats.size(); ++i) {
    if (name == formats[i]->name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

const CastVariantInfo* FindCastVariant(std::string_view name) {
  for (const CastVariantInfo& v : kCastVariants) {
    if (name == v.name) return &v;
  }
  return nullptr;
}

const FloatFormat* FindCastSource(std::string_view name) {
  const int i = IndexByName(kCastSources, name);
  return i < 0 ? nullptr : kCastSources[static_cast<size_t>(i)];
}

const FloatFormat* FindCastDestination(std::string_view name) {
  const int i = IndexByName(kCastDestinations, name);
  return i < 0 ? nullptr : kCastDestinations[static_cast<size_t>(i)];
}

namespace {

struct CastReplacement {
  std::string from, to, variant;
  int64_t target;
  CastKernel kernel;
};
std::vector<CastReplacement>& CastReplacements() {
  static std::vector<CastReplacement> replacements;  // filled before main, read after
  return replacements;
}

}  // namespace

void ReplaceCastKernelForTesting(std::string_view from, std::string_view to,
                                 std::string_view variant, int64_t target, CastKernel kernel) {
  CastReplacements().push_back(
      {std::string(from), std::string(to), std::string(variant), target, kernel});
}

CastKernel FindCastKernel(std::string_view from, std::string_view to, std::string_view variant,
                          int64_t target) {
  for (const CastReplacement& r : CastReplacements()) {
    if (r.from == from && r.to == to && r.variant == variant && r.target == target) {
      return r.kernel;
    }
  }
  const int f = IndexByName(kCastSources, from);
  const int t = IndexByName(kCastDestinations, to);
  const CastVariantInfo* v = FindCastVariant(variant);
  const cast_detail::TargetCastKernels* k = KernelsOf(target);
  if (f < 0 || t < 0 || v == nullptr || k == nullptr) return nullptr;
  return k->cast[static_cast<size_t>(f)][static_cast<size_t>(t)]
                [static_cast<size_t>(v - kCastVariants.data())];
}

CastDecodeKernel FindCastDecodeKernel(std::string_view to, int64_t target) {
  const int t = IndexByName(kCastDestinations, to);
  const cast_detail::TargetCastKernels* k = KernelsOf(target);
  if (t < 0 || k == nullptr) return nullptr;
  return k->decode[static_cast<size_t>(t)];
}

}  // namespace ulpgate
#endif  // HWY_ONCE
