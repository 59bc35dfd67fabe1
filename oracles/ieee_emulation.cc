#include "oracles/ieee_emulation.h"

#include "oracles/mpfr_number.h"

namespace ulpgate {
namespace {

// binary32 in MPFR's exponent convention (x = 0.1b... x 2^e), from its
// descriptor: the largest finite value is 0.11...1b x 2^128, the smallest
// subnormal 2^-149 = 0.1b x 2^-148, which is the emin mpfr_subnormalize needs.
constexpr mpfr_exp_t kBinary32Emin = kBinary32.mpfr_emin();
constexpr mpfr_exp_t kBinary32Emax = kBinary32.mpfr_emax();
constexpr mpfr_prec_t kBinary32Precision = kBinary32.precision;
static_assert(kBinary32Emin == -148 && kBinary32Emax == 128 && kBinary32Precision == 24);

// Per-thread scratch: MPFR's exponent range is thread-local too, so the
// emulation is safe to call from several threads.
struct Scratch {
  mpfr_t a, b, c, r;
  Scratch() {
    mpfr_inits2(kBinary32Precision, a, b, c, r, static_cast<mpfr_ptr>(nullptr));
  }
  ~Scratch() { mpfr_clears(a, b, c, r, static_cast<mpfr_ptr>(nullptr)); }
};

Scratch& GetScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// r holds the 24-bit rounding of some real value in MPFR's wide exponent range,
// `ternary` its direction. Narrowing the range and letting MPFR re-round with
// the ternary value gives the binary32 result with a single rounding
// (mpfr_check_range for overflow, mpfr_subnormalize for gradual underflow).
float Finish(mpfr_ptr r, int ternary) {
  const mpfr_exp_t old_emin = mpfr_get_emin();
  const mpfr_exp_t old_emax = mpfr_get_emax();
  mpfr_set_emin(kBinary32Emin);
  mpfr_set_emax(kBinary32Emax);
  ternary = mpfr_check_range(r, ternary, MPFR_RNDN);
  mpfr_subnormalize(r, ternary, MPFR_RNDN);
  const float result = mpfr_get_flt(r, MPFR_RNDN);  // exact: r is binary32
  mpfr_set_emin(old_emin);
  mpfr_set_emax(old_emax);
  return result;
}

}  // namespace

float RoundToBinary32(mpfr_srcptr x) {
  Scratch& s = GetScratch();
  return Finish(s.r, mpfr_set(s.r, x, MPFR_RNDN));
}

// One binary32 operation a op b, rounded once.
template <class MpfrOp>
float RoundedBinary(MpfrOp op, float a, float b) {
  Scratch& s = GetScratch();
  mpfr_set_flt(s.a, a, MPFR_RNDN);
  mpfr_set_flt(s.b, b, MPFR_RNDN);
  return Finish(s.r, op(s.r, s.a, s.b, MPFR_RNDN));
}

float Binary32Arith::Add(float a, float b) const { return RoundedBinary(mpfr_add, a, b); }
float Binary32Arith::Sub(float a, float b) const { return RoundedBinary(mpfr_sub, a, b); }
float Binary32Arith::Mul(float a, float b) const { return RoundedBinary(mpfr_mul, a, b); }
float Binary32Arith::Div(float a, float b) const { return RoundedBinary(mpfr_div, a, b); }

float Binary32Arith::Sqrt(float a) const {
  Scratch& s = GetScratch();
  mpfr_set_flt(s.a, a, MPFR_RNDN);
  return Finish(s.r, mpfr_sqrt(s.r, s.a, MPFR_RNDN));
}

float Binary32Arith::MulAdd(float a, float b, float c) const {
  if (!fused_) return Add(Mul(a, b), c);
  Scratch& s = GetScratch();
  mpfr_set_flt(s.a, a, MPFR_RNDN);
  mpfr_set_flt(s.b, b, MPFR_RNDN);
  mpfr_set_flt(s.c, c, MPFR_RNDN);
  return Finish(s.r, mpfr_fma(s.r, s.a, s.b, s.c, MPFR_RNDN));
}

float Binary32Arith::NegMulAdd(float a, float b, float c) const {
  if (!fused_) return Sub(c, Mul(a, b));
  Scratch& s = GetScratch();
  // fma(-a, b, c): negation is exact, and the zero signs are IEEE fma's.
  mpfr_set_flt(s.a, -a, MPFR_RNDN);
  mpfr_set_flt(s.b, b, MPFR_RNDN);
  mpfr_set_flt(s.c, c, MPFR_RNDN);
  return Finish(s.r, mpfr_fma(s.r, s.a, s.b, s.c, MPFR_RNDN));
}

namespace {

struct FormatScratch {
  mpfr_t a, b, c;
  FormatScratch() { mpfr_inits2(53, a, b, c, static_cast<mpfr_ptr>(nullptr)); }
  ~FormatScratch() { mpfr_clears(a, b, c, static_cast<mpfr_ptr>(nullptr)); }
};

FormatScratch& GetFormatScratch() {
  thread_local FormatScratch scratch;
  return scratch;
}

// MPFR rounds an operation correctly at the destination's precision p, in its
// wide exponent range; narrowing the range to the format's and re-rounding
// with that rounding's ternary value (mpfr_check_range for overflow,
// mpfr_subnormalize for gradual underflow) is one IEEE rounding to the format
// (MPFR manual, "Exponent Related Functions"). The operation must not run in
// the narrow range itself: there MPFR's own underflow rounds a value just
// below half the smallest subnormal, which rounds at precision p to that
// midpoint, away from zero (f16: -0x1.ffe4c4p-26 - 0x1.47114ep-51 gave
// -2^-24 instead of -0).
template <class Compute>
double RoundedOnce(const FloatFormat& format, Compute compute) {
  MpfrNumber r(format.precision);
  int ternary = compute(r.get());
  const mpfr_exp_t old_emin = mpfr_get_emin();
  const mpfr_exp_t old_emax = mpfr_get_emax();
  mpfr_set_emin(format.mpfr_emin());
  mpfr_set_emax(format.mpfr_emax());
  ternary = mpfr_check_range(r.get(), ternary, MPFR_RNDN);
  mpfr_subnormalize(r.get(), ternary, MPFR_RNDN);
  mpfr_set_emin(old_emin);
  mpfr_set_emax(old_emax);
  return mpfr_get_d(r.get(), MPFR_RNDN);
}

template <class MpfrOp>
double Rounded2(const FloatFormat& format, MpfrOp op, double a, double b) {
  FormatScratch& s = GetFormatScratch();
  mpfr_set_d(s.a, a, MPFR_RNDN);  // exact: doubles
  mpfr_set_d(s.b, b, MPFR_RNDN);
  return RoundedOnce(format, [&](mpfr_ptr r) { return op(r, s.a, s.b, MPFR_RNDN); });
}

}  // namespace

double FormatArith::Add(double a, double b) const { return Rounded2(*format_, mpfr_add, a, b); }
double FormatArith::Sub(double a, double b) const { return Rounded2(*format_, mpfr_sub, a, b); }
double FormatArith::Mul(double a, double b) const { return Rounded2(*format_, mpfr_mul, a, b); }

double FormatArith::Div(double a, double b) const { return Rounded2(*format_, mpfr_div, a, b); }

double FormatArith::Sqrt(double a) const {
  FormatScratch& s = GetFormatScratch();
  mpfr_set_d(s.a, a, MPFR_RNDN);
  return RoundedOnce(*format_, [&](mpfr_ptr r) { return mpfr_sqrt(r, s.a, MPFR_RNDN); });
}

double FormatArith::MulAdd(double a, double b, double c) const {
  if (!fused_) return Add(Mul(a, b), c);
  FormatScratch& s = GetFormatScratch();
  mpfr_set_d(s.a, a, MPFR_RNDN);
  mpfr_set_d(s.b, b, MPFR_RNDN);
  mpfr_set_d(s.c, c, MPFR_RNDN);
  return RoundedOnce(*format_,
                     [&](mpfr_ptr r) { return mpfr_fma(r, s.a, s.b, s.c, MPFR_RNDN); });
}

double FormatArith::NegMulAdd(double a, double b, double c) const {
  if (!fused_) return Sub(c, Mul(a, b));
  // fma(-a, b, c): negation is exact, and the zero signs are IEEE fma's.
  return MulAdd(-a, b, c);
}

}  // namespace ulpgate
