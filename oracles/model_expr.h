// Rounding models written as data: a small language for op sequences, parsed
// at run time into a program that evaluates the model bit for bit.
//
//   mac_left: p = grad*t; out = fma(-p, t, grad)
//   mulsub_bf16_steps: r = bf16(t*t); s = bf16(1 - r); out = bf16(grad*s)
//   working bf16; r = t*t; s = 1 - r; out = grad*s
//
// A model is statements separated by ';': `working FMT` (first, at most once;
// default f32) or `name = expr`. Expressions: + - * (each rounded once to the
// working format, to nearest even), fma(a, b, c) (a*b + c rounded once),
// neg(a) and unary minus (exact), explicit roundings f32(x), bf16(x), f16(x)
// (to nearest even) and f32_rz(x), bf16_rz(x), f16_rz(x) (toward zero, as a
// demotion that drops low bits), parentheses, numbers (decimal or C99 hex; the
// value must be one of the working format), the op's operands (grad, t) and
// names assigned before. The model's result is `out`, rounded once more to
// the storage format (the identity when it is already one of its values).
// a / b and sqrt(a) round once, as + - * do. abs(a), copysign(a, b), min(a, b),
// max(a, b) and if_less(a, b, c, d) (c where a < b, else d) are exact: what
// a kernel's clamps, sign handling and branches do without rounding.
// scalb(a, n) is IEEE 754's scaleB, a*2^n for n an integer value (NaN where
// n is not one), rounded once to the working format: exact but where it
// overflows or lands among the subnormals, what an ldexp or scalef does. exp,
// erf, tanh and log are the
// model's free functions: no implementation of them is the model's, so a
// call stands for any binary32 value within kModelFunctionUlps of the
// function's value at its argument, rounded to the working format; a kernel
// follows such a model where some choice of those values gives its output
// (EvaluateToward), and Evaluate takes the binary32 nearest the function.
// `NAME = f(ARG) as EXPRESSION` (a statement of its own) writes out a
// kernel's implementation of f: the value is the expression's, the model's
// structure (what `compare` parts on) the call's, and no value is searched.
//
// Evaluation is exact, without MPFR: operands are values of at most 24
// significant bits, so products are exact in a double, sums and fused sums
// are a double plus its error (TwoSum), and the rounding of such a pair is
// decided from the pair (model_expr.cc says why that is exact).
#ifndef ULPGATE_ORACLES_MODEL_EXPR_H_
#define ULPGATE_ORACLES_MODEL_EXPR_H_

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "oracles/format.h"

namespace ulpgate {

// The deepest nesting of parentheses, calls and unary minus a model may
// have: the parser recurses once per level, and a model of thousands of
// levels (a machine-written one) must be an error, not a stack overflow.
inline constexpr int kMaxModelNesting = 200;

// How far (binary32 ULPs) a free function's value may lie from the
// function's: glibc's, SLEEF's u10, Highway's and PyTorch's vectorized exp,
// erf and tanh are within 1 to 2 ULPs; XLA's within 4.
inline constexpr int kModelFunctionUlps = 4;
// The most function calls a model may make: each multiplies the values a
// kernel's output is searched over by 2 kModelFunctionUlps + 1.
inline constexpr int kMaxModelFunctionCalls = 3;

// The free functions of the model language.
enum class ModelFunction { kExp, kErf, kTanh, kLog };
const char* ModelFunctionName(ModelFunction f);

// The arity of an exact function of the model language (abs 1; copysign, min,
// max, scalb 2; if_less 4), 0 for another name.
int ExactModelFunctionArity(std::string_view name);

// A malformed model: the message names the model and the column (1-based)
// of the error in the text the user gave: "model 'm', column 12: expected ')'".
class ModelSyntaxError : public std::invalid_argument {
 public:
  ModelSyntaxError(const std::string& message, size_t column)
      : std::invalid_argument(message), column_(column) {}
  size_t column() const { return column_; }

 private:
  size_t column_;
};

// A parsed model: straight-line code over registers, register i holding
// instruction i's result.
struct ModelProgram {
  enum class Op { kOperand, kConst, kAdd, kSub, kMul, kFma, kNeg, kRound, kRoundTowardZero, kDiv, kSqrt,
                  kFunction, kAbs, kCopysign, kMin, kMax, kIfLess, kScalb, kImplemented };
  struct Instr {
    Op op;
    int a = -1, b = -1, c = -1, d = -1;   // the registers read
    double value = 0;                     // kConst: the constant
    int operand = -1;                     // kOperand: its index
    const FloatFormat* format = nullptr;  // the format an operation rounds to
    ModelFunction function = ModelFunction::kExp;  // kFunction
    int call = -1;  // kFunction: its place among the calls; kImplemented: among those
                    // (a: the argument's register, b: the implementation's)
  };
  // One free function's value where a model was evaluated.
  struct FunctionValue {
    ModelFunction function;
    double argument = 0;
    double binary32 = 0;  // the binary32 value chosen
    double value = 0;     // it rounded to the working format
    int ulps = 0;         // binary32 ULPs from the binary32 nearest the function's value
  };

  std::string name;
  std::string text;  // as given, without "name:"
  const FloatFormat* working = &kBinary32;
  const FloatFormat* storage = &kBinary32;
  std::vector<Instr> code;
  int out = -1;  // the register of `out`, before the rounding to storage

  int function_calls = 0;     // kFunction instructions
  int implemented_calls = 0;  // kImplemented ones: `f(ARG) as EXPRESSION`

  // The model's output for one tuple of operands (values of the storage
  // format, in the order of the operand names it was parsed with); each free
  // function the binary32 nearest its value.
  double Evaluate(const double* operands) const;
  // `target` where some values of the free functions (each within
  // kModelFunctionUlps) give it, else Evaluate's: a model without functions
  // is Evaluate. The same value: NaN for NaN, the sign of a zero kept.
  double EvaluateToward(const double* operands, double target) const;
  // Every choice of the free functions' values that gives `target` (at most
  // `limit`), in call order, each followed by the implemented calls' values
  // (fixed by their expressions; `ulps` from the binary32 nearest the
  // function); empty where none does.
  std::vector<std::vector<FunctionValue>> FunctionValuesToward(const double* operands, double target,
                                                               size_t limit) const;

 private:
  // With call k's value `offsets[k]` binary32 ULPs from the nearest; the
  // calls' values into `values` when it is not null.
  double EvaluateWith(const double* operands, const int* offsets, FunctionValue* values) const;
};


// Parses `text` (statements, no name) as model `name` over `operands` for
// outputs stored in `storage`. Throws ModelSyntaxError; columns count from
// `column_offset` + 1 (the position of `text` in what the user wrote).
ModelProgram ParseModel(std::string_view name, std::string_view text,
                        const std::vector<std::string>& operands, const FloatFormat& storage,
                        size_t column_offset = 0);

// "NAME: statements" or "NAME=statements" (the CLI's --model; a models
// file's lines). Columns count in `spec`.
ModelProgram ParseModelSpec(std::string_view spec, const std::vector<std::string>& operands,
                            const FloatFormat& storage);

// One rounding of the exact value s + err, where s = RN53(s + err) (the pair
// TwoSum gives): exact even where rounding s alone would round twice.
double RoundPair(const FloatFormat& format, double s, double err, bool toward_zero = false);

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_MODEL_EXPR_H_
