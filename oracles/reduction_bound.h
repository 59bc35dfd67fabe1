// The classical error bound of a floating-point reduction, and the fraction of
// it a computed result used: the "bound fraction".
//
// Per-element ULP error misleads for reductions: a sum that cancels to nearly
// zero has a huge ULP error even when it is computed as well as binary32
// allows. The classical bound says how large the error of *any* evaluation
// order may be (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd
// ed., Lemma 3.1 and sections 3.1 and 4.2): with u = 2^-24 and
// gamma_m = m u / (1 - m u),
//
//     |y - x| <= gamma_m * A + U
//
// where A is the sum of the magnitudes of the terms (sum_k |p_k q_k| for a dot
// product), m the number of roundings a term can meet on its way to the result
// (n for a dot product of length n, fused or not, in any order; n - 1 for a
// plain sum; one more per rounded operation around the reduction), and U the
// allowance for underflow. Higham's bound assumes no underflow; in binary32 a
// rounded product (or FMA) whose result is subnormal has an absolute error of
// up to half the smallest subnormal, 2^-150, instead of a relative one
// (additions and subtractions whose result is subnormal are exact), and each
// such error is scaled by at most (1 + u)^m <= 2 on the way to the result
// (m u <= 1/2 is required). So U = (rounded multiplications) * 2^-149 for a
// dot product; the op's oracle states its own U. Without U, a dot product of
// subnormal products computed as well as binary32 allows would break the bound
// by factors up to 2^24.
//
// The bound also assumes no overflow. An intermediate can overflow only if
// (1 + gamma_m) * peak reaches the overflow threshold 2^128 - 2^103, where peak
// bounds the magnitudes of exact intermediates (A for a sum); then a non-finite
// result is allowed and counted as `overflow_exempt`, not measured. A
// non-finite result where no overflow was possible is a bug: fraction = inf.
//
// A correct kernel of any summation order has fraction <= 1 everywhere; a
// value above 1 is a bug and is reported as such.
#ifndef ULPGATE_ORACLES_REDUCTION_BOUND_H_
#define ULPGATE_ORACLES_REDUCTION_BOUND_H_

#include <mpfr.h>

#include <cstdint>

#include "oracles/format.h"
#include "oracles/mpfr_number.h"

namespace ulpgate {

// The ingredients of the bound of one output, all exact.
struct ReductionBound {
  explicit ReductionBound(mpfr_prec_t precision)
      : abs_sum(precision), underflow(precision), peak(precision) {}

  // A times the denominator of the exact value (see MeasureBoundFraction):
  // the magnitudes of the terms summed with no rounding.
  MpfrNumber abs_sum;
  // m, the roundings a term can meet; m * 2^-24 <= 1/2.
  uint64_t roundings = 0;
  // U, the underflow allowance, absolute (not scaled by the denominator).
  MpfrNumber underflow;
  // Bounds the magnitude of every exact intermediate of every variant.
  MpfrNumber peak;
};

struct BoundFraction {
  // |y - x| / (gamma_m A + U), correctly rounded to double; +inf when y is
  // not finite and no overflow was possible; 0 when overflow_exempt.
  double fraction = 0;
  // Index into the counts of the bound-fraction histogram: 0 when fraction ==
  // 0, i when bound i-1 < fraction <= bound i, BoundFractionBoundCount() when
  // above 1. Decided by exact comparison.
  int bin = 0;
  bool above_one = false;        // the result broke the bound: a bug
  bool overflow_exempt = false;  // non-finite where an intermediate could overflow
};

// Histogram bounds: 0, 2^-10, 2^-8, 2^-6, 2^-5, 2^-4, 2^-3, 2^-2, 2^-1, 1.
int BoundFractionBoundCount();
double BoundFractionBound(int i);

// The bound fraction of y against the exact value numerator / denominator
// (denominator >= 1, numerator finite). Throws InexactError if an internal
// operation that must be exact rounded.
//
// For an output in a narrower format (bf16, f16: binary32 accumulation, one
// rounding to the format at the end), the bound grows by that rounding:
// B (1 + u_p) + u_p |x| + U_p with u_p = 2^-p and U_p half the format's
// smallest subnormal, and overflow is judged against the format's range.
BoundFraction MeasureBoundFraction(mpfr_srcptr numerator, uint64_t denominator, float y,
                                   const ReductionBound& bound,
                                   const FloatFormat& format = kBinary32);

// gamma_m = m u / (1 - m u), u = 2^-24, rounded to double (for text).
double Gamma(uint64_t m);

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_REDUCTION_BOUND_H_
