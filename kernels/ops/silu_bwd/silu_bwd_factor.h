// The factor of SiLU backward estimated in double-words: what the exact
// oracle multiplies grad by at x, without MPFR, for the sweep's exact tier
// over binary32 x (suites/engine/elementwise_oracle.h, FastFactor).
#ifndef ULPGATE_KERNELS_OPS_SILU_BWD_SILU_BWD_FACTOR_H_
#define ULPGATE_KERNELS_OPS_SILU_BWD_SILU_BWD_FACTOR_H_

#include <optional>

#include "oracles/double_word.h"

namespace ulpgate {

// F(x) = s (1 + x (1 - s)), s = 1/(1 + exp(-x)), as the oracle computes it
// (silu_bwd_spec-inl.h, Exact; the product of its factors s and 1 + x sig(-x)):
// within `error` of that value, or nullopt where MPFR decides.
std::optional<FactorEstimate> SiluBwdFactor(float x);

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_OPS_SILU_BWD_SILU_BWD_FACTOR_H_
