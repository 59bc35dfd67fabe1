#include "suites/drift/exact_ops.h"

#include "suites/drift/train_step.h"

namespace ulpgate {

ExactOps::ExactOps(const Scenario& scenario)
    : s_(scenario), lr_(Number(scenario.lr)), rho_(Number(scenario.rho)), eps_(Number(scenario.eps)) {}

MpfrNumber ExactOps::Zero() const {
  Value z(kDriftPrecision);
  mpfr_set_zero(z.get(), +1);
  return z;
}

ExactTensor ExactOps::FromFloats(const std::vector<float>& values) const {
  Tensor t;
  t.reserve(values.size());
  for (float v : values) t.push_back(Number(v));
  return t;
}

ExactTensor ExactOps::LinearFwd(const Tensor& x, const Tensor& w, const Tensor& b,
                                const LinearShape& s) {
  Tensor y = Zeros(s.batch * s.out);
  for (size_t r = 0; r < s.batch; ++r) {
    for (size_t o = 0; o < s.out; ++o) {
      MpfrNumber& v = y[r * s.out + o];
      for (size_t i = 0; i < s.in; ++i) {
        mpfr_fma(v.get(), x[r * s.in + i].get(), w[o * s.in + i].get(), v.get(), MPFR_RNDN);
      }
      mpfr_add(v.get(), v.get(), b[o].get(), MPFR_RNDN);
    }
  }
  return y;
}

ExactTensor ExactOps::ReluFwd(const Tensor& x) {
  Tensor y = x;
  for (MpfrNumber& v : y) {
    if (mpfr_sgn(v.get()) < 0) mpfr_set_zero(v.get(), +1);
  }
  return y;
}

ExactTensor ExactOps::ReluBwd(const Tensor& dy, const Tensor& h) {
  // ReLU'(0) = 0: only strictly positive inputs pass the gradient.
  Tensor dh = dy;
  for (size_t i = 0; i < dh.size(); ++i) {
    if (mpfr_sgn(h[i].get()) <= 0) mpfr_set_zero(dh[i].get(), +1);
  }
  return dh;
}

ExactTensor ExactOps::TanhFwd(const Tensor& x) {
  Tensor y = x;
  for (MpfrNumber& v : y) mpfr_tanh(v.get(), v.get(), MPFR_RNDN);
  return y;
}

ExactTensor ExactOps::TanhBwd(const Tensor& dy, const Tensor& y) {
  // d/dh tanh(h) = 1 - tanh(h)^2, with tanh(h) the layer's output.
  Tensor dh = dy;
  MpfrNumber one_minus(kDriftPrecision);
  for (size_t i = 0; i < dh.size(); ++i) {
    mpfr_sqr(one_minus.get(), y[i].get(), MPFR_RNDN);
    mpfr_ui_sub(one_minus.get(), 1, one_minus.get(), MPFR_RNDN);
    mpfr_mul(dh[i].get(), dh[i].get(), one_minus.get(), MPFR_RNDN);
  }
  return dh;
}

MpfrNumber ExactOps::MseFwd(const Tensor& y, const Tensor& target) {
  Value loss = Zero();
  MpfrNumber d(kDriftPrecision);
  for (size_t i = 0; i < y.size(); ++i) {
    mpfr_sub(d.get(), y[i].get(), target[i].get(), MPFR_RNDN);
    mpfr_fma(loss.get(), d.get(), d.get(), loss.get(), MPFR_RNDN);
  }
  mpfr_div_ui(loss.get(), loss.get(), y.size(), MPFR_RNDN);
  return loss;
}

ExactTensor ExactOps::MseBwd(const Tensor& y, const Tensor& target) {
  // The scalar 2/N rounded once to binary32, as the framework does, times
  // (y - target) times grad_out = 1.
  const Value two_over_n = Number(2.0f / static_cast<float>(y.size()));
  Tensor grad = Zeros(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    mpfr_sub(grad[i].get(), y[i].get(), target[i].get(), MPFR_RNDN);
    mpfr_mul(grad[i].get(), two_over_n.get(), grad[i].get(), MPFR_RNDN);
  }
  return grad;
}

ExactTensor ExactOps::LinearBwdWeight(const Tensor& dy, const Tensor& x, const LinearShape& s) {
  // dW[o, i] = sum over r, in order, of dy[r, o] x[r, i].
  Tensor dw = Zeros(s.out * s.in);
  for (size_t r = 0; r < s.batch; ++r) {
    for (size_t o = 0; o < s.out; ++o) {
      for (size_t i = 0; i < s.in; ++i) {
        mpfr_fma(dw[o * s.in + i].get(), dy[r * s.out + o].get(), x[r * s.in + i].get(),
                 dw[o * s.in + i].get(), MPFR_RNDN);
      }
    }
  }
  return dw;
}

ExactTensor ExactOps::LinearBwdBias(const Tensor& dy, const LinearShape& s) {
  Tensor db = Zeros(s.out);
  for (size_t r = 0; r < s.batch; ++r) {
    for (size_t o = 0; o < s.out; ++o) {
      mpfr_add(db[o].get(), db[o].get(), dy[r * s.out + o].get(), MPFR_RNDN);
    }
  }
  return db;
}

ExactTensor ExactOps::LinearBwdInput(const Tensor& dy, const Tensor& w, const LinearShape& s) {
  // dx[r, i] = sum over o, in order, of dy[r, o] W[o, i].
  Tensor dx = Zeros(s.batch * s.in);
  for (size_t r = 0; r < s.batch; ++r) {
    for (size_t o = 0; o < s.out; ++o) {
      for (size_t i = 0; i < s.in; ++i) {
        mpfr_fma(dx[r * s.in + i].get(), dy[r * s.out + o].get(), w[o * s.in + i].get(),
                 dx[r * s.in + i].get(), MPFR_RNDN);
      }
    }
  }
  return dx;
}

MpfrNumber ExactOps::GradNorm(const std::vector<Tensor>& g) {
  Value norm = Zero();
  for (const Tensor& tensor : g) {
    for (const MpfrNumber& v : tensor) mpfr_fma(norm.get(), v.get(), v.get(), norm.get(), MPFR_RNDN);
  }
  mpfr_sqrt(norm.get(), norm.get(), MPFR_RNDN);
  return norm;
}

std::vector<ExactTensor> ExactOps::SamPerturb(const std::vector<Tensor>& w,
                                              const std::vector<Tensor>& g, const Value& norm) {
  // scale = rho / (norm + eps); w + g * scale.
  MpfrNumber scale(kDriftPrecision);
  mpfr_add(scale.get(), norm.get(), eps_.get(), MPFR_RNDN);
  mpfr_div(scale.get(), rho_.get(), scale.get(), MPFR_RNDN);
  std::vector<Tensor> w_adv = w;
  for (size_t k = 0; k < w_adv.size(); ++k) {
    for (size_t i = 0; i < w_adv[k].size(); ++i) {
      mpfr_fma(w_adv[k][i].get(), g[k][i].get(), scale.get(), w_adv[k][i].get(), MPFR_RNDN);
    }
  }
  return w_adv;
}

void ExactOps::SgdStep(std::vector<Tensor>& w, const std::vector<Tensor>& g) {
  MpfrNumber t(kDriftPrecision);
  for (size_t k = 0; k < w.size(); ++k) {
    for (size_t i = 0; i < w[k].size(); ++i) {
      mpfr_mul(t.get(), lr_.get(), g[k][i].get(), MPFR_RNDN);
      mpfr_sub(w[k][i].get(), w[k][i].get(), t.get(), MPFR_RNDN);
    }
  }
}

std::vector<ExactTensor> ToExact(const Parameters& parameters) {
  std::vector<ExactTensor> exact;
  for (const auto& tensor : parameters.tensors) {
    ExactTensor t;
    for (float v : tensor) t.emplace_back(kDriftPrecision, v);
    exact.push_back(std::move(t));
  }
  return exact;
}

MpfrNumber ExactLossAndGradients(const Scenario& s, const Batch& batch,
                                 const std::vector<ExactTensor>& parameters,
                                 std::vector<ExactTensor>* gradients) {
  ExactOps ops(s);
  TrainingStep<ExactOps> step(s, ops, ops.FromFloats(batch.x), ops.FromFloats(batch.target));
  return step.LossAndGradients(parameters, gradients);
}

ReferenceRun RunReference(const Scenario& s, const Batch& batch, const Parameters& initial,
                          size_t epochs,
                          const std::function<void(size_t, const std::vector<ExactTensor>&)>& on_epoch) {
  if (epochs == 0) epochs = s.epochs;
  ExactOps ops(s);
  TrainingStep<ExactOps> step(s, ops, ops.FromFloats(batch.x), ops.FromFloats(batch.target));
  ReferenceRun run;
  std::vector<ExactTensor> w = ToExact(initial);
  for (size_t epoch = 0; epoch < epochs; ++epoch) {
    if (on_epoch) on_epoch(epoch, w);
    run.loss.push_back(step.Epoch(w).ToDouble());
  }
  run.parameters = std::move(w);
  return run;
}

}  // namespace ulpgate
