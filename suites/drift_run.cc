#include "suites/drift_run.h"

#include <cmath>
#include <sstream>

#include "suites/chunk_driver.h"
#include "suites/drift_models.h"
#include "oracles/exact.h"
#include "oracles/float_text.h"
#include "oracles/mpfr_number.h"
#include "oracles/ulp_metric.h"
#include "suites/inputs.h"
#include "suites/tanh_bwd_oracle.h"

namespace ulpgate {
namespace {

// Exact values of one kernel call: sums of products of binary32 numbers span
// at most 2^256 .. 2^-298 plus the carries of a few thousand terms, so 704
// bits hold them exactly. The values of a training run span far less, so each
// exact evaluation is tried at 128 bits first and redone at 704 only when the
// exact arithmetic reports that it would have rounded (InexactError).
constexpr mpfr_prec_t kCallPrecision = 704;
constexpr mpfr_prec_t kFastPrecision = 128;

template <class F>
MpfrNumber Exactly(F evaluate) {
  try {
    ExactArith fast(kFastPrecision);
    return evaluate(fast);
  } catch (const InexactError&) {
    ExactArith wide(kCallPrecision);
    return evaluate(wide);
  }
}

using Tensor = std::vector<float>;

// The kernels of a run, looked up once: the target's, or their models.
RunKernels LookUp(const RunConfig& c) {
  if (c.sgd != "fused" && c.sgd != "unfused") {
    throw InputError("unknown sgd variant '" + c.sgd + "' (fused, unfused)");
  }
  const RunVariants variants{c.tanh_bwd, c.linear, c.bias, c.mse};
  if (c.model) return ModelRunKernels(variants, *c.target);
  if (!c.target->supported) {
    throw InputError("target " + c.target->name + " is not runnable here (" +
                     NotRunnableReason(*c.target) + "): run it on its models");
  }
  return TargetRunKernels(variants, *c.target);
}

// Records each kernel call's outputs against their exact values.
class InSitu {
 public:
  explicit InSitu(std::map<std::string, ErrorStatistics>* stats) : stats_(stats) {}

  void Record(const std::string& op, const MpfrNumber& exact, float y) {
    auto& s = (*stats_)[op];
    s.Add(MeasureUlpError(exact.get(), y), s.n());
  }

  // y[r, o] = sum_k a[r, k] b[o, k] (+ bias[o]) against the float outputs:
  // linear_fwd (a = x, b = W), and with suitable strides the backward ops.
  // a(r, k) = a[r * a_row + k * a_col], b(o, k) likewise.
  void Dot(const std::string& op, const float* a, size_t a_row, size_t a_col, const float* b,
           size_t b_row, size_t b_col, const float* bias, const float* y, size_t rows,
           size_t cols, size_t length) {
    for (size_t r = 0; r < rows; ++r) {
      for (size_t o = 0; o < cols; ++o) {
        const MpfrNumber sum = Exactly([&](ExactArith& exact) {
          MpfrNumber acc = exact.Const(0.0f);
          for (size_t k = 0; k < length; ++k) {
            acc = exact.MulAdd(exact.FromFloat(a[r * a_row + k * a_col]),
                               exact.FromFloat(b[o * b_row + k * b_col]), acc);
          }
          return bias ? exact.Add(acc, exact.FromFloat(bias[o])) : acc;
        });
        Record(op, sum, y[r * cols + o]);
      }
    }
  }

 private:
  std::map<std::string, ErrorStatistics>* stats_;
};

class FloatTrainer {
 public:
  FloatTrainer(const Scenario& s, const Batch& batch, const Parameters& initial, const RunConfig& c,
               FloatRunResult* result)
      : s_(s), batch_(batch), kernels_(LookUp(c)), fused_sgd_(c.sgd == "fused"),
        w_(initial.tensors), in_situ_(&result->in_situ) {}

  const std::vector<Tensor>& parameters() const { return w_; }

  // One epoch; returns the loss at w before the perturbation.
  float Epoch() {
    std::vector<Tensor> g;
    const float loss = LossAndGradients(w_, &g);
    const std::vector<Tensor>* step = &g;
    std::vector<Tensor> g_adv;
    if (s_.optimizer == "sam") {
      const float norm = GradNorm(g);
      // scale = rho / (grad_norm + eps): two scalar roundings, as the framework.
      const float scale = s_.rho / (norm + s_.eps);
      std::vector<Tensor> w_adv(w_.size());
      for (size_t k = 0; k < w_.size(); ++k) {
        w_adv[k].resize(w_[k].size());
        kernels_.sam_perturb(w_[k].data(), g[k].data(), scale, w_adv[k].data(), w_[k].size());
        for (size_t i = 0; i < w_[k].size(); ++i) {
          in_situ_.Record("sam_perturb", Exactly([&](ExactArith& exact) {
                            return exact.MulAdd(exact.FromFloat(g[k][i]), exact.FromFloat(scale),
                                                exact.FromFloat(w_[k][i]));
                          }),
                          w_adv[k][i]);
        }
      }
      LossAndGradients(w_adv, &g_adv);
      step = &g_adv;
    }
    for (size_t k = 0; k < w_.size(); ++k) {
      const Tensor before = w_[k];
      (fused_sgd_ ? kernels_.sgd_step_fused : kernels_.sgd_step)(
          w_[k].data(), (*step)[k].data(), s_.lr, w_[k].size());
      for (size_t i = 0; i < before.size(); ++i) {
        in_situ_.Record("sgd_step", Exactly([&](ExactArith& exact) {
                          return exact.NegMulAdd(exact.FromFloat(s_.lr),
                                                 exact.FromFloat((*step)[k][i]),
                                                 exact.FromFloat(before[i]));
                        }),
                        w_[k][i]);
      }
    }
    return loss;
  }

 private:
  // The 2-norm over all gradients as the reference SAM computes it: the norm
  // of each tensor, then the norm of those norms. Each sum of squares is a
  // linear_fwd kernel call (one row, bias 0: x + 0 is exact for x >= 0).
  float GradNorm(const std::vector<Tensor>& g) {
    Tensor norms;
    const float zero = 0.0f;
    std::vector<const Tensor*> tensors;
    for (const Tensor& t : g) {
      float sum;
      kernels_.linear_fwd(t.data(), t.data(), &zero, &sum, 1, t.size(), 1);
      in_situ_.Dot("grad_norm_sum_of_squares", t.data(), 0, 1, t.data(), 0, 1, nullptr, &sum, 1, 1,
                   t.size());
      norms.push_back(std::sqrt(sum));  // correctly rounded
      tensors.push_back(&t);
    }
    MpfrNumber total = Exactly([&](ExactArith& exact) {
      MpfrNumber acc = exact.Const(0.0f);
      for (const Tensor* t : tensors) {
        for (float v : *t) acc = exact.MulAdd(exact.FromFloat(v), exact.FromFloat(v), acc);
      }
      return acc;
    });
    float sum;
    kernels_.linear_fwd(norms.data(), norms.data(), &zero, &sum, 1, norms.size(), 1);
    const float norm = std::sqrt(sum);
    mpfr_sqrt(total.get(), total.get(), MPFR_RNDN);  // >= 128 bits: far below an ulp
    in_situ_.Record("grad_norm", total, norm);
    return norm;
  }

  float LossAndGradients(const std::vector<Tensor>& w, std::vector<Tensor>* grads) {
    const size_t batch = s_.batch;
    std::vector<Tensor> values = {batch_.x};
    size_t linear = 0;
    // Selections, tanh and the elementwise MSE terms: 128 bits hold every
    // value exactly (or, for tanh and the mean, far below an ulp).
    ExactArith exact(kFastPrecision);
    for (const LayerSpec& l : s_.layers) {
      const Tensor& in = values.back();
      Tensor out(in.size());
      if (l.type == "linear") {
        const Tensor& W = w[2 * linear];
        const Tensor& b = w[2 * linear + 1];
        out.resize(batch * l.out);
        kernels_.linear_fwd(in.data(), W.data(), b.data(), out.data(), batch, l.in, l.out);
        in_situ_.Dot("linear_fwd", in.data(), l.in, 1, W.data(), l.in, 1, b.data(), out.data(),
                     batch, l.out, l.in);
        ++linear;
      } else if (l.type == "relu") {
        kernels_.relu_forward(in.data(), out.data(), in.size());
        for (size_t i = 0; i < in.size(); ++i) {
          in_situ_.Record("relu_fwd", exact.FromFloat(in[i] > 0 ? in[i] : 0.0f), out[i]);
        }
      } else {
        kernels_.tanh_forward(in.data(), out.data(), in.size());
        for (size_t i = 0; i < in.size(); ++i) {
          MpfrNumber t = exact.FromFloat(in[i]);
          mpfr_tanh(t.get(), t.get(), MPFR_RNDN);  // 128 bits: far below an ulp
          in_situ_.Record("tanh_fwd", t, out[i]);
        }
      }
      values.push_back(std::move(out));
    }
    const Tensor& y = values.back();
    const size_t n = y.size();
    const float loss = kernels_.mse_fwd(y.data(), batch_.target.data(), n);
    {
      MpfrNumber sum = Exactly([&](ExactArith& e) {
        MpfrNumber acc = e.Const(0.0f);
        for (size_t i = 0; i < n; ++i) {
          const MpfrNumber d = e.Sub(e.FromFloat(y[i]), e.FromFloat(batch_.target[i]));
          acc = e.MulAdd(d, d, acc);
        }
        return acc;
      });
      mpfr_div_ui(sum.get(), sum.get(), n, MPFR_RNDN);  // the mean, far below an ulp
      in_situ_.Record("mse_fwd", sum, loss);
    }
    if (!grads) return loss;

    Tensor grad(n);
    kernels_.mse_bwd(y.data(), batch_.target.data(), 1.0f, grad.data(), n);
    const float two_over_n = 2.0f / static_cast<float>(n);
    for (size_t i = 0; i < n; ++i) {
      in_situ_.Record("mse_bwd", Exactly([&](ExactArith& e) {
                        return e.Mul(e.FromFloat(two_over_n),
                                     e.Sub(e.FromFloat(y[i]), e.FromFloat(batch_.target[i])));
                      }),
                      grad[i]);
    }
    grads->assign(w.size(), Tensor());
    for (size_t li = s_.layers.size(); li-- > 0;) {
      const LayerSpec& l = s_.layers[li];
      const Tensor& in = values[li];
      const Tensor& out = values[li + 1];
      Tensor next(grad.size());
      if (l.type == "tanh") {
        kernels_.tanh_bwd(grad.data(), out.data(), next.data(), grad.size());
        for (size_t i = 0; i < grad.size(); ++i) {
          in_situ_.Record("tanh_bwd", TanhBwdExact(grad[i], out[i]), next[i]);
        }
      } else if (l.type == "relu") {
        kernels_.relu_backward(grad.data(), in.data(), next.data(), grad.size());
        for (size_t i = 0; i < grad.size(); ++i) {
          in_situ_.Record("relu_bwd", exact.FromFloat(in[i] > 0 ? grad[i] : 0.0f), next[i]);
        }
      } else {
        --linear;
        const Tensor& W = w[2 * linear];
        Tensor& dW = (*grads)[2 * linear];
        Tensor& db = (*grads)[2 * linear + 1];
        dW.resize(l.out * l.in);
        db.resize(l.out);
        next.assign(batch * l.in, 0.0f);
        kernels_.linear_bwd_weight(grad.data(), in.data(), dW.data(), batch, l.in, l.out);
        kernels_.linear_bwd_bias(grad.data(), db.data(), batch, l.out);
        kernels_.linear_bwd_input(grad.data(), W.data(), next.data(), batch, l.in, l.out);
        // dW[o, i] = sum_r dy[r, o] x[r, i]; db[o] = sum_r dy[r, o];
        // dx[r, i] = sum_o dy[r, o] W[o, i].
        in_situ_.Dot("linear_bwd_weight", grad.data(), 1, l.out, in.data(), 1, l.in, nullptr,
                     dW.data(), l.out, l.in, batch);
        const Tensor ones(batch, 1.0f);
        in_situ_.Dot("linear_bwd_bias", grad.data(), 1, l.out, ones.data(), 0, 1, nullptr,
                     db.data(), l.out, 1, batch);
        in_situ_.Dot("linear_bwd_input", grad.data(), l.out, 1, W.data(), 1, l.in, nullptr,
                     next.data(), batch, l.in, l.out);
      }
      grad = std::move(next);
    }
    return loss;
  }

  const Scenario& s_;
  const Batch& batch_;
  RunKernels kernels_;
  bool fused_sgd_;
  std::vector<Tensor> w_;
  InSitu in_situ_;
};

double RelativeDifference(double a, double reference) {
  return reference == 0 ? std::fabs(a) : std::fabs(a - reference) / std::fabs(reference);
}

}  // namespace

std::string RunConfig::Label() const {
  return "tanh_bwd=" + tanh_bwd + ",linear=" + linear + ",bias=" + bias + ",mse=" + mse +
         ",sgd=" + sgd + "@" + (target ? target->name : std::string("?"));
}

RunConfig ParseRunConfig(const std::string& spec, const TargetInfo* target) {
  RunConfig c;
  c.target = target;
  std::stringstream stream(spec);
  for (std::string item; std::getline(stream, item, ',');) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string op = item.substr(0, eq);
    const std::string variant = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (eq == std::string::npos || variant.empty()) {
      throw InputError("'" + item + "': expected op=variant (ops: tanh_bwd, linear, bias, mse, sgd)");
    }
    if (op == "tanh_bwd") {
      c.tanh_bwd = variant;
    } else if (op == "linear") {
      c.linear = variant;
    } else if (op == "bias") {
      c.bias = variant;
    } else if (op == "mse") {
      c.mse = variant;
    } else if (op == "sgd") {
      c.sgd = variant;
    } else {
      throw InputError("unknown op '" + op + "' in '" + spec + "' (tanh_bwd, linear, bias, mse, sgd)");
    }
  }
  // Validates every name, for any compiled target (the models need no
  // instruction of the target).
  RunConfig check = c;
  check.model = true;
  LookUp(check);
  return c;
}

std::vector<size_t> LagEpochs(size_t epochs) {
  std::vector<size_t> at;
  for (size_t percent : {10, 25, 50, 75, 100}) {
    const size_t e = std::max<size_t>(1, epochs * percent / 100) - 1;
    if (at.empty() || at.back() != e) at.push_back(e);
  }
  return at;
}

DriftResult RunDrift(const Scenario& scenario, const std::vector<RunConfig>& configs, size_t epochs,
                     const std::function<void(size_t, size_t)>& progress, unsigned threads) {
  DriftResult d;
  d.scenario = scenario;
  d.epochs = epochs ? epochs : scenario.epochs;
  d.batch = MakeBatch(scenario);
  d.initial = InitialParameters(scenario);
  d.runs.resize(configs.size());
  std::vector<FloatTrainer> trainers;
  trainers.reserve(configs.size());
  for (size_t r = 0; r < configs.size(); ++r) {
    d.runs[r].config = configs[r];
    trainers.emplace_back(d.scenario, d.batch, d.initial, configs[r], &d.runs[r]);
  }
  // The float runs advance in lockstep with the reference, so each epoch's
  // parameters are compared without keeping the reference's history.
  d.reference = RunReference(
      d.scenario, d.batch, d.initial, d.epochs,
      [&](size_t epoch, const std::vector<ExactTensor>& reference) {
        // Runs are independent: step them on every core. Each writes only
        // its own result, so the outcome does not depend on the threads.
        RunUnits(trainers.size(), threads, [&](size_t r) {
          FloatRunResult& run = d.runs[r];
          const auto& w = trainers[r].parameters();
          double max_rel = 0, max_ulp = 0;
          for (size_t k = 0; k < w.size(); ++k) {
            for (size_t i = 0; i < w[k].size(); ++i) {
              const double ref = reference[k][i].ToDouble();
              max_rel = std::max(max_rel, RelativeDifference(w[k][i], ref));
              max_ulp = std::max(max_ulp, MeasureUlpError(reference[k][i].get(), w[k][i]).ulp);
            }
          }
          run.param_max_relative.push_back(max_rel);
          run.param_max_ulp.push_back(max_ulp);
          run.loss.push_back(trainers[r].Epoch());
        });
        if (progress && (epoch % 50 == 0 || epoch + 1 == d.epochs)) progress(epoch + 1, d.epochs);
      });
  for (size_t r = 0; r < trainers.size(); ++r) {
    FloatRunResult& run = d.runs[r];
    run.final_parameters = d.initial;
    run.final_parameters.tensors = trainers[r].parameters();
    for (size_t e = 0; e < d.epochs; ++e) {
      const double dev = RelativeDifference(run.loss[e], d.reference.loss[e]);
      if (dev > run.max_relative_deviation) {
        run.max_relative_deviation = dev;
        run.max_deviation_epoch = e;
      }
    }
    run.final_relative_deviation = RelativeDifference(run.loss.back(), d.reference.loss.back());
    for (size_t e : LagEpochs(d.epochs)) {
      LagAt lag{e, d.reference.loss[e], std::nullopt};
      for (size_t k = 0; k < d.epochs; ++k) {
        if (run.loss[k] <= lag.reference_loss) {
          lag.lag = static_cast<long>(k) - static_cast<long>(e);
          break;
        }
      }
      run.lags.push_back(lag);
    }
  }
  return d;
}

}  // namespace ulpgate
