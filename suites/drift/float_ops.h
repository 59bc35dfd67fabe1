// The ops of a float training run (suites/drift/train_step.h): a target's
// kernels (or their models) in a precision (suites/drift/precision.h), and,
// when asked, every output of every call measured against the exact value of
// that call on the same operands (in-situ statistics, per op, in the ULPs of
// the op's output format).
//
// Values are floats; in a 16-bit format they hold values of it. Each op reads
// its operands rounded to its input format (FormatsOf): identity for values
// already of it, the cast otherwise (the scenario's binary32 data and initial
// parameters, a binary32 master weight read by a bf16 layer). What each op
// computes in a 16-bit format, as a framework does:
//   linear, MSE, tanh_bwd   the 16-bit kernels (binary32 accumulation, one
//                           rounding; tanh_bwd as its variant says)
//   tanh_fwd, sgd_step      the binary32 kernel, its result rounded once
//   relu                    exact in every format
//   grad_norm               per tensor the binary32 sum of squares, sqrt in
//                           binary32, rounded; then the same over the norms
//   sam_perturb             scale = RN(rho / RN(norm + eps)), then
//                           w + RN(g * scale), every operation rounded
#ifndef ULPGATE_SUITES_DRIFT_FLOAT_OPS_H_
#define ULPGATE_SUITES_DRIFT_FLOAT_OPS_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kernels/reductions/linear/linear_spec.h"
#include "suites/drift/kernels.h"
#include "suites/drift/precision.h"
#include "suites/drift/scenario.h"
#include "suites/engine/statistics.h"

namespace ulpgate {

// Per op name; looked up by name without building a string.
using InSituStatistics = std::map<std::string, ErrorStatistics, std::less<>>;

class FloatOps {
 public:
  using Value = float;
  using Tensor = std::vector<float>;

  // `in_situ` may be null (no measurement).
  FloatOps(const Scenario& scenario, const DriftPrecision& precision, RunKernels kernels,
           bool fused_sgd, InSituStatistics* in_situ);

  const DriftPrecision& precision() const { return precision_; }

  Tensor FromFloats(const std::vector<float>& values) const { return values; }
  static double ToDouble(float v) { return v; }

  Tensor LinearFwd(const Tensor& x, const Tensor& w, const Tensor& b, const LinearShape& s);
  Tensor ReluFwd(const Tensor& x);
  Tensor ReluBwd(const Tensor& dy, const Tensor& h);
  Tensor TanhFwd(const Tensor& x);
  Tensor TanhBwd(const Tensor& dy, const Tensor& y);
  float MseFwd(const Tensor& y, const Tensor& target);
  Tensor MseBwd(const Tensor& y, const Tensor& target);
  Tensor LinearBwdWeight(const Tensor& dy, const Tensor& x, const LinearShape& s);
  Tensor LinearBwdBias(const Tensor& dy, const LinearShape& s);
  Tensor LinearBwdInput(const Tensor& dy, const Tensor& w, const LinearShape& s);
  float GradNorm(const std::vector<Tensor>& g);
  std::vector<Tensor> SamPerturb(const std::vector<Tensor>& w, const std::vector<Tensor>& g,
                                 float norm);
  void SgdStep(std::vector<Tensor>& w, const std::vector<Tensor>& g);

 private:
  // The values of `t` rounded to the format `op` reads in.
  Tensor Read(StepOp op, const Tensor& t) const;
  const FloatFormat& In(StepOp op) const { return *FormatsOf(op, precision_).in; }

  const Scenario& s_;
  DriftPrecision precision_;
  RunKernels kernels_;
  bool fused_sgd_;
  InSituStatistics* in_situ_;
};

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_DRIFT_FLOAT_OPS_H_
