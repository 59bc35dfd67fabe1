// The structure of a rounding model: its formula as an expression tree and,
// at every node, the roundings its value goes through. Built from what
// defines the model (a program's statements in the model language,
// oracles/model_expr.h; or, for a built-in model the language cannot write,
// its sequence's op_sequence text, the spec's fused flag and the 16-bit
// model's rounding kind), never from its name, so that `compare` names the
// first place where two models part for any model, a new one included.
//
// Canonical form: a - b is a + (-b); fma(a, b, c), MulAdd and NegMulAdd are
// a sum whose product is exact (fused) or rounded (not); signs move out of
// products (rounding to nearest and toward zero are odd functions); the
// operands of + and * are ordered (both are commutative in floating point
// too); a rounding of a value that is already in a format at least as wide,
// and a repeated one, is dropped (neither changes a value). Association is
// kept: (a*b)*c and a*(b*c) round differently, so they are different
// formulas.
#ifndef ULPGATE_SUITES_INVESTIGATE_MODEL_STRUCTURE_H_
#define ULPGATE_SUITES_INVESTIGATE_MODEL_STRUCTURE_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/elementwise_ops.h"
#include "oracles/format.h"
#include "oracles/model_expr.h"

namespace ulpgate {

struct ModelNode {
  enum class Kind { kOperand, kConst, kAdd, kMul, kDiv, kNeg, kFunction };
  Kind kind = Kind::kConst;
  std::string name;  // operand, constant (as %a or its symbol), function
  std::vector<std::shared_ptr<const ModelNode>> args;
  // The roundings the node's exact result goes through, in order ("f32",
  // "bf16", "bf16_rz", ...); empty: exact (a product inside a fused sum).
  std::vector<std::string> rounding;
  // kFunction: the multiply-adds inside the function's implementation are
  // fused (Highway's Exp and the sequences' erf on an FMA target).
  bool fused_inside = false;
};

struct ModelStructure {
  std::string name;
  std::shared_ptr<const ModelNode> out;  // null when it could not be built
  std::string error;                     // why not
};

// The structure of a model the check compares with: `program` when it has
// statements, else the op's built-in model `builtin` (its index in
// ModelNames(op, format)).
ModelStructure StructureOf(const ElementwiseOpInfo& op, const FloatFormat& format,
                           const ModelProgram& program, int builtin);

// The first place two models part, in evaluation order (innermost first).
struct ModelParting {
  // "formula" (different algebraic forms), "fusion" (a product rounded on
  // one side, exact inside a fused multiply-add on the other, or a
  // function's multiply-adds fused on one side only), "rounding format" (a
  // step rounds to different formats or modes), or "" (the same structure).
  std::string cause;
  std::string detail;  // where, in words and formulas
  // How many nodes differ in their roundings (same formula only): of several
  // models a side follows, the pair nearest in structure names the cause.
  size_t nodes_apart = 0;
};
ModelParting FirstParting(const ModelStructure& a, const ModelStructure& b);

// The formula in infix, roundings left out ("grad*(1 - t*t)").
std::string FormulaText(const ModelNode& node);
// Whether the formula calls a function (exp, erf, tanh).
bool CallsFunction(const ModelNode& node);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_INVESTIGATE_MODEL_STRUCTURE_H_
