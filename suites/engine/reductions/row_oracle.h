// The row reductions' exact values and first-order error bounds
// (docs/design.md "Row reductions: bounds"): RMSNorm and softmax, forward and
// backward, from MPFR.
//
// The parts that are ring expressions of the binary32 operands are exact
// (ExactArith at RowExactPrecision(n), which throws if anything rounded): the
// sums of squares and of products, RMSNorm's W = sum x^2 + n eps and its
// backward numerator g_i dy_i W - x_i sum_j g_j dy_j x_j, softmax's x - max,
// both backward passes' sums. Square roots, exp, log and the quotients are
// correctly rounded at kRowFunctionPrecision bits and never cancel (the
// cancelling differences are the exact ones above; log-softmax's log(sum) is
// log1p of the sum without the maximum's term), save log_softmax_bwd's
// dy_i - exp(y_i) sum_j dy_j, whose error is bounded absolutely. A value whose
// error interval holds a multiple of a quarter of its binary32 ulp (every
// rounding boundary and histogram bound of every format lies on that grid) is
// computed again at twice the precision, up to kRowMaxPrecision: so the
// rounding and histogram decisions are those of the real value. A value
// computed with no rounding at all is exact (sqrt of a square, exp(0)).
#ifndef ULPGATE_SUITES_ENGINE_REDUCTIONS_ROW_ORACLE_H_
#define ULPGATE_SUITES_ENGINE_REDUCTIONS_ROW_ORACLE_H_

#include <mpfr.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/reductions/row_ops.h"
#include "oracles/mpfr_number.h"
#include "oracles/reduction_bound.h"
#include "suites/engine/reductions/row_models.h"

namespace ulpgate {

inline constexpr mpfr_prec_t kRowFunctionPrecision = 320;
inline constexpr mpfr_prec_t kRowMaxPrecision = 5120;

// Bits that make the ring parts of every row op exact. RMSNorm's backward
// numerator is the widest: g dy W - x T with W = sum x^2 + n eps and T =
// sum g dy x; its terms lie below 2^(513 + log2 n) and are multiples of 2^-596
// (products of binary32 numbers: g dy of 2^-298, W of 2^-298, x of 2^-149, T
// of 2^-447), so 1110 + log2 n bits hold it; the margin is InexactError's to
// guard.
mpfr_prec_t RowExactPrecision(size_t n);

// Highway 1.0.3's Exp and Log as the bounds allow for them: relative error at
// most this many u = 2^-24. Measured (every 31st binary32 value, against the
// x87's expl and logl): Exp 1.44 u fused, 1.36 u unfused on [-87.3, 88.7]
// (normal results); Log 1.33 u fused, 1.37 u unfused on [1, 2^21] (softmax's
// sums). row_oracle_test holds a sample of every binary32 value to these
// against MPFR.
inline constexpr int kExpAllowance = 3;
inline constexpr int kLogAllowance = 3;

// One row's exact values and the variant-independent parts of their bounds.
struct RowExact {
  std::vector<MpfrNumber> values;  // the n outputs' real values
  // Per output: A (magnitudes the roundings scale), the relative-error weight
  // that is not a rounding count (softmax's argument errors, log-softmax's
  // sum error) as a multiple of u, the subnormal allowance, the peak.
  std::vector<MpfrNumber> magnitude, weight, subnormal, peak;
  // log-softmax's and softmax's D: sum_j e_j |d_j| / sum_j e_j, rounded up.
  double exp_argument_weight = 0;
};

// Throws std::invalid_argument for n = 0 or n > kMaxRowLength.
RowExact ExactRow(const RowOpInfo& op, const RowOperands& row, size_t n, float eps);

// m, the roundings of a variant's bound (docs/design.md "Row reductions:
// bounds").
uint64_t RowRoundings(const RowOpInfo& op, const RowVariant& variant, size_t n);

// The bound of output i for a variant: gamma_m A + U with U the subnormal
// allowance plus the weight's u (1 + gamma_m)^2.
ReductionBound RowBound(const RowOpInfo& op, const RowVariant& variant, const RowExact& exact,
                        size_t i, size_t n);

// One bound for every variant of the op: the largest m and the largest U of
// its variants' bounds (both only widen it), for a caller that measures
// outputs against the op rather than the variant.
ReductionBound RowBoundOfEveryVariant(const RowOpInfo& op, const RowExact& exact, size_t i,
                                      size_t n);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_ENGINE_REDUCTIONS_ROW_ORACLE_H_
