#include "suites/engine/reduction_oracle.h"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "kernels/reductions/registered_reductions.h"

namespace ulpgate {
namespace {

template <class Spec, class Templates>
ElementExact ExactOf(const ElementTerms& terms) {
  size_t n = 0;
  for (const std::vector<float>& v : terms.vectors) n = std::max(n, v.size());
  const mpfr_prec_t precision = ReductionExactPrecision(n + 1);
  ExactArith e = ExactRoundsOf<Spec>::kValue ? ExactArith::Rounding(precision)
                                             : ExactArith(precision);
  ReductionExactParts<MpfrNumber> parts = Templates::Exact(e, terms);
  ElementExact result(precision);
  result.numerator = std::move(parts.numerator);
  result.denominator = parts.denominator;
  result.bound.abs_sum = std::move(parts.abs_sum);
  result.bound.roundings = parts.roundings;
  result.bound.underflow = std::move(parts.underflow);
  result.bound.peak = std::move(parts.peak);
  return result;
}

template <class Templates>
float ModelOf(const ReductionModel& model, const ElementTerms& terms) {
  Binary32Arith a(model.fused);
  return Templates::Model(a, model, terms);
}

struct ReductionOracle {
  ElementExact (*exact)(const ElementTerms&);
  float (*model)(const ReductionModel&, const ElementTerms&);
};

// Per op of ULPGATE_REDUCTION_OPS, in ReductionOps()' order.
constexpr std::array<ReductionOracle, kReductionOpCount> kOracles = {{
#define ULPGATE_REDUCTION_ORACLE(Spec, templates, kernels) \
  {&ExactOf<Spec, templates>, &ModelOf<templates>},
    ULPGATE_REDUCTION_OPS(ULPGATE_REDUCTION_ORACLE)
#undef ULPGATE_REDUCTION_ORACLE
}};

}  // namespace

ElementExact ReductionExact(const ReductionOpInfo& op, const ElementTerms& terms) {
  return kOracles.at(op.index).exact(terms);
}

MpfrNumber ExactValue(const ElementExact& exact) {
  if (exact.denominator == 1) return exact.numerator;
  MpfrNumber value(exact.numerator.precision() + 64);
  mpfr_div_ui(value.get(), exact.numerator.get(), exact.denominator, MPFR_RNDN);
  return value;
}

float ReductionModelOutput(const ReductionOpInfo& op, const ReductionModel& model,
                           const ElementTerms& terms) {
  return kOracles.at(op.index).model(model, terms);
}

}  // namespace ulpgate
