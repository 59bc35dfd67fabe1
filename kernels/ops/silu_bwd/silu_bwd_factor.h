// The factor of SiLU backward estimated in double-words: what the exact
// oracle multiplies grad by at x, without MPFR, for the sweep's exact tier
// over binary32 x (suites/engine/elementwise_oracle.h, FastFactor).
// Declared here, beside the spec that names them; defined by the op's oracle
// part, suites/engine/ops/silu_bwd/, which the engine's library compiles.
#ifndef ULPGATE_KERNELS_OPS_SILU_BWD_SILU_BWD_FACTOR_H_
#define ULPGATE_KERNELS_OPS_SILU_BWD_SILU_BWD_FACTOR_H_

#include <cstddef>
#include <optional>

#include "oracles/double_word.h"

namespace ulpgate {

// F(x) = s (1 + x (1 - s)), s = 1/(1 + exp(-x)), as the oracle computes it
// (silu_bwd_spec-inl.h, Exact; the product of its factors s and 1 + x sig(-x)):
// within `error` of that value, or nullopt where MPFR decides.
std::optional<FactorEstimate> SiluBwdFactor(float x);
// SiluBwdFactor of x[0 .. n), bit for bit, into out's columns where plain
// (FactorEstimateColumns): eight at a time, their exps in lockstep.
void SiluBwdFactors(const float* x, size_t n, const FactorEstimateColumns& out);

// The term magnitude over |grad|, s (1 + |x| (1 + s)): in double-words (exp
// within 2^-100, a handful of operations at 2^-100 each) rounded once to a
// double, so within 2^-52.9 relatively; 1 + 2x past x = 550 (s is 1 within
// 2^-790 there); nullopt for x below -550 (the magnitude under 2^-780, near
// the end of the doubles' range) and for NaN and infinities.
std::optional<double> SiluBwdTermFactor(float x);

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_OPS_SILU_BWD_SILU_BWD_FACTOR_H_
