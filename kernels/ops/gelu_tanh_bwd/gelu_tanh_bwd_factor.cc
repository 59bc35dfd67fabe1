#include "kernels/ops/gelu_tanh_bwd/gelu_tanh_bwd_factor.h"

#include <cmath>

#include <mpfr.h>

#include "oracles/exact.h"
#include "suites/engine/elementwise_oracle.h"

namespace ulpgate {
namespace {

// The oracle's constants (Exact in gelu_tanh_bwd_spec-inl.h: k = sqrt(2/pi)
// and c = 0.044715, each operation rounded at its precision) as double-words:
// within 2^-106 of those values relatively.
struct Constants {
  DoubleWord k, c;
  Constants() {
    ExactArith a = ExactArith::Rounding(kElementwiseFunctionPrecision);
    const MpfrNumber k_value = a.Sqrt(a.Div(a.Const(2.0f), a.Pi()));
    const MpfrNumber c_value = a.Decimal("0.044715");
    k = Parts(k_value);
    c = Parts(c_value);
  }
  static DoubleWord Parts(const MpfrNumber& v) {
    MpfrNumber rest(v);
    DoubleWord d;
    d.hi = mpfr_get_d(rest.get(), MPFR_RNDN);
    mpfr_sub_d(rest.get(), rest.get(), d.hi, MPFR_RNDN);  // exact: fewer bits than v
    d.lo = mpfr_get_d(rest.get(), MPFR_RNDN);
    return d;
  }
};

const Constants& ConstantsOnce() {
  static const Constants constants;
  return constants;
}

DoubleWord Twice(DoubleWord v) { return {2 * v.hi, 2 * v.lo}; }

FactorEstimate Finite(double base, DoubleWord d, double error) {
  FactorEstimate f;
  f.kind = FactorEstimate::kFinite;
  Renormalize(base, d.hi, d.lo, &f.f0, &f.f1, &f.f2);
  f.error = error;
  return f;
}

// The error bounds. Every value v below stands for a real value V of the
// same formula with the oracle's constants and exact operations; rel(v)
// bounds |v - V| / |V| (abs for an absolute bound), and each double-word
// operation adds eps = kDoubleWordOpError of its result. Bounds of the first
// order: every one is at most 2^-80, so the products of two of them that are
// left out are below 2^-160 of the values and the factor (1 + 2^-20) at the
// end covers them. Then the oracle's own distance from V: its 320-bit
// operations (about 30, none cancelling but the last sum, exp's argument
// error amplified by |2u| <= 650) stay within 2^-305 of the magnitudes of the
// two terms it adds, s and the right term: 2^-300 M, M = |s| + |right|.
ULPGATE_FMA_CLONES std::optional<FactorEstimate> FactorClones(float x_in) {
  FactorEstimate f;
  if (std::isnan(x_in)) return f;  // kNaN: every operation of the oracle gives NaN
  if (std::isinf(x_in)) return std::nullopt;  // NaN too (inf * 0), left to MPFR
  if (x_in == 0) {
    // u = +-0, exp(-u) = 1, s = 1/2 and the right term +-0: F = 1/2 exactly.
    f.kind = FactorEstimate::kFinite;
    f.f0 = 0.5;
    f.exact = true;
    return f;
  }
  const Constants& k = ConstantsOnce();
  const double eps = kDoubleWordOpError;
  const double ec = 0x1p-105;  // the constants' distance from the oracle's
  const double x = x_in;
  if (std::fabs(x) < 0x1p-30) {
    // A third of binary32's values: F = 1/2 + k x + (2 k c - 2 k^3 / 3) x^3 +
    // R, |R| <= 4 |x|^5 (the series' next coefficient is below 1), so the
    // cubic term needs only double precision (it is below 2^-60 k |x|).
    const DoubleWord kx = MulDouble(k.k, x);
    const double a3 = 2 * k.k.hi * k.c.hi - (2.0 / 3.0) * k.k.hi * k.k.hi * k.k.hi;
    const double cubic = a3 * (x * x * x);  // a3 within 2^-50, three roundings: 2^-48 at most
    const DoubleWord d = Add(kx, {cubic, 0});
    const double x5 = std::fabs(x) * (x * x) * (x * x);
    const double error = std::fabs(kx.hi) * (ec + eps) + std::fabs(cubic) * 0x1p-45 + 4 * x5 +
                         eps * std::fabs(d.hi);
    return Finite(0.5, d, error * (1 + 0x1p-20) + 0x1p-299);
  }
  const DoubleWord x2 = TwoProd(x, x);  // exact: 48 bits
  // u2 = 2 k (x + c x^3): x^3 (eps), c x^3 (ec + 2 eps), the sum of two terms
  // of x's sign (ec + 3 eps), times k (2 ec + 4 eps); doubling is exact.
  const DoubleWord u2 = Twice(Mul(k.k, Add({x, 0}, Mul(k.c, MulDouble(x2, x)))));
  const double rho_u = 2 * ec + 4 * eps;

  if (u2.hi >= 250) {
    // exp(-2u) < 2^-360 and the right term below 2^-340 (largest at the
    // threshold, x = 14.7: 2 x k (1 + 3 c x^2) = 703 times exp(-2u)): at 320
    // bits 1 + exp(-2u) rounds to 1, s = 1, and s + right rounds to 1.
    // (Where MPFR's exp overflows, the oracle keeps the largest finite value,
    // and its reciprocal is tinier still.)
    f.kind = FactorEstimate::kFinite;
    f.f0 = 1;
    f.exact = true;
    return f;
  }
  // |x| (1 + 3 c x^2) k bounded above in doubles (k < 0.8, 3c < 0.135).
  const double poly = (1 + 2 * std::fabs(x) * 0.8 * (1 + 0.135 * x * x)) * (1 + 0x1p-40);
  if (u2.hi <= -kDoubleWordExpLimit) {
    // x < -20.5: F = s (1 + 2 x (1 - s) k (1 + 3 c x^2)) with s = 1/(1 +
    // exp(a)) <= exp(-a), a = -2u, and the bracket negative (2 |x| k (1 + 3 c
    // x^2) > 1000): F < 0 and |F| <= exp(-a) poly. Where MPFR's exp(a)
    // overflows, the oracle keeps its largest finite value, about 2^emax,
    // and s is about 2^-emax instead: |F| <= 2^(2 - emax) poly. Results
    // rounded below MPFR's range stay its least positive number, below both.
    const double a = -u2.hi * (1 - 0x1p-40);
    const double from_exp = -a * 1.4426950408889634 * (1 - 0x1p-40);
    const double from_range = 2.0 - static_cast<double>(mpfr_get_emax());
    f.kind = FactorEstimate::kTiny;
    f.sign = -1;
    f.log2_bound = std::ceil(std::max(from_exp, from_range) + std::log2(poly) * (1 + 0x1p-40) + 2);
    return f;
  }

  // k (1 + 3 c x^2): 3c (ec + eps), times x^2 (ec + 2 eps), plus 1 (ec + 3
  // eps), times k (2 ec + 4 eps).
  const DoubleWord inner = Mul(k.k, Add({1, 0}, Mul(MulDouble(k.c, 3), x2)));
  const double r_inner = 2 * ec + 4 * eps;
  const double slack = 1 + 0x1p-20;

  if (std::fabs(u2.hi) < 1) {
    // F = 1/2 + D, D = q + right, q = s - 1/2 = -m / (2 (2 + m)), m = expm1(-2u),
    // right = 2 x (1/4 - q^2) k (1 + 3 c x^2): q and right have x's sign, so D
    // holds F - 1/2 to its relative error even where it is tiny (x near 0).
    double r_m0 = 0;
    const DoubleWord m = Expm1(Neg(u2), &r_m0);
    // exp's argument off by rho_u |v|: expm1 moves by e^v rho_u |v|, at most
    // 1.6 rho_u |expm1(v)| for |v| < 1.
    const double r_m = r_m0 + 1.6 * rho_u;
    const DoubleWord den = Add({2, 0}, m);  // >= 1.36: |m| / den <= 1.3
    const double r_den = 1.3 * r_m + eps;
    const DoubleWord q_neg2 = Div(m, den);
    const DoubleWord q = {-0.5 * q_neg2.hi, -0.5 * q_neg2.lo};
    const double r_q = r_m + r_den + eps;
    const DoubleWord q2 = Mul(q, q);
    const double r_q2 = 2 * r_q + eps;
    const DoubleWord ss = Add({0.25, 0}, Neg(q2));  // s (1 - s) >= 0.196, q^2 <= 0.054
    const double r_ss = (q2.hi * r_q2) / ss.hi * (1 + 0x1p-40) + eps;
    const DoubleWord right = Mul(Twice(MulDouble(ss, x)), inner);
    const double r_right = r_ss + eps + r_inner + eps;
    const DoubleWord d = Add(q, right);
    const double abs_d = std::fabs(q.hi) * r_q + std::fabs(right.hi) * r_right + eps * std::fabs(d.hi);
    const double magnitude = 0.5 + std::fabs(q.hi) + std::fabs(right.hi);
    return Finite(0.5, d, abs_d * slack + 0x1p-299 * magnitude);
  }

  const double a = std::fabs(u2.hi);  // 1 <= a < 650
  const double r_e = kDoubleWordExpError + rho_u * a * (1 + 0x1p-20);
  const DoubleWord e = Exp(u2.hi > 0 ? Neg(u2) : u2);  // exp(-a) in (0, 1/e]
  const DoubleWord den = Add({1, 0}, e);
  const double r_den = r_e + eps;
  const DoubleWord over = Div({1, 0}, den);  // 1/(1 + exp(-a))
  const double r_over = r_den + eps;
  const DoubleWord under = Mul(e, over);  // exp(-a)/(1 + exp(-a))
  const double r_under = r_e + r_over + eps;
  if (u2.hi > 0) {
    // F = 1 + D, D = (1 - s) (g - 1), g = 2 x s k (1 + 3 c x^2): s = over,
    // 1 - s = under.
    const DoubleWord g = Mul(Twice(MulDouble(over, x)), inner);
    const double r_g = r_over + eps + r_inner + eps;
    const DoubleWord h = Add(g, {-1, 0});
    const double abs_h = (std::fabs(g.hi) * r_g + eps * std::fabs(h.hi)) * (1 + 0x1p-40);
    const DoubleWord d = Mul(under, h);
    const double abs_d =
        under.hi * abs_h + std::fabs(h.hi) * under.hi * r_under + eps * std::fabs(d.hi);
    const double magnitude = over.hi + under.hi * std::fabs(g.hi);
    return Finite(1, d, abs_d * slack + 0x1p-299 * magnitude + 0x1p-1060);
  }
  // F = s (1 + g), g = 2 x (1 - s) k (1 + 3 c x^2) < 0: s = under, 1 - s =
  // over. 1 + g cancels at the derivative's zero (x = -0.7525), where the
  // bound grows with it.
  const DoubleWord g = Mul(Twice(MulDouble(over, x)), inner);
  const double r_g = r_over + eps + r_inner + eps;
  const DoubleWord h = Add(g, {1, 0});
  const double abs_h = (std::fabs(g.hi) * r_g + eps * std::fabs(h.hi)) * (1 + 0x1p-40);
  const DoubleWord d = Mul(under, h);
  const double abs_d =
      under.hi * abs_h + std::fabs(h.hi) * under.hi * r_under + eps * std::fabs(d.hi);
  const double magnitude = under.hi * (1 + std::fabs(g.hi));
  const double error = abs_d * slack + 0x1p-299 * magnitude + 0x1p-1060;
  if (std::fabs(d.hi) >= 0x1p-600) return Finite(0, d, error);
  // Below 2^-600: the sign and a bound on the magnitude, where they are sure.
  if (std::fabs(d.hi) <= 2 * error) return std::nullopt;
  f.kind = FactorEstimate::kTiny;
  f.sign = d.hi < 0 ? -1 : 1;
  f.log2_bound = std::floor(std::log2((std::fabs(d.hi) + error) * (1 + 0x1p-40))) + 1;
  return f;
}

}  // namespace

std::optional<FactorEstimate> GeluTanhBwdFactor(float x) { return FactorClones(x); }

}  // namespace ulpgate
