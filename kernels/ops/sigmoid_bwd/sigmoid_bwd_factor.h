// The factor of sigmoid backward, s (1 - s), held exactly in two doubles: what
// the exact oracle multiplies grad by, without MPFR, for the sweep over
// binary32 s (suites/engine/elementwise_oracle.h, FastFactor).
// Declared here, beside the spec that names them; defined by the op's oracle
// part, suites/engine/ops/sigmoid_bwd/, which the engine's library compiles.
#ifndef ULPGATE_KERNELS_OPS_SIGMOID_BWD_SIGMOID_BWD_FACTOR_H_
#define ULPGATE_KERNELS_OPS_SIGMOID_BWD_SIGMOID_BWD_FACTOR_H_

#include <optional>

#include "oracles/double_word.h"

namespace ulpgate {

// s (1 - s) = s - s^2 exactly (error 0), its zeros with the sign the
// oracle's product gives them; nullopt for an infinite s (MPFR's).
std::optional<FactorEstimate> SigmoidBwdFactor(float s);

// The term magnitude over |grad|, |s| (1 + |s|): |s| + s^2 rounded once
// (s^2 is exact in a double), so within 2^-53 relatively; nullopt where it
// is 0 or not finite.
std::optional<double> SigmoidBwdTermFactor(float s);

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_OPS_SIGMOID_BWD_SIGMOID_BWD_FACTOR_H_
