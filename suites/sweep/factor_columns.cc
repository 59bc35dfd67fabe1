#include "suites/sweep/factor_columns.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include <mpfr.h>

#include "suites/engine/elementwise_oracle.h"

namespace ulpgate {
namespace {

// The relative distance of the MPFR path's grad * f from the exact product
// where its precision rounds that product (oracles/exact.h).
constexpr double kRoundedProductError = 0x1p-315;

}  // namespace

double TinyLimit(const FloatFormat& format, double log2_bound) {
  const double qmin = format.emin - format.precision + 1;
  const double exponent = -1076 + qmin - log2_bound;
  return exponent > 1023 ? HUGE_VAL : exponent < -1074 ? 0.0 : std::ldexp(1.0, static_cast<int>(exponent));
}

void SetFactor(const MpfrNumber& f, bool products_exact, const FloatFormat& format,
               const FactorSlots& t, size_t e) {
  mpfr_srcptr x = f.get();
  t.sign[e] = mpfr_signbit(x) ? -1.0 : 1.0;
  t.f0[e] = t.f1[e] = t.f2[e] = t.tiny_limit[e] = t.f_error[e] = 0;
  t.path_error[e] = products_exact ? 0.0 : kRoundedProductError;
  if (mpfr_nan_p(x)) {
    t.kind[e] = kSweepFactorNaN;
  } else if (mpfr_inf_p(x)) {
    t.kind[e] = kSweepFactorInfinite;
  } else if (mpfr_zero_p(x)) {
    t.kind[e] = kSweepFactorZero;
  } else if (mpfr_get_exp(x) - 1 < -600) {
    // |f| < 2^E: |grad| < 2^(-1076 + qmin - E) puts |x| / 2^qmin below
    // 2^-1076, an error of |x| rounding to 0 in a double (the ULP of a value
    // that rounds to 0 is the format's smallest, 2^qmin).
    t.kind[e] = kSweepFactorTiny;
    t.tiny_limit[e] = TinyLimit(format, static_cast<double>(mpfr_get_exp(x)));
  } else if (mpfr_get_exp(x) > 600) {
    t.kind[e] = kSweepFactorHuge;
  } else {
    t.kind[e] = kSweepFactorNormal;
    MpfrNumber r(mpfr_get_prec(x));
    mpfr_set(r.get(), x, MPFR_RNDN);
    double* parts[3] = {&t.f0[e], &t.f1[e], &t.f2[e]};
    for (double* part : parts) {
      *part = mpfr_get_d(r.get(), MPFR_RNDN);
      mpfr_sub_d(r.get(), r.get(), *part, MPFR_RNDN);  // exact: fewer bits than r had
    }
    mpfr_abs(r.get(), r.get(), MPFR_RNDN);
    t.f_error[e] = mpfr_get_d(r.get(), MPFR_RNDU);  // rounded up: a bound
  }
}

bool SetEstimatedFactor(const FactorEstimate& f, const FloatFormat& format, const FactorSlots& t,
                        size_t e) {
  t.f0[e] = t.f1[e] = t.f2[e] = t.tiny_limit[e] = t.f_error[e] = t.path_error[e] = 0;
  t.sign[e] = f.sign < 0 ? -1.0 : 1.0;
  switch (f.kind) {
    case FactorEstimate::kNaN:
      t.kind[e] = kSweepFactorNaN;
      return true;
    case FactorEstimate::kZero:
      t.kind[e] = kSweepFactorZero;
      return true;
    case FactorEstimate::kTiny:
      t.kind[e] = kSweepFactorTiny;
      t.tiny_limit[e] = TinyLimit(format, f.log2_bound);
      return true;
    case FactorEstimate::kFinite: {
      const double magnitude = std::fabs(f.f0);
      if (!(magnitude >= 0x1p-600 && magnitude <= 0x1p600)) return false;
      t.kind[e] = kSweepFactorNormal;
      t.sign[e] = f.f0 < 0 ? -1.0 : 1.0;
      t.f0[e] = f.f0;
      t.f1[e] = f.f1;
      t.f2[e] = f.f2;
      t.f_error[e] = f.error;
      // The oracle's product with grad rounds at its precision unless the
      // factor is short enough (oracles/exact.h; SetFactor's products_exact).
      t.path_error[e] = f.exact ? 0.0 : kRoundedProductError;
      return true;
    }
  }
  return false;
}

SweepFactorColumns PerInputFactors(const ElementwiseOracle& oracle, const FloatFormat& format,
                                   const float* grad, const float* x, size_t n,
                                   FactorColumnsBuffer* buffer, uint64_t* mpfr_factors,
                                   uint8_t* from_mpfr) {
  const FactorSlots slots = buffer->Slots();
  // The op's batch writes its plain estimates straight into the columns;
  // what it leaves (or every entry, for an op without one) goes one by one.
  const FactorEstimateColumns batch{buffer->f0,    buffer->f1,   buffer->f2,
                                    buffer->f_error, buffer->term, buffer->plain};
  const bool batched = oracle.FastFactors(x, n, batch);
  if (from_mpfr != nullptr) std::fill(from_mpfr, from_mpfr + n, uint8_t{0});
  // The plain entries in one pass (SetEstimatedFactor's kFinite case for an
  // estimate that is not exact), the rest marked for the pass after it.
  uint8_t* rest = buffer->plain;  // reused: 1 where the entry is still to do
  if (!batched) std::fill(rest, rest + n, uint8_t{1});
  // Without a branch per entry: the signs of F are as random as the inputs'.
  // Where plain[i] is 0, f0[i] is whatever the buffer held (never
  // indeterminate: it is zeroed when made), and the pass after this one
  // writes every column of that entry.
  for (size_t i = 0; i < n && batched; ++i) {
    const double f0 = buffer->f0[i];
    const double magnitude = std::fabs(f0);
    const bool done = (buffer->plain[i] != 0) & (magnitude >= 0x1p-600) & (magnitude <= 0x1p600);
    buffer->kind[i] = kSweepFactorNormal;
    buffer->sign[i] = std::copysign(1.0, f0);  // f0 != 0 where done
    buffer->tiny_limit[i] = 0;
    buffer->path_error[i] = kRoundedProductError;
    rest[i] = done ? 0 : 1;
  }
  for (size_t i = 0; i < n; ++i) {
    if (rest[i] == 0) continue;
    const float operands[2] = {grad[i], x[i]};
    buffer->term[i] = std::nan("");
    const std::optional<FactorEstimate> estimate = oracle.FastFactor(operands);
    if (estimate && SetEstimatedFactor(*estimate, format, slots, i)) {
      buffer->term[i] = estimate->term;
      continue;
    }
    ++*mpfr_factors;
    if (from_mpfr != nullptr) from_mpfr[i] = 1;
    bool products_exact = false;
    const std::optional<MpfrNumber> f = oracle.ExactFactor(operands, &products_exact);
    if (!f) throw std::logic_error("an op with a fast factor whose exact value does not stage");
    SetFactor(*f, products_exact, format, slots, i);
  }
  return buffer->Columns();
}

}  // namespace ulpgate
