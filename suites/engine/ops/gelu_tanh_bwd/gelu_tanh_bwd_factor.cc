#include "kernels/ops/gelu_tanh_bwd/gelu_tanh_bwd_factor.h"

#include <cmath>

#include <mpfr.h>

#include "oracles/logistic_factor.h"

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

// The term magnitude over |grad| at t = |x| >= 0 (x2 = t^2 exactly) from
// tanh(u(t)) within 2^-80 (absolutely; the term is at least 1/2):
// (1 + tanh) / 2 + t (1 + tanh^2) k (1 + 3 c t^2) / 2, every step adding
// nonnegative values, far inside kFastTermFactorError.
ULPGATE_FMA_CLONES double TermFromTanh(double t, DoubleWord x2, DoubleWord tanh_u) {
  const Constants& k = ConstantsOnce();
  const DoubleWord one{1, 0};
  const DoubleWord left = Add(one, tanh_u);
  const DoubleWord slope = Mul(k.k, Add(one, Mul(MulDouble(k.c, 3), x2)));
  const DoubleWord right = MulDouble(Mul(Add(one, Mul(tanh_u, tanh_u)), slope), t);
  return 0.5 * Add(left, right).Value();
}

// The logistic form's terms at x (finite, |x| >= 2^-30), and x^2 exactly.
// z = 2u = 2 k (x + c x^3): x^3 (eps), c x^3 (ec + 2 eps), the sum of two
// terms of x's sign (ec + 3 eps), times k (2 ec + 4 eps); doubling is
// exact. w = 2 k (1 + 3 c x^2): 3c (ec + eps), times x^2 (ec + 2 eps), plus 1
// (ec + 3 eps), times k (2 ec + 4 eps). F = s + x s (1 - s) w with s =
// sig(z): the logistic form (oracles/logistic_factor.h).
LogisticTerms TermsAt(double x, DoubleWord* x2_out) {
  const Constants& k = ConstantsOnce();
  const double eps = kDoubleWordOpError;
  const double ec = 0x1p-105;  // the constants' distance from the oracle's
  const DoubleWord x2 = TwoProd(x, x);  // exact: 48 bits
  LogisticTerms t;
  t.z = Twice(Mul(k.k, Add({x, 0}, Mul(k.c, MulDouble(x2, x)))));
  t.rho_z = 2 * ec + 4 * eps;
  t.w = Twice(Mul(k.k, Add({1, 0}, Mul(MulDouble(k.c, 3), x2))));
  t.r_w = 2 * ec + 4 * eps;
  // k < 0.8, 3c < 0.135.
  t.w_bound = 1.6 * (1 + 0.135 * x * x) * (1 + 0x1p-40);
  *x2_out = x2;
  return t;
}

// The term factor from the same s: tanh(|u|) = s(2|u|) - (1 - s(2|u|))
// (GeluTanhBwdTermFactor's steps, not its exp).
std::optional<FactorEstimate> WithTerm(double x, DoubleWord x2, std::optional<FactorEstimate> factor,
                                       const LogisticSigmoid& s) {
  if (factor && s.set) factor->term = TermFromTanh(std::fabs(x), x2, Add(s.at_abs_z, Neg(s.complement)));
  return factor;
}

// The bounds (oracles/logistic_factor.cc has the rest): each double-word
// operation adds eps = kDoubleWordOpError relatively, the constants ec; the
// oracle's own distance from the real value is 2^-299 of the terms it adds.
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
    std::optional<FactorEstimate> factor = FiniteFactor(0.5, d, error * (1 + 0x1p-20) + 0x1p-299);
    // The term factor 1/2 + k |x| + O(|x|^3) (tanh(u) = k |x| + O(|x|^3)):
    // two roundings and the rest below 2^-88, within 2^-51.9.
    factor->term = 0.5 + k.k.hi * std::fabs(x);
    return factor;
  }
  DoubleWord x2;
  const LogisticTerms t = TermsAt(x, &x2);
  LogisticSigmoid s;
  return WithTerm(x, x2, LogisticFactor(x, t, &s), s);
}

bool InLogisticRange(float x) { return std::isfinite(x) && std::fabs(x) >= 0x1p-30f; }

}  // namespace

std::optional<FactorEstimate> GeluTanhBwdFactor(float x) { return FactorClones(x); }

void GeluTanhBwdFactors(const float* x, size_t n, const FactorEstimateColumns& out) {
  // Each lane keeps its x^2 for the term factor.
  LogisticFactorBatch<DoubleWord>(
      x, n, out,
      [](float v, LogisticTerms* t, DoubleWord* x2) {
        if (!InLogisticRange(v)) return false;
        *t = TermsAt(v, x2);
        return true;
      },
      [](double v, const DoubleWord& x2, const std::optional<FactorEstimate>& f,
         const LogisticSigmoid& s) { return WithTerm(v, x2, f, s); },
      GeluTanhBwdFactor);
}

ULPGATE_FMA_CLONES std::optional<double> GeluTanhBwdTermFactor(float x_in) {
  if (!std::isfinite(x_in)) return std::nullopt;
  const Constants& k = ConstantsOnce();
  const double x = std::fabs(static_cast<double>(x_in));  // the magnitude is even in x
  const DoubleWord one{1, 0};
  const DoubleWord x2 = TwoProd(x, x);  // exact: 48 bits (x^2 < 2^256)
  const DoubleWord u = Mul(k.k, Add({x, 0}, Mul(k.c, MulDouble(x2, x))));
  DoubleWord t = one;  // tanh(u) = 1 - O(2^-900) past 2u = 650
  if (2 * u.hi < kDoubleWordExpLimit) {
    const DoubleWord e = Exp(Twice(Neg(u)));  // in (2^-938, 1]
    t = Div(Add(one, Neg(e)), Add(one, e));
  }
  return TermFromTanh(x, x2, t);
}

}  // namespace ulpgate
