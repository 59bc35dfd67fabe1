// What gelu_bwd's factor estimate (gelu_bwd_factor.h) shares between its
// scalar code (gelu_bwd_factor.cc) and its vectors (gelu_bwd_factor-inl.h):
// the Mills ratio's table, the constants of the main range's bounds, and the
// vectors' entry point. Internal to the op's folder.
#ifndef ULPGATE_KERNELS_OPS_GELU_BWD_GELU_BWD_TABLES_H_
#define ULPGATE_KERNELS_OPS_GELU_BWD_GELU_BWD_TABLES_H_

#include <array>
#include <cstddef>

#include "oracles/double_word.h"

namespace ulpgate {

// The Taylor polynomials of the Mills ratio R (gelu_bwd_factor.h): degree
// kMillsDegree, coefficients 0 to kMillsWords - 1 as double-words, the rest
// doubles.
inline constexpr int kMillsDegree = 18;
inline constexpr int kMillsWords = 9;
inline constexpr int kMillsDoubles = kMillsDegree + 1 - kMillsWords;
// 65 centers i/32 on [0, 2], then 32 in each binade [2^e, 2^(e+1)), e = 1..4.
inline constexpr int kMillsUniform = 65;
inline constexpr int kMillsCenters = kMillsUniform + 4 * 32;

// Only doubles, so that the vectors gather a coefficient of the center k at
// k * kMillsCenterDoubles plus its offset.
struct MillsRatioCenter {
  std::array<DoubleWord, kMillsWords> r;  // r_0 .. r_8
  std::array<double, kMillsDoubles> rd;   // r_9 .. r_18
  double c = 0;
  double error = 0;  // |R(t) - the polynomial's value as evaluated| for |t - c| <= H
};
inline constexpr size_t kMillsCenterDoubles = sizeof(MillsRatioCenter) / sizeof(double);
static_assert(sizeof(MillsRatioCenter) == (2 * kMillsWords + kMillsDoubles + 2) * sizeof(double));

struct GeluBwdTables {
  DoubleWord inv_sqrt_2pi;  // within 2^-105 relatively
  std::array<MillsRatioCenter, kMillsCenters> centers;
};
const GeluBwdTables& GeluBwdTablesOnce();

// The main range's bounds (gelu_bwd_factor.cc, MainFactor): each double-word
// operation's eps, 1/sqrt(2 pi)'s ec, the slack for second-order terms, phi's
// relative error.
inline constexpr double kMainEps = kDoubleWordOpError;
inline constexpr double kMainEc = 0x1p-105;
inline constexpr double kMainSlack = 1 + 0x1p-20;
inline constexpr double kMainPhiError = kDoubleWordExpError + kMainEc + kMainEps;

// The vectors' results for the main range (-32 < x < 22, |x| >= 2^-30), per
// value: F's renormalized parts within `error`, and the term factor (NaN
// where it has none), where x > 0 or |d| >= 2^-600 (d = dhi + dlo the
// double-word F, or F - 1 for x > 0); elsewhere the caller decides a tiny
// factor from d and `error`.
inline constexpr size_t kMainFactorBlock = 64;
struct MainFactorColumns {
  alignas(64) double f0[kMainFactorBlock];
  alignas(64) double f1[kMainFactorBlock];
  alignas(64) double f2[kMainFactorBlock];
  alignas(64) double error[kMainFactorBlock];
  alignas(64) double term[kMainFactorBlock];
  alignas(64) double dhi[kMainFactorBlock];
  alignas(64) double dlo[kMainFactorBlock];
};
// The main range's factors at x[0 .. n), n <= kMainFactorBlock, bit for bit
// what the scalar code gives, in the vectors of the best Highway target this
// CPU runs; false (nothing written) where that target has no fused
// multiply-add.
bool MainFactorVectors(const float* x, size_t n, MainFactorColumns* out);

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_OPS_GELU_BWD_GELU_BWD_TABLES_H_
