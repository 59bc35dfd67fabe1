// The factor of GELU backward (erf) estimated in double-words: what the exact
// oracle multiplies grad by at x, without MPFR, for the sweep's exact tier
// over binary32 x (suites/engine/elementwise_oracle.h, FastFactor), and its
// term magnitude for the engine's bound fraction.
//
// F(x) = Phi(x) + x phi(x), phi(x) = exp(-x^2/2)/sqrt(2 pi), written with the
// Mills ratio R(t) = Phi(-t)/phi(t) = int_0^inf exp(-t s - s^2/2) ds, t = |x|:
//   x < 0: F = phi(t) (R(t) - t)         (Phi(x) = phi(t) R(t): no 1 - erf),
//   x > 0: F = 1 + phi(t) (t - R(t))     (Phi(x) = 1 - phi(t) R(t)).
// phi(t) is Exp of -x^2/2 (exact in a double: x^2 has 48 bits) times 1/sqrt(2
// pi). R comes from a table of Taylor polynomials of degree 15 about centers
// c: c = i/32 on [0, 2] (|t - c| <= H = 1/64), then 32 per binade on [2, 32)
// (H = 2^e/64 <= c/64); t - c is exact in a double. R' = t R - 1 gives the
// coefficients from r_0 = R(c) (stored to 400 bits: mills_ratio_centers.inc):
// r_1 = c r_0 - 1, (k + 1) r_{k+1} = c r_k + r_{k-1}, in MPFR at 384 bits once
// (the recurrence's error grows by at most (c + 1)^15 < 2^76: below 2^-250). R's error
// at t, bounded per center once (below 2^-100.5 of R on [0, 2], 2^-91 on [16, 32)):
//  - truncation: R is entire and |R(z)| <= R(Re z) (the integral), so
//    Cauchy's estimate |r_k| <= R(c - rho)/rho^k bounds the terms past degree
//    15 by a geometric series (rho picked per center);
//  - degrees 7 to 15 by Horner's rule in doubles (gamma_{k-5} of |r_k| H^k);
//  - degrees 0 to 6 by compensated Horner (the steps' exact TwoProd and
//    TwoSum errors and the coefficients' low words summed in doubles: the
//    sum's own error about 6 u^2 |R|), the coefficients' rounding 2^-105.
// Then Exp (kDoubleWordExpError), a few double-word operations
// (kDoubleWordOpError each): about 2^-91 of F in all at worst,
// growing without bound only at F's zero (x = -0.7518), where R - t cancels.
// Near x = 0 (|x| < 2^-30) a cubic Taylor polynomial of F instead; far out,
// F is exactly 1 for x >= 22 (the oracle's 320 bits round it there) and a
// bounded negative tiny value for x <= -32 (or wherever |F| < 2^-600), with
// MPFR's exponent range. Every bound adds the oracle's own distance from F:
// 2^-299 of its terms Phi and |x| phi (its 320-bit roundings, the erfc
// argument's error amplified by at most t^2 + t < 2^11).
//
// Declared here, beside the spec that names them (kFastFactor); defined by the
// op's oracle part, suites/engine/ops/gelu_bwd/ (its MPFR-built table and the
// vectors), which the engine's library compiles: kernels/ links no MPFR.
#ifndef ULPGATE_KERNELS_OPS_GELU_BWD_GELU_BWD_FACTOR_H_
#define ULPGATE_KERNELS_OPS_GELU_BWD_GELU_BWD_FACTOR_H_

#include <cstddef>
#include <optional>

#include "oracles/double_word.h"

namespace ulpgate {

// F(x) = erfc(-x/sqrt(2))/2 + x exp(-x^2/2)/sqrt(2 pi), as the oracle computes
// it at 320 bits (gelu_bwd_spec-inl.h, Exact): within `error` of that value
// (relatively about 2^-91 at worst, more only near F's zero), kTiny below 2^-600,
// NaN where the oracle's is (NaN, +-inf); nullopt only where a tiny value's
// sign would be unsure.
std::optional<FactorEstimate> GeluBwdFactor(float x);
// GeluBwdFactor of x[0 .. n), bit for bit, into out's columns where plain
// (FactorEstimateColumns): the main range's values, several at a time.
void GeluBwdFactors(const float* x, size_t n, const FactorEstimateColumns& out);

// The term magnitude over |grad|, 1/2 + |erf(x/sqrt(2))|/2 + |x| phi(x) =
// F(|x|): the factor at |x| rounded to a double (within 2^-52 relatively);
// nullopt for a NaN or infinite x.
std::optional<double> GeluBwdTermFactor(float x);

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_OPS_GELU_BWD_GELU_BWD_FACTOR_H_
