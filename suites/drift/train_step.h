// The training algorithm of a scenario, written once over the arithmetic
// that computes each op: the exact shadow run (ExactOps, MPFR), the float
// runs (FloatOps: a target's kernels or their models, in a precision), and the
// attribution runs that compute some ops exactly and round the others
// (MixedOps). One source of truth for the algorithm, so that the runs differ
// only in how each op rounds.
//
// An Ops type provides `Value` (a scalar: float or MpfrNumber), `Tensor`
// (std::vector<Value>) and the ops of StepOp (suites/drift/precision.h):
//   Tensor LinearFwd(x, W, b, shape)        y [batch, out] = x W^T + b
//   Tensor ReluFwd(x), ReluBwd(dy, h)       ReLU'(0) = 0
//   Tensor TanhFwd(x), TanhBwd(dy, y)       y = tanh(x); dy (1 - y^2)
//   Value  MseFwd(y, target)                mean((y - target)^2)
//   Tensor MseBwd(y, target)                RN32(2/N) (y - target) (grad_out 1)
//   Tensor LinearBwdWeight(dy, x, shape)    dW = dy^T x
//   Tensor LinearBwdBias(dy, shape)         db = column sums of dy
//   Tensor LinearBwdInput(dy, W, shape)     dx = dy W
//   Value  GradNorm(g)                      ||g||_2 over every tensor
//   std::vector<Tensor> SamPerturb(w, g, norm)  w + g rho / (norm + eps)
//   void   SgdStep(w, g)                    w -= lr g
// and double ToDouble(const Value&).
//
// SAM as the reference implementation does it: loss and gradients at w,
// scale = rho / (||g||_2 + eps), w + g * scale, gradients there, back to w,
// then the SGD step with those gradients; the recorded loss of an epoch is
// the loss at w before the perturbation.
#ifndef ULPGATE_SUITES_DRIFT_TRAIN_STEP_H_
#define ULPGATE_SUITES_DRIFT_TRAIN_STEP_H_

#include <cstddef>
#include <utility>
#include <vector>

#include "kernels/reductions/linear/linear_spec.h"
#include "suites/drift/scenario.h"

namespace ulpgate {

template <class Ops>
class TrainingStep {
 public:
  using Value = typename Ops::Value;
  using Tensor = typename Ops::Tensor;

  // x [batch, in] and target [batch, out] as the scenario's binary32 values.
  TrainingStep(const Scenario& scenario, Ops& ops, Tensor x, Tensor target)
      : s_(scenario), ops_(ops), x_(std::move(x)), target_(std::move(target)) {}

  // The loss at w and, when `g` is given, the gradients (layout of
  // Parameters: W0, b0, W1, b1, ...).
  Value LossAndGradients(const std::vector<Tensor>& w, std::vector<Tensor>* g) {
    std::vector<Tensor> values = {x_};  // values[i + 1] = layer i's output
    size_t linear = 0;
    for (const LayerSpec& l : s_.layers) {
      const Tensor& in = values.back();
      if (l.type == "linear") {
        values.push_back(ops_.LinearFwd(in, w[2 * linear], w[2 * linear + 1], Shape(l)));
        ++linear;
      } else if (l.type == "relu") {
        values.push_back(ops_.ReluFwd(in));
      } else {
        values.push_back(ops_.TanhFwd(in));
      }
    }
    const Tensor& y = values.back();
    Value loss = ops_.MseFwd(y, target_);
    if (g == nullptr) return loss;

    Tensor grad = ops_.MseBwd(y, target_);
    g->assign(w.size(), Tensor());
    for (size_t li = s_.layers.size(); li-- > 0;) {
      const LayerSpec& l = s_.layers[li];
      const Tensor& in = values[li];
      const Tensor& out = values[li + 1];
      if (l.type == "tanh") {
        grad = ops_.TanhBwd(grad, out);
      } else if (l.type == "relu") {
        grad = ops_.ReluBwd(grad, in);
      } else {
        --linear;
        (*g)[2 * linear] = ops_.LinearBwdWeight(grad, in, Shape(l));
        (*g)[2 * linear + 1] = ops_.LinearBwdBias(grad, Shape(l));
        grad = ops_.LinearBwdInput(grad, w[2 * linear], Shape(l));
      }
    }
    return loss;
  }

  // One epoch: updates w and returns the loss at w before the update.
  Value Epoch(std::vector<Tensor>& w) {
    std::vector<Tensor> g;
    Value loss = LossAndGradients(w, &g);
    if (s_.optimizer == "sam") {
      const Value norm = ops_.GradNorm(g);
      const std::vector<Tensor> w_adv = ops_.SamPerturb(w, g, norm);
      std::vector<Tensor> g_adv;
      LossAndGradients(w_adv, &g_adv);
      g = std::move(g_adv);
    }
    ops_.SgdStep(w, g);
    return loss;
  }

 private:
  LinearShape Shape(const LayerSpec& l) const { return {s_.batch, l.in, l.out}; }

  const Scenario& s_;
  Ops& ops_;
  const Tensor x_, target_;
};

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_DRIFT_TRAIN_STEP_H_
