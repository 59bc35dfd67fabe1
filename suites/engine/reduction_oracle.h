// The reductions' oracle and models, for every registered reduction
// (kernels/reductions/registered_reductions.h): each op's templates
// instantiated over MPFR (its Exact: the exact value and the ingredients of
// its error bound) and over the binary32 emulation (its Model: a bit-exact
// model's output).
//
// The exact values are plain loops over MPFR numbers (ExactArith), not Eigen
// matrices over Boost.Multiprecision numbers: ExactArith's ternary check proves
// every step exact (Boost's mpfr_float hides the ternary), the same loop gives
// the sum of |terms| the error bound needs, and it runs without the temporaries
// an Eigen product over mpfr_float allocates per operation. A test
// (linear_oracle_test.cc) cross-checks it against such an Eigen product.
#ifndef ULPGATE_SUITES_REDUCTION_ORACLE_H_
#define ULPGATE_SUITES_REDUCTION_ORACLE_H_

#include <cstdint>

#include "kernels/reductions/reduction_spec.h"
#include "oracles/exact.h"
#include "oracles/ieee_emulation.h"
#include "oracles/reduction_bound.h"
#include "suites/inputs/reduction_problem.h"

namespace ulpgate {

// The exact value of one output, numerator / denominator, and its error
// bound: what the op's Exact gives (the linear ops: dyadic sums, denominator
// 1; mse_fwd: sum_i (y_i - t_i)^2 / N; mse_bwd: 2 (y - t) grad_out / N).
struct ElementExact {
  explicit ElementExact(mpfr_prec_t precision) : numerator(precision), bound(precision) {}
  MpfrNumber numerator;
  uint64_t denominator = 1;
  ReductionBound bound;
};

// At ReductionExactPrecision of the element's longest term sequence (plus
// one): every step checked exact, or rounded far below binary32 for an op
// whose spec says kExactRounds.
ElementExact ReductionExact(const ReductionOpInfo& op, const ElementTerms& terms);

// The exact value as one MPFR number: the numerator itself when the
// denominator is 1, else the quotient correctly rounded at the numerator's
// precision plus 64 bits (for text and for the models' comparison only; the
// metrics use the exact quotient).
MpfrNumber ExactValue(const ElementExact& exact);

// The bit-exact output of a model on one element.
float ReductionModelOutput(const ReductionOpInfo& op, const ReductionModel& model,
                           const ElementTerms& terms);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REDUCTION_ORACLE_H_
