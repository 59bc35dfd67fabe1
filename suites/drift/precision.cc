#include "suites/drift/precision.h"
#include "suites/drift/kernels.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/narrow_formats.h"
#include "suites/inputs/inputs.h"

namespace ulpgate {

std::string DriftPrecision::Name() const {
  return mixed() ? std::string("mixed_") + compute->name : std::string(compute->name);
}

std::string PrecisionDescription(const DriftPrecision& p) {
  if (!p.mixed()) return std::string("everything in ") + p.compute->name;
  return fmt::format("mixed precision: {} master weights, gradients and optimizer, layers in {}",
                     p.master->name, p.compute->name);
}

namespace {

// The formats a training run computes in: binary32 and the kernels' 16-bit
// formats (kNarrowFormats), each of the latter also mixed with f32 masters.
std::vector<DriftPrecision> DriftPrecisions() {
  std::vector<DriftPrecision> all = {{&kBinary32, &kBinary32}};
  for (const NarrowFormat& f : kNarrowFormats) all.push_back({f.format, f.format});
  for (const NarrowFormat& f : kNarrowFormats) all.push_back({f.format, &kBinary32});
  return all;
}

}  // namespace

const std::vector<std::string>& DriftPrecisionNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const DriftPrecision& p : DriftPrecisions()) v.push_back(p.Name());
    return v;
  }();
  return names;
}

DriftPrecision ParseDriftPrecision(std::string_view name) {
  for (const DriftPrecision& p : DriftPrecisions()) {
    if (name == p.Name()) return p;
  }
  throw InputError(fmt::format("unknown drift precision '{}' ({})", name,
                               fmt::join(DriftPrecisionNames(), ", ")));
}

DriftPrecision DriftPrecisionOf(std::string_view dtype, std::string_view master) {
  const DriftPrecision one = ParseDriftPrecision(dtype);
  if (one.mixed()) {
    throw InputError(fmt::format("'dtype' is a format ({}), not '{}'", KernelFormatNames(), dtype));
  }
  if (master.empty() || master == dtype) return one;
  if (master != kBinary32.name) {
    throw InputError(fmt::format("'master' must be f32 (mixed precision) or the dtype, not '{}'",
                                 master));
  }
  return {one.compute, &kBinary32};
}

std::array<StepOp, kStepOpCount> AllStepOps() {
  std::array<StepOp, kStepOpCount> ops{};
  for (size_t i = 0; i < kStepOpCount; ++i) ops[i] = static_cast<StepOp>(i);
  return ops;
}

const char* StepOpName(StepOp op) {
  switch (op) {
    case StepOp::kLinearFwd: return "linear_fwd";
    case StepOp::kRelu: return "relu";
    case StepOp::kTanhFwd: return "tanh_fwd";
    case StepOp::kMseFwd: return "mse_fwd";
    case StepOp::kMseBwd: return "mse_bwd";
    case StepOp::kTanhBwd: return kDriftTanhBwd;
    case StepOp::kLinearBwdWeight: return "linear_bwd_weight";
    case StepOp::kLinearBwdBias: return "linear_bwd_bias";
    case StepOp::kLinearBwdInput: return "linear_bwd_input";
    case StepOp::kGradNorm: return "grad_norm";
    case StepOp::kSamPerturb: return "sam_perturb";
    case StepOp::kSgdStep: return "sgd_step";
  }
  return "?";
}

StepOpFormats FormatsOf(StepOp op, const DriftPrecision& p) {
  switch (op) {
    case StepOp::kMseFwd:
    case StepOp::kMseBwd:
      // Autocast runs the loss in binary32: the 16-bit output is widened
      // (exactly) and the loss and its gradient are binary32.
      return {p.master, p.master};
    case StepOp::kGradNorm:
    case StepOp::kSamPerturb:
    case StepOp::kSgdStep:
      return {p.master, p.master};
    default:
      return {p.compute, p.compute};
  }
}

}  // namespace ulpgate
