#include "kernels/ops/gelu_bwd/gelu_bwd_factor.h"
#include "kernels/ops/gelu_bwd/gelu_bwd_tables.h"

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

// R at each center in the order below, to 400 bits (tools/python/
// mills_ratio_centers.py; a test holds them to MPFR's erfc).
constexpr const char* kMillsRatioAtCenters[] = {
#include "kernels/ops/gelu_bwd/mills_ratio_centers.inc"
};
static_assert(sizeof kMillsRatioAtCenters / sizeof kMillsRatioAtCenters[0] == kMillsCenters);

using Center = MillsRatioCenter;

struct Tables : GeluBwdTables {
  Tables() {
    constexpr mpfr_prec_t kPrecision = 384;
    MpfrNumber v(kPrecision), w(kPrecision), rest(kPrecision);
    const auto parts = [&](mpfr_srcptr x) {
      mpfr_set(rest.get(), x, MPFR_RNDN);
      DoubleWord d;
      d.hi = mpfr_get_d(rest.get(), MPFR_RNDN);
      mpfr_sub_d(rest.get(), rest.get(), d.hi, MPFR_RNDN);  // exact: fewer bits than x
      d.lo = mpfr_get_d(rest.get(), MPFR_RNDN);
      return d;
    };
    mpfr_const_pi(v.get(), MPFR_RNDN);
    mpfr_mul_ui(v.get(), v.get(), 2, MPFR_RNDN);
    mpfr_rec_sqrt(v.get(), v.get(), MPFR_RNDN);
    inv_sqrt_2pi = parts(v.get());

    std::vector<MpfrNumber> r;
    for (int k = 0; k <= kMillsDegree; ++k) r.emplace_back(kPrecision);
    for (int i = 0; i < kMillsCenters; ++i) {
      double c, h_max;
      if (i < kMillsUniform) {
        c = i / 32.0;
        h_max = 1.0 / 64;
      } else {
        const int e = 1 + (i - kMillsUniform) / 32, s = (i - kMillsUniform) % 32;
        c = std::ldexp(1 + (2 * s + 1) / 64.0, e);
        h_max = std::ldexp(1.0, e - 6);
      }
      Center& ce = centers[static_cast<size_t>(i)];
      ce.c = c;
      // r_0 = R(c) = sqrt(pi/2) exp(c^2/2) erfc(c/sqrt(2)), stored to 400
      // bits (MPFR's erfc took most of a tenth of a second for the 193).
      mpfr_set_str(r[0].get(), kMillsRatioAtCenters[i], 0, MPFR_RNDN);
      mpfr_mul_d(r[1].get(), r[0].get(), c, MPFR_RNDN);
      mpfr_sub_ui(r[1].get(), r[1].get(), 1, MPFR_RNDN);
      for (int k = 1; k < kMillsDegree; ++k) {
        mpfr_mul_d(w.get(), r[static_cast<size_t>(k)].get(), c, MPFR_RNDN);
        mpfr_add(w.get(), w.get(), r[static_cast<size_t>(k - 1)].get(), MPFR_RNDN);
        mpfr_div_ui(r[static_cast<size_t>(k + 1)].get(), w.get(), static_cast<unsigned long>(k + 1),
                    MPFR_RNDN);
      }
      std::array<double, kMillsDegree + 1> abs_r{};
      for (int k = 0; k <= kMillsDegree; ++k) {
        const DoubleWord d = parts(r[static_cast<size_t>(k)].get());
        if (k < kMillsWords) {
          ce.r[static_cast<size_t>(k)] = d;
        } else {
          ce.rd[static_cast<size_t>(k - kMillsWords)] = d.hi;
        }
        abs_r[static_cast<size_t>(k)] = std::fabs(d.hi) * (1 + 0x1p-50);
      }
      ce.error = ErrorBound(c, h_max, abs_r);
    }
  }

  // The bound on |R(c + h) - the evaluated polynomial| for |h| <= h_max, in
  // doubles (H's powers are exact; every other rounding is covered by the
  // factor 1 + 2^-20 at the end, as are products of two error terms).
  static double ErrorBound(double c, double h_max, const std::array<double, kMillsDegree + 1>& abs_r) {
    const double u = 0x1p-53;
    // a[j] = sum_{i >= j} |r_i| H^(i - j): bounds |the Horner value at step j|.
    std::array<double, kMillsDegree + 2> a{};
    for (int j = kMillsDegree; j >= 0; --j) {
      a[static_cast<size_t>(j)] = abs_r[static_cast<size_t>(j)] + h_max * a[static_cast<size_t>(j + 1)];
    }
    // Degrees kMillsWords..kMillsDegree by fma Horner in doubles: r_i's term meets the
    // rounding of its coefficient and of the steps i..kMillsWords, gamma_n with n =
    // i - kMillsWords + 2.
    double doubles = 0, power = 1;
    for (int i = kMillsWords; i <= kMillsDegree; ++i) {
      const double n = i - kMillsWords + 2;
      doubles += (n * u / (1 - n * u) * abs_r[static_cast<size_t>(i)] + 0x1p-250) * power;
      power *= h_max;
    }
    // Degrees 0..kMillsWords - 1 by compensated Horner (Graillat, Langlois and
    // Louvet): s_j + pi_j = s_{j+1} h (TwoProd), s_j + sigma_j = that + hi_j
    // (TwoSum), both exact, so R's polynomial is s_0 + sum_j (pi_j + sigma_j +
    // lo_j) h^j exactly but for the coefficients' rounding (2^-106 of |r_j|,
    // counted as 2^-105, and the MPFR values' error below 2^-250) and the
    // doubles' error times H^kMillsWords.
    // The sum is evaluated in doubles: two roundings of term j's own sum and
    // j + 1 fma roundings, gamma_{j+3} of |pi_j| + |sigma_j| + |lo_j| <= u (H
    // a[j + 1] + a[j] + |r_j|) (|s_j| <= a[j] to the first order).
    double words = 0;
    power = 1;
    for (int j = 0; j < kMillsWords; ++j) {
      const double n = j + 3;
      const double sums = h_max * a[static_cast<size_t>(j + 1)] + a[static_cast<size_t>(j)] +
                          abs_r[static_cast<size_t>(j)];
      words += power * (n * u / (1 - n * u) * u * sums + 0x1p-105 * abs_r[static_cast<size_t>(j)] +
                        0x1p-250);
      power *= h_max;
    }
    words += power * doubles;  // power = H^kMillsWords
    // The terms past kMillsDegree: |r_k| <= M / rho^k (Cauchy; |R(z)| <= R(Re z)
    // <= M = R's bound at c - rho), so their sum is at most M q^(kMillsDegree + 1)
    // / (1 - q), q = H / rho. R(s) <= min(sqrt(pi/2), 1/s) for s > 0 and
    // sqrt(2 pi) exp(s^2/2) for s <= 0 (the integral); the constants are
    // rounded up and exp's few ulps covered by the factor 1.01.
    double tail = HUGE_VAL;
    for (const double rho : {c - 2, c - 1, c - 0.5, c, c + 0.5, c + 1, c + 2, c + 3, c + 4, c + 5,
                             c + 6, c + 8, 0.5 * c, 0.75 * c}) {
      if (!(rho > 2 * h_max)) continue;
      const double s = c - rho;
      const double m = s > 0 ? std::min(1.2533142, 1 / s) : 2.5066283 * std::exp(0.5 * s * s);
      const double q = h_max / rho;
      tail = std::min(tail, 1.01 * m * std::pow(q, kMillsDegree + 1) / (1 - q));
    }
    return (words + tail) * (1 + 0x1p-20);
  }
};

const Tables& TablesOnce() {
  static const Tables tables;
  return tables;
}

}  // namespace

const GeluBwdTables& GeluBwdTablesOnce() { return TablesOnce(); }

namespace {

// The center of R's table for 0 <= t < 32.
inline const Center& CenterOf(const Tables& tab, double t, float t_float) {
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
[[gnu::always_inline]] inline void MillsRatioSteps(const Tables& tab, const double* t,
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
  // Compensated Horner (Tables::ErrorBound): the main sum s on the critical
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
  const Tables& tab = TablesOnce();
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
  const Tables& tab = TablesOnce();
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
