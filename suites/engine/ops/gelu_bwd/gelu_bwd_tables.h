// What gelu_bwd's factor estimate (gelu_bwd_factor.h) shares between its
// scalar code (gelu_bwd_factor.cc) and its vectors (gelu_bwd_factor-inl.h):
// the Mills ratio's table, the constants of the main range's bounds, and the
// vectors' entry point. Internal to the op's folder.
#ifndef ULPGATE_SUITES_ENGINE_OPS_GELU_BWD_GELU_BWD_TABLES_H_
#define ULPGATE_SUITES_ENGINE_OPS_GELU_BWD_GELU_BWD_TABLES_H_

#include <array>
#include <cstddef>
#include <ostream>

#include "oracles/double_word.h"

namespace ulpgate {

// The Taylor polynomials of the Mills ratio R (gelu_bwd_factor.h): degree
// kMillsDegree, coefficients 0 to kMillsWords - 1 as double-words, the rest
// doubles.
inline constexpr int kMillsDegree = 15;
inline constexpr int kMillsWords = 7;
inline constexpr int kMillsDoubles = kMillsDegree + 1 - kMillsWords;
// 65 centers i/32 on [0, 2], then 32 in each binade [2^e, 2^(e+1)), e = 1..4.
inline constexpr int kMillsUniform = 65;
inline constexpr int kMillsCenters = kMillsUniform + 4 * 32;

// Only doubles, so that the vectors gather a coefficient of the center k at
// k * kMillsCenterDoubles plus its offset.
struct MillsRatioCenter {
  std::array<DoubleWord, kMillsWords> r;  // r_0 .. r_6
  std::array<double, kMillsDoubles> rd;   // r_7 .. r_15
  double c = 0;
  double error = 0;  // |R(t) - the polynomial's value as evaluated| for |t - c| <= H
};
inline constexpr size_t kMillsCenterDoubles = sizeof(MillsRatioCenter) / sizeof(double);
static_assert(sizeof(MillsRatioCenter) == (2 * kMillsWords + kMillsDoubles + 2) * sizeof(double));

struct GeluBwdTables {
  DoubleWord inv_sqrt_2pi;  // within 2^-105 relatively
  std::array<MillsRatioCenter, kMillsCenters> centers;
};
const GeluBwdTables& GeluBwdTablesOnce();  // compiled in: gelu_bwd_table.inc
// The table as MPFR builds it (gelu_bwd_table_build.cc), in a few
// milliseconds: the compiled one is this, bit for bit, as its test holds.
GeluBwdTables BuildGeluBwdTables();
// `table` as gelu_bwd_table.inc writes it.
void WriteGeluBwdTableSource(const GeluBwdTables& table, std::ostream& out);

// The main range's bounds (gelu_bwd_factor.cc, MainFactor): each double-word
// operation's eps, 1/sqrt(2 pi)'s ec, the slack for second-order terms, phi's
// relative error.
inline constexpr double kMainEps = kDoubleWordOpError;
inline constexpr double kMainEc = 0x1p-105;
inline constexpr double kMainSlack = 1 + 0x1p-20;
inline constexpr double kMainPhiError = kDoubleWordExpError + kMainEc + kMainEps;

// The main range's factors (-32 < x < 22, |x| >= 2^-30) at x[0 .. n), n <=
// kMainFactorBlock, bit for bit what the scalar code gives, into out's
// entries 0 .. n - 1 (FactorEstimateColumns; plain 0 where the factor is tiny,
// x < 0 and |F| below 2^-600, for the caller), in the vectors of the best
// Highway target this CPU runs; false (nothing written) where that target has
// no fused multiply-add.
inline constexpr size_t kMainFactorBlock = 64;
bool MainFactorVectors(const float* x, size_t n, const FactorEstimateColumns& out);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_ENGINE_OPS_GELU_BWD_GELU_BWD_TABLES_H_
