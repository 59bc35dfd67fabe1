// The ULP error of a computed value of any format against an exact real, exactly as
// docs/design.md "Numerics" defines it.
//
// ulp(x) = 2^(max(E, emin) - p + 1), E = floor(log2 |x|) capped at emax;
// ulp(0) is the smallest subnormal. e = |y - x| / ulp(x), with the special
// rules for infinities, NaN and signed zeros.
#ifndef ULPGATE_ORACLES_ULP_METRIC_H_
#define ULPGATE_ORACLES_ULP_METRIC_H_

#include <mpfr.h>

#include <cstdint>

#include "oracles/format.h"

namespace ulpgate {


// log2 of ulp(x) in the format. x must not be NaN or infinite.
long UlpExponent(mpfr_srcptr x, const FloatFormat& format = kBinary32);

// Why an output is a special mismatch: what the exact value x is (finite
// and within the format's range, finite beyond it, infinite, undefined)
// against what the output y is. Every special mismatch has exactly one.
enum class SpecialCause : uint8_t {
  kNone = 0,
  // x finite and RN(x) finite, y NaN or infinite. The output's operands are
  // finite wherever x is (an infinite or NaN operand makes every op's exact
  // value infinite or undefined here), so the NaN or infinity came from the
  // kernel's own sequence: an intermediate that overflowed to infinity (t*t
  // at |t| >= 2^64 in binary32), or underflowed to a zero that a division or
  // an infinity then turned into NaN or infinity.
  kIntermediateRange,
  kNanWhereFinite,        // x finite beyond the range (RN(x) infinite), y NaN
  kInfinityWhereFinite,   // x finite beyond the range, y the other infinity
  kFiniteWhereInfinite,   // x infinite, y finite
  kWrongInfinity,         // x infinite, y NaN or the other infinity
  kNumberWhereUndefined,  // x NaN (inf * 0, inf - inf), y not NaN
};
inline constexpr int kSpecialCauseCount = 6;  // causes after kNone
// "intermediate_overflow", "nan_where_finite", ...: the key reports write.
const char* SpecialCauseKey(SpecialCause cause);
// "intermediate overflow or underflow", "NaN where the exact value is finite", ...
const char* SpecialCauseText(SpecialCause cause);
// The cause at index i of kSpecialCauseCount (0: kIntermediateRange), and back.
inline SpecialCause SpecialCauseAt(int i) { return static_cast<SpecialCause>(i + 1); }
inline int SpecialCauseIndex(SpecialCause cause) { return static_cast<int>(cause) - 1; }
// The cause of a special mismatch of y against an exact value that is NaN
// (x_nan), infinite (x_inf), or finite, rounding to an infinity of the
// format (rounds_infinite) or not.
SpecialCause ClassifySpecialMismatch(bool x_nan, bool x_inf, bool rounds_infinite, double y);

struct UlpError {
  // |y - x| / ulp(x), rounded to double; 0 for correct specials, 0.5 for an
  // overflow to the infinity that x rounds to. Meaningless when special_mismatch.
  double ulp = 0;
  // Index into the histogram counts (see HistogramBound), decided by exact
  // comparison: 0 when e == 0, else the least i >= 1 with e <= bound i, or the
  // number of bounds when e is above the last one.
  int bin = 0;
  bool special_mismatch = false;   // NaN or infinity where x says otherwise
  SpecialCause special_cause = SpecialCause::kNone;  // set with special_mismatch
  bool signed_zero_mismatch = false;
  bool correctly_rounded = false;  // y == RN(x) bit for bit; a zero matches a zero
};

// Histogram bounds (docs/design.md "Numerics"): [0, 0.5, 1, 2, 4, ..., 2^(p)] for the format.
// counts[0] is e == 0, counts[i] is bounds[i-1] < e <= bounds[i], the last count
// e > the last bound. UlpError::bin is the index into counts.
int HistogramBoundCount(const FloatFormat& format = kBinary32);
double HistogramBound(int i);
// The bin of an error e > 0 read from its double: the least i >= 1 with
// e <= HistogramBound(i), or bound_count when e is above every bound. Rounding
// to double is monotone, so only an e whose double equals the bound found can
// be on the wrong side of it: the caller settles that one exactly.
int LeastBoundAtOrAbove(double e, int bound_count);

// The error of y against the exact value x. Bins are decided by exact
// comparison in MPFR, so an error a hair above a bound is never counted at it.
UlpError MeasureUlpError(mpfr_srcptr exact, float y, const FloatFormat& format = kBinary32);
// The same for a value of any format held in a double (bf16, f16, f64; a
// binary32 value as well): y must be a value of `format`.
UlpError MeasureUlpError(mpfr_srcptr exact, double y, const FloatFormat& format);

// The same error against an exact value given as numerator / denominator
// (denominator >= 1; the numerator any MPFR value, exact): for results such as
// the mean of an MSE loss, sum / N, which no finite binary number holds. Every
// decision (zero, binade, RN(x), bin) is made exactly, and `ulp` is |y - x| /
// ulp(x) correctly rounded to double, as in the dyadic case.
UlpError MeasureUlpErrorOfQuotient(mpfr_srcptr numerator, uint64_t denominator, float y,
                                   const FloatFormat& format = kBinary32);
UlpError MeasureUlpErrorOfQuotient(mpfr_srcptr numerator, uint64_t denominator, double y,
                                   const FloatFormat& format);

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_ULP_METRIC_H_
