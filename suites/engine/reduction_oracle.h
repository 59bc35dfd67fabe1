// The reductions' oracle and models: exact values and error bounds from MPFR,
// and the op sequences of kernels/reduction_spec.h instantiated with the
// binary32 emulation (models) or exact arithmetic (the variants' real values).
//
// The exact values are plain loops over mpfr_t (ExactArith), not Eigen
// matrices over Boost.Multiprecision numbers: ExactArith's ternary check proves
// every step exact (Boost's mpfr_float hides the ternary), the same loop gives
// the sum of |terms| the error bound needs, and it runs without the temporaries
// an Eigen product over mpfr_float allocates per operation. A test
// (linear_oracle_test.cc) cross-checks it against such an Eigen product.
#ifndef ULPGATE_SUITES_REDUCTION_ORACLE_H_
#define ULPGATE_SUITES_REDUCTION_ORACLE_H_

#include <cstdint>

#include "kernels/reduction_spec.h"
#include "oracles/exact.h"
#include "oracles/ieee_emulation.h"
#include "oracles/lane_array.h"
#include "oracles/reduction_bound.h"
#include "suites/inputs/reduction_problem.h"

namespace ulpgate {

// The exact value of one output, numerator / denominator, and its error bound.
//   linear ops and bias: dyadic sums (denominator 1);
//   mse_fwd: sum_i (y_i - t_i)^2 / N; mse_bwd: 2 (y - t) grad_out / N.
struct ElementExact {
  explicit ElementExact(mpfr_prec_t precision) : numerator(precision), bound(precision) {}
  MpfrNumber numerator;
  uint64_t denominator = 1;
  ReductionBound bound;
};

ElementExact ReductionExact(ReductionOp op, const ElementTerms& terms);

// The exact value as one MPFR number: the numerator itself when the
// denominator is 1, else the quotient correctly rounded at the numerator's
// precision plus 64 bits (for text and for the models' comparison only; the
// metrics use the exact quotient).
MpfrNumber ExactValue(const ElementExact& exact);

// The bit-exact output of a model on one element.
float ReductionModelOutput(const ReductionOpInfo& op, const ReductionModel& model,
                           const ElementTerms& terms);

// Operands as a spec's `terms` (reduction_spec-inl.h): one term per index for
// the sequential and pairwise schedules ...
struct ElementScalarTerms {
  const float* p;
  const float* q;
  template <class A>
  typename A::Value P(A& a, size_t k) const {
    return a.Const(p[k]);
  }
  template <class A>
  typename A::Value Q(A& a, size_t k) const {
    return a.Const(q[k]);
  }
};

// ... and lanes k .. k+L-1, +0 past n, for the lane-parallel schedule.
struct ElementChunkTerms {
  const float* p;
  const float* q;
  size_t n;
  template <class LA>
  typename LA::Value P(LA& la, size_t k) const {
    return la.FromFloats(p + k, n - k);
  }
  template <class LA>
  typename LA::Value Q(LA& la, size_t k) const {
    return la.FromFloats(q + k, n - k);
  }
};

// The reduction part of a schedule (before bias or mean) over any scalar
// arithmetic `a`; `lanes` is used by the lane-parallel schedule only.
template <class Term, class A>
typename A::Value RunReductionSchedule(ReductionSchedule schedule, A& a, size_t lanes,
                                       const ElementTerms& terms) {
  const size_t n = terms.p.size();
  const float* q = terms.q.empty() ? nullptr : terms.q.data();
  const ElementScalarTerms scalar_terms{terms.p.data(), q};
  switch (schedule) {
    case ReductionSchedule::kSequentialFused:
      return reduction_spec::SequentialFused<Term>(a, scalar_terms, n);
    case ReductionSchedule::kSequentialUnfused:
      return reduction_spec::SequentialUnfused<Term>(a, scalar_terms, n);
    case ReductionSchedule::kPairwise:
      return reduction_spec::Pairwise<Term>(a, scalar_terms, n);
    case ReductionSchedule::kLaneParallel: {
      LaneArrayArith<A> lane_arith(a, lanes);
      const ElementChunkTerms chunk_terms{terms.p.data(), q, n};
      return reduction_spec::LaneParallel<Term>(lane_arith, a, chunk_terms, n);
    }
    case ReductionSchedule::kElementwise:
      break;
  }
  throw std::invalid_argument("RunReductionSchedule: not a reduction schedule");
}

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REDUCTION_ORACLE_H_
