// Exact arithmetic for the op sequences of kernels/*_spec.h.
//
// Every ring operation (+, -, *, fused multiply-add) on finite binary32 inputs
// has a finite binary result, so with enough bits MPFR computes it with no
// rounding at all. ExactArith checks that it did: each operation's ternary
// value must be 0, or it throws InexactError. A sequence that needs more bits
// than the arithmetic has therefore fails loudly instead of being quietly
// rounded. Division and square root are not exact in general; they are
// correctly rounded at the arithmetic's precision and counted in
// rounded_operations().
//
// Infinities and NaN follow MPFR's (IEEE-like) rules, so the extended-real
// value of a formula is what it computes: inf * 0 and inf - inf are NaN.
#ifndef ULPGATE_ORACLES_EXACT_H_
#define ULPGATE_ORACLES_EXACT_H_

#include <cstddef>
#include <stdexcept>
#include <string>

#include "oracles/mpfr_number.h"

namespace ulpgate {

class InexactError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Precision that makes every sequence of an op with an exact definition (a
// ring expression of its binary32 operands: a spec's kExactDefinition) exact.
// Each such spec says why its products and differences fit (a product of three
// binary32 values has at most 72 significant bits, a difference spans the
// binades between its terms); InexactError guards the claim.
inline constexpr mpfr_prec_t kExactDefinitionPrecision = 512;

// Precision that makes every sum of n products of binary32 numbers exact (the
// linear layer, the MSE loss). A product of two binary32 numbers has at most
// 48 significant bits and lies in [2^-298, 2^256); a difference y - t lies in
// [2^-149, 2^129) and its square in [2^-298, 2^258). A sum of n such terms has
// bits from 2^-298 up to below 2^(258 + log2 n + 1): fewer than 557 + log2 n
// bits. 640 + ceil(log2(n + 2)) leaves a margin; InexactError guards it.
inline mpfr_prec_t ReductionExactPrecision(size_t n) {
  mpfr_prec_t bits = 640;
  for (size_t m = n + 2; m > 1; m = (m + 1) / 2) ++bits;
  return bits;
}

class ExactArith {
 public:
  using Value = MpfrNumber;

  explicit ExactArith(mpfr_prec_t precision) : precision_(precision) {}
  // The same operations rounded to nearest at `precision` instead of checked
  // exact, for definitions that call transcendental functions (no finite
  // precision holds exp(x) exactly): each result is within 2^-precision
  // relative of the real one, and rounded_operations() counts the roundings.
  static ExactArith Rounding(mpfr_prec_t precision) {
    ExactArith arith(precision);
    arith.rounding_ = true;
    return arith;
  }

  mpfr_prec_t precision() const { return precision_; }
  long rounded_operations() const { return rounded_operations_; }

  Value Const(float c) const { return Value(precision_, c); }
  Value Zero() const { return Value(precision_, 0.0f); }
  Value FromFloat(float x) const { return Value(precision_, x); }

  Value Add(const Value& a, const Value& b) const {
    Value r(precision_);
    Check(mpfr_add(r.get(), a.get(), b.get(), MPFR_RNDN), r, "a + b");
    return r;
  }
  Value Sub(const Value& a, const Value& b) const {
    Value r(precision_);
    Check(mpfr_sub(r.get(), a.get(), b.get(), MPFR_RNDN), r, "a - b");
    return r;
  }
  Value Mul(const Value& a, const Value& b) const {
    Value r(precision_);
    Check(mpfr_mul(r.get(), a.get(), b.get(), MPFR_RNDN), r, "a * b");
    return r;
  }
  Value MulAdd(const Value& a, const Value& b, const Value& c) const {
    Value r(precision_);
    Check(mpfr_fma(r.get(), a.get(), b.get(), c.get(), MPFR_RNDN), r, "a*b + c");
    return r;
  }
  // c - a*b, as fma(-a, b, c) so that signed zeros follow IEEE 754's fma.
  Value NegMulAdd(const Value& a, const Value& b, const Value& c) const {
    Value neg_a(a);
    mpfr_neg(neg_a.get(), neg_a.get(), MPFR_RNDN);
    Value r(precision_);
    Check(mpfr_fma(r.get(), neg_a.get(), b.get(), c.get(), MPFR_RNDN), r, "c - a*b");
    return r;
  }
  // Correctly rounded at precision(), not exact.
  Value Div(const Value& a, const Value& b) {
    Value r(precision_);
    const int ternary = mpfr_div(r.get(), a.get(), b.get(), MPFR_RNDN);
    if (ternary != 0) ++rounded_operations_;
    KeepInRange(r, ternary);
    return r;
  }
  Value Sqrt(const Value& a) {
    Value r(precision_);
    if (mpfr_sqrt(r.get(), a.get(), MPFR_RNDN) != 0) ++rounded_operations_;
    return r;
  }
  Value Neg(const Value& a) const {
    Value r(a);
    mpfr_neg(r.get(), r.get(), MPFR_RNDN);
    return r;
  }
  Value Abs(const Value& a) const {
    Value r(a);
    mpfr_abs(r.get(), r.get(), MPFR_RNDN);
    return r;
  }
  // The functions and constants: correctly rounded at precision(), not exact.
  Value Exp(const Value& a) { return Function(mpfr_exp, a); }
  Value Tanh(const Value& a) { return Function(mpfr_tanh, a); }
  Value Erf(const Value& a) { return Function(mpfr_erf, a); }
  Value Erfc(const Value& a) { return Function(mpfr_erfc, a); }
  Value Pi() {
    Value r(precision_);
    mpfr_const_pi(r.get(), MPFR_RNDN);
    ++rounded_operations_;
    return r;
  }
  // A decimal constant such as "0.044715".
  Value Decimal(const char* text) {
    Value r(precision_);
    if (mpfr_set_str(r.get(), text, 10, MPFR_RNDN) != 0) ++rounded_operations_;
    return r;
  }

 private:
  Value Function(int (*f)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t), const Value& a) {
    Value r(precision_);
    const int ternary = f(r.get(), a.get(), MPFR_RNDN);
    if (ternary != 0) ++rounded_operations_;
    KeepInRange(r, ternary);
    return r;
  }
  // A rounded result that left MPFR's exponent range (exp(-x^2/2) of a
  // binary32 x near -2^121 is about 2^-2^241) stands for a nonzero finite
  // value: zero would lose its sign in the sums that follow (erfc(-x) +
  // x exp(-x^2) as 0 + -0 is +0, the wrong sign of gelu's tail) and infinity
  // would turn 1/(1 + exp(-x)) into an exact zero. The nearest nonzero
  // finite number of the same sign keeps every sign and every comparison
  // with a binary format's values right; its distance from the real value is
  // below 2^(MPFR's emin), far below any format's least subnormal.
  static void KeepInRange(Value& r, int ternary) {
    if (ternary == 0) return;
    if (mpfr_zero_p(r.get())) {
      if (mpfr_signbit(r.get())) {
        mpfr_nextbelow(r.get());
      } else {
        mpfr_nextabove(r.get());
      }
    } else if (mpfr_inf_p(r.get())) {
      if (mpfr_signbit(r.get())) {
        mpfr_nextabove(r.get());
      } else {
        mpfr_nextbelow(r.get());
      }
    }
  }
  void Check(int ternary, Value& r, const char* what) const {
    if (ternary != 0 && rounding_) {
      ++rounded_operations_;
      KeepInRange(r, ternary);
    } else if (ternary != 0) {
      throw InexactError(std::string("exact arithmetic rounded ") + what + " at " +
                         std::to_string(precision_) + " bits");
    }
  }

  mpfr_prec_t precision_;
  bool rounding_ = false;
  mutable long rounded_operations_ = 0;
};

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_EXACT_H_
