// The kernels of one training run (suites/drift/float_ops.h) as function
// objects, so that a run calls either a target's kernels or their models: for
// every kernel the bit-exact scalar emulation of what it must compute on that
// target (its lane count, its MulAdd and NegMulAdd fused or not). A run on
// models needs no instruction of the target, so a target this CPU cannot run
// still has its training runs measured, checked against goldens and gated.
//
// tanh_bwd and the linear and MSE ops run in the format their step op has in
// the run's precision (FormatsOf): the 16-bit kernels take bit patterns, and
// these functions take and give floats holding values of the format (encoded
// and decoded around the call). The other kernels are binary32 ones; the run
// rounds their results to its formats.
#ifndef ULPGATE_SUITES_DRIFT_KERNELS_H_
#define ULPGATE_SUITES_DRIFT_KERNELS_H_

#include <cstddef>
#include <functional>
#include <string>

#include "kernels/ops/tanh_bwd/tanh_bwd_spec.h"
#include "kernels/registry.h"
#include "suites/drift/precision.h"

namespace ulpgate {

// The elementwise op of the network's tanh layer's backward pass.
// (kName is a literal: its data ends in a NUL.)
inline constexpr const char* kDriftTanhBwd = TanhBwdSpec::kName.data();

struct RunKernels {
  std::function<void(const float* grad, const float* t, float* out, size_t n)> tanh_bwd;
  std::function<void(const float* x, const float* w, const float* b, float* y, size_t batch,
                     size_t in, size_t out)>
      linear_fwd;
  std::function<void(const float* dy, const float* w, float* dx, size_t batch, size_t in,
                     size_t out)>
      linear_bwd_input;
  std::function<void(const float* dy, const float* x, float* dw, size_t batch, size_t in,
                     size_t out)>
      linear_bwd_weight;
  std::function<void(const float* dy, float* db, size_t batch, size_t out)> linear_bwd_bias;
  std::function<float(const float* y, const float* target, size_t n)> mse_fwd;
  // The binary32 linear_fwd of the run's linear variant as a sum of squares
  // (one row, bias 0: x + 0 is exact for x >= 0): the accumulation of the
  // gradient norm, binary32 in every precision.
  std::function<float(const float* x, size_t n)> sum_of_squares;
  std::function<void(const float* y, const float* target, float grad_out, float* dy, size_t n)>
      mse_bwd;
  std::function<void(const float* x, float* y, size_t n)> tanh_forward;
  std::function<void(const float* x, float* y, size_t n)> relu_forward;
  std::function<void(const float* dy, const float* h, float* dh, size_t n)> relu_backward;
  std::function<void(float* w, const float* g, float lr, size_t n)> sgd_step;
  std::function<void(float* w, const float* g, float lr, size_t n)> sgd_step_fused;
  std::function<void(const float* w, const float* g, float scale, float* out, size_t n)>
      sam_perturb;
};

// The variants a run uses (RunConfig's fields; mse_bwd is always
// "framework"). tanh_bwd names a variant of the compute format.
struct RunVariants {
  std::string tanh_bwd, linear, bias, mse;
};

// The target's kernels; throws InputError for an unknown variant. The target
// must be runnable here.
RunKernels TargetRunKernels(const RunVariants& variants, const TargetInfo& target,
                            const DriftPrecision& precision);

// The models of the target's kernels; throws InputError for an unknown
// variant. Any compiled target.
RunKernels ModelRunKernels(const RunVariants& variants, const TargetInfo& target,
                           const DriftPrecision& precision);

// Highway 1.0.3's contrib Tanh (hwy/contrib/math/math-inl.h: Tanh via Expm1,
// a degree-7 polynomial by Estrin's scheme and an exponent reconstruction) on
// one float, with MulAdd one rounding when `fused_muladd`, else two: what the
// tanh_forward kernel of a target gives, bit for bit.
float HighwayTanhModel(float x, bool fused_muladd);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_DRIFT_KERNELS_H_
