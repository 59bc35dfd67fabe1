// A staged op's factor (ElementwiseOracle::ExactFactor, or its double-word
// estimate FastFactor) in the columns the vectorized tier reads
// (sweep_tier.h, SweepFactorColumns): the sweep's tables over the second
// operand's values, and per input of a tile where every input has its own
// second operand (the sweep over x, the engine's vectorized tier).
#ifndef ULPGATE_SUITES_SWEEP_FACTOR_COLUMNS_H_
#define ULPGATE_SUITES_SWEEP_FACTOR_COLUMNS_H_

#include <cstddef>
#include <cstdint>

#include "oracles/double_word.h"
#include "oracles/format.h"
#include "oracles/mpfr_number.h"
#include "suites/sweep/sweep_tier.h"

namespace ulpgate {

class ElementwiseOracle;

// |grad| below which a factor |f| < 2^log2_bound puts |grad f| / 2^qmin
// below 2^-1076, an error of grad f rounding to 0 in a double (the ULP of a
// value that rounds to 0 is the format's smallest, 2^qmin).
double TinyLimit(const FloatFormat& format, double log2_bound);

// Where a factor's columns go: a staged table's, or a tile's own.
struct FactorSlots {
  double *f0, *f1, *f2, *sign, *tiny_limit, *f_error, *path_error;
  uint64_t* kind;
};

// The exact factor's class and parts (sweep_tier.h's SweepFactorClass) into
// entry e.
void SetFactor(const MpfrNumber& f, bool products_exact, const FloatFormat& format,
               const FactorSlots& t, size_t e);

// An estimated factor as the tier reads it, into entry e: false where its
// class does not hold it (a finite factor outside [2^-600, 2^600]), for MPFR
// to compute.
bool SetEstimatedFactor(const FactorEstimate& f, const FloatFormat& format, const FactorSlots& t,
                        size_t e);

// One tile's factor columns, an entry per input.
// Zeroed when made: PerInputFactors reads f0 at entries the batch left (an
// earlier tile's value or 0, never indeterminate) so as not to branch per entry.
struct alignas(64) FactorColumnsBuffer {
  double f0[kSweepTile + kSweepVectorSlack]{}, f1[kSweepTile + kSweepVectorSlack]{},
      f2[kSweepTile + kSweepVectorSlack]{}, sign[kSweepTile + kSweepVectorSlack]{},
      tiny_limit[kSweepTile + kSweepVectorSlack]{}, f_error[kSweepTile + kSweepVectorSlack]{},
      path_error[kSweepTile + kSweepVectorSlack]{};
  // The estimate's term factor (FactorEstimate::term), NaN where it has none
  // or MPFR computed the factor.
  double term[kSweepTile + kSweepVectorSlack]{};
  uint64_t kind[kSweepTile + kSweepVectorSlack]{};
  uint8_t plain[kSweepTile + kSweepVectorSlack]{};  // the op's batch's (FactorEstimateColumns)
  FactorSlots Slots() { return {f0, f1, f2, sign, tiny_limit, f_error, path_error, kind}; }
  SweepFactorColumns Columns() const { return {f0, f1, f2, sign, tiny_limit, kind, f_error, path_error}; }
};

// The factors of inputs (grad[i], x[i]), i < n <= kSweepTile, of an op with
// a fast factor (ElementwiseOracle::HasFastFactor): its estimates, MPFR's
// factor where it has none (counted into *mpfr_factors, and marked 1 in
// from_mpfr[i] where that is given, 0 elsewhere). The entries past n are left
// as they are (the tier masks their lanes out).
SweepFactorColumns PerInputFactors(const ElementwiseOracle& oracle, const FloatFormat& format,
                                   const float* grad, const float* x, size_t n,
                                   FactorColumnsBuffer* buffer, uint64_t* mpfr_factors,
                                   uint8_t* from_mpfr = nullptr);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_SWEEP_FACTOR_COLUMNS_H_
