#include "kernels/ops/silu_bwd/silu_bwd_factor.h"

#include <cmath>

#include "oracles/logistic_factor.h"

namespace ulpgate {
namespace {

// The term magnitude over |grad|, s + |x| s + |x| s^2 = s (1 + |x| (1 + s)),
// from s = sigmoid(x) within 2^-90 relatively: every step adds nonnegative
// values, far inside kFastTermFactorError.
ULPGATE_FMA_CLONES double TermFromSigmoid(double x, DoubleWord s) {
  const DoubleWord one{1, 0};
  const DoubleWord inner = Add(one, MulDouble(Add(one, s), std::fabs(x)));
  return Mul(s, inner).Value();
}

// The logistic form with z = x (exact) and w = 1 (oracles/logistic_factor.h),
// for x finite and |x| >= 2^-30.
LogisticTerms TermsAt(double x) {
  LogisticTerms t;
  t.z = {x, 0};
  t.w = {1, 0};
  t.w_bound = 1;
  return t;
}

// The term factor from the same s (SiluBwdTermFactor's steps, not its exp).
std::optional<FactorEstimate> WithTerm(double x, std::optional<FactorEstimate> factor,
                                       const LogisticSigmoid& s) {
  if (factor && s.set) factor->term = TermFromSigmoid(x, x > 0 ? s.at_abs_z : s.complement);
  return factor;
}

bool InLogisticRange(float x) { return std::isfinite(x) && std::fabs(x) >= 0x1p-30f; }

}  // namespace

std::optional<FactorEstimate> SiluBwdFactor(float x_in) {
  FactorEstimate f;
  if (std::isnan(x_in)) return f;  // kNaN
  if (std::isinf(x_in)) return std::nullopt;  // inf * 0 somewhere: MPFR's
  f.kind = FactorEstimate::kFinite;
  if (x_in == 0) {
    // s = 1/2 and 1 + (+-0) (1/2) = 1: F = 1/2 exactly.
    f.f0 = 0.5;
    f.exact = true;
    return f;
  }
  const double x = x_in;
  if (std::fabs(x) < 0x1p-30) {
    // A third of binary32's values: F = 1/2 + x/2 - x^3/12 + R, |R| <= |x|^5
    // (the next coefficient is 1/80): x/2 is exact, the cubic term (below
    // 2^-60 |x|) needs only double precision (three roundings).
    const double cubic = -(x * x * x) / 12;
    const DoubleWord d = Add({0.5 * x, 0}, {cubic, 0});
    const double x5 = std::fabs(x) * (x * x) * (x * x);
    const double error =
        std::fabs(cubic) * 0x1p-50 + x5 + kDoubleWordOpError * std::fabs(d.hi);
    std::optional<FactorEstimate> factor = FiniteFactor(0.5, d, error * (1 + 0x1p-20) + 0x1p-299);
    // The term factor s (1 + |x| (1 + s)) = 1/2 + x/4 + 3|x|/4 + O(x^2)
    // (s = 1/2 + x/4 + O(|x|^3)): x/4 exact, two roundings and the rest
    // below 2^-59, within 2^-51.9.
    factor->term = 0.5 + (0.25 * x + 0.75 * std::fabs(x));
    return factor;
  }
  LogisticSigmoid s;
  const std::optional<FactorEstimate> factor = LogisticFactor(x, TermsAt(x), &s);
  return WithTerm(x, factor, s);
}

void SiluBwdFactors(const float* x, size_t n, const FactorEstimateColumns& out) {
  struct None {};
  LogisticFactorBatch<None>(
      x, n, out,
      [](float v, LogisticTerms* t, None*) {
        if (!InLogisticRange(v)) return false;
        *t = TermsAt(v);
        return true;
      },
      [](double v, const None&, const std::optional<FactorEstimate>& f, const LogisticSigmoid& s) {
        return WithTerm(v, f, s);
      },
      SiluBwdFactor);
}

ULPGATE_FMA_CLONES std::optional<double> SiluBwdTermFactor(float x_in) {
  if (!std::isfinite(x_in) || x_in < -550) return std::nullopt;
  const double x = x_in;
  if (x > 550) return 1 + 2 * x;  // s (1 + x (1 + s)) with s = 1 - O(2^-790)
  const DoubleWord one{1, 0};
  return TermFromSigmoid(x, Div(one, Add(one, Exp({-x, 0}))));
}

}  // namespace ulpgate
