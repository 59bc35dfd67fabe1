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
#include <vector>

#include "oracles/format.h"

namespace ulpgate {

// The deepest nesting of parentheses, calls and unary minus a model may
// have: the parser recurses once per level, and a model of thousands of
// levels (a machine-written one) must be an error, not a stack overflow.
inline constexpr int kMaxModelNesting = 200;

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
  enum class Op { kOperand, kConst, kAdd, kSub, kMul, kFma, kNeg, kRound, kRoundTowardZero };
  struct Instr {
    Op op;
    int a = -1, b = -1, c = -1;           // the registers read
    double value = 0;                     // kConst: the constant
    int operand = -1;                     // kOperand: its index
    const FloatFormat* format = nullptr;  // the format an operation rounds to
  };

  std::string name;
  std::string text;  // as given, without "name:"
  const FloatFormat* working = &kBinary32;
  const FloatFormat* storage = &kBinary32;
  std::vector<Instr> code;
  int out = -1;  // the register of `out`, before the rounding to storage

  // The model's output for one tuple of operands (values of the storage
  // format, in the order of the operand names it was parsed with).
  double Evaluate(const double* operands) const;
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
