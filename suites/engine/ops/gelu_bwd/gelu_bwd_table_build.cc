// gelu_bwd's Mills ratio table as MPFR builds it from R at the centers
// (mills_ratio_centers.inc): the source of gelu_bwd_table.inc, which the
// factor compiles in, and what the table's test holds that file to.
#include "suites/engine/ops/gelu_bwd/gelu_bwd_tables.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <vector>

#include <mpfr.h>

#include "oracles/mpfr_number.h"

namespace ulpgate {
namespace {

// R at each center in the order below, to 400 bits (tools/python/
// mills_ratio_centers.py; a test holds them to MPFR's erfc).
constexpr const char* kMillsRatioAtCenters[] = {
#include "suites/engine/ops/gelu_bwd/mills_ratio_centers.inc"
};
static_assert(sizeof kMillsRatioAtCenters / sizeof kMillsRatioAtCenters[0] == kMillsCenters);

using Center = MillsRatioCenter;

struct Built : GeluBwdTables {
  Built() {
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

}  // namespace

GeluBwdTables BuildGeluBwdTables() { return Built(); }

void WriteGeluBwdTableSource(const GeluBwdTables& table, std::ostream& out) {
  const auto hex = [](double v) {
    char text[40];
    std::snprintf(text, sizeof text, "%a", v);
    return std::string(text);
  };
  out << "// gelu_bwd's Mills ratio table (gelu_bwd_tables.h), as BuildGeluBwdTables\n"
         "// gives it: written by gelu_bwd_table_test when the two differ; do not edit.\n";
  out << "{" << hex(table.inv_sqrt_2pi.hi) << ", " << hex(table.inv_sqrt_2pi.lo) << "},\n{{\n";
  for (const MillsRatioCenter& c : table.centers) {
    out << "  {{{";
    for (size_t k = 0; k < c.r.size(); ++k) {
      out << (k ? ", " : "") << "{" << hex(c.r[k].hi) << ", " << hex(c.r[k].lo) << "}";
    }
    out << "}},\n   {{";
    for (size_t k = 0; k < c.rd.size(); ++k) out << (k ? ", " : "") << hex(c.rd[k]);
    out << "}},\n   " << hex(c.c) << ", " << hex(c.error) << "},\n";
  }
  out << "}}\n";
}

}  // namespace ulpgate
