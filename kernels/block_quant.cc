// Compiles the block quantization kernels (kernels/block_quant-inl.h) once
// per Highway target and finds them by target (kernels/block_quant.h).
#include "kernels/block_quant.h"

#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/block_quant.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/block_quant-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

const BlockQuantKernels* GetBlockQuantKernels() {
  static constexpr BlockQuantKernels kKernels = {
      HWY_TARGET,
      &block_quant::MxScaleBytes,
      &block_quant::MxScaleBytesOfPatterns,
      &block_quant::MxQuantize,
      &block_quant::Nvfp4Quantize,
      &block_quant::MxDequantize,
  };
  return &kKernels;
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ulpgate {

HWY_EXPORT(GetBlockQuantKernels);

namespace {

struct BlockQuantOverride {
  int64_t target = 0;
  const BlockQuantKernels* kernels = nullptr;
};

std::vector<BlockQuantOverride>& Overrides() {
  static std::vector<BlockQuantOverride> overrides;
  return overrides;
}

}  // namespace

void ReplaceBlockQuantKernelsForTesting(int64_t target, const BlockQuantKernels* kernels) {
  Overrides().push_back({target, kernels});
}

const BlockQuantKernels* FindBlockQuantKernels(int64_t target) {
  for (const BlockQuantOverride& o : Overrides()) {
    if (o.target == target) return o.kernels;
  }
  // Entry 0 of a dispatch table is the chooser; the others are the compiled
  // targets (nullptr where not compiled).
  for (const auto& entry : HWY_DISPATCH_TABLE(GetBlockQuantKernels)) {
    if (entry == nullptr || entry == HWY_DISPATCH_TABLE(GetBlockQuantKernels)[0]) continue;
    const BlockQuantKernels* k = entry();
    if (k->target == target) return k;
  }
  return nullptr;
}

}  // namespace ulpgate
#endif  // HWY_ONCE
