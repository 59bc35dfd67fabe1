// The ops of an attribution run: each op of a chosen set computed exactly
// (ExactOps) and every other as a float run computes it (FloatOps), values
// held exactly in between. A rounded op reads its operands rounded to its
// input format (as the format would store them) and computes as its kernel
// does; an exact op reads them as they are. With no exact op this is the
// float run bit for bit, with every op exact the exact run (tests hold both).
#ifndef ULPGATE_SUITES_DRIFT_MIXED_OPS_H_
#define ULPGATE_SUITES_DRIFT_MIXED_OPS_H_

#include <array>
#include <vector>

#include "suites/drift/exact_ops.h"
#include "suites/drift/float_ops.h"

namespace ulpgate {

class MixedOps {
 public:
  using Value = MpfrNumber;
  using Tensor = ExactTensor;

  MixedOps(const Scenario& scenario, const DriftPrecision& precision, RunKernels kernels,
           bool fused_sgd, const std::vector<StepOp>& exact_ops);

  Tensor FromFloats(const std::vector<float>& values) const { return exact_.FromFloats(values); }
  static double ToDouble(const Value& v) { return v.ToDouble(); }

  Tensor LinearFwd(const Tensor& x, const Tensor& w, const Tensor& b, const LinearShape& s);
  Tensor ReluFwd(const Tensor& x);
  Tensor ReluBwd(const Tensor& dy, const Tensor& h);
  Tensor TanhFwd(const Tensor& x);
  Tensor TanhBwd(const Tensor& dy, const Tensor& y);
  Value MseFwd(const Tensor& y, const Tensor& target);
  Tensor MseBwd(const Tensor& y, const Tensor& target);
  Tensor LinearBwdWeight(const Tensor& dy, const Tensor& x, const LinearShape& s);
  Tensor LinearBwdBias(const Tensor& dy, const LinearShape& s);
  Tensor LinearBwdInput(const Tensor& dy, const Tensor& w, const LinearShape& s);
  Value GradNorm(const std::vector<Tensor>& g);
  std::vector<Tensor> SamPerturb(const std::vector<Tensor>& w, const std::vector<Tensor>& g,
                                 const Value& norm);
  void SgdStep(std::vector<Tensor>& w, const std::vector<Tensor>& g);

 private:
  bool Exact(StepOp op) const { return exact_op_[static_cast<size_t>(op)]; }
  // The values rounded to the format `op` reads in.
  std::vector<float> Read(StepOp op, const Tensor& t) const;
  float Read(StepOp op, const Value& v) const;
  std::vector<std::vector<float>> Read(StepOp op, const std::vector<Tensor>& ts) const;
  Value Widen(float v) const { return Value(kDriftPrecision, v); }

  ExactOps exact_;
  FloatOps float_;
  DriftPrecision precision_;
  std::array<bool, kStepOpCount> exact_op_{};
};

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_DRIFT_MIXED_OPS_H_
