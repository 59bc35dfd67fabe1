// An arithmetic for the op sequences of kernels/*_spec.h that records what every
// rounding did: the engine of `ulpgate explain` (suites/investigate/explain.h).
//
// Each operation is first evaluated exactly, in MPFR with a precision sized to
// the operands so that the result needs no rounding (the sizing is checked:
// a nonzero ternary value throws InexactError). Then, as the run's rounding
// plan says, the result is rounded once to binary32 or kept exact:
//   - every step rounded: the run is the variant's bit-exact model. It rounds
//     exactly where Binary32Arith rounds (each Add/Sub/Mul is one step; a
//     fused NegMulAdd is one step; an unfused one is two, the product and
//     then the difference), and each rounding of an exact value is the one
//     correctly rounded binary32 result, so its outputs are Binary32Arith's;
//   - no step rounded: the run is the sequence's exact real value (ExactArith's);
//   - the first k steps rounded, the rest exact: what the contribution of each
//     step to the final error is measured with (see suites/investigate/explain.h).
// Every step is recorded with a readable expression of what it computes
// ("t*t", "1 - t*t", "grad - grad*(t*t)"), built from the operands' expressions,
// so the trace reads in the op's own terms without a per-op table of names.
//
// The ring operations (Add, Sub, Mul, MulAdd, NegMulAdd) have exact results,
// finite binary numbers. Div and the functions (Exp, Tanh, Erf) do not: their
// "exact" value is kept to kTracingFunctionBits (320) bits, far below what a
// binary32 rounding or a ULP measure can see, and their rounded value is what
// the models compute: the correctly rounded quotient, and for a function the
// model's implementation of it (Highway 1.0.3's Exp and Tanh ported operation
// by operation, their multiply-adds fused as the run's are, and the
// sequences' erf, oracles/erf_polynomial.h, likewise), so a function step may be off by more than half
// an ULP of its own, and the trace shows by how much.
#ifndef ULPGATE_ORACLES_TRACING_ARITH_H_
#define ULPGATE_ORACLES_TRACING_ARITH_H_

#include <string>
#include <vector>

#include <mpfr.h>

#include "oracles/mpfr_number.h"

namespace ulpgate {

inline constexpr mpfr_prec_t kTracingFunctionBits = 320;

class TracingArith {
 public:
  // How an expression binds, to parenthesize it only where needed.
  enum class Form { kAtom, kProduct, kSum };

  struct Value {
    MpfrNumber number{24};    // this run's value: binary32 if rounded, else exact
    std::string expression;   // "grad*(1 - t*t)"
    Form form = Form::kAtom;
    int step = -1;            // the step that made it; -1 for an input or constant
    std::vector<int> depends_on;  // every step this value depends on, ascending
  };

  struct Step {
    std::string operation;   // "mul", "add", "sub", "fma" (one rounding of c - a*b or a*b + c)
    std::string expression;  // of the result, in terms of the op's inputs
    std::vector<std::string> operands;        // the operands' expressions
    std::vector<int> operand_steps;           // step of each operand, -1 for inputs/constants
    std::vector<MpfrNumber> operand_values;   // as this run had them
    std::vector<int> depends_on;              // earlier steps feeding this one, ascending
    MpfrNumber exact{24};  // the operation on operand_values, before any rounding
    MpfrNumber value{24};  // what the run carried on: RN32(exact) if rounded, else exact
    bool rounded = false;
    // How much the operation magnifies relative errors already in its operands:
    // (|a| + |b|) / |a +- b| for a sum or difference, (|c| + |a*b|) / |c -+ a*b|
    // for a fused one, 1 for a product; +inf for a cancellation to exactly 0.
    // The factor behind "amplified by the cancellation in 1 - t*t".
    double cancellation = 1;
  };

  // fused_negmuladd: whether NegMulAdd/MulAdd are one rounding (an FMA) or two.
  // rounded_steps: steps 0 .. rounded_steps-1 are rounded to binary32, later
  // ones kept exact; negative rounds every step (the model).
  TracingArith(bool fused_negmuladd, int rounded_steps = -1);

  bool fused() const { return fused_; }
  const std::vector<Step>& steps() const { return steps_; }

  // An operand of the op, named as the op names it ("grad", "t").
  Value Input(const std::string& name, float x) const;

  // The interface kernels/*_spec.h calls.
  Value Const(float c) const;
  Value Add(const Value& a, const Value& b);
  Value Sub(const Value& a, const Value& b);
  Value Mul(const Value& a, const Value& b);
  Value MulAdd(const Value& a, const Value& b, const Value& c);
  // c - a*b.
  Value NegMulAdd(const Value& a, const Value& b, const Value& c);
  Value Div(const Value& a, const Value& b);
  Value Exp(const Value& a);
  Value Tanh(const Value& a);
  Value Erf(const Value& a);

 private:
  // `model`: the rounded value where it is not the correct rounding of
  // `exact` (a function's implementation); called only when rounding.
  Value Record(std::string operation, std::string expression, Form form,
               std::vector<const Value*> operands, MpfrNumber exact, double cancellation,
               float (*model)(float, bool) = nullptr);

  bool fused_;
  int rounded_steps_;
  std::vector<Step> steps_;
};

// (approx - exact) / ulp(exact) in binary32 ULPs (docs/design.md "Numerics"), signed,
// computed exactly and rounded once to double. NaN when either is not finite.
double SignedUlpError(const MpfrNumber& exact, const MpfrNumber& approx);

// (to - from) / ulp(unit_of), the same way: a change measured in ULPs of
// another value (a step's contribution in ULPs of the op's exact value).
double SignedUlpDifference(const MpfrNumber& from, const MpfrNumber& to,
                           const MpfrNumber& unit_of);

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_TRACING_ARITH_H_
