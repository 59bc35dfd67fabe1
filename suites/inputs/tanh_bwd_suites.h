// The input suites of tanh_bwd(grad, t). Every input is a pure function of
// (suite, seed, index): see counter_rng.h.
#ifndef ULPGATE_SUITES_TANH_BWD_SUITES_H_
#define ULPGATE_SUITES_TANH_BWD_SUITES_H_

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "oracles/format.h"
#include "suites/inputs/inputs.h"

namespace ulpgate {

inline const std::vector<std::string> kTanhBwdOperands = {"grad", "t"};

// random, domain, training, adversarial.
const std::vector<SuiteInfo>& TanhBwdSuites();

// Input `index` of a suite: {grad, t}. Throws InputError for an unknown suite.
std::array<float, 2> TanhBwdInput(std::string_view suite, uint64_t seed, uint64_t index);

// Inputs 0 .. n-1 of a suite.
InputSet GenerateTanhBwdSuite(std::string_view suite, uint64_t seed, size_t n);

// The same suites defined in a 16-bit format (bf16, f16): every input a value
// of it, drawn from its own bit patterns, binades and landmarks (its
// subnormals and largest value, t within its ulps of 1 and of 1/sqrt(2), t
// whose square is a tie in it); f32 gives the binary32 suites above.
std::array<float, 2> TanhBwdInput(const FloatFormat& format, std::string_view suite,
                                  uint64_t seed, uint64_t index);
InputSet GenerateTanhBwdSuite(const FloatFormat& format, std::string_view suite, uint64_t seed,
                              size_t n);
// The size of the fixed head of a format's adversarial suite.
size_t TanhBwdAdversarialCatalogueSize(const FloatFormat& format);
// t in [0.5, 1), a value of the format, whose square's rounding to the
// format is a tie (`offset` 0) or the nearest non-tie squares above and
// below a tie (offset != 0); `pick` chooses among them.
float NarrowTieSquareOperand(const FloatFormat& format, bool tie, uint64_t pick);

// The fixed head of the adversarial suite: the cross product of the special
// values of docs/design.md ("Inputs") for grad and t. Inputs past it are drawn
// from the structured families (near 1, near 1/sqrt(2), ties of t*t, ...).
size_t TanhBwdAdversarialCatalogueSize();

// t in [0.5, 1) whose square's 24-bit rounding is a tie (`offset` 0) or lies
// `offset` units of the last discarded bit off a tie (offset = 1 + 8j): the
// inputs that tell one rounding from two. `pick` chooses among solutions.
float TieSquareOperand(int64_t offset, uint64_t pick);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_TANH_BWD_SUITES_H_
