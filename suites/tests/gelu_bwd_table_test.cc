// The Mills ratio R(c) = sqrt(pi/2) exp(c^2/2) erfc(c/sqrt(2)) that gelu_bwd's
// factor table starts from at each center (kernels/ops/gelu_bwd/
// mills_ratio_centers.inc, written by mpmath) against MPFR's own erfc at 480
// bits: within 2^-395 relatively, every one, in the table's order; and the
// table compiled in (gelu_bwd_table.inc) the one MPFR builds from them.
#include <cmath>
#include <cstddef>
#include <vector>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <mpfr.h>

#include "suites/engine/ops/gelu_bwd/gelu_bwd_tables.h"
#include "oracles/mpfr_number.h"

namespace ulpgate {
namespace {

constexpr const char* kStored[] = {
#include "suites/engine/ops/gelu_bwd/mills_ratio_centers.inc"
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

// Every double of the compiled table is the builder's, bit for bit; where
// one is not, the builder's table is written beside the test as the file
// to put in its place.
TEST(GeluBwdTable, CompiledTableIsMpfrsBuild) {
  const GeluBwdTables built = BuildGeluBwdTables();
  const GeluBwdTables& compiled = GeluBwdTablesOnce();
  static_assert(sizeof(GeluBwdTables) % sizeof(double) == 0, "only doubles");
  const size_t count = sizeof(GeluBwdTables) / sizeof(double);
  size_t differ = 0, first = count;
  for (size_t k = 0; k < count; ++k) {
    uint64_t a, b;
    std::memcpy(&a, reinterpret_cast<const char*>(&built) + k * sizeof(double), sizeof a);
    std::memcpy(&b, reinterpret_cast<const char*>(&compiled) + k * sizeof(double), sizeof b);
    if (a != b && differ++ == 0) first = k;
  }
  if (differ > 0) {
    std::ofstream out("gelu_bwd_table.inc.new");
    WriteGeluBwdTableSource(built, out);
  }
  EXPECT_EQ(differ, 0u) << "the first at double " << first << " of " << count
                        << "; the builder's table is in gelu_bwd_table.inc.new (the test's "
                           "folder): copy it to suites/engine/ops/gelu_bwd/gelu_bwd_table.inc";
  // The file as it stands is what the writer writes.
  std::ostringstream written;
  WriteGeluBwdTableSource(compiled, written);
  std::ifstream stored(std::string(ULPGATE_SOURCE_DIR) + "/suites/engine/ops/gelu_bwd/gelu_bwd_table.inc");
  ASSERT_TRUE(stored.good());
  std::stringstream text;
  text << stored.rdbuf();
  EXPECT_EQ(text.str(), written.str());
}

}  // namespace
}  // namespace ulpgate
