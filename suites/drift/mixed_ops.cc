#include "suites/drift/mixed_ops.h"

#include <utility>

namespace ulpgate {

MixedOps::MixedOps(const Scenario& scenario, const DriftPrecision& precision, RunKernels kernels,
                   bool fused_sgd, const std::vector<StepOp>& exact_ops)
    : exact_(scenario),
      float_(scenario, precision, std::move(kernels), fused_sgd, nullptr),
      precision_(precision) {
  for (StepOp op : exact_ops) exact_op_[static_cast<size_t>(op)] = true;
}

std::vector<float> MixedOps::Read(StepOp op, const Tensor& t) const {
  const FloatFormat& format = *FormatsOf(op, precision_).in;
  std::vector<float> r(t.size());
  for (size_t i = 0; i < t.size(); ++i) r[i] = static_cast<float>(RoundToFormat(format, t[i].get()));
  return r;
}

float MixedOps::Read(StepOp op, const Value& v) const {
  return static_cast<float>(RoundToFormat(*FormatsOf(op, precision_).in, v.get()));
}

std::vector<std::vector<float>> MixedOps::Read(StepOp op, const std::vector<Tensor>& ts) const {
  std::vector<std::vector<float>> r;
  for (const Tensor& t : ts) r.push_back(Read(op, t));
  return r;
}

ExactTensor MixedOps::LinearFwd(const Tensor& x, const Tensor& w, const Tensor& b,
                                const LinearShape& s) {
  if (Exact(StepOp::kLinearFwd)) return exact_.LinearFwd(x, w, b, s);
  const StepOp op = StepOp::kLinearFwd;
  return FromFloats(float_.LinearFwd(Read(op, x), Read(op, w), Read(op, b), s));
}

ExactTensor MixedOps::ReluFwd(const Tensor& x) {
  if (Exact(StepOp::kRelu)) return exact_.ReluFwd(x);
  return FromFloats(float_.ReluFwd(Read(StepOp::kRelu, x)));
}

ExactTensor MixedOps::ReluBwd(const Tensor& dy, const Tensor& h) {
  if (Exact(StepOp::kRelu)) return exact_.ReluBwd(dy, h);
  return FromFloats(float_.ReluBwd(Read(StepOp::kRelu, dy), Read(StepOp::kRelu, h)));
}

ExactTensor MixedOps::TanhFwd(const Tensor& x) {
  if (Exact(StepOp::kTanhFwd)) return exact_.TanhFwd(x);
  return FromFloats(float_.TanhFwd(Read(StepOp::kTanhFwd, x)));
}

ExactTensor MixedOps::TanhBwd(const Tensor& dy, const Tensor& y) {
  if (Exact(StepOp::kTanhBwd)) return exact_.TanhBwd(dy, y);
  return FromFloats(float_.TanhBwd(Read(StepOp::kTanhBwd, dy), Read(StepOp::kTanhBwd, y)));
}

MpfrNumber MixedOps::MseFwd(const Tensor& y, const Tensor& target) {
  if (Exact(StepOp::kMseFwd)) return exact_.MseFwd(y, target);
  return Widen(float_.MseFwd(Read(StepOp::kMseFwd, y), Read(StepOp::kMseFwd, target)));
}

ExactTensor MixedOps::MseBwd(const Tensor& y, const Tensor& target) {
  if (Exact(StepOp::kMseBwd)) return exact_.MseBwd(y, target);
  return FromFloats(float_.MseBwd(Read(StepOp::kMseBwd, y), Read(StepOp::kMseBwd, target)));
}

ExactTensor MixedOps::LinearBwdWeight(const Tensor& dy, const Tensor& x, const LinearShape& s) {
  if (Exact(StepOp::kLinearBwdWeight)) return exact_.LinearBwdWeight(dy, x, s);
  const StepOp op = StepOp::kLinearBwdWeight;
  return FromFloats(float_.LinearBwdWeight(Read(op, dy), Read(op, x), s));
}

ExactTensor MixedOps::LinearBwdBias(const Tensor& dy, const LinearShape& s) {
  if (Exact(StepOp::kLinearBwdBias)) return exact_.LinearBwdBias(dy, s);
  return FromFloats(float_.LinearBwdBias(Read(StepOp::kLinearBwdBias, dy), s));
}

ExactTensor MixedOps::LinearBwdInput(const Tensor& dy, const Tensor& w, const LinearShape& s) {
  if (Exact(StepOp::kLinearBwdInput)) return exact_.LinearBwdInput(dy, w, s);
  const StepOp op = StepOp::kLinearBwdInput;
  return FromFloats(float_.LinearBwdInput(Read(op, dy), Read(op, w), s));
}

MpfrNumber MixedOps::GradNorm(const std::vector<Tensor>& g) {
  if (Exact(StepOp::kGradNorm)) return exact_.GradNorm(g);
  return Widen(float_.GradNorm(Read(StepOp::kGradNorm, g)));
}

std::vector<ExactTensor> MixedOps::SamPerturb(const std::vector<Tensor>& w,
                                              const std::vector<Tensor>& g, const Value& norm) {
  if (Exact(StepOp::kSamPerturb)) return exact_.SamPerturb(w, g, norm);
  const StepOp op = StepOp::kSamPerturb;
  std::vector<Tensor> w_adv;
  for (const auto& t : float_.SamPerturb(Read(op, w), Read(op, g), Read(op, norm))) {
    w_adv.push_back(FromFloats(t));
  }
  return w_adv;
}

void MixedOps::SgdStep(std::vector<Tensor>& w, const std::vector<Tensor>& g) {
  if (Exact(StepOp::kSgdStep)) return exact_.SgdStep(w, g);
  std::vector<std::vector<float>> wf = Read(StepOp::kSgdStep, w);
  float_.SgdStep(wf, Read(StepOp::kSgdStep, g));
  for (size_t k = 0; k < w.size(); ++k) w[k] = FromFloats(wf[k]);
}

}  // namespace ulpgate
