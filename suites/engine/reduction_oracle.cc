#include "suites/engine/reduction_oracle.h"

#include <algorithm>
#include <stdexcept>

namespace ulpgate {
namespace {

// value = a - b, exactly, for two binary32 numbers: the difference spans at
// most 2^129 down to 2^-149, which 300 bits hold.
MpfrNumber ExactDifference(float a, float b) {
  MpfrNumber r(300);
  if (mpfr_sub(r.get(), MpfrNumber(24, a).get(), MpfrNumber(24, b).get(), MPFR_RNDN) != 0) {
    throw InexactError("y - t rounded at 300 bits");
  }
  return r;
}

void AddExact(MpfrNumber& sum, mpfr_srcptr term) {
  if (mpfr_add(sum.get(), sum.get(), term, MPFR_RNDN) != 0) {
    throw InexactError("reduction oracle: a sum rounded at " +
                       std::to_string(sum.precision()) + " bits");
  }
}

// k * 2^-149: the underflow allowance of k rounded multiplications (see
// oracles/reduction_bound.h: each loses at most 2^-150, at most doubled later).
void SetUnderflow(MpfrNumber& u, uint64_t k) {
  mpfr_set_ui_2exp(u.get(), k, -149, MPFR_RNDN);  // exact: k < 2^64 in >= 64 bits
}

}  // namespace

ElementExact ReductionExact(ReductionOp op, const ElementTerms& terms) {
  const size_t n = terms.p.size();
  const mpfr_prec_t precision = ReductionExactPrecision(n + 1);
  ExactArith exact(precision);
  ElementExact result(precision);
  mpfr_set_zero(result.numerator.get(), +1);
  mpfr_set_zero(result.bound.abs_sum.get(), +1);
  mpfr_set_zero(result.bound.underflow.get(), +1);
  MpfrNumber term(precision);
  switch (op) {
    case ReductionOp::kLinearFwd:
    case ReductionOp::kLinearBwdInput:
    case ReductionOp::kLinearBwdWeight: {
      // x = sum_k p_k q_k (+ bias): every product is exact in 48 bits and the
      // sum in `precision` bits (ReductionExactPrecision); the zero we start
      // from is +0, so an exact sum of zero is +0.
      MpfrNumber p(24), q(24);
      for (size_t k = 0; k < n; ++k) {
        mpfr_set_flt(p.get(), terms.p[k], MPFR_RNDN);  // exact: 24 bits
        mpfr_set_flt(q.get(), terms.q[k], MPFR_RNDN);
        if (mpfr_mul(term.get(), p.get(), q.get(), MPFR_RNDN) != 0) {
          throw InexactError("product rounded");
        }
        AddExact(result.numerator, term.get());
        mpfr_abs(term.get(), term.get(), MPFR_RNDN);
        AddExact(result.bound.abs_sum, term.get());
      }
      // A dot product of length n meets n roundings in any order, fused or
      // not; linear_fwd's bias is one more term, and its addition one more
      // rounding.
      result.bound.roundings = n;
      if (terms.has_bias) {
        const MpfrNumber bias(24, terms.bias);
        AddExact(result.numerator, bias.get());
        mpfr_set_flt(term.get(), terms.bias, MPFR_RNDN);
        mpfr_abs(term.get(), term.get(), MPFR_RNDN);
        AddExact(result.bound.abs_sum, term.get());
        result.bound.roundings = n + 1;
      }
      SetUnderflow(result.bound.underflow, n);
      mpfr_set(result.bound.peak.get(), result.bound.abs_sum.get(), MPFR_RNDN);
      break;
    }
    case ReductionOp::kLinearBwdBias: {
      // A plain sum of n terms: n - 1 additions, none of which can underflow
      // inexactly (a sum of binary32 numbers that is subnormal is exact).
      for (size_t k = 0; k < n; ++k) {
        mpfr_set_flt(term.get(), terms.p[k], MPFR_RNDN);
        AddExact(result.numerator, term.get());
        mpfr_abs(term.get(), term.get(), MPFR_RNDN);
        AddExact(result.bound.abs_sum, term.get());
      }
      result.bound.roundings = n == 0 ? 0 : n - 1;
      mpfr_set(result.bound.peak.get(), result.bound.abs_sum.get(), MPFR_RNDN);
      break;
    }
    case ReductionOp::kMseFwd: {
      // x = S / N with S = sum_i (y_i - t_i)^2 exact. The terms are >= 0, so
      // A' = S. Roundings: the difference (twice, as it is squared), the n-term
      // sum, and at most two for the mean (RN(1/N), then the product): n + 4
      // covers every variant. Underflow: n squares and the final scaling.
      for (size_t k = 0; k < n; ++k) {
        const MpfrNumber d = ExactDifference(terms.p[k], terms.q[k]);
        if (mpfr_sqr(term.get(), d.get(), MPFR_RNDN) != 0) throw InexactError("square rounded");
        AddExact(result.numerator, term.get());
      }
      result.denominator = terms.count;
      mpfr_set(result.bound.abs_sum.get(), result.numerator.get(), MPFR_RNDN);
      result.bound.roundings = n + 4;
      SetUnderflow(result.bound.underflow, n + 1);
      mpfr_set(result.bound.peak.get(), result.numerator.get(), MPFR_RNDN);
      break;
    }
    case ReductionOp::kMseBwd: {
      // x = 2 (y - t) g / N. Roundings: RN(2/N), RN(y - t), two products: 4.
      // Underflow: RN(s d) may lose 2^-150, which the product with g scales by
      // at most |g| (1 + u) < 2 |g|; the last product may lose 2^-150 itself:
      // U = 2^-150 + |g| 2^-149 covers both.
      const MpfrNumber d = ExactDifference(terms.p[0], terms.q[0]);
      if (mpfr_mul(result.numerator.get(), d.get(), MpfrNumber(24, terms.grad_out).get(),
                   MPFR_RNDN) != 0) {
        throw InexactError("(y - t) * grad_out rounded");
      }
      mpfr_mul_2ui(result.numerator.get(), result.numerator.get(), 1, MPFR_RNDN);  // exact
      result.denominator = terms.count;
      mpfr_abs(result.bound.abs_sum.get(), result.numerator.get(), MPFR_RNDN);
      result.bound.roundings = 4;
      MpfrNumber g(24, terms.grad_out);
      mpfr_abs(g.get(), g.get(), MPFR_RNDN);
      mpfr_mul_2si(result.bound.underflow.get(), g.get(), -149, MPFR_RNDN);  // exact
      MpfrNumber half_subnormal(precision);
      mpfr_set_ui_2exp(half_subnormal.get(), 1, -150, MPFR_RNDN);
      AddExact(result.bound.underflow, half_subnormal.get());
      // Intermediates: |y - t|, |RN(2/N) (y - t)| <= 2 |y - t| (1 + u)^2, and
      // the result; 2|y - t| + |x N| bounds them all before the (1 + gamma) factor.
      mpfr_abs(result.bound.peak.get(), d.get(), MPFR_RNDN);
      mpfr_mul_2ui(result.bound.peak.get(), result.bound.peak.get(), 1, MPFR_RNDN);
      AddExact(result.bound.peak, result.bound.abs_sum.get());
      break;
    }
  }
  return result;
}

MpfrNumber ExactValue(const ElementExact& exact) {
  if (exact.denominator == 1) return exact.numerator;
  MpfrNumber value(exact.numerator.precision() + 64);
  mpfr_div_ui(value.get(), exact.numerator.get(), exact.denominator, MPFR_RNDN);
  return value;
}

float ReductionModelOutput(const ReductionOpInfo& op, const ReductionModel& model,
                           const ElementTerms& terms) {
  Binary32Arith a(model.fused);
  switch (op.op) {
    case ReductionOp::kLinearFwd: {
      const float dot = RunReductionSchedule<reduction_spec::ProductTerm>(model.schedule, a,
                                                                          model.lanes, terms);
      return reduction_spec::AddBias(a, dot, terms.bias);
    }
    case ReductionOp::kLinearBwdInput:
    case ReductionOp::kLinearBwdWeight:
      return RunReductionSchedule<reduction_spec::ProductTerm>(model.schedule, a, model.lanes,
                                                               terms);
    case ReductionOp::kLinearBwdBias:
      return RunReductionSchedule<reduction_spec::PlainTerm>(model.schedule, a, model.lanes,
                                                             terms);
    case ReductionOp::kMseFwd: {
      const float sum = RunReductionSchedule<reduction_spec::SquaredDifferenceTerm>(
          model.schedule, a, model.lanes, terms);
      const float count = static_cast<float>(terms.count);  // exact: N <= 2^24
      return model.scaling == MeanScaling::kReciprocal
                 ? reduction_spec::MeanByReciprocal(a, sum, count)
                 : reduction_spec::MeanByDivision(a, sum, count);
    }
    case ReductionOp::kMseBwd: {
      const float scale = reduction_spec::MseBwdScale(a, static_cast<float>(terms.count));
      return reduction_spec::MseBwdElement(a, terms.p[0], terms.q[0], scale, terms.grad_out);
    }
  }
  throw std::logic_error("ReductionModelOutput: unknown op");
}

}  // namespace ulpgate
