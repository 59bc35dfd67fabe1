#include "oracles/logistic_factor.h"

#include <algorithm>
#include <cmath>

#include <mpfr.h>

namespace ulpgate {
namespace {

// The error bounds. Every value v below stands for a real value V of the
// same formula with the oracle's z and w and exact operations; rel(v) bounds
// |v - V| / |V| (abs for an absolute bound), and each double-word operation
// adds eps = kDoubleWordOpError of its result. Bounds of the first order:
// every one is at most 2^-80, so the products of two of them that are left
// out are below 2^-160 of the values and the factor (1 + 2^-20) at the end
// covers them. Then the oracle's own distance from V: 2^-299 M, M = |s| +
// |x s (1 - s) w| (the header).
// The argument LogisticClones takes the exp of, where it takes one (the
// tails and expm1's series take none).
std::optional<DoubleWord> ExpArgument(const LogisticTerms& t) {
  if (t.z.hi >= 250 || t.z.hi <= -kDoubleWordExpLimit) return std::nullopt;
  if (std::fabs(t.z.hi) < 1) {
    const DoubleWord v = Neg(t.z);
    return Expm1CallsExp(v) ? std::optional<DoubleWord>(v) : std::nullopt;
  }
  return t.z.hi > 0 ? Neg(t.z) : t.z;
}

// exp_given (when given): Exp of ExpArgument(t), bit for bit.
ULPGATE_FMA_CLONES std::optional<FactorEstimate> LogisticClones(double x, const LogisticTerms& t,
                                                                LogisticSigmoid* sigmoid,
                                                                const DoubleWord* exp_given) {
  FactorEstimate f;
  const double eps = kDoubleWordOpError;
  const double log2e = 1.4426950408889634;
  // |x| w bounded above, for the tails.
  const double poly = (1 + std::fabs(x) * t.w_bound) * (1 + 0x1p-40);
  if (t.z.hi >= 250) {
    // exp(-z) < 2^-360 and the right term x s (1 - s) w below 2^-330 (checked):
    // at 320 bits 1 + exp(-z) rounds to 1, s = 1, and F to 1, whether the
    // oracle adds s and the right term or multiplies s by 1 plus it. (Where
    // MPFR's exp overflows, the oracle keeps the largest finite value, and
    // its reciprocal is tinier still.)
    if (std::log2(poly) - t.z.hi * log2e * (1 - 0x1p-40) >= -330) return std::nullopt;
    f.kind = FactorEstimate::kFinite;
    f.f0 = 1;
    f.exact = true;
    return f;
  }
  if (t.z.hi <= -kDoubleWordExpLimit) {
    // F = s (1 + x (1 - s) w) with s = 1/(1 + exp(a)) <= exp(-a), a = -z, and
    // the bracket negative where |x| w > 2 (1 - s is 1 to 2^-900): F < 0 and
    // |F| <= exp(-a) poly. Where MPFR's exp(a) overflows, the oracle keeps its
    // largest finite value, about 2^emax, and s is about 2^-emax instead: |F|
    // <= 2^(2 - emax) poly. Results rounded below MPFR's range stay its least
    // positive number, below both.
    if (!(std::fabs(x) * t.w.hi > 2)) return std::nullopt;
    const double a = -t.z.hi * (1 - 0x1p-40);
    const double from_exp = -a * log2e * (1 - 0x1p-40);
    const double from_range = 2.0 - static_cast<double>(mpfr_get_emax());
    f.kind = FactorEstimate::kTiny;
    f.sign = -1;
    f.log2_bound = std::ceil(std::max(from_exp, from_range) + std::log2(poly) * (1 + 0x1p-40) + 2);
    return f;
  }

  const double slack = 1 + 0x1p-20;

  if (std::fabs(t.z.hi) < 1) {
    // F = 1/2 + D, D = q + right, q = s - 1/2 = -m / (2 (2 + m)), m = expm1(-z),
    // right = x (1/4 - q^2) w: q and right have x's sign, so D holds F - 1/2
    // to its relative error even where it is tiny (x near 0).
    double r_m0 = 0;
    const DoubleWord m = Expm1(Neg(t.z), &r_m0, exp_given);
    // exp's argument off by t.rho_z |v|: expm1 moves by e^v t.rho_z |v|, at most
    // 1.6 t.rho_z |expm1(v)| for |v| < 1.
    const double r_m = r_m0 + 1.6 * t.rho_z;
    const DoubleWord den = Add({2, 0}, m);  // >= 1.36: |m| / den <= 1.3
    const double r_den = 1.3 * r_m + eps;
    const DoubleWord q_neg2 = Div(m, den);
    const DoubleWord q = {-0.5 * q_neg2.hi, -0.5 * q_neg2.lo};
    const double r_q = r_m + r_den + eps;
    if (sigmoid != nullptr) {  // s(|z|) = 1/2 + |q|, 1 - s(|z|) = 1/2 - |q| (|q| < 0.12)
      const DoubleWord abs_q = q.hi < 0 ? Neg(q) : q;
      sigmoid->at_abs_z = Add({0.5, 0}, abs_q);
      sigmoid->complement = Add({0.5, 0}, Neg(abs_q));
      sigmoid->set = true;
    }
    const DoubleWord q2 = Mul(q, q);
    const double r_q2 = 2 * r_q + eps;
    const DoubleWord ss = Add({0.25, 0}, Neg(q2));  // s (1 - s) >= 0.196, q^2 <= 0.054
    const double r_ss = (q2.hi * r_q2) / ss.hi * (1 + 0x1p-40) + eps;
    const DoubleWord right = Mul(MulDouble(ss, x), t.w);
    const double r_right = r_ss + eps + t.r_w + eps;
    const DoubleWord d = Add(q, right);
    const double abs_d = std::fabs(q.hi) * r_q + std::fabs(right.hi) * r_right + eps * std::fabs(d.hi);
    const double magnitude = 0.5 + std::fabs(q.hi) + std::fabs(right.hi);
    return FiniteFactor(0.5, d, abs_d * slack + 0x1p-299 * magnitude);
  }

  const double a = std::fabs(t.z.hi);  // 1 <= a < 650
  const double r_e = kDoubleWordExpError + t.rho_z * a * (1 + 0x1p-20);
  // exp(-a) in (0, 1/e]
  const DoubleWord e = exp_given != nullptr ? *exp_given : Exp(t.z.hi > 0 ? Neg(t.z) : t.z);
  const DoubleWord den = Add({1, 0}, e);
  const double r_den = r_e + eps;
  const DoubleWord over = Div({1, 0}, den);  // 1/(1 + exp(-a))
  const double r_over = r_den + eps;
  const DoubleWord under = Mul(e, over);  // exp(-a)/(1 + exp(-a))
  const double r_under = r_e + r_over + eps;
  if (sigmoid != nullptr) {  // over = s(a), under = 1 - s(a), a = |z|
    sigmoid->at_abs_z = over;
    sigmoid->complement = under;
    sigmoid->set = true;
  }
  if (t.z.hi > 0) {
    // F = 1 + D, D = (1 - s) (g - 1), g = 2 x s k (1 + 3 c x^2): s = over,
    // 1 - s = under.
    const DoubleWord g = Mul(MulDouble(over, x), t.w);
    const double r_g = r_over + eps + t.r_w + eps;
    const DoubleWord h = Add(g, {-1, 0});
    const double abs_h = (std::fabs(g.hi) * r_g + eps * std::fabs(h.hi)) * (1 + 0x1p-40);
    const DoubleWord d = Mul(under, h);
    const double abs_d =
        under.hi * abs_h + std::fabs(h.hi) * under.hi * r_under + eps * std::fabs(d.hi);
    const double magnitude = over.hi + under.hi * std::fabs(g.hi);
    return FiniteFactor(1, d, abs_d * slack + 0x1p-299 * magnitude + 0x1p-1060);
  }
  // F = s (1 + g), g = 2 x (1 - s) k (1 + 3 c x^2) < 0: s = under, 1 - s =
  // over. 1 + g cancels at the derivative's zero (x = -0.7525), where the
  // bound grows with it.
  const DoubleWord g = Mul(MulDouble(over, x), t.w);
  const double r_g = r_over + eps + t.r_w + eps;
  const DoubleWord h = Add(g, {1, 0});
  const double abs_h = (std::fabs(g.hi) * r_g + eps * std::fabs(h.hi)) * (1 + 0x1p-40);
  const DoubleWord d = Mul(under, h);
  const double abs_d =
      under.hi * abs_h + std::fabs(h.hi) * under.hi * r_under + eps * std::fabs(d.hi);
  const double magnitude = under.hi * (1 + std::fabs(g.hi));
  const double error = abs_d * slack + 0x1p-299 * magnitude + 0x1p-1060;
  return FiniteOrTinyFactor(d, error);
}

}  // namespace

std::optional<FactorEstimate> LogisticFactor(double x, const LogisticTerms& t,
                                             LogisticSigmoid* sigmoid) {
  return LogisticClones(x, t, sigmoid, nullptr);
}

void LogisticFactorLanes(const double* x, const LogisticTerms* t, size_t n,
                         std::optional<FactorEstimate>* out, LogisticSigmoid* sigmoid) {
  DoubleWord arguments[kDoubleWordLanes], exps[kDoubleWordLanes];
  size_t at[kDoubleWordLanes];
  size_t k = 0;
  for (size_t l = 0; l < n; ++l) {
    if (const std::optional<DoubleWord> v = ExpArgument(t[l])) {
      arguments[k] = *v;
      at[l] = k++;
    } else {
      at[l] = kDoubleWordLanes;
    }
  }
  if (k > 0) ExpLanes(arguments, exps, k);
  for (size_t l = 0; l < n; ++l) {
    out[l] = LogisticClones(x[l], t[l], &sigmoid[l], at[l] < kDoubleWordLanes ? &exps[at[l]] : nullptr);
  }
}

}  // namespace ulpgate
