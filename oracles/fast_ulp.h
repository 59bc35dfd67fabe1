// A fast exact tier for tanh_bwd: the exact value grad * (1 - t^2) of binary32
// operands held as doubles, and an output's ULP error against it, equal bit
// for bit to MeasureUlpError(TanhBwdExact(grad, t), y, format) in every field,
// without MPFR wherever doubles prove every decision. Where they cannot (an
// exact value that is not the sum of two doubles, an exact zero, a value whose
// rounding might overflow, non-finite operands), it says so and the caller
// uses MPFR. A test holds the two tiers equal on every suite and format.
#ifndef ULPGATE_ORACLES_FAST_ULP_H_
#define ULPGATE_ORACLES_FAST_ULP_H_

#include <mpfr.h>

#include <cstddef>
#include <optional>

#include "oracles/format.h"
#include "oracles/reduction_bound.h"
#include "oracles/ulp_metric.h"

namespace ulpgate {

// An exact value x as hi + lo (hi = RN(x), lo = x - hi, both exact), with
// what every output's measurement shares: the ULP exponent of x in the format
// and x correctly rounded to the format.
struct TwoDoubleExact {
  double hi = 0, lo = 0;
  int ulp_exp = 0;
  double rounded = 0;
};

// x = grad * (1 - t^2); nullopt where doubles cannot hold x as hi + lo or
// settle its rounding.
std::optional<TwoDoubleExact> FastTanhBwdExactValue(float grad, float t, const FloatFormat& format);

// The same for the exact sum of terms[0 .. n) (doubles, each exact: the two
// halves of an exact product, say), whatever op it is the value of; reorders
// the terms. nullopt where doubles cannot hold the sum as hi + lo, it is an
// exact zero, a term is not finite or rounding might overflow.
std::optional<TwoDoubleExact> FastExactSum(double* terms, size_t n, const FloatFormat& format);

// The error of y (a value of the format) against x; nullopt where y - x is
// not the sum of two doubles.
std::optional<UlpError> FastUlpError(const TwoDoubleExact& x, double y, const FloatFormat& format);

// |grad| * (1 + t^2), tanh_bwd's term magnitude, exactly as two double-words
// (terms[0] + terms[1] = |grad|, terms[2] + terms[3] = |grad| t^2); false
// for operands that are not finite.
bool FastTanhBwdTermMagnitude(float grad, float t, double terms[4]);

// The bound fraction of y against x = hi + lo, bit for bit what
// MeasureBoundFraction gives for that exact value (denominator 1) and a bound
// of `roundings` roundings over the term magnitude A, the sum of n terms,
// each a double-word of a nonnegative quantity (terms[2k] + terms[2k + 1],
// the low word at most half an ulp of the high one; n <= 4), in binary32 or
// a narrower format.
// nullopt where doubles cannot decide: y not finite, a wider format, or the
// quotient too close to a rounding boundary or a histogram bound for the
// double-word arithmetic below to tell (its error is below 2^-96 relative).
std::optional<BoundFraction> FastBoundFraction(const TwoDoubleExact& x, double y,
                                               const double* terms, size_t n,
                                               uint64_t roundings, const FloatFormat& format);

// The MPFR fallback of the vectorized tier (suites/sweep/sweep_tier.h): the exact
// value of one input in MPFR, computed at the precision that input needs (no
// allocation after construction), then the errors of any number of outputs
// against it, each equal in every field to MeasureUlpError(TanhBwdExact(grad,
// t), y, format). Not thread-safe: one per thread.
class MpfrTanhBwdError {
 public:
  MpfrTanhBwdError();
  ~MpfrTanhBwdError();
  MpfrTanhBwdError(const MpfrTanhBwdError&) = delete;
  MpfrTanhBwdError& operator=(const MpfrTanhBwdError&) = delete;

  // x = grad * (1 - t^2) in extended reals (binary32 operands).
  void Set(float grad, float t);
  mpfr_srcptr value() const { return x_; }
  // y: a value of `format` (NaN and infinities included).
  UlpError Measure(double y, const FloatFormat& format) const;

 private:
  static constexpr int kTiers = 5;  // precisions 64, 128, 192, 256, 384
  mpfr_t u_, s_[kTiers], x_tier_[kTiers];
  mutable mpfr_t difference_;  // scratch of Measure
  mpfr_ptr x_ = nullptr;
};

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_FAST_ULP_H_
