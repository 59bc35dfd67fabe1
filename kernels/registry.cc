// Compiles every kernel family once per Highway target (foreach_target.h
// re-includes this file per target) and collects the per-target function
// pointers into the registry: one table per target, one registry.

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "kernels/narrow_formats.h"
#include "kernels/registry.h"
#include "kernels/ops/registered_ops.h"
#include "kernels/reductions/registered_reductions.h"
#include "kernels/train_step.h"

#ifndef ULPGATE_KERNELS_REGISTRY_TYPES_
#define ULPGATE_KERNELS_REGISTRY_TYPES_
namespace ulpgate {
namespace registry_detail {
// One elementwise op's kernels on one target: in the order of its spec's
// kVariants (f32) and kNarrowVariants (per row of kNarrowFormats), pointing
// into constant tables of the target's code.
struct ElementwiseKernels {
  const ElementwiseKernel* f32 = nullptr;
  size_t f32_count = 0;
  std::array<const ElementwiseKernel*, kNarrowFormats.size()> narrow{};
  size_t narrow_count = 0;
};

// One reduction's kernels on one target: in the order of its spec's
// kVariants, in f32 and per row of kNarrowFormats (the same variants).
struct ReductionKernels {
  const ReductionKernel* f32 = nullptr;
  std::array<const ReductionKernel*, kNarrowFormats.size()> narrow{};
  size_t count = 0;
};

// What one target contributes to the registry: every table is generated from
// the variant tables (each op's spec, kernels/ops/ and kernels/reductions/),
// so nothing here follows another table's order by hand.
struct TargetKernels {
  int64_t target;
  size_t f32_lanes;
  // Per op of ULPGATE_ELEMENTWISE_OPS, in its order.
  std::array<ElementwiseKernels, kElementwiseOpCount> elementwise;
  // Per op of ULPGATE_REDUCTION_OPS, in its order.
  std::array<ReductionKernels, kReductionOpCount> reductions;
  TrainStepKernels train_step;
};
}  // namespace registry_detail
}  // namespace ulpgate
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/registry.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/elementwise-inl.h"
#include "kernels/reductions/registered_reductions-inl.h"
#include "kernels/train_step-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

// An op's kernels on this target: one per f32 variant, one per 16-bit variant
// in each format of kNarrowFormats (with its conversions), in table order.
template <size_t kFormat>
using FormatConversions = ConversionsOf<kNarrowFormats[kFormat].format>;
template <class Spec, class Seq>
struct ElementwiseTables {
  template <size_t... kVariant>
  static constexpr std::array<ElementwiseKernel, sizeof...(kVariant)> F32(
      std::index_sequence<kVariant...>) {
    return {{&ElementwiseF32<Spec, Seq, kVariant>...}};
  }
  template <size_t kFormat, size_t... kVariant>
  static constexpr std::array<ElementwiseKernel, sizeof...(kVariant)> Narrow(
      std::index_sequence<kVariant...>) {
    return {{&ElementwiseNarrow<Spec, Seq, typename FormatConversions<kFormat>::Exact,
                                typename FormatConversions<kFormat>::Highway, kVariant>...}};
  }
  template <size_t... kFormat>
  static constexpr std::array<std::array<ElementwiseKernel, Spec::kNarrowVariants.size()>,
                              sizeof...(kFormat)>
  NarrowPerFormat(std::index_sequence<kFormat...>) {
    return {{Narrow<kFormat>(std::make_index_sequence<Spec::kNarrowVariants.size()>())...}};
  }
  static constexpr std::array<ElementwiseKernel, Spec::kVariants.size()> kF32 =
      F32(std::make_index_sequence<Spec::kVariants.size()>());
  static constexpr auto kNarrow =
      NarrowPerFormat(std::make_index_sequence<kNarrowFormats.size()>());

  template <size_t... kFormat>
  static constexpr ::ulpgate::registry_detail::ElementwiseKernels Entry(
      std::index_sequence<kFormat...>) {
    ::ulpgate::registry_detail::ElementwiseKernels entry;
    entry.f32 = kF32.data();
    entry.f32_count = kF32.size();
    entry.narrow = {{kNarrow[kFormat].data()...}};
    entry.narrow_count = Spec::kNarrowVariants.size();
    return entry;
  }
  static constexpr ::ulpgate::registry_detail::ElementwiseKernels Entry() {
    return Entry(std::make_index_sequence<kNarrowFormats.size()>());
  }
};

// A reduction's kernels on this target: one per variant in f32, and the same
// variants in each format of kNarrowFormats (its conversions around the f32
// kernel), in table order.
template <class Spec, class Kernels>
struct ReductionTables {
  template <size_t... kVariant>
  static constexpr std::array<ReductionKernel, sizeof...(kVariant)> F32(
      std::index_sequence<kVariant...>) {
    return {{&Kernels::template Kernel<kVariant>...}};
  }
  template <size_t kFormat, size_t... kVariant>
  static constexpr std::array<ReductionKernel, sizeof...(kVariant)> Narrow(
      std::index_sequence<kVariant...>) {
    return {{&ReductionNarrow<typename FormatConversions<kFormat>::Exact, Spec, Kernels,
                              kVariant>...}};
  }
  template <size_t... kFormat>
  static constexpr std::array<std::array<ReductionKernel, Spec::kVariants.size()>,
                              sizeof...(kFormat)>
  NarrowPerFormat(std::index_sequence<kFormat...>) {
    return {{Narrow<kFormat>(std::make_index_sequence<Spec::kVariants.size()>())...}};
  }
  static constexpr std::array<ReductionKernel, Spec::kVariants.size()> kF32 =
      F32(std::make_index_sequence<Spec::kVariants.size()>());
  static constexpr auto kNarrow =
      NarrowPerFormat(std::make_index_sequence<kNarrowFormats.size()>());

  template <size_t... kFormat>
  static constexpr ::ulpgate::registry_detail::ReductionKernels Entry(
      std::index_sequence<kFormat...>) {
    ::ulpgate::registry_detail::ReductionKernels entry;
    entry.f32 = kF32.data();
    entry.narrow = {{kNarrow[kFormat].data()...}};
    entry.count = Spec::kVariants.size();
    return entry;
  }
  static constexpr ::ulpgate::registry_detail::ReductionKernels Entry() {
    return Entry(std::make_index_sequence<kNarrowFormats.size()>());
  }
};

// Returns a constant-initialized table rather than building one: the registry
// calls this for every compiled target, also those the CPU cannot run (AVX3 on
// an AVX2 machine), and code compiled for such a target may use its
// instructions (GCC built a by-value struct with pinsrq in the SSE4 copy and
// vinserti128 in the AVX2 and AVX3 copies). Returning an address runs no
// target-specific instruction; tools/baseline_accessors_test.cmake checks the
// disassembly of every such accessor.
const ::ulpgate::registry_detail::TargetKernels* GetTargetKernels() {
  // MaxLanes is constexpr, and equals Lanes on x86's fixed-width targets.
  static constexpr ::ulpgate::registry_detail::TargetKernels kKernels{
      HWY_TARGET,
      hn::MaxLanes(hn::ScalableTag<float>()),
#define ULPGATE_ELEMENTWISE_ENTRY(Spec, ns) ElementwiseTables<Spec, ns::Sequences>::Entry(),
      {{ULPGATE_ELEMENTWISE_OPS(ULPGATE_ELEMENTWISE_ENTRY)}},
#undef ULPGATE_ELEMENTWISE_ENTRY
#define ULPGATE_REDUCTION_ENTRY(Spec, templates, kernels) \
  ReductionTables<Spec, kernels>::Entry(),
      {{ULPGATE_REDUCTION_OPS(ULPGATE_REDUCTION_ENTRY)}},
#undef ULPGATE_REDUCTION_ENTRY
      {&TanhForward, &ReluForward, &ReluBackward, &SgdStep, &SgdStepFused, &SamPerturb},
  };
  return &kKernels;
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernels/elementwise_ops.h"
#include "kernels/ops/registered_ops.h"

namespace ulpgate {

HWY_EXPORT(GetTargetKernels);

namespace {

// Highway 1.0.3 fuses NegMulAdd on these targets only (x86_256/512-inl.h use
// _mm*_fnmadd_ps; x86_128-inl.h and scalar-inl.h compute add - mul*x). This is
// the expectation the conformance check is held to, not an assumption the
// measurements rely on.
// On 64-bit ARM every SIMD target fuses both (arm_neon-inl.h: vfmaq_f32 and
// vfmsq_f32 under HWY_ARCH_ARM_A64; arm_sve-inl.h: svmad and svmsb).
bool HasFusedNegMulAdd(int64_t target) {
#if HWY_ARCH_ARM_A64
  return target != HWY_SCALAR;
#else
  return target == HWY_AVX2 || target == HWY_AVX3 || target == HWY_AVX3_DL;
#endif
}

// Highway 1.0.3 converts f16 with F16C instructions (vcvtph2ps/vcvtps2ph,
// rounding to nearest even) where HWY_TARGET < HWY_SSE4 and HWY_DISABLE_F16C
// is not defined (x86_128-inl.h), by bit manipulation on SSE4, SSSE3 and
// SCALAR (x86_128-inl.h, scalar-inl.h). The conformance tests hold the
// kernels to the model this implies.
// On 64-bit ARM the SIMD targets convert with the hardware's instructions,
// rounding to nearest even as F16C does (arm_neon-inl.h: vcvt_f32_f16 and
// vcvt_f16_f32; arm_sve-inl.h: svcvt_f32_f16 and svcvt_f16_f32).
bool HasF16cConversions(int64_t target) {
#if HWY_ARCH_ARM_A64
  return target != HWY_SCALAR;
#else
  return target == HWY_AVX2 || target == HWY_AVX3 || target == HWY_AVX3_DL;
#endif
}

struct Registry {
  std::vector<TargetInfo> targets;
  std::vector<::ulpgate::registry_detail::TargetKernels> kernels;  // parallel to targets
  std::optional<CpuTargetsRestriction> restriction;
};

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The compiled targets' bits a restriction leaves, before intersecting with
// what this CPU has; `targets` is sorted narrowest first.
int64_t AllowedTargets(const std::string& spec, std::string_view source,
                       const std::vector<TargetInfo>& targets) {
  const auto error = [&](const std::string& what) {
    std::string compiled;
    for (const TargetInfo& t : targets) compiled += (compiled.empty() ? "" : ", ") + t.name;
    return std::invalid_argument(what + " in " + std::string(source) + " '" + spec +
                                 "' (the forms are max:T, T1,T2,... and all; compiled: " +
                                 compiled + ")");
  };
  const auto find = [&](std::string_view name) -> const TargetInfo& {
    if (name.empty()) throw error("empty target name");
    for (const TargetInfo& t : targets) {
      if (EqualsIgnoreCase(t.name, name)) return t;
    }
    throw error("unknown target '" + std::string(name) + "'");
  };
  constexpr std::string_view kMax = "max:";
  const std::string_view whole = Trim(spec);
  int64_t allowed = 0;
  if (whole.size() >= kMax.size() && EqualsIgnoreCase(whole.substr(0, kMax.size()), kMax)) {
    const TargetInfo& last = find(Trim(whole.substr(kMax.size())));
    for (const TargetInfo& t : targets) {
      allowed |= t.bits;
      if (&t == &last) break;
    }
    return allowed;
  }
  std::string_view rest = whole;
  for (;;) {
    const size_t comma = rest.find(',');
    allowed |= find(Trim(rest.substr(0, comma))).bits;
    if (comma == std::string_view::npos) return allowed;
    rest.remove_prefix(comma + 1);
  }
}

Registry BuildRegistry(const std::optional<std::string>& spec, std::string_view source) {
  Registry r;
  const int64_t cpu = hwy::SupportedTargets();
  // Entry 0 of a dispatch table is the chooser; the others are the compiled
  // targets (nullptr where not compiled), the fallback possibly twice.
  for (const auto& entry : HWY_DISPATCH_TABLE(GetTargetKernels)) {
    if (entry == nullptr || entry == HWY_DISPATCH_TABLE(GetTargetKernels)[0]) continue;
    const ::ulpgate::registry_detail::TargetKernels& k = *entry();
    const bool seen =
        std::any_of(r.kernels.begin(), r.kernels.end(),
                    [&](const ::ulpgate::registry_detail::TargetKernels& o) { return o.target == k.target; });
    if (seen) continue;
    TargetInfo info;
    info.bits = k.target;
    info.name = hwy::TargetName(k.target);
    info.cpu_supported = (cpu & k.target) != 0;
    info.supported = info.cpu_supported;
    info.fused_negmuladd = HasFusedNegMulAdd(k.target);
    // MulAdd is fused on exactly the same targets (_mm*_fmadd_ps under the
    // same #if in x86_128/256/512-inl.h; scalar-inl.h computes mul*x + add).
    info.fused_muladd = HasFusedNegMulAdd(k.target);
    info.f32_lanes = k.f32_lanes;
    info.f16c_conversions = HasF16cConversions(k.target);
    r.targets.push_back(info);
    r.kernels.push_back(k);
  }
  // Highway's target bits grow as targets get narrower: sort widest-last.
  std::vector<size_t> order(r.targets.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return r.targets[a].bits > r.targets[b].bits;
  });
  Registry sorted;
  for (size_t i : order) {
    sorted.targets.push_back(r.targets[i]);
    sorted.kernels.push_back(r.kernels[i]);
  }
  if (!spec || EqualsIgnoreCase(Trim(*spec), "all")) return sorted;

  CpuTargetsRestriction restriction{*spec, std::string(source), {}};
  const int64_t allowed = AllowedTargets(*spec, source, sorted.targets) | HWY_SCALAR;
  int64_t removed = 0;
  for (const TargetInfo& t : sorted.targets) {
    if ((allowed & t.bits) == 0) removed |= t.bits;
    if ((allowed & t.bits) != 0 && !t.cpu_supported) restriction.lacking.push_back(t.name);
  }
  // DisableTargets, not SetSupportedTargetsForTest: a mask can only remove
  // targets, so Highway never believes in one this CPU lacks.
  hwy::DisableTargets(removed);
  const int64_t runnable = hwy::SupportedTargets();
  // Highway 1.0.3's SupportedTargets chooses the target of every
  // HWY_DYNAMIC_DISPATCH from all the CPU has, DisableTargets or not; set as
  // the targets "for test", the runnable ones (the CPU's, restricted) are
  // what it chooses from.
  hwy::SetSupportedTargetsForTest(runnable);
  for (TargetInfo& t : sorted.targets) t.supported = (runnable & t.bits) != 0;
  sorted.restriction = std::move(restriction);
  return sorted;
}

// The restriction InitRegistry asked for; without one, the registry's first
// use reads the environment.
struct RegistryRequest {
  std::optional<std::string> spec;
  std::string source;
  bool throw_errors = false;  // InitRegistry's caller reports them
};

RegistryRequest& Request() {
  static RegistryRequest request;
  return request;
}

std::atomic<bool> initialised{false};

const Registry& GetRegistry() {
  static const Registry registry = [] {
    RegistryRequest request = Request();
    if (!request.spec) {
      const char* value = std::getenv(kCpuTargetsVariable);
      if (value != nullptr && *value != '\0') request.spec = value;
      request.source = kCpuTargetsVariable;
    }
    try {
      Registry r = BuildRegistry(request.spec, request.source);
      initialised = true;
      return r;
    } catch (const std::invalid_argument& e) {
      // InitRegistry's caller reports the error; a test binary or any other
      // program that just uses the registry cannot run on a target set it
      // does not know, so it stops here, saying why.
      if (request.throw_errors) throw;
      std::fprintf(stderr, "ulpgate: error: %s\n", e.what());
      std::abort();
    }
  }();
  return registry;
}

}  // namespace

void InitRegistry(const std::optional<std::string>& spec, std::string_view source) {
  if (initialised) throw std::logic_error("InitRegistry: the registry is already initialised");
  Request() = RegistryRequest{spec, std::string(source), true};
  GetRegistry();
}

const CpuTargetsRestriction* CpuRestriction() {
  const Registry& r = GetRegistry();
  return r.restriction ? &*r.restriction : nullptr;
}

std::string NotRunnableReason(const TargetInfo& target) {
  if (target.supported) return "";
  const CpuTargetsRestriction* r = CpuRestriction();
  if (!target.cpu_supported || r == nullptr) return "not on this CPU";
  return "left out by " + r->source + " '" + r->spec + "'";
}

const std::vector<TargetInfo>& CompiledTargets() { return GetRegistry().targets; }

const TargetInfo* FindTarget(std::string_view name) {
  for (const TargetInfo& t : CompiledTargets()) {
    if (EqualsIgnoreCase(t.name, name)) return &t;
  }
  return nullptr;
}

const TargetInfo& BestTarget() {
  const auto& targets = CompiledTargets();
  for (auto it = targets.rbegin(); it != targets.rend(); ++it) {
    if (it->supported) return *it;
  }
  return targets.front();  // the fallback is always supported
}

namespace {

struct Replacement {
  std::string op, format, variant;
  int64_t target;
  ElementwiseKernel kernel;
};
std::vector<Replacement>& Replacements() {
  static std::vector<Replacement> replacements;  // filled before main, read after
  return replacements;
}

}  // namespace

void ReplaceElementwiseKernelForTesting(std::string_view op, std::string_view format,
                                        std::string_view variant, int64_t target,
                                        ElementwiseKernel kernel) {
  Replacements().push_back(
      {std::string(op), std::string(format), std::string(variant), target, kernel});
}

ElementwiseKernel FindElementwiseKernel(std::string_view op, std::string_view format,
                                        std::string_view variant, int64_t target) {
  for (const Replacement& r : Replacements()) {
    if (r.op == op && r.format == format && r.variant == variant && r.target == target) {
      return r.kernel;
    }
  }
  const ElementwiseOpInfo* info = FindElementwiseOp(op);
  if (info == nullptr) return nullptr;
  const bool binary32 = format == "f32";
  const int f = binary32 ? -1 : NarrowFormatIndex(format);
  if (!binary32 && f < 0) return nullptr;
  const int v = binary32 ? info->VariantIndex(variant) : info->NarrowVariantIndex(variant);
  if (v < 0) return nullptr;
  for (const registry_detail::TargetKernels& k : GetRegistry().kernels) {
    if (k.target != target) continue;
    const registry_detail::ElementwiseKernels& e = k.elementwise[info->index];
    return binary32 ? e.f32[v] : e.narrow[static_cast<size_t>(f)][v];
  }
  return nullptr;
}

ReductionKernel FindReductionKernel(std::string_view op, std::string_view format,
                                    std::string_view variant, int64_t target) {
  const ReductionOpInfo* info = FindReductionOp(op);
  if (info == nullptr) return nullptr;
  const bool binary32 = format == "f32";
  const int f = binary32 ? -1 : NarrowFormatIndex(format);
  if (!binary32 && f < 0) return nullptr;
  const int v = ReductionVariantIndex(*info, variant);
  if (v < 0) return nullptr;
  for (const registry_detail::TargetKernels& k : GetRegistry().kernels) {
    if (k.target != target) continue;
    const registry_detail::ReductionKernels& r = k.reductions[info->index];
    return binary32 ? r.f32[v] : r.narrow[static_cast<size_t>(f)][v];
  }
  return nullptr;
}

const TrainStepKernels* FindTrainStepKernels(int64_t target) {
  for (const registry_detail::TargetKernels& k : GetRegistry().kernels) {
    if (k.target == target) return &k.train_step;
  }
  return nullptr;
}

}  // namespace ulpgate
#endif  // HWY_ONCE
