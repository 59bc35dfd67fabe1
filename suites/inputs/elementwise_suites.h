// The input suites of every elementwise op, drawn in any of its formats from
// what its spec says (kernels/ops/elementwise_spec.h): the domain of each
// operand and the landmarks of its last one. Every input is a pure function
// of (op, suite, seed, index): see counter_rng.h.
//
//   random       every operand uniform over the format's finite bit patterns
//   domain       each operand as its OperandInfo says (log-uniform magnitude
//                with a random sign, or uniform over [lo, hi])
//   adversarial  a fixed head, the specials (+-0, +-smallest and largest
//                subnormal, +-smallest normal, +-largest finite, +-inf, NaN)
//                and the landmarks crossed; then the last operand within a few
//                ulps of a landmark (either sign), a landmark far out in the
//                tails, and grad near overflow and in the subnormals
//
// An op whose spec declares suites of its own (OwnTiers::suites,
// kernels/ops/elementwise_spec.h) gets those instead: tanh_bwd keeps the
// suites it had before ops were folders (suites/inputs/tanh_bwd_suites.h: its
// training suite and t*t ties among them), so its goldens did not change.
#ifndef ULPGATE_SUITES_ELEMENTWISE_SUITES_H_
#define ULPGATE_SUITES_ELEMENTWISE_SUITES_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "kernels/elementwise_ops.h"
#include "oracles/format.h"
#include "suites/inputs/inputs.h"

namespace ulpgate {

const std::vector<SuiteInfo>& ElementwiseSuites(const ElementwiseOpInfo& op);

// Inputs 0 .. n-1 of a suite, values of `format`. Throws InputError for an
// unknown suite, naming the op's suites.
InputSet GenerateElementwiseSuite(const ElementwiseOpInfo& op, const FloatFormat& format,
                                  std::string_view suite, uint64_t seed, size_t n);

// The size of the fixed head of the adversarial suite.
size_t ElementwiseAdversarialCatalogueSize(const ElementwiseOpInfo& op, const FloatFormat& format);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_ELEMENTWISE_SUITES_H_
