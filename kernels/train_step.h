// The elementwise training-step kernels per target (kernels/train_step-inl.h),
// held in the kernel registry's per-target table (kernels/registry.cc).
#ifndef ULPGATE_KERNELS_TRAIN_STEP_H_
#define ULPGATE_KERNELS_TRAIN_STEP_H_

#include <cstddef>
#include <cstdint>

namespace ulpgate {

struct TrainStepKernels {
  void (*tanh_forward)(const float* x, float* y, size_t n);
  void (*relu_forward)(const float* x, float* y, size_t n);
  void (*relu_backward)(const float* dy, const float* h, float* dh, size_t n);
  void (*sgd_step)(float* w, const float* g, float lr, size_t n);
  void (*sgd_step_fused)(float* w, const float* g, float lr, size_t n);
  void (*sam_perturb)(const float* w, const float* g, float scale, float* out, size_t n);
};

// nullptr when the target was not compiled.
const TrainStepKernels* FindTrainStepKernels(int64_t target);

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_TRAIN_STEP_H_
