// Compiles kernels/train_step-inl.h for every Highway target.

#include <vector>

#include "kernels/train_step.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/train_step.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/train_step-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

std::pair<int64_t, TrainStepKernels> GetTrainStepKernels() {
  return {HWY_TARGET,
          {&TanhForward, &ReluForward, &ReluBackward, &SgdStep, &SgdStepFused, &SamPerturb}};
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ulpgate {

HWY_EXPORT(GetTrainStepKernels);

const TrainStepKernels* FindTrainStepKernels(int64_t target) {
  static const std::vector<std::pair<int64_t, TrainStepKernels>> table = [] {
    std::vector<std::pair<int64_t, TrainStepKernels>> t;
    for (const auto& entry : HWY_DISPATCH_TABLE(GetTrainStepKernels)) {
      if (entry != nullptr && entry != HWY_DISPATCH_TABLE(GetTrainStepKernels)[0]) {
        t.push_back(entry());
      }
    }
    return t;
  }();
  for (const auto& [bits, kernels] : table) {
    if (bits == target) return &kernels;
  }
  return nullptr;
}

}  // namespace ulpgate
#endif  // HWY_ONCE
