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

// One Highway target this binary was compiled for.
struct TargetInfo {
  int64_t bits = 0;           // the HWY_* target bit
  std::string name;           // as hwy::TargetName names it: SCALAR, SSE4, AVX2 ...
  bool supported = false;     // this CPU can run it
  bool fused_negmuladd = false;  // Highway's NegMulAdd is one FMA instruction
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

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_REGISTRY_H_
