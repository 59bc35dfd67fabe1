// The exact shadow run: the ops of a training step (suites/drift/train_step.h)
// in MPFR at kDriftPrecision bits, with tanh and sqrt correctly rounded at
// that precision, from the same binary32 data, initial parameters and
// constants as the float runs. The float runs of every precision are measured
// against it.
#ifndef ULPGATE_SUITES_DRIFT_EXACT_OPS_H_
#define ULPGATE_SUITES_DRIFT_EXACT_OPS_H_

#include <functional>
#include <vector>

#include "kernels/reductions/linear/linear_spec.h"
#include "oracles/mpfr_number.h"
#include "suites/drift/scenario.h"

namespace ulpgate {

// 256 bits: each epoch rounds a few thousand operations at 2^-256 relative,
// and even an amplification of 2^100 over 1000 epochs leaves the reference
// loss good to far better than the 1e-9 it is compared at, and its
// parameters far closer than one binary32 ulp.
inline constexpr mpfr_prec_t kDriftPrecision = 256;

using ExactTensor = std::vector<MpfrNumber>;

class ExactOps {
 public:
  using Value = MpfrNumber;
  using Tensor = ExactTensor;

  explicit ExactOps(const Scenario& scenario);

  Tensor FromFloats(const std::vector<float>& values) const;
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
  Value Number(float x) const { return Value(kDriftPrecision, x); }
  Value Zero() const;
  Tensor Zeros(size_t n) const { return Tensor(n, Zero()); }

  const Scenario& s_;
  const Value lr_, rho_, eps_;
};

struct ReferenceRun {
  std::vector<double> loss;             // per epoch, at w before the perturbation
  std::vector<ExactTensor> parameters;  // after the last epoch
};

// Runs `epochs` epochs (the scenario's when 0). Calls `on_epoch(epoch,
// parameters at its start)` if given, so callers can compare float runs
// epoch by epoch without keeping every epoch's parameters.
ReferenceRun RunReference(const Scenario& scenario, const Batch& batch,
                          const Parameters& initial, size_t epochs = 0,
                          const std::function<void(size_t, const std::vector<ExactTensor>&)>&
                              on_epoch = nullptr);

// One forward and backward pass in exact arithmetic (for tests): returns the
// loss and fills gradients (same layout as Parameters).
MpfrNumber ExactLossAndGradients(const Scenario& scenario, const Batch& batch,
                                 const std::vector<ExactTensor>& parameters,
                                 std::vector<ExactTensor>* gradients);

std::vector<ExactTensor> ToExact(const Parameters& parameters);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_DRIFT_EXACT_OPS_H_
