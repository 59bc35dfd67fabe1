// How a training run stores and computes its numbers, and the ops of one
// training step with the formats each reads and writes.
//
// A precision is either one format for everything (f32, bf16, f16: the model,
// its data and every gradient cast to it, as `model.to(dtype)` does) or mixed
// precision (mixed_bf16, mixed_f16): binary32 master weights, gradients and
// optimizer, with the layers computed in the 16-bit format and the casts where
// autocast puts them. The casts belong to the op that reads: an op reads each
// operand rounded to its input format (identity for a value already of it), so
// the f32 -> bf16 cast of a master weight is part of linear_fwd and the cast of
// MSE's binary32 gradient back to bf16 is part of tanh_bwd.
#ifndef ULPGATE_SUITES_DRIFT_PRECISION_H_
#define ULPGATE_SUITES_DRIFT_PRECISION_H_

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "oracles/format.h"

namespace ulpgate {

struct DriftPrecision {
  // The format of activations, layer gradients and the layers' arithmetic.
  const FloatFormat* compute = &kBinary32;
  // The format of parameters, their gradients and the optimizer (binary32 in
  // mixed precision; `compute` otherwise).
  const FloatFormat* master = &kBinary32;

  bool mixed() const { return compute != master; }
  // "f32", "bf16", "f16", "mixed_bf16", "mixed_f16".
  std::string Name() const;
};

// "everything in bf16", "f32 master weights and optimizer, layers in bf16".
std::string PrecisionDescription(const DriftPrecision& precision);

// Every precision, in the order above.
const std::vector<std::string>& DriftPrecisionNames();
// Throws InputError naming the precisions for an unknown name.
DriftPrecision ParseDriftPrecision(std::string_view name);
// From a scenario's fields: `dtype` (f32, bf16, f16) and `master` ("" or the
// dtype itself: one format; "f32" with a 16-bit dtype: mixed). Throws
// InputError for anything else.
DriftPrecision DriftPrecisionOf(std::string_view dtype, std::string_view master);

// The ops of a training step, each a unit that can be computed exactly or
// rounded as a kernel does (drift --attribute), in the order a step runs them.
enum class StepOp : int {
  kLinearFwd,
  kRelu,  // forward and backward: exact in every format
  kTanhFwd,
  kMseFwd,
  kMseBwd,
  kTanhBwd,
  kLinearBwdWeight,
  kLinearBwdBias,
  kLinearBwdInput,
  kGradNorm,    // ||g||_2 over every parameter gradient
  kSamPerturb,  // scale = rho / (norm + eps) and w + g * scale
  kSgdStep,     // w - lr * g
};
inline constexpr size_t kStepOpCount = 12;
std::array<StepOp, kStepOpCount> AllStepOps();
const char* StepOpName(StepOp op);

// The format an op reads its operands in (each rounded to it on reading) and
// writes its outputs in.
struct StepOpFormats {
  const FloatFormat* in;
  const FloatFormat* out;
};
StepOpFormats FormatsOf(StepOp op, const DriftPrecision& precision);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_DRIFT_PRECISION_H_
