#include "kernels/ops/gelu_bwd/gelu_bwd_factor.h"
#include "suites/engine/ops/gelu_bwd/gelu_bwd_tables.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <mpfr.h>

#include "oracles/mpfr_number.h"

namespace ulpgate {
namespace {

using Center = MillsRatioCenter;

// The table, compiled in: BuildGeluBwdTables's, bit for bit (its test).
constexpr GeluBwdTables kTables = {
#include "suites/engine/ops/gelu_bwd/gelu_bwd_table.inc"
};

const GeluBwdTables& TablesOnce() { return kTables; }

}  // namespace

const GeluBwdTables& GeluBwdTablesOnce() { return TablesOnce(); }

namespace {

// The center of R's table for 0 <= t < 32.
inline const Center& CenterOf(const GeluBwdTables& tab, double t, float t_float) {
  int index;
  if (t < 2) {
    index = static_cast<int>(t * 32 + 0.5);
  } else {
    uint32_t bits;
    std::memcpy(&bits, &t_float, sizeof bits);
    const int e = static_cast<int>(bits >> 23) - 127;  // 1..4
    index = kMillsUniform + 32 * (e - 1) + static_cast<int>((bits >> 18) & 31);
  }
  return tab.centers[static_cast<size_t>(index)];
}

// R(t) for 0 <= t < 32 within error (absolutely), at t[0 .. kLanes), each
// step across every lane before the next (the same operations on each t for
// one lane or several). Inlined into the FMA clones below.
template <size_t kLanes>
[[gnu::always_inline]] inline void MillsRatioSteps(const GeluBwdTables& tab, const double* t,
                                                   const float* t_float, DoubleWord* out,
                                                   double* error) {
  const Center* ce[kLanes];
  double h[kLanes], q[kLanes], s[kLanes], c[kLanes];
  for (size_t l = 0; l < kLanes; ++l) ce[l] = &CenterOf(tab, t[l], t_float[l]);
  for (size_t l = 0; l < kLanes; ++l) h[l] = t[l] - ce[l]->c;  // exact (gelu_bwd_factor.h)
  for (size_t l = 0; l < kLanes; ++l) q[l] = ce[l]->rd[kMillsDoubles - 1];
  for (int k = kMillsDoubles - 2; k >= 0; --k) {
    for (size_t l = 0; l < kLanes; ++l) q[l] = std::fma(q[l], h[l], ce[l]->rd[static_cast<size_t>(k)]);
  }
  // Compensated Horner (gelu_bwd_table_build.cc, ErrorBound): the main sum s on the critical
  // path, the exact errors of its steps and the coefficients' low words
  // summed beside it in c.
  for (size_t l = 0; l < kLanes; ++l) {
    s[l] = q[l];
    c[l] = 0;
  }
  for (int j = kMillsWords - 1; j >= 0; --j) {
    for (size_t l = 0; l < kLanes; ++l) {
      const DoubleWord& r = ce[l]->r[static_cast<size_t>(j)];
      const DoubleWord product = TwoProd(s[l], h[l]);
      const DoubleWord sum = TwoSum(product.hi, r.hi);
      s[l] = sum.hi;
      c[l] = std::fma(c[l], h[l], (product.lo + sum.lo) + r.lo);
    }
  }
  for (size_t l = 0; l < kLanes; ++l) {
    error[l] = ce[l]->error;
    out[l] = FastTwoSum(s[l], c[l]);  // exact: |c| is about 2^-52 of s >= R(32) > 1/33
  }
}

// Where FactorClones takes its last branch (phi and R): finite x with 2^-30
// <= |x| and -32 < x < 22.
inline bool InMainRange(float x) { return std::fabs(x) >= 0x1p-30f && x < 22 && x > -32; }

// That branch's end, from phi(t) = p and R(t) = r within r_error.
inline std::optional<FactorEstimate> MainFactor(double x, double t, DoubleWord p, DoubleWord r,
                                                double r_error) {
  const double eps = kMainEps;
  const double slack = kMainSlack;
  const double r_p = kMainPhiError;
  if (x > 0) {
    // F = 1 + D, D = phi(t) (t - R(t)): its error the table's scaled by phi
    // and D's own relative r_p + 2 eps (Add, Mul).
    const DoubleWord d = Mul(p, Add({t, 0}, Neg(r)));
    const double error = (std::fabs(d.hi) * (r_p + 2 * eps) + p.hi * r_error) * slack;
    const double terms = 1 + p.hi * t;
    return FiniteFactor(1, d, error + 0x1p-299 * terms * slack);
  }
  // F = phi(t) (R(t) - t): R - t cancels near F's zero (t = 0.7518), where
  // the table's absolute error is what is left.
  const DoubleWord d = Mul(p, Add(r, {-t, 0}));
  const double error = (std::fabs(d.hi) * (r_p + 2 * eps) + p.hi * r_error) * slack +
                       0x1p-299 * p.hi * (r.hi + t) * slack;
  // Below 2^-600 (t > 28.92): the sign and a bound on the magnitude.
  return FiniteOrTinyFactor(d, error);
}

// The main range's factor at x[0 .. n), n <= kLanes (FactorClones's last
// branch: phi from Exp, R from the table), each step across every lane
// before the next; inlined into the FMA clones below.
template <size_t kLanes>
[[gnu::always_inline]] inline void MainSteps(const float* x_in, size_t n,
                                             std::optional<FactorEstimate>* out) {
  const GeluBwdTables& tab = TablesOnce();
  double x[kLanes], t[kLanes], r_error[kLanes];
  float t_float[kLanes];
  DoubleWord arg[kLanes], e[kLanes], p[kLanes], r[kLanes];
  for (size_t l = 0; l < kLanes; ++l) {
    const float xl = l < n ? x_in[l] : 1.0f;  // the lanes past n: any value in range
    x[l] = xl;
    t[l] = std::fabs(x[l]);
    t_float[l] = std::fabs(xl);
    arg[l] = {-0.5 * (x[l] * x[l]), 0};  // exact: x^2 has 48 bits
  }
  if constexpr (kLanes == 1) {
    e[0] = Exp(arg[0]);
  } else {
    ExpLanes(arg, e, kLanes);
  }
  for (size_t l = 0; l < kLanes; ++l) p[l] = Mul(e[l], tab.inv_sqrt_2pi);  // phi(t)
  MillsRatioSteps<kLanes>(tab, t, t_float, r, r_error);
  for (size_t l = 0; l < n; ++l) out[l] = MainFactor(x[l], t[l], p[l], r[l], r_error[l]);
}

// The bounds: each double-word operation adds eps = kDoubleWordOpError of its
// result, the constant 1/sqrt(2 pi) ec = 2^-105, Exp kDoubleWordExpError (its
// argument -x^2/2 is exact); R's error is the table's. Bounds of the first
// order, every one below 2^-90 relatively, so the factor 1 + 2^-20 covers the
// products left out; then the oracle's 2^-299 of its terms (the header).
ULPGATE_FMA_CLONES std::optional<FactorEstimate> FactorClones(float x_in) {
  FactorEstimate f;
  if (std::isnan(x_in)) return f;  // kNaN: every operation of the oracle gives NaN
  if (std::isinf(x_in)) {
    // x exp(-x^2/2) is inf * 0 in the oracle: NaN, whatever erfc gives.
    return f;
  }
  if (x_in == 0) {
    // erfc(+-0) = 1 and x phi(x) = +-0: F = 1/2 exactly.
    f.kind = FactorEstimate::kFinite;
    f.f0 = 0.5;
    f.exact = true;
    return f;
  }
  const GeluBwdTables& tab = TablesOnce();
  const double eps = kDoubleWordOpError;
  const double ec = 0x1p-105;
  const double slack = 1 + 0x1p-20;
  const double x = x_in;
  const double t = std::fabs(x);
  const double x2 = x * x;  // exact: 48 bits, within [2^-298, 2^256]
  const double log2e = 1.4426950408889634;
  if (t < 0x1p-30) {
    // A third of binary32's values: F - 1/2 = int_0^x phi(s) (2 - s^2) ds =
    // 2 k x - (2/3) k x^3 + Q, k = 1/sqrt(2 pi), |Q| <= |x|^5 / 5 (the
    // integrand is 2 k - 2 k s^2 within s^4). The cubic term (below 2^-60 of
    // 2 k x) needs only doubles: five roundings and k's, 2^-50 in all.
    const DoubleWord lin = MulDouble({2 * tab.inv_sqrt_2pi.hi, 2 * tab.inv_sqrt_2pi.lo}, x);
    const double cubic = -(2.0 / 3.0) * tab.inv_sqrt_2pi.hi * (x2 * x);
    const DoubleWord d = Add(lin, {cubic, 0});
    const double x5 = t * x2 * x2;
    const double error = std::fabs(lin.hi) * (ec + eps) + std::fabs(cubic) * 0x1p-50 + 0.2 * x5 +
                         eps * std::fabs(d.hi);
    return FiniteFactor(0.5, d, error * slack + 0x1p-299);
  }
  if (x >= 22) {
    // The oracle's erfc(-x/sqrt(2)) is 2 - erfc(x/sqrt(2)), the subtrahend below
    // exp(-x^2/2) < 2^-340: at 320 bits it rounds to 2 and Phi to 1; x phi(x)
    // below 2^-330 (checked) rounds 1 + x phi(x) to 1. (Where MPFR's exp
    // underflows, the oracle keeps its least positive number: x times it is
    // tinier still.)
    const double log2_term = std::log2(t) * (1 + 0x1p-40) - 0.5 * x2 * log2e * (1 - 0x1p-40) - 1.32;
    if (log2_term >= -330) return std::nullopt;
    f.kind = FactorEstimate::kFinite;
    f.f0 = 1;
    f.exact = true;
    return f;
  }
  if (x <= -32) {
    // F = -phi(t) (t - R(t)), 0 < t - R(t) < t: negative, |F| < t phi(t) <
    // 2^-730. The oracle's Phi (erfc of a positive argument, over 2) is below
    // its |x phi| (Phi(-t) < phi(t)/t, or both at MPFR's least positive
    // number 2^(emin - 1), which its roundings keep for results below the
    // range), so its sum is negative and at most its |x phi| <= t max(phi(t)
    // (1 + 2^-316), 2^(emin - 1)) in magnitude.
    const double from_phi = -0.5 * x2 * log2e * (1 - 0x1p-40) - 1.32;
    const double from_range = static_cast<double>(mpfr_get_emin()) - 1;
    f.kind = FactorEstimate::kTiny;
    f.sign = -1;
    f.log2_bound = std::ceil(std::log2(t) * (1 + 0x1p-40) + std::max(from_phi, from_range) + 1);
    return f;
  }
  std::optional<FactorEstimate> main;
  MainSteps<1>(&x_in, 1, &main);
  return main;
}

// The main range eight values at a time (GeluBwdFactors).
ULPGATE_FMA_CLONES void MainFactorLanes(const float* x_in, size_t n, std::optional<FactorEstimate>* out) {
  MainSteps<kDoubleWordLanes>(x_in, n, out);
}

// The term factor F(|x|) carried with F(x) (FactorEstimate::term).
std::optional<FactorEstimate> WithTerm(float x, std::optional<FactorEstimate> f) {
  // The term factor F(|x|) with it: F itself for x >= 0, and for x < 0 1 -
  // F(x), as F(-t) + F(t) = 1 (Phi(-t) + Phi(t) = 1, and the phi terms
  // cancel): T in [1, 1.17] there, so F's absolute error and the roundings
  // below (1 - f0 exact as a TwoSum, then two of parts far smaller than T)
  // stay far below kFastTermFactorError of T.
  if (!f) return f;
  if (f->kind == FactorEstimate::kFinite && f->error <= 0x1p-60) {
    if (x >= 0) {
      f->term = f->f0;  // f0 = RN(F's estimate): within 2^-53 + 2^-60
    } else {
      const DoubleWord d = TwoSum(1.0, -f->f0);
      f->term = d.hi + (d.lo - (f->f1 + f->f2));
    }
  } else if (f->kind == FactorEstimate::kTiny && x < 0) {
    f->term = 1;  // 1 + |F|, |F| < 2^-600
  }
  return f;
}

}  // namespace

std::optional<FactorEstimate> GeluBwdFactor(float x) { return WithTerm(x, FactorClones(x)); }

void GeluBwdFactors(const float* x, size_t n, const FactorEstimateColumns& out) {
  // The main range's values kMainFactorBlock at a time into the vectors where
  // the CPU has them (a block wholly in it straight into out, else gathered
  // and then placed), else eight at a time in lockstep; the rest (zeros,
  // tiny, far out, NaN, infinities) one by one.
  for (size_t begin = 0; begin < n; begin += kMainFactorBlock) {
    const size_t count = std::min(kMainFactorBlock, n - begin);
    const FactorEstimateColumns here{out.f0 + begin,    out.f1 + begin,   out.f2 + begin,
                                     out.error + begin, out.term + begin, out.plain + begin};
    float lanes[kMainFactorBlock];
    size_t at[kMainFactorBlock];
    size_t k = 0;
    for (size_t i = 0; i < count; ++i) {
      if (!InMainRange(x[begin + i])) {  // a few operations, or none
        StorePlainEstimate(GeluBwdFactor(x[begin + i]), here, i);
        continue;
      }
      lanes[k] = x[begin + i];
      at[k++] = i;
    }
    if (k == 0) continue;
    if (k == count && MainFactorVectors(lanes, k, here)) continue;
    double f0[kMainFactorBlock], f1[kMainFactorBlock], f2[kMainFactorBlock],
        error[kMainFactorBlock], term[kMainFactorBlock];
    uint8_t plain[kMainFactorBlock];
    const FactorEstimateColumns gathered{f0, f1, f2, error, term, plain};
    if (MainFactorVectors(lanes, k, gathered)) {
      for (size_t l = 0; l < k; ++l) {
        const size_t i = at[l];
        here.plain[i] = plain[l];
        here.f0[i] = f0[l];
        here.f1[i] = f1[l];
        here.f2[i] = f2[l];
        here.error[i] = error[l];
        here.term[i] = term[l];
      }
      continue;
    }
    std::optional<FactorEstimate> done[kDoubleWordLanes];
    for (size_t first = 0; first < k; first += kDoubleWordLanes) {
      const size_t lanes_now = std::min(kDoubleWordLanes, k - first);
      MainFactorLanes(lanes + first, lanes_now, done);
      for (size_t l = 0; l < lanes_now; ++l) {
        StorePlainEstimate(WithTerm(lanes[first + l], done[l]), here, at[first + l]);
      }
    }
  }
}

std::optional<double> GeluBwdTermFactor(float x) {
  // 1/2 + |erf(x/sqrt(2))|/2 = 1 - Phi(-|x|): the term magnitude is F(|x|) >=
  // 1/2, estimated within 2^-91 and rounded once.
  if (!std::isfinite(x)) return std::nullopt;
  const std::optional<FactorEstimate> f = FactorClones(std::fabs(x));
  if (!f || f->kind != FactorEstimate::kFinite) return std::nullopt;
  return f->f0;
}

}  // namespace ulpgate
