// The Mills ratio R(c) = sqrt(pi/2) exp(c^2/2) erfc(c/sqrt(2)) that gelu_bwd's
// factor table starts from at each center (kernels/ops/gelu_bwd/
// mills_ratio_centers.inc, written by mpmath) against MPFR's own erfc at 480
// bits: within 2^-395 relatively, every one, in the table's order.
#include <cmath>
#include <cstddef>
#include <vector>
#include <algorithm>

#include <gtest/gtest.h>
#include <mpfr.h>

#include "oracles/mpfr_number.h"

namespace ulpgate {
namespace {

constexpr const char* kStored[] = {
#include "kernels/ops/gelu_bwd/mills_ratio_centers.inc"
};

TEST(GeluBwdTable, StoredMillsRatiosAreMpfrs) {
  constexpr mpfr_prec_t kPrecision = 480;
  // The centers: i/32 on [0, 2], then 32 in each binade [2^e, 2^(e+1)), e = 1..4.
  std::vector<double> centers;
  for (int i = 0; i <= 64; ++i) centers.push_back(i / 32.0);
  for (int e = 1; e <= 4; ++e) {
    for (int s = 0; s < 32; ++s) centers.push_back(std::ldexp(1 + (2 * s + 1) / 64.0, e));
  }
  ASSERT_EQ(centers.size(), sizeof kStored / sizeof kStored[0]);
  MpfrNumber c(kPrecision), r(kPrecision), w(kPrecision), stored(kPrecision), half_pi(kPrecision);
  mpfr_const_pi(half_pi.get(), MPFR_RNDN);
  mpfr_div_ui(half_pi.get(), half_pi.get(), 2, MPFR_RNDN);
  mpfr_sqrt(half_pi.get(), half_pi.get(), MPFR_RNDN);
  double worst = 0;
  for (size_t i = 0; i < centers.size(); ++i) {
    mpfr_set_d(c.get(), centers[i], MPFR_RNDN);
    mpfr_sqrt_ui(w.get(), 2, MPFR_RNDN);
    mpfr_div(w.get(), c.get(), w.get(), MPFR_RNDN);
    mpfr_erfc(r.get(), w.get(), MPFR_RNDN);
    mpfr_sqr(w.get(), c.get(), MPFR_RNDN);
    mpfr_div_ui(w.get(), w.get(), 2, MPFR_RNDN);
    mpfr_exp(w.get(), w.get(), MPFR_RNDN);
    mpfr_mul(r.get(), r.get(), w.get(), MPFR_RNDN);
    mpfr_mul(r.get(), r.get(), half_pi.get(), MPFR_RNDN);
    ASSERT_EQ(mpfr_set_str(stored.get(), kStored[i], 0, MPFR_RNDN), 0) << "center " << i;
    mpfr_sub(w.get(), stored.get(), r.get(), MPFR_RNDN);
    mpfr_div(w.get(), w.get(), r.get(), MPFR_RNDN);
    const double e = std::fabs(mpfr_get_d(w.get(), MPFR_RNDU));
    worst = std::max(worst, e);
    EXPECT_LE(e, 0x1p-395) << "center " << i << " (c = " << centers[i] << ")";
  }
  // Rounded to 400 bits, not more: some value is off by more than 2^-420.
  EXPECT_GT(worst, 0x1p-420);
}

}  // namespace
}  // namespace ulpgate
