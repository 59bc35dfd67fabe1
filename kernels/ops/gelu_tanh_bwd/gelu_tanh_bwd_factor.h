// The factor of GELU backward (tanh approximation) estimated in double-words:
// what the exact oracle multiplies grad by at x, without MPFR, for the sweep's
// exact tier over binary32 x (suites/engine/elementwise_oracle.h, FastFactor).
// Declared here, beside the spec that names them; defined by the op's oracle
// part, suites/engine/ops/gelu_tanh_bwd/ (its constants come from the oracle's
// MPFR), which the engine's library compiles: kernels/ links no MPFR.
#ifndef ULPGATE_KERNELS_OPS_GELU_TANH_BWD_GELU_TANH_BWD_FACTOR_H_
#define ULPGATE_KERNELS_OPS_GELU_TANH_BWD_GELU_TANH_BWD_FACTOR_H_

#include <cstddef>
#include <optional>

#include "oracles/double_word.h"

namespace ulpgate {

// F(x) = s + 2 x s (1 - s) k (1 + 3 c x^2), s = 1/(1 + exp(-2u)), u = k (x +
// c x^3), as the oracle computes it at 320 bits (gelu_tanh_bwd_spec-inl.h,
// Exact): within `error` of that value, or nullopt where the estimate cannot
// be bounded tightly enough to be of use (MPFR decides).
std::optional<FactorEstimate> GeluTanhBwdFactor(float x);
// GeluTanhBwdFactor of x[0 .. n), bit for bit, into out's columns where plain
// (FactorEstimateColumns): eight at a time, their exps in lockstep.
void GeluTanhBwdFactors(const float* x, size_t n, const FactorEstimateColumns& out);

// The term magnitude over |grad|, (1 + |t|)/2 + (|x|/2) (1 + t^2) k (1 + 3 c
// x^2), t = tanh(u): in double-words (t from exp within 2^-98 absolutely, the
// terms at least 1/2 in all, so t's error is below 2^-97 of the sum) rounded
// once to a double: within 2^-52.9 relatively; nullopt for NaN and
// infinities.
std::optional<double> GeluTanhBwdTermFactor(float x);

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_OPS_GELU_TANH_BWD_GELU_TANH_BWD_FACTOR_H_
