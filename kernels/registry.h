// The kernel registry: (op, variant, target) -> function pointer.
//
// Plain C++, no Highway types: callers pick a target by name and call the
// kernel compiled for it, whether or not it is the best target this CPU has.
#ifndef ULPGATE_KERNELS_REGISTRY_H_
#define ULPGATE_KERNELS_REGISTRY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ulpgate {

// out[i] = op(grad[i], t[i]); see kernels/tanh_bwd-inl.h for the contract.
using TanhBwdKernel = void (*)(const float* grad, const float* t, float* out,
                               size_t n);

// The reduction kernels (kernels/linear-inl.h, kernels/mse-inl.h); tensors are
// row-major, shapes as in reduction_spec.h.
// y [batch, out] = x [batch, in] * w [out, in]^T + b [out].
using LinearFwdKernel = void (*)(const float* x, const float* w, const float* b, float* y,
                                 size_t batch, size_t in, size_t out);
// dx [batch, in] = dy [batch, out] * w [out, in].
using LinearBwdInputKernel = void (*)(const float* dy, const float* w, float* dx,
                                      size_t batch, size_t in, size_t out);
// dw [out, in] = dy [batch, out]^T * x [batch, in].
using LinearBwdWeightKernel = void (*)(const float* dy, const float* x, float* dw,
                                       size_t batch, size_t in, size_t out);
// db [out] = column sums of dy [batch, out].
using LinearBwdBiasKernel = void (*)(const float* dy, float* db, size_t batch, size_t out);
// Returns mean((y - target)^2) over n elements.
using MseFwdKernel = float (*)(const float* y, const float* target, size_t n);
// dy [n] = (2/n) * (y - target) * grad_out.
using MseBwdKernel = void (*)(const float* y, const float* target, float grad_out, float* dy,
                              size_t n);

// One Highway target this binary was compiled for.
struct TargetInfo {
  int64_t bits = 0;           // the HWY_* target bit
  std::string name;           // as hwy::TargetName names it: SCALAR, SSE4, AVX2 ...
  bool supported = false;     // this CPU can run it
  bool fused_negmuladd = false;  // Highway's NegMulAdd is one FMA instruction
  bool fused_muladd = false;     // Highway's MulAdd is one FMA instruction
  size_t f32_lanes = 0;       // float lanes of a full vector
};

// Every compiled target, from the narrowest (SCALAR) to the widest.
const std::vector<TargetInfo>& CompiledTargets();

// nullptr when no compiled target has that name (case-insensitive).
const TargetInfo* FindTarget(std::string_view name);

// The best supported target on this CPU.
const TargetInfo& BestTarget();

// nullptr when the variant is unknown or the target not compiled.
TanhBwdKernel FindTanhBwdKernel(std::string_view variant, int64_t target);

// Variants are the names of reduction_spec.h's op tables; nullptr when the
// variant is unknown or the target not compiled.
LinearFwdKernel FindLinearFwdKernel(std::string_view variant, int64_t target);
LinearBwdInputKernel FindLinearBwdInputKernel(std::string_view variant, int64_t target);
LinearBwdWeightKernel FindLinearBwdWeightKernel(std::string_view variant, int64_t target);
LinearBwdBiasKernel FindLinearBwdBiasKernel(std::string_view variant, int64_t target);
MseFwdKernel FindMseFwdKernel(std::string_view variant, int64_t target);
MseBwdKernel FindMseBwdKernel(std::string_view variant, int64_t target);

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_REGISTRY_H_
