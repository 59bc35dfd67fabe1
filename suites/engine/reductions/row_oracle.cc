#include "suites/engine/reductions/row_oracle.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

#include "oracles/exact.h"

namespace ulpgate {
namespace {

using Num = MpfrNumber;

int CeilLog2(size_t n) {
  int bits = 0;
  while ((size_t{1} << bits) < n) ++bits;
  return bits;
}

// Operations rounded to nearest at one precision, counting the inexact ones.
class Rounded {
 public:
  explicit Rounded(mpfr_prec_t precision) : p_(precision) {}
  mpfr_prec_t precision() const { return p_; }
  long inexact() const { return inexact_; }

  Num Div(mpfr_srcptr a, mpfr_srcptr b) { return Op(mpfr_div, a, b); }
  Num Mul(mpfr_srcptr a, mpfr_srcptr b) { return Op(mpfr_mul, a, b); }
  Num Add(mpfr_srcptr a, mpfr_srcptr b) { return Op(mpfr_add, a, b); }
  Num Sub(mpfr_srcptr a, mpfr_srcptr b) { return Op(mpfr_sub, a, b); }
  Num Sqrt(mpfr_srcptr a) { return Fn(mpfr_sqrt, a); }
  Num Log1p(mpfr_srcptr a) { return Fn(mpfr_log1p, a); }
  // A result below MPFR's exponent range (exp of -2^100) stands for a
  // positive number: the least one MPFR has, as oracles/exact.h keeps them.
  // One above it (exp of 2^100, log_softmax_bwd's y drawn at random) stands
  // in as 2^3000: beyond every format's range as the real value is, and small
  // enough for the metrics' exact differences.
  Num Exp(mpfr_srcptr a) {
    Num r = Fn(mpfr_exp, a);
    if (mpfr_zero_p(r.get())) mpfr_nextabove(r.get());
    if (mpfr_inf_p(r.get()) || (mpfr_regular_p(r.get()) && mpfr_get_exp(r.get()) > 3000)) {
      mpfr_set_ui_2exp(r.get(), 1, 3000, MPFR_RNDN);
    }
    return r;
  }

 private:
  Num Op(int (*f)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t), mpfr_srcptr a,
         mpfr_srcptr b) {
    Num r(p_);
    if (f(r.get(), a, b, MPFR_RNDN) != 0) ++inexact_;
    return r;
  }
  Num Fn(int (*f)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t), mpfr_srcptr a) {
    Num r(p_);
    if (f(r.get(), a, MPFR_RNDN) != 0) ++inexact_;
    return r;
  }
  mpfr_prec_t p_;
  long inexact_ = 0;
};

Num FromFloat(float x) { return Num(24, x); }

Num Abs(const Num& a) {
  Num r(a);
  mpfr_abs(r.get(), r.get(), MPFR_RNDN);
  return r;
}

// a + b and a * b at `precision`, rounded up: for bounds, whose few roundings
// only ever widen them.
Num AddUp(const Num& a, const Num& b, mpfr_prec_t precision = kRowFunctionPrecision) {
  Num r(precision);
  mpfr_add(r.get(), a.get(), b.get(), MPFR_RNDU);
  return r;
}
Num MulUp(const Num& a, const Num& b, mpfr_prec_t precision = kRowFunctionPrecision) {
  Num r(precision);
  mpfr_mul(r.get(), a.get(), b.get(), MPFR_RNDU);
  return r;
}
Num MulUp(const Num& a, double b) {
  Num r(kRowFunctionPrecision);
  mpfr_mul_d(r.get(), a.get(), b, MPFR_RNDU);
  return r;
}
Num Value(double v) {
  Num r(kRowFunctionPrecision);
  mpfr_set_d(r.get(), v, MPFR_RNDU);
  return r;
}
// k * 2^e, exact.
Num Power(double k, long e) {
  Num r(kRowFunctionPrecision);
  mpfr_set_d(r.get(), k, MPFR_RNDU);
  mpfr_mul_2si(r.get(), r.get(), e, MPFR_RNDN);
  return r;
}

// Whether [v - delta, v + delta] holds a multiple of a quarter of v's binary32
// ulp, 2^(max(E, -126) - 25): where a rounding boundary or a histogram bound
// could lie (midpoints, and an output's distance of 2^k ulp for k >= -1 from
// the value, for outputs in v's binade or above).
bool NearGrid(const Num& v, const Num& delta) {
  if (mpfr_zero_p(delta.get())) return false;
  if (mpfr_zero_p(v.get())) return true;
  const long e = std::max<long>(mpfr_get_exp(v.get()) - 1, -126) - 25;
  const mpfr_prec_t p = std::max(v.precision(), delta.precision()) + 8;
  Num lo(p), hi(p);
  mpfr_sub(lo.get(), v.get(), delta.get(), MPFR_RNDD);
  mpfr_add(hi.get(), v.get(), delta.get(), MPFR_RNDU);
  mpfr_mul_2si(lo.get(), lo.get(), -e, MPFR_RNDN);  // exact
  mpfr_mul_2si(hi.get(), hi.get(), -e, MPFR_RNDN);
  if (mpfr_integer_p(lo.get()) || mpfr_integer_p(hi.get())) return true;
  mpfr_floor(lo.get(), lo.get());
  mpfr_floor(hi.get(), hi.get());
  return mpfr_cmp(lo.get(), hi.get()) != 0;
}

// |v| 2^(4 - p) (1 + k): a relative error radius of a chain of k + 16
// roundings at precision p, none cancelling.
Num RelativeRadius(const Num& v, mpfr_prec_t p, size_t k) {
  Num r = Abs(v);
  mpfr_mul_ui(r.get(), r.get(), static_cast<unsigned long>(k + 1), MPFR_RNDU);
  mpfr_mul_2si(r.get(), r.get(), 4 - p, MPFR_RNDU);
  return r;
}

// values[i] = compute(p, i).value with radius .radius, first at
// kRowFunctionPrecision and again at twice the precision while any value's
// interval holds a grid point (up to kRowMaxPrecision).
struct Approximation {
  Num value;
  Num radius;
};
void Settle(std::vector<Num>& values, size_t n,
            const std::function<std::vector<Approximation>(mpfr_prec_t)>& compute) {
  for (mpfr_prec_t p = kRowFunctionPrecision;; p *= 2) {
    std::vector<Approximation> row = compute(p);
    for (Approximation& a : row) {
      // A value below 2^-3000 (an exponential of -2^30, held as MPFR's
      // least number) stands in as 2^-3000 of its sign: every format rounds
      // both alike and every error measure decides alike, and the exact
      // differences the metrics take stay a few thousand bits.
      if (mpfr_regular_p(a.value.get()) && mpfr_get_exp(a.value.get()) < -3000) {
        mpfr_set_si_2exp(a.value.get(), mpfr_signbit(a.value.get()) ? -1 : 1, -3000, MPFR_RNDN);
      }
      // And one above 2^3100 (an exponential's stand-in times a sum) as
      // 2^3100 of its sign: beyond every format, as the real value is.
      if (mpfr_regular_p(a.value.get()) && mpfr_get_exp(a.value.get()) > 3100) {
        mpfr_set_si_2exp(a.value.get(), mpfr_signbit(a.value.get()) ? -1 : 1, 3100, MPFR_RNDN);
      }
    }
    bool settled = true;
    for (size_t i = 0; i < n && settled; ++i) settled = !NearGrid(row[i].value, row[i].radius);
    if (settled || p * 2 > kRowMaxPrecision) {
      values.clear();
      for (auto& a : row) values.push_back(std::move(a.value));
      return;
    }
  }
}

void ExactRmsNorm(bool backward, const RowOperands& in, size_t n, float eps, RowExact& out) {
  const mpfr_prec_t hp = RowExactPrecision(n);
  ExactArith exact(hp);
  Num s = exact.Zero(), t = exact.Zero(), t_abs = exact.Zero();
  float x_max = 0.0f;
  for (size_t j = 0; j < n; ++j) {
    const Num x = exact.FromFloat(in.x[j]);
    s = exact.MulAdd(x, x, s);
    x_max = std::max(x_max, std::fabs(in.x[j]));
    if (backward) {
      const Num term = exact.Mul(exact.Mul(exact.FromFloat(in.g[j]), exact.FromFloat(in.dy[j])), x);
      t = exact.Add(t, term);
      t_abs = exact.Add(t_abs, Abs(term));
    }
  }
  // W = S + n eps: n v, exact.
  Num count(64);
  mpfr_set_ui(count.get(), static_cast<unsigned long>(n), MPFR_RNDN);
  const Num w = exact.MulAdd(count, exact.FromFloat(eps), s);
  std::vector<Num> numerators;
  for (size_t i = 0; i < n && backward; ++i) {
    // g_i dy_i W - x_i T: the cancellation, exact.
    const Num gdy = exact.Mul(exact.FromFloat(in.g[i]), exact.FromFloat(in.dy[i]));
    numerators.push_back(exact.Sub(exact.Mul(gdy, w), exact.Mul(exact.FromFloat(in.x[i]), t)));
  }
  Settle(out.values, n, [&](mpfr_prec_t p) {
    Rounded a(p);
    const Num r = a.Sqrt(a.Div(count.get(), w.get()).get());  // 1 / sqrt(W / n)
    std::vector<Approximation> row;
    for (size_t i = 0; i < n; ++i) {
      Num v = backward ? a.Div(a.Mul(r.get(), numerators[i].get()).get(), w.get())
                       : a.Mul(exact.Mul(exact.FromFloat(in.g[i]), exact.FromFloat(in.x[i])).get(),
                               r.get());
      Num radius = a.inexact() == 0 ? Num(p, 0.0f) : RelativeRadius(v, p, 4);
      row.push_back({std::move(v), std::move(radius)});
    }
    return row;
  });
  // The bound's parts at 320 bits (rounded up: a bound only widens).
  Rounded a(kRowFunctionPrecision);
  const Num r = a.Sqrt(a.Div(count.get(), w.get()).get());
  const Num r3 = MulUp(MulUp(r, r), r);
  const Num one = Value(1.0);
  for (size_t i = 0; i < n; ++i) {
    const Num absolute = Abs(out.values[i]);
    out.weight.push_back(Value(0.0));
    if (!backward) {
      // y = g x r: one monomial, A = |y|. U: RN(x r) (or x / s) may lose
      // 2^-150 and RN(. g) scales that by |g|(1 + u) and may lose 2^-150.
      out.magnitude.push_back(absolute);
      out.subnormal.push_back(MulUp(AddUp(Abs(FromFloat(in.g[i])), one), Power(1, -149)));
      const Num xr = MulUp(Abs(FromFloat(in.x[i])), r);
      out.peak.push_back(AddUp(AddUp(AddUp(s, xr), AddUp(absolute, r)), one));
      continue;
    }
    // A = r |g_i dy_i| + r^3 |x_i| (1/n) sum |g_j dy_j x_j|.
    const Num gdy = Abs(MulUp(FromFloat(in.g[i]), FromFloat(in.dy[i])));
    Num second = MulUp(MulUp(r3, Abs(FromFloat(in.x[i]))), t_abs);
    mpfr_div_ui(second.get(), second.get(), static_cast<unsigned long>(n), MPFR_RNDU);
    out.magnitude.push_back(AddUp(MulUp(r, gdy), second));
    // U: RN(g dy) may lose 2^-150 (times r after), RN(. r) 2^-150; each of the
    // n rounded g_j dy_j of the mean 2^-150 |x_j| and its product or Welford
    // step 2^-150, averaged and times r^3 |x_i|; RN(k x_i) and the sum 2^-150
    // each; every one at most doubled on its way: 2^-149 (2 + r + r^3 |x_i|
    // (max |x| + 1 + n)).
    Num spread = Value(static_cast<double>(x_max) + 1.0 + static_cast<double>(n));
    Num inner = MulUp(MulUp(r3, Abs(FromFloat(in.x[i]))), spread);
    out.subnormal.push_back(MulUp(AddUp(AddUp(Value(2.0), r), inner), Power(1, -149)));
    Num peak = AddUp(AddUp(s, t_abs), AddUp(r, r3));
    peak = AddUp(AddUp(peak, second), AddUp(MulUp(r, gdy), gdy));
    peak = AddUp(peak, MulUp(r3, t_abs));
    out.peak.push_back(AddUp(AddUp(peak, absolute), one));
  }
}

void ExactSoftmax(bool log, const RowOperands& in, size_t n, RowExact& out) {
  float max = -std::numeric_limits<float>::infinity();
  size_t arg_max = 0;
  for (size_t j = 0; j < n; ++j) {
    if (in.x[j] > max) {
      max = in.x[j];
      arg_max = j;
    }
  }
  // d_j = x_j - max, exact: a difference of binary32 numbers spans at most
  // 2^129 down to 2^-149.
  std::vector<Num> d;
  for (size_t j = 0; j < n; ++j) {
    Num v(300);
    if (mpfr_sub(v.get(), FromFloat(in.x[j]).get(), FromFloat(max).get(), MPFR_RNDN) != 0) {
      throw InexactError("x - max rounded at 300 bits");
    }
    d.push_back(std::move(v));
  }
  Settle(out.values, n, [&](mpfr_prec_t p) {
    Rounded a(p);
    std::vector<Num> e;
    for (size_t j = 0; j < n; ++j) e.push_back(a.Exp(d[j].get()));
    // The sum without the maximum's term (which is 1): log(sum) = log1p(rest).
    Num rest(p);
    mpfr_set_zero(rest.get(), +1);
    for (size_t j = 0; j < n; ++j) {
      if (j != arg_max) rest = a.Add(rest.get(), e[j].get());
    }
    Num one(p);
    mpfr_set_ui(one.get(), 1, MPFR_RNDN);
    const Num sum = a.Add(one.get(), rest.get());
    const Num log_sum = a.Log1p(rest.get());
    std::vector<Approximation> row;
    for (size_t i = 0; i < n; ++i) {
      // Sums of positive terms, a quotient, log1p, a difference of two
      // numbers of one sign (d_i <= 0 <= log_sum): none cancels, so the
      // relative error stays below (n + 4) 2^(1 - p).
      Num v = log ? a.Sub(d[i].get(), log_sum.get()) : a.Div(e[i].get(), sum.get());
      Num radius = a.inexact() == 0 ? Num(p, 0.0f) : RelativeRadius(v, p, n + 4);
      row.push_back({std::move(v), std::move(radius)});
    }
    return row;
  });
  // The bounds' parts in doubles, rounded up by a margin (they only weigh
  // allowances): D = sum_j e_j |d_j| / sum_j e_j over |d_j| <= 104 (below,
  // Exp gives 0 and e_j < 2^-150 counts in the subnormal allowance).
  double sum = 0, weighted = 0;
  for (size_t j = 0; j < n; ++j) {
    const double dj = std::fabs(mpfr_get_d(d[j].get(), MPFR_RNDN));
    const double ej = std::exp(-dj);
    sum += ej;
    if (dj <= 104) weighted += ej * dj;
  }
  out.exp_argument_weight = weighted / sum * (1 + 0x1p-40) + 0x1p-60;
  const double log_sum = std::log(sum);
  for (size_t i = 0; i < n; ++i) {
    const Num absolute = Abs(out.values[i]);
    const double di = std::fabs(mpfr_get_d(d[i].get(), MPFR_RNDN));
    out.magnitude.push_back(absolute);
    if (log) {
      // The sum's relative error theta moves log(sum) by log(1 + theta): its
      // weight is the sum's (RowBound adds the rounding count).
      out.weight.push_back(Value(out.exp_argument_weight));
      out.subnormal.push_back(AddUp(Power(static_cast<double>(n), -148),
                                    Power(static_cast<double>(n) * static_cast<double>(n), -149)));
      out.peak.push_back(AddUp(AddUp(absolute, Value(di + log_sum)), Value(n + 1.0)));
    } else {
      // e_i's argument error |d_i| u and the sum's D u, relative to y.
      const double own = di <= 104 ? di : 0.0;
      out.weight.push_back(MulUp(absolute, own + out.exp_argument_weight));
      out.subnormal.push_back(AddUp(Power(static_cast<double>(n) + 2, -148),
                                    Power(static_cast<double>(n) * static_cast<double>(n), -149)));
      out.peak.push_back(Value(n + 1.0));
    }
  }
}

void ExactSoftmaxBackward(bool log, const RowOperands& in, size_t n, RowExact& out) {
  const mpfr_prec_t hp = RowExactPrecision(n);
  ExactArith exact(hp);
  Num sum = exact.Zero(), sum_abs = exact.Zero();
  for (size_t j = 0; j < n; ++j) {
    const Num term = log ? exact.FromFloat(in.dy[j])
                         : exact.Mul(exact.FromFloat(in.dy[j]), exact.FromFloat(in.y[j]));
    sum = exact.Add(sum, term);
    sum_abs = exact.Add(sum_abs, Abs(term));
  }
  const Num one = Value(1.0);
  if (!log) {
    // y_i (dy_i - sum_j dy_j y_j): a ring expression, exact.
    for (size_t i = 0; i < n; ++i) {
      const Num y = exact.FromFloat(in.y[i]);
      out.values.push_back(exact.Mul(y, exact.Sub(exact.FromFloat(in.dy[i]), sum)));
      const Num y_abs = Abs(y);
      const Num dy_abs = Abs(FromFloat(in.dy[i]));
      out.magnitude.push_back(MulUp(y_abs, AddUp(dy_abs, sum_abs)));
      out.weight.push_back(Value(0.0));
      // n products dy_j y_j may lose 2^-150 each (then times |y_i|), the last
      // product 2^-150: 2^-149 (n |y_i| + 1).
      out.subnormal.push_back(
          MulUp(AddUp(MulUp(y_abs, Value(static_cast<double>(n))), one), Power(1, -149)));
      out.peak.push_back(AddUp(AddUp(out.magnitude.back(), sum_abs), AddUp(dy_abs, y_abs)));
    }
    return;
  }
  // dy_i - exp(y_i) G: exp rounded, the difference may cancel, so the
  // radius is absolute, 2^(3 - p) |exp(y_i) G|.
  Settle(out.values, n, [&](mpfr_prec_t p) {
    std::vector<Approximation> row;
    for (size_t i = 0; i < n; ++i) {
      Rounded a(p);
      const Num e = a.Exp(FromFloat(in.y[i]).get());
      const Num product = a.Mul(e.get(), sum.get());
      Num v = a.Sub(FromFloat(in.dy[i]).get(), product.get());
      Num radius = Abs(product);
      mpfr_mul_2si(radius.get(), radius.get(), 3 - p, MPFR_RNDU);
      if (a.inexact() == 0) mpfr_set_zero(radius.get(), +1);
      row.push_back({std::move(v), std::move(radius)});
    }
    return row;
  });
  for (size_t i = 0; i < n; ++i) {
    Rounded a(kRowFunctionPrecision);
    const Num e = a.Exp(FromFloat(in.y[i]).get());
    const Num dy_abs = Abs(FromFloat(in.dy[i]));
    const Num scaled = MulUp(MulUp(e, sum_abs), Value(1 + 0x1p-200));
    out.magnitude.push_back(AddUp(dy_abs, scaled));
    out.weight.push_back(Value(0.0));
    // Exp below binary32's normal range loses at most 2^-150 absolutely (its
    // last scaling rounds to a subnormal; below -104 it gives 0 < e^-104
    // < 2^-150), times |G| after; the product 2^-150: 2^-149 (sum |dy| + 1).
    out.subnormal.push_back(MulUp(AddUp(sum_abs, one), Power(1, -149)));
    out.peak.push_back(AddUp(AddUp(scaled, AddUp(dy_abs, sum_abs)), e));
  }
}

}  // namespace

mpfr_prec_t RowExactPrecision(size_t n) { return 1280 + 2 * CeilLog2(n + 2); }

RowExact ExactRow(const RowOpInfo& op, const RowOperands& row, size_t n, float eps) {
  if (n == 0 || n > kMaxRowLength) throw std::invalid_argument("row length out of range");
  RowExact out;
  switch (op.op) {
    case RowOp::kRmsNormFwd:
    case RowOp::kRmsNormBwd:
      ExactRmsNorm(op.op == RowOp::kRmsNormBwd, row, n, eps, out);
      return out;
    case RowOp::kSoftmaxFwd:
    case RowOp::kLogSoftmaxFwd:
      ExactSoftmax(op.op == RowOp::kLogSoftmaxFwd, row, n, out);
      return out;
    case RowOp::kSoftmaxBwd:
    case RowOp::kLogSoftmaxBwd:
      ExactSoftmaxBackward(op.op == RowOp::kLogSoftmaxBwd, row, n, out);
      return out;
  }
  throw std::logic_error("ExactRow: unknown op");
}

namespace {
// The roundings of the sum of exponentials as a relative error of the sum:
// n - 1 additions and an Exp per term; online, per term besides the additions
// up to n - 1 rescalings, each an Exp and a product.
uint64_t SumOfExpRoundings(const RowVariant& variant, size_t n) {
  const uint64_t nn = n;
  return variant.stat == RowStat::kOnline ? nn * (kExpAllowance + 2) : nn - 1 + kExpAllowance;
}
}  // namespace

uint64_t RowRoundings(const RowOpInfo& op, const RowVariant& variant, size_t n) {
  const uint64_t nn = n;
  const uint64_t welford = 2 * static_cast<uint64_t>(CeilLog2(n)) + 5;
  // RMSNorm's v = RN(mean + eps): the sum's n roundings (products included)
  // and the mean's division, or Welford's n + 2 ceil(log2 n) + 5; eps's
  // addition; one for the squares' underflow (n 2^-150 <= u v when eps >=
  // 2^-100).
  const uint64_t kv = (variant.stat == RowStat::kWelford ? nn + welford : nn + 1) + 2;
  const uint64_t half_kv = (kv + 1) / 2;  // v^(+-1/2) halves its roundings' count
  switch (op.op) {
    case RowOp::kRmsNormFwd:
      // sqrt, the reciprocal or the division, the products by x and g.
      return half_kv + 4;
    case RowOp::kRmsNormBwd: {
      // r (or s): half_kv + 2; its cube 3 (half_kv + 2) + 2; the mean of
      // g dy x: n roundings, RN(g dy) and the division (or Welford's); the
      // product (or quotient) with the cube, the product by x and the sum.
      const uint64_t kt = variant.stat == RowStat::kWelford ? nn + 1 + welford : nn + 2;
      return 3 * (half_kv + 2) + kt + 5;
    }
    case RowOp::kSoftmaxFwd:
      // e_i's Exp and the division, or the reciprocal and product.
      return SumOfExpRoundings(variant, n) + kExpAllowance + 2;
    case RowOp::kLogSoftmaxFwd:
      // A = |d_i| + log(sum): d_i's rounding and the subtraction, Log's error
      // and the subtraction; the sum's error is U's (RowBound).
      return kLogAllowance + 2;
    case RowOp::kSoftmaxBwd:
      return nn + 2;
    case RowOp::kLogSoftmaxBwd:
      return nn + 1 + kExpAllowance;
  }
  throw std::logic_error("RowRoundings: unknown op");
}

ReductionBound RowBound(const RowOpInfo& op, const RowVariant& variant, const RowExact& exact,
                        size_t i, size_t n) {
  ReductionBound bound(kRowFunctionPrecision);
  const uint64_t m = RowRoundings(op, variant, n);
  bound.roundings = m;
  const double gamma = Gamma(m);
  // (1 + gamma_m)^2 for the roundings that meet the weighed errors, and
  // 2^-16 for the exponential's argument error beyond first order: e^(u |d|)
  // - 1 <= u |d| (1 + 2^-17) for |d| <= 104.
  const double widen = (1 + gamma) * (1 + gamma) * (1 + 0x1p-16);
  if (op.op == RowOp::kLogSoftmaxFwd) {
    // log_softmax: A = |x| = |d_i| + log(sum) takes the roundings of d_i,
    // Log and the subtraction; the sum's relative error theta (its roundings
    // plus D, the arguments' errors) moves log(sum) by |log(1 + theta)| <=
    // |theta| / (1 - |theta|), absolutely: U = u (k + D) (1 + gamma_k')^2.
    const double k = static_cast<double>(SumOfExpRoundings(variant, n)) +
                     exact.exp_argument_weight;
    const double gamma_k = Gamma(static_cast<uint64_t>(std::ceil(k)) + m);
    mpfr_set(bound.abs_sum.get(), exact.magnitude[i].get(), MPFR_RNDU);
    Num weight = Value(k * (1 + gamma_k) * (1 + gamma_k) * (1 + 0x1p-16));
    mpfr_mul_2si(weight.get(), weight.get(), -24, MPFR_RNDN);
    mpfr_add(bound.underflow.get(), weight.get(), exact.subnormal[i].get(), MPFR_RNDU);
  } else {
    mpfr_set(bound.abs_sum.get(), exact.magnitude[i].get(), MPFR_RNDU);
    Num weight = MulUp(exact.weight[i], widen);
    mpfr_mul_2si(weight.get(), weight.get(), -24, MPFR_RNDN);
    mpfr_add(bound.underflow.get(), weight.get(), exact.subnormal[i].get(), MPFR_RNDU);
  }
  mpfr_set(bound.peak.get(), exact.peak[i].get(), MPFR_RNDU);
  // Where an intermediate can overflow binary32 ((1 + gamma_m) peak reaches
  // 2^128 - 2^103), the first-order analysis says nothing, and an overflow
  // need not show in the output: RMSNorm's sum of squares of x near 2^70 is
  // +inf, r = 1/sqrt(inf) = 0 and y = x r g = 0, finite. A non-finite output
  // is exempt there already (oracles/reduction_bound.h); a finite one is held
  // only to be finite: U grows by 2^129 + |x|, above |y - x| for every finite
  // binary32 y.
  Num reach = MulUp(exact.peak[i], 1 + Gamma(m));
  Num threshold(64);
  mpfr_set_ui_2exp(threshold.get(), (uint64_t{1} << 25) - 1, 103, MPFR_RNDN);  // (2 - 2^-24) 2^127
  if (mpfr_cmp(reach.get(), threshold.get()) >= 0) {
    Num everything = AddUp(Power(1, 129), Abs(exact.values[i]));
    mpfr_add(bound.underflow.get(), bound.underflow.get(), everything.get(), MPFR_RNDU);
  }
  return bound;
}

ReductionBound RowBoundOfEveryVariant(const RowOpInfo& op, const RowExact& exact, size_t i,
                                      size_t n) {
  ReductionBound widest = RowBound(op, op.variants.at(0), exact, i, n);
  for (size_t v = 1; v < op.variants.size(); ++v) {
    const ReductionBound b = RowBound(op, op.variants[v], exact, i, n);
    widest.roundings = std::max(widest.roundings, b.roundings);
    if (mpfr_cmp(b.underflow.get(), widest.underflow.get()) > 0) {
      mpfr_set(widest.underflow.get(), b.underflow.get(), MPFR_RNDU);
    }
  }
  return widest;
}

}  // namespace ulpgate
