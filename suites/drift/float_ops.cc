#include "suites/drift/float_ops.h"
#include "suites/drift/kernels.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "oracles/double_word.h"
#include "oracles/exact.h"
#include "oracles/fast_ulp.h"
#include "oracles/mpfr_number.h"
#include "oracles/ulp_metric.h"
#include "suites/engine/tanh_bwd_oracle.h"

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

// One rounding to `format` of a value computed in binary32 (or exactly).
float Round(const FloatFormat& format, double x) {
  return IsBinary32(format) ? static_cast<float>(x) : static_cast<float>(RoundDouble(format, x));
}

// Records each kernel call's outputs against their exact values.
class InSitu {
 public:
  explicit InSitu(InSituStatistics* stats) : stats_(stats) {}

  explicit operator bool() const { return stats_ != nullptr; }

  void Record(const char* op, const FloatFormat& format, const MpfrNumber& exact, float y) {
    Add(op, format, MeasureUlpError(exact.get(), static_cast<double>(y), format));
  }

  // The same with the exact value as a sum of exact doubles, measured without
  // MPFR where doubles settle every decision (oracles/fast_ulp.h: the same
  // UlpError as MPFR's), else by `exact()`'s MPFR value.
  template <class Exact>
  void RecordSum(const char* op, const FloatFormat& format, std::initializer_list<double> terms,
                 float y, Exact exact) {
    double buffer[8];
    std::copy(terms.begin(), terms.end(), buffer);
    RecordSum(op, format, buffer, terms.size(), y, exact);
  }
  template <class Exact>
  void RecordSum(const char* op, const FloatFormat& format, double* terms, size_t n, float y,
                 Exact exact) {
    if (const auto x = FastExactSum(terms, n, format)) {
      if (const auto e = FastUlpError(*x, y, format)) return Add(op, format, *e);
    }
    Record(op, format, exact(), y);
  }

  void Add(const char* op, const FloatFormat& format, const UlpError& error) {
    auto it = stats_->find(std::string_view(op));
    if (it == stats_->end()) it = stats_->emplace(op, ErrorStatistics(format)).first;
    it->second.Add(error, it->second.n());
  }

  // y[r, o] = sum_k a[r, k] b[o, k] (+ bias[o]) against the float outputs:
  // linear_fwd (a = x, b = W), and with suitable strides the backward ops.
  // a(r, k) = a[r * a_row + k * a_col], b(o, k) likewise.
  void Dot(const char* op, const FloatFormat& format, const float* a, size_t a_row, size_t a_col,
           const float* b, size_t b_row, size_t b_col, const float* bias, const float* y,
           size_t rows, size_t cols, size_t length) {
    std::vector<double> terms;
    for (size_t r = 0; r < rows; ++r) {
      for (size_t o = 0; o < cols; ++o) {
        // A product of two binary32 values is exact in a double (48 bits,
        // magnitudes from 2^-298 to 2^256).
        terms.clear();
        for (size_t k = 0; k < length; ++k) {
          terms.push_back(static_cast<double>(a[r * a_row + k * a_col]) * b[o * b_row + k * b_col]);
        }
        if (bias) terms.push_back(bias[o]);
        RecordSum(op, format, terms.data(), terms.size(), y[r * cols + o], [&] {
          return Exactly([&](ExactArith& exact) {
            MpfrNumber acc = exact.Const(0.0f);
            for (size_t k = 0; k < length; ++k) {
              acc = exact.MulAdd(exact.FromFloat(a[r * a_row + k * a_col]),
                                 exact.FromFloat(b[o * b_row + k * b_col]), acc);
            }
            return bias ? exact.Add(acc, exact.FromFloat(bias[o])) : acc;
          });
        });
      }
    }
  }

 private:
  InSituStatistics* stats_;
};

}  // namespace

FloatOps::FloatOps(const Scenario& scenario, const DriftPrecision& precision, RunKernels kernels,
                   bool fused_sgd, InSituStatistics* in_situ)
    : s_(scenario), precision_(precision), kernels_(std::move(kernels)), fused_sgd_(fused_sgd),
      in_situ_(in_situ) {}

FloatOps::Tensor FloatOps::Read(StepOp op, const Tensor& t) const {
  const FloatFormat& format = In(op);
  if (IsBinary32(format)) return t;
  Tensor r(t.size());
  for (size_t i = 0; i < t.size(); ++i) r[i] = Round(format, t[i]);
  return r;
}

FloatOps::Tensor FloatOps::LinearFwd(const Tensor& x_in, const Tensor& w_in, const Tensor& b_in,
                                     const LinearShape& s) {
  const Tensor x = Read(StepOp::kLinearFwd, x_in), w = Read(StepOp::kLinearFwd, w_in),
               b = Read(StepOp::kLinearFwd, b_in);
  Tensor y(s.batch * s.out);
  kernels_.linear_fwd(x.data(), w.data(), b.data(), y.data(), s.batch, s.in, s.out);
  if (InSitu situ{in_situ_}) {
    situ.Dot("linear_fwd", In(StepOp::kLinearFwd), x.data(), s.in, 1, w.data(), s.in, 1, b.data(),
             y.data(), s.batch, s.out, s.in);
  }
  return y;
}

FloatOps::Tensor FloatOps::ReluFwd(const Tensor& x_in) {
  const Tensor x = Read(StepOp::kRelu, x_in);
  Tensor y(x.size());
  kernels_.relu_forward(x.data(), y.data(), x.size());
  if (InSitu situ{in_situ_}) {
    ExactArith exact(kFastPrecision);
    for (size_t i = 0; i < x.size(); ++i) {
      const float v = x[i] > 0 ? x[i] : 0.0f;
      situ.RecordSum("relu_fwd", In(StepOp::kRelu), {v}, y[i], [&] { return exact.FromFloat(v); });
    }
  }
  return y;
}

FloatOps::Tensor FloatOps::ReluBwd(const Tensor& dy_in, const Tensor& h_in) {
  const Tensor dy = Read(StepOp::kRelu, dy_in), h = Read(StepOp::kRelu, h_in);
  Tensor dh(dy.size());
  kernels_.relu_backward(dy.data(), h.data(), dh.data(), dy.size());
  if (InSitu situ{in_situ_}) {
    ExactArith exact(kFastPrecision);
    for (size_t i = 0; i < dy.size(); ++i) {
      const float v = h[i] > 0 ? dy[i] : 0.0f;
      situ.RecordSum("relu_bwd", In(StepOp::kRelu), {v}, dh[i], [&] { return exact.FromFloat(v); });
    }
  }
  return dh;
}

FloatOps::Tensor FloatOps::TanhFwd(const Tensor& x_in) {
  const Tensor x = Read(StepOp::kTanhFwd, x_in);
  const FloatFormat& format = *FormatsOf(StepOp::kTanhFwd, precision_).out;
  Tensor y(x.size());
  kernels_.tanh_forward(x.data(), y.data(), x.size());
  for (float& v : y) v = Round(format, v);
  if (InSitu situ{in_situ_}) {
    for (size_t i = 0; i < x.size(); ++i) {
      MpfrNumber t(kFastPrecision, x[i]);
      mpfr_tanh(t.get(), t.get(), MPFR_RNDN);  // 128 bits: far below an ulp
      situ.Record("tanh_fwd", format, t, y[i]);
    }
  }
  return y;
}

FloatOps::Tensor FloatOps::TanhBwd(const Tensor& dy_in, const Tensor& y_in) {
  const Tensor dy = Read(StepOp::kTanhBwd, dy_in), y = Read(StepOp::kTanhBwd, y_in);
  Tensor dh(dy.size());
  kernels_.tanh_bwd(dy.data(), y.data(), dh.data(), dy.size());
  if (InSitu situ{in_situ_}) {
    const FloatFormat& format = In(StepOp::kTanhBwd);
    for (size_t i = 0; i < dy.size(); ++i) {
      if (const auto x = FastTanhBwdExactValue(dy[i], y[i], format)) {
        if (const auto e = FastUlpError(*x, dh[i], format)) {
          situ.Add(kDriftTanhBwd, format, *e);
          continue;
        }
      }
      situ.Record(kDriftTanhBwd, format, TanhBwdExact(dy[i], y[i]), dh[i]);
    }
  }
  return dh;
}

float FloatOps::MseFwd(const Tensor& y_in, const Tensor& target_in) {
  const Tensor y = Read(StepOp::kMseFwd, y_in), target = Read(StepOp::kMseFwd, target_in);
  const size_t n = y.size();
  const float loss = kernels_.mse_fwd(y.data(), target.data(), n);
  if (InSitu situ{in_situ_}) {
    MpfrNumber sum = Exactly([&](ExactArith& e) {
      MpfrNumber acc = e.Const(0.0f);
      for (size_t i = 0; i < n; ++i) {
        const MpfrNumber d = e.Sub(e.FromFloat(y[i]), e.FromFloat(target[i]));
        acc = e.MulAdd(d, d, acc);
      }
      return acc;
    });
    mpfr_div_ui(sum.get(), sum.get(), n, MPFR_RNDN);  // the mean, far below an ulp
    situ.Record("mse_fwd", In(StepOp::kMseFwd), sum, loss);
  }
  return loss;
}

FloatOps::Tensor FloatOps::MseBwd(const Tensor& y_in, const Tensor& target_in) {
  const Tensor y = Read(StepOp::kMseBwd, y_in), target = Read(StepOp::kMseBwd, target_in);
  const size_t n = y.size();
  Tensor grad(n);
  kernels_.mse_bwd(y.data(), target.data(), 1.0f, grad.data(), n);
  if (InSitu situ{in_situ_}) {
    const float two_over_n = 2.0f / static_cast<float>(n);
    for (size_t i = 0; i < n; ++i) {
      // y - target as d.hi + d.lo exactly (TwoSum), each half times the
      // binary32 2/N exactly as two doubles (TwoProd).
      const DoubleWord d = TwoSum(y[i], -static_cast<double>(target[i]));
      const DoubleWord p = TwoProd(two_over_n, d.hi), q = TwoProd(two_over_n, d.lo);
      situ.RecordSum("mse_bwd", In(StepOp::kMseBwd), {p.hi, p.lo, q.hi, q.lo}, grad[i], [&] {
        return Exactly([&](ExactArith& e) {
          return e.Mul(e.FromFloat(two_over_n), e.Sub(e.FromFloat(y[i]), e.FromFloat(target[i])));
        });
      });
    }
  }
  return grad;
}

FloatOps::Tensor FloatOps::LinearBwdWeight(const Tensor& dy_in, const Tensor& x_in,
                                           const LinearShape& s) {
  const Tensor dy = Read(StepOp::kLinearBwdWeight, dy_in), x = Read(StepOp::kLinearBwdWeight, x_in);
  Tensor dw(s.out * s.in);
  kernels_.linear_bwd_weight(dy.data(), x.data(), dw.data(), s.batch, s.in, s.out);
  // dW[o, i] = sum_r dy[r, o] x[r, i].
  if (InSitu situ{in_situ_}) {
    situ.Dot("linear_bwd_weight", In(StepOp::kLinearBwdWeight), dy.data(), 1, s.out, x.data(), 1,
             s.in, nullptr, dw.data(), s.out, s.in, s.batch);
  }
  return dw;
}

FloatOps::Tensor FloatOps::LinearBwdBias(const Tensor& dy_in, const LinearShape& s) {
  const Tensor dy = Read(StepOp::kLinearBwdBias, dy_in);
  Tensor db(s.out);
  kernels_.linear_bwd_bias(dy.data(), db.data(), s.batch, s.out);
  // db[o] = sum_r dy[r, o].
  if (InSitu situ{in_situ_}) {
    const Tensor ones(s.batch, 1.0f);
    situ.Dot("linear_bwd_bias", In(StepOp::kLinearBwdBias), dy.data(), 1, s.out, ones.data(), 0,
             1, nullptr, db.data(), s.out, 1, s.batch);
  }
  return db;
}

FloatOps::Tensor FloatOps::LinearBwdInput(const Tensor& dy_in, const Tensor& w_in,
                                          const LinearShape& s) {
  const Tensor dy = Read(StepOp::kLinearBwdInput, dy_in), w = Read(StepOp::kLinearBwdInput, w_in);
  Tensor dx(s.batch * s.in, 0.0f);
  kernels_.linear_bwd_input(dy.data(), w.data(), dx.data(), s.batch, s.in, s.out);
  // dx[r, i] = sum_o dy[r, o] W[o, i].
  if (InSitu situ{in_situ_}) {
    situ.Dot("linear_bwd_input", In(StepOp::kLinearBwdInput), dy.data(), s.out, 1, w.data(), 1,
             s.in, nullptr, dx.data(), s.batch, s.in, s.out);
  }
  return dx;
}

float FloatOps::GradNorm(const std::vector<Tensor>& g_in) {
  // The 2-norm over all gradients as the reference SAM computes it: the norm
  // of each tensor, then the norm of those norms; each sum of squares in
  // binary32, its square root correctly rounded in binary32 and rounded to
  // the format.
  const FloatFormat& format = In(StepOp::kGradNorm);
  std::vector<Tensor> g;
  for (const Tensor& t : g_in) g.push_back(Read(StepOp::kGradNorm, t));
  Tensor norms;
  for (const Tensor& t : g) {
    const float sum = kernels_.sum_of_squares(t.data(), t.size());
    if (InSitu situ{in_situ_}) {
      situ.Dot("grad_norm_sum_of_squares", kBinary32, t.data(), 0, 1, t.data(), 0, 1, nullptr,
               &sum, 1, 1, t.size());
    }
    norms.push_back(Round(format, std::sqrt(sum)));
  }
  const float norm = Round(format, std::sqrt(kernels_.sum_of_squares(norms.data(), norms.size())));
  if (InSitu situ{in_situ_}) {
    MpfrNumber total = Exactly([&](ExactArith& exact) {
      MpfrNumber acc = exact.Const(0.0f);
      for (const Tensor& t : g) {
        for (float v : t) acc = exact.MulAdd(exact.FromFloat(v), exact.FromFloat(v), acc);
      }
      return acc;
    });
    mpfr_sqrt(total.get(), total.get(), MPFR_RNDN);  // >= 128 bits: far below an ulp
    situ.Record("grad_norm", format, total, norm);
  }
  return norm;
}

std::vector<FloatOps::Tensor> FloatOps::SamPerturb(const std::vector<Tensor>& w_in,
                                                   const std::vector<Tensor>& g_in, float norm_in) {
  const FloatFormat& format = In(StepOp::kSamPerturb);
  const float norm = Round(format, norm_in);
  // scale = rho / (grad_norm + eps): two scalar operations in binary32, each
  // rounded to the format, as a framework's scalar arithmetic on a tensor.
  const float scale = Round(format, s_.rho / Round(format, norm + s_.eps));
  std::vector<Tensor> w_adv(w_in.size());
  for (size_t k = 0; k < w_in.size(); ++k) {
    const Tensor w = Read(StepOp::kSamPerturb, w_in[k]), g = Read(StepOp::kSamPerturb, g_in[k]);
    w_adv[k].resize(w.size());
    if (IsBinary32(format)) {
      kernels_.sam_perturb(w.data(), g.data(), scale, w_adv[k].data(), w.size());
    } else {
      // e_w = g * scale and w + e_w, each a tensor of the format.
      for (size_t i = 0; i < w.size(); ++i) {
        w_adv[k][i] = Round(format, w[i] + Round(format, g[i] * scale));
      }
    }
    if (InSitu situ{in_situ_}) {
      for (size_t i = 0; i < w.size(); ++i) {
        situ.RecordSum("sam_perturb", format, {static_cast<double>(g[i]) * scale, w[i]},
                       w_adv[k][i], [&] {
                         return Exactly([&](ExactArith& exact) {
                           return exact.MulAdd(exact.FromFloat(g[i]), exact.FromFloat(scale),
                                               exact.FromFloat(w[i]));
                         });
                       });
      }
    }
  }
  return w_adv;
}

void FloatOps::SgdStep(std::vector<Tensor>& w_io, const std::vector<Tensor>& g_in) {
  const FloatFormat& format = In(StepOp::kSgdStep);
  for (size_t k = 0; k < w_io.size(); ++k) {
    const Tensor before = Read(StepOp::kSgdStep, w_io[k]), g = Read(StepOp::kSgdStep, g_in[k]);
    Tensor& w = w_io[k];
    w = before;
    (fused_sgd_ ? kernels_.sgd_step_fused : kernels_.sgd_step)(w.data(), g.data(), s_.lr, w.size());
    for (float& v : w) v = Round(format, v);
    if (InSitu situ{in_situ_}) {
      for (size_t i = 0; i < w.size(); ++i) {
        situ.RecordSum("sgd_step", format, {before[i], -static_cast<double>(s_.lr) * g[i]}, w[i],
                       [&] {
                         return Exactly([&](ExactArith& exact) {
                           return exact.NegMulAdd(exact.FromFloat(s_.lr), exact.FromFloat(g[i]),
                                                  exact.FromFloat(before[i]));
                         });
                       });
      }
    }
  }
}

}  // namespace ulpgate
