#include "suites/drift_reference.h"

namespace ulpgate {
namespace {

MpfrNumber Number(float x) { return MpfrNumber(kDriftPrecision, x); }

MpfrNumber Zero() {
  MpfrNumber z(kDriftPrecision);
  mpfr_set_zero(z.get(), +1);
  return z;
}

ExactTensor Zeros(size_t n) { return ExactTensor(n, Zero()); }

// The activations of one forward pass: inputs of every layer, and the output.
struct Forward {
  std::vector<ExactTensor> values;  // values[0] = x, values[i+1] = layer i's output
};

Forward RunForward(const Scenario& s, const ExactTensor& x, const std::vector<ExactTensor>& p) {
  Forward f;
  f.values.push_back(x);
  size_t width = s.input_size(), linear = 0;
  const size_t batch = s.batch;
  for (const LayerSpec& l : s.layers) {
    const ExactTensor& in = f.values.back();
    ExactTensor out;
    if (l.type == "linear") {
      const ExactTensor& w = p[2 * linear];
      const ExactTensor& b = p[2 * linear + 1];
      out = Zeros(batch * l.out);
      MpfrNumber product(kDriftPrecision);
      for (size_t r = 0; r < batch; ++r) {
        for (size_t o = 0; o < l.out; ++o) {
          MpfrNumber& y = out[r * l.out + o];
          for (size_t i = 0; i < l.in; ++i) {
            mpfr_fma(y.get(), in[r * l.in + i].get(), w[o * l.in + i].get(), y.get(), MPFR_RNDN);
          }
          mpfr_add(y.get(), y.get(), b[o].get(), MPFR_RNDN);
        }
      }
      width = l.out;
      ++linear;
    } else if (l.type == "relu") {
      out = in;
      for (MpfrNumber& v : out) {
        if (mpfr_sgn(v.get()) < 0) mpfr_set_zero(v.get(), +1);
      }
    } else {  // tanh
      out = in;
      for (MpfrNumber& v : out) mpfr_tanh(v.get(), v.get(), MPFR_RNDN);
    }
    f.values.push_back(std::move(out));
  }
  (void)width;
  return f;
}

}  // namespace

std::vector<ExactTensor> ToExact(const Parameters& parameters) {
  std::vector<ExactTensor> exact;
  for (const auto& tensor : parameters.tensors) {
    ExactTensor t;
    for (float v : tensor) t.push_back(Number(v));
    exact.push_back(std::move(t));
  }
  return exact;
}

MpfrNumber ExactLossAndGradients(const Scenario& s, const Batch& batch,
                                 const std::vector<ExactTensor>& p,
                                 std::vector<ExactTensor>* gradients) {
  ExactTensor x;
  for (float v : batch.x) x.push_back(Number(v));
  const Forward f = RunForward(s, x, p);
  const ExactTensor& y = f.values.back();
  const size_t n = y.size();

  // mse_fwd: sum of squares, then divided by N.
  MpfrNumber loss = Zero();
  ExactTensor diff = Zeros(n);
  for (size_t i = 0; i < n; ++i) {
    mpfr_sub_d(diff[i].get(), y[i].get(), batch.target[i], MPFR_RNDN);
    mpfr_fma(loss.get(), diff[i].get(), diff[i].get(), loss.get(), MPFR_RNDN);
  }
  mpfr_div_ui(loss.get(), loss.get(), n, MPFR_RNDN);
  if (gradients == nullptr) return loss;

  // mse_bwd: the scalar 2/N rounded once to binary32, as the framework does,
  // times (y - target) times grad_out = 1.
  const MpfrNumber two_over_n = Number(2.0f / static_cast<float>(n));
  ExactTensor grad = Zeros(n);
  for (size_t i = 0; i < n; ++i) mpfr_mul(grad[i].get(), two_over_n.get(), diff[i].get(), MPFR_RNDN);

  gradients->assign(p.size(), ExactTensor());
  size_t linear = 0;
  for (const LayerSpec& l : s.layers) linear += l.type == "linear";
  for (size_t li = s.layers.size(); li-- > 0;) {
    const LayerSpec& l = s.layers[li];
    const ExactTensor& in = f.values[li];
    const ExactTensor& out = f.values[li + 1];
    if (l.type == "tanh") {
      // d/dh tanh(h) = 1 - tanh(h)^2, with tanh(h) the layer's output.
      MpfrNumber one_minus(kDriftPrecision);
      for (size_t i = 0; i < grad.size(); ++i) {
        mpfr_sqr(one_minus.get(), out[i].get(), MPFR_RNDN);
        mpfr_ui_sub(one_minus.get(), 1, one_minus.get(), MPFR_RNDN);
        mpfr_mul(grad[i].get(), grad[i].get(), one_minus.get(), MPFR_RNDN);
      }
    } else if (l.type == "relu") {
      // ReLU'(0) = 0: only strictly positive inputs pass the gradient.
      for (size_t i = 0; i < grad.size(); ++i) {
        if (mpfr_sgn(in[i].get()) <= 0) mpfr_set_zero(grad[i].get(), +1);
      }
    } else {
      --linear;
      const ExactTensor& w = p[2 * linear];
      ExactTensor& dw = (*gradients)[2 * linear];
      ExactTensor& db = (*gradients)[2 * linear + 1];
      dw = Zeros(l.out * l.in);
      db = Zeros(l.out);
      ExactTensor dx = Zeros(s.batch * l.in);
      for (size_t r = 0; r < s.batch; ++r) {
        for (size_t o = 0; o < l.out; ++o) {
          const MpfrNumber& g = grad[r * l.out + o];
          mpfr_add(db[o].get(), db[o].get(), g.get(), MPFR_RNDN);
          for (size_t i = 0; i < l.in; ++i) {
            mpfr_fma(dw[o * l.in + i].get(), g.get(), in[r * l.in + i].get(),
                     dw[o * l.in + i].get(), MPFR_RNDN);
            mpfr_fma(dx[r * l.in + i].get(), g.get(), w[o * l.in + i].get(),
                     dx[r * l.in + i].get(), MPFR_RNDN);
          }
        }
      }
      grad = std::move(dx);
    }
  }
  return loss;
}

ReferenceRun RunReference(const Scenario& s, const Batch& batch, const Parameters& initial,
                          size_t epochs,
                          const std::function<void(size_t, const std::vector<ExactTensor>&)>& on_epoch) {
  if (epochs == 0) epochs = s.epochs;
  ReferenceRun run;
  std::vector<ExactTensor> w = ToExact(initial);
  const MpfrNumber lr = Number(s.lr), rho = Number(s.rho), eps = Number(s.eps);
  std::vector<ExactTensor> g, g_adv;
  MpfrNumber t(kDriftPrecision);
  for (size_t epoch = 0; epoch < epochs; ++epoch) {
    if (on_epoch) on_epoch(epoch, w);
    const MpfrNumber loss = ExactLossAndGradients(s, batch, w, &g);
    run.loss.push_back(loss.ToDouble());
    const std::vector<ExactTensor>* step = &g;
    std::vector<ExactTensor> w_old;
    if (s.optimizer == "sam") {
      // grad_norm = ||g||_2 over all parameters; scale = rho / (grad_norm + eps);
      // w = w + g * scale; gradients at the perturbed w; w = w_old.
      MpfrNumber norm = Zero();
      for (const ExactTensor& tensor : g) {
        for (const MpfrNumber& v : tensor) mpfr_fma(norm.get(), v.get(), v.get(), norm.get(), MPFR_RNDN);
      }
      mpfr_sqrt(norm.get(), norm.get(), MPFR_RNDN);
      mpfr_add(norm.get(), norm.get(), eps.get(), MPFR_RNDN);
      MpfrNumber scale(kDriftPrecision);
      mpfr_div(scale.get(), rho.get(), norm.get(), MPFR_RNDN);
      w_old = w;
      for (size_t k = 0; k < w.size(); ++k) {
        for (size_t i = 0; i < w[k].size(); ++i) {
          mpfr_fma(w[k][i].get(), g[k][i].get(), scale.get(), w[k][i].get(), MPFR_RNDN);
        }
      }
      ExactLossAndGradients(s, batch, w, &g_adv);
      w = std::move(w_old);
      step = &g_adv;
    }
    // SGD: w = w - lr * grad.
    for (size_t k = 0; k < w.size(); ++k) {
      for (size_t i = 0; i < w[k].size(); ++i) {
        mpfr_mul(t.get(), lr.get(), (*step)[k][i].get(), MPFR_RNDN);
        mpfr_sub(w[k][i].get(), w[k][i].get(), t.get(), MPFR_RNDN);
      }
    }
  }
  run.parameters = std::move(w);
  return run;
}

}  // namespace ulpgate
