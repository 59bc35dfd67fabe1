// Compiles the stochastic rounding kernels once per Highway target and finds
// them by target (kernels/stochastic_cast.h).

#include "kernels/stochastic_cast.h"

#include <array>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/stochastic_cast.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/stochastic_cast-inl.h"

#ifndef ULPGATE_KERNELS_STOCHASTIC_CAST_TABLE_
#define ULPGATE_KERNELS_STOCHASTIC_CAST_TABLE_
namespace ulpgate {
namespace stochastic_detail {
// One target's kernels, in StochasticCastKernels()' order.
struct TargetKernels {
  int64_t target;
  std::array<StochasticCastKernel, 2> kernels;
};
}  // namespace stochastic_detail
}  // namespace ulpgate
#endif

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

// Addresses only, no target-specific instruction: safe to call on any CPU.
const stochastic_detail::TargetKernels* GetStochasticKernels() {
  static constexpr stochastic_detail::TargetKernels kKernels{
      HWY_TARGET, {&StochasticCastE4M3, &StochasticCastBf16}};
  return &kKernels;
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ulpgate {

HWY_EXPORT(GetStochasticKernels);

const std::vector<StochasticCastInfo>& StochasticCastKernels() {
  static const std::vector<StochasticCastInfo> kInfos = {
      {"float8_e4m3fn", "stochastic16.saturate"},
      {"bf16", "stochastic16.infinity"},
  };
  return kInfos;
}

StochasticCastKernel FindStochasticCastKernel(std::string_view to, int64_t target_bits) {
  const std::vector<StochasticCastInfo>& infos = StochasticCastKernels();
  size_t index = infos.size();
  for (size_t i = 0; i < infos.size(); ++i) {
    if (to == infos[i].to) index = i;
  }
  if (index == infos.size()) return nullptr;
  // Entry 0 of a dispatch table is the chooser; the others are the compiled
  // targets (nullptr where not compiled).
  for (const auto& entry : HWY_DISPATCH_TABLE(GetStochasticKernels)) {
    if (entry == nullptr || entry == HWY_DISPATCH_TABLE(GetStochasticKernels)[0]) continue;
    const stochastic_detail::TargetKernels& k = *entry();
    if (k.target == target_bits) return k.kernels[index];
  }
  return nullptr;
}

}  // namespace ulpgate
#endif  // HWY_ONCE
