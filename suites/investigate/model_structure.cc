#include "suites/investigate/model_structure.h"

#include <algorithm>
#include <cstdint>
#include <cctype>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "suites/engine/elementwise_oracle.h"

namespace ulpgate {

namespace {

using NodePtr = std::shared_ptr<const ModelNode>;
using Kind = ModelNode::Kind;

// How the operations of a text round: every + - * / and function call to
// `working`; a multiply-add's product exact when `fused`; a function's own
// multiply-adds fused when `fused_functions`.
struct Rounding {
  std::string working = "f32";
  bool fused = false;
  bool fused_functions = false;
};

// Whether every value of format `narrow` is one of `wide` (then rounding to
// `wide` after `narrow` changes nothing). A rounding name with a suffix
// ("bf16_rz") is its format's.
bool Contains(const std::string& wide, const std::string& narrow) {
  auto format_of = [](const std::string& r) {
    const size_t cut = r.find('_');
    return FindFormat(cut == std::string::npos ? r : r.substr(0, cut));
  };
  const FloatFormat* w = format_of(wide);
  const FloatFormat* n = format_of(narrow);
  if (w == nullptr || n == nullptr) return wide == narrow;
  return w->precision >= n->precision && w->emax >= n->emax && w->emin <= n->emin;
}

void AddRounding(std::vector<std::string>& chain, const std::string& r) {
  for (const std::string& earlier : chain) {
    if (earlier == r || Contains(r, earlier)) return;
  }
  chain.push_back(r);
}

NodePtr Make(Kind kind, std::vector<NodePtr> args, std::vector<std::string> rounding,
             std::string name = "", bool fused_inside = false) {
  auto n = std::make_shared<ModelNode>();
  n->kind = kind;
  n->args = std::move(args);
  n->rounding = std::move(rounding);
  n->name = std::move(name);
  n->fused_inside = fused_inside;
  return n;
}

std::string FormulaKey(const ModelNode& n);

std::string FullKey(const ModelNode& n) {
  std::string key = FormulaKey(n) + "[";
  for (const auto& r : n.rounding) key += r + ",";
  if (n.fused_inside) key += "fused-inside";
  key += "]{";
  for (const auto& a : n.args) key += FullKey(*a) + ";";
  return key + "}";
}

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kOperand: return "op";
    case Kind::kConst: return "c";
    case Kind::kAdd: return "add";
    case Kind::kMul: return "mul";
    case Kind::kDiv: return "div";
    case Kind::kNeg: return "neg";
    case Kind::kFunction: return "fn";
  }
  return "?";
}

std::string FormulaKey(const ModelNode& n) {
  std::string key = std::string(KindName(n.kind)) + ":" + n.name + "(";
  for (const auto& a : n.args) key += FormulaKey(*a) + ",";
  return key + ")";
}

// The model language's exact functions (a clamp, a sign, a branch, a scaling
// by a power of 2): no implementation of their own to set free, and no
// rounding but scalb's.
bool IsExactFunction(const std::string& name) { return ExactModelFunctionArity(name) > 0; }

// The canonical node: signs out of products and quotients, -(-x) = x, a
// negated constant folded, the operands of + and * ordered.
NodePtr Canonical(Kind kind, std::vector<NodePtr> args, std::vector<std::string> rounding,
                  std::string name = "", bool fused_inside = false) {
  if (kind == Kind::kNeg) {
    const NodePtr& x = args[0];
    if (x->kind == Kind::kNeg) return x->args[0];
    if (x->kind == Kind::kConst) {
      char* end = nullptr;
      const double v = std::strtod(x->name.c_str(), &end);
      if (end != x->name.c_str() && *end == '\0') return Make(Kind::kConst, {}, {}, fmt::format("{}", -v));
      return Make(Kind::kNeg, {x}, {});  // a named constant
    }
    return Make(Kind::kNeg, {x}, {});
  }
  if (kind == Kind::kMul || kind == Kind::kDiv) {
    bool negative = false;
    for (NodePtr& a : args) {
      if (a->kind == Kind::kNeg) {
        negative = !negative;
        a = a->args[0];
      }
    }
    if (kind == Kind::kMul) {
      std::sort(args.begin(), args.end(), [](const NodePtr& x, const NodePtr& y) {
        const std::string fx = FormulaKey(*x), fy = FormulaKey(*y);
        return fx != fy ? fx < fy : FullKey(*x) < FullKey(*y);
      });
    }
    NodePtr product = Make(kind, std::move(args), std::move(rounding));
    return negative ? Make(Kind::kNeg, {product}, {}) : product;
  }
  if (kind == Kind::kAdd) {
    std::sort(args.begin(), args.end(), [](const NodePtr& x, const NodePtr& y) {
      const std::string fx = FormulaKey(*x), fy = FormulaKey(*y);
      return fx != fy ? fx < fy : FullKey(*x) < FullKey(*y);
    });
  }
  return Make(kind, std::move(args), std::move(rounding), std::move(name), fused_inside);
}

// A node with one more rounding of its value (f32(x), the storage's).
NodePtr Rounded(const NodePtr& x, const std::string& r) {
  if (x->kind == Kind::kOperand || x->kind == Kind::kConst) return x;  // values of every format here
  if (x->kind == Kind::kNeg) return Make(Kind::kNeg, {Rounded(x->args[0], r)}, {});
  auto copy = std::make_shared<ModelNode>(*x);
  AddRounding(copy->rounding, r);
  return copy;
}

// A recursive-descent reader of both the model language and the specs'
// op_sequence texts (which add MulAdd, NegMulAdd, functions and named
// constants).
class Reader {
 public:
  Reader(std::string_view text, const std::vector<std::string>& operands, Rounding rounding)
      : text_(text), operands_(operands), rounding_(std::move(rounding)) {}

  NodePtr Read() {
    NodePtr out;
    while (true) {
      Skip();
      if (pos_ >= text_.size()) break;
      const std::string name = Identifier();
      if (name.empty()) Fail("expected a statement");
      Skip();
      if (name == "working" && pos_ < text_.size() && text_[pos_] != '=') {
        rounding_.working = Identifier();
        if (FindFormat(rounding_.working) == nullptr) Fail("unknown format " + rounding_.working);
      } else {
        Expect('=');
        const NodePtr value = Expression();
        names_[name] = value;
        if (name == "out") out = value;
      }
      Skip();
      if (pos_ < text_.size()) Expect(';');
    }
    if (out == nullptr) Fail("no out");
    return out;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw std::invalid_argument(fmt::format("column {}: {}", pos_ + 1, what));
  }
  void Skip() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  void Expect(char c) {
    Skip();
    if (pos_ >= text_.size() || text_[pos_] != c) Fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  bool Accept(char c) {
    Skip();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::string Identifier() {
    Skip();
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }
  std::vector<std::string> Working() const { return {rounding_.working}; }

  NodePtr Expression() {
    NodePtr left = Term();
    while (true) {
      if (Accept('+')) {
        left = Canonical(Kind::kAdd, {left, Term()}, Working());
      } else if (Accept('-')) {
        left = Canonical(Kind::kAdd, {left, Canonical(Kind::kNeg, {Term()}, {})}, Working());
      } else {
        return left;
      }
    }
  }
  NodePtr Term() {
    NodePtr left = Unary();
    while (true) {
      if (Accept('*')) {
        left = Canonical(Kind::kMul, {left, Unary()}, Working());
      } else if (Accept('/')) {
        left = Canonical(Kind::kDiv, {left, Unary()}, Working());
      } else {
        return left;
      }
    }
  }
  NodePtr Unary() {
    if (Accept('-')) return Canonical(Kind::kNeg, {Unary()}, {});
    if (Accept('+')) return Unary();
    return Primary();
  }
  NodePtr Primary() {
    Skip();
    if (Accept('(')) {
      NodePtr inner = Expression();
      Expect(')');
      return inner;
    }
    if (pos_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.')) {
      char* end = nullptr;
      const std::string rest(text_.substr(pos_));
      const double v = std::strtod(rest.c_str(), &end);
      pos_ += static_cast<size_t>(end - rest.c_str());
      return Make(Kind::kConst, {}, {}, fmt::format("{}", v));
    }
    const std::string name = Identifier();
    if (name.empty()) Fail("expected an operand");
    Skip();
    if (pos_ < text_.size() && text_[pos_] == '(') {
      ++pos_;
      std::vector<NodePtr> args;
      if (!Accept(')')) {
        do {
          args.push_back(Expression());
        } while (Accept(','));
        Expect(')');
      }
      NodePtr call = Call(name, std::move(args));
      // `f(a) as EXPRESSION`: the function's implementation written out.
      // The structure is the call's; the expression only gives its value.
      Skip();
      if (call->kind == Kind::kFunction && !IsExactFunction(name) && text_.substr(pos_, 2) == "as" &&
          (pos_ + 2 == text_.size() || !(std::isalnum(static_cast<unsigned char>(text_[pos_ + 2])) ||
                                         text_[pos_ + 2] == '_'))) {
        pos_ += 2;
        Expression();
      }
      return call;
    }
    if (const auto it = names_.find(name); it != names_.end()) return it->second;
    if (std::find(operands_.begin(), operands_.end(), name) != operands_.end()) {
      return Make(Kind::kOperand, {}, {}, name);
    }
    return Make(Kind::kConst, {}, {}, name);  // a named constant of the spec (kAlpha)
  }
  NodePtr Call(const std::string& name, std::vector<NodePtr> args) {
    auto arity = [&](size_t n) {
      if (args.size() != n) Fail(fmt::format("{} takes {} arguments", name, n));
    };
    // A multiply-add: the product exact inside one rounding, or rounded first.
    auto product = [&](const NodePtr& a, const NodePtr& b, bool fused) {
      return Canonical(Kind::kMul, {a, b}, fused ? std::vector<std::string>{} : Working());
    };
    if (name == "fma" || name == "MulAdd") {
      arity(3);
      return Canonical(Kind::kAdd, {product(args[0], args[1], name == "fma" || rounding_.fused), args[2]},
                       Working());
    }
    if (name == "NegMulAdd") {
      arity(3);
      return Canonical(Kind::kAdd,
                       {args[2], Canonical(Kind::kNeg, {product(args[0], args[1], rounding_.fused)}, {})},
                       Working());
    }
    if (name == "neg") {
      arity(1);
      return Canonical(Kind::kNeg, {args[0]}, {});
    }
    for (const char* format : {"f32", "bf16", "f16"}) {
      if (name == format || name == std::string(format) + "_rz") {
        arity(1);
        return Rounded(args[0], name);
      }
    }
    // scalb rounds once to the working format (where it overflows or lands
    // among the subnormals); the others are exact.
    if (IsExactFunction(name)) {
      return Make(Kind::kFunction, std::move(args), name == "scalb" ? Working() : std::vector<std::string>{}, name);
    }
    return Canonical(Kind::kFunction, std::move(args), Working(), name, rounding_.fused_functions);
  }

  std::string_view text_;
  const std::vector<std::string>& operands_;
  Rounding rounding_;
  size_t pos_ = 0;
  std::map<std::string, NodePtr> names_;
};

// The op_sequence text of sequence `name` (a variant's or a model sequence's).
std::string SequenceText(const ElementwiseOpInfo& op, std::string_view name) {
  for (const auto& v : op.variants) {
    if (v.name == name) return std::string(v.op_sequence);
  }
  for (const auto& s : op.model_sequences) {
    if (s.name == name) return std::string(s.op_sequence);
  }
  throw std::invalid_argument("no sequence " + std::string(name));
}

ModelStructure Build(const std::string& name, const std::string& text, const std::vector<std::string>& operands,
                     Rounding rounding, const std::vector<std::string>& final_roundings) {
  ModelStructure s;
  s.name = name;
  try {
    NodePtr out = Reader(text, operands, std::move(rounding)).Read();
    for (const std::string& r : final_roundings) out = Rounded(out, r);
    s.out = out;
  } catch (const std::exception& e) {
    s.error = fmt::format("model {} ({}): {}", name, text, e.what());
  }
  return s;
}

void PostOrder(const NodePtr& n, const ModelNode* parent, std::vector<std::pair<const ModelNode*, const ModelNode*>>& out) {
  for (const auto& a : n->args) PostOrder(a, n.get(), out);
  out.emplace_back(n.get(), parent);
}

std::string RoundingText(const std::vector<std::string>& r) {
  if (r.empty()) return "exact (not rounded)";
  std::string text = "rounded to " + r[0];
  for (size_t k = 1; k < r.size(); ++k) text += " then " + r[k];
  return text;
}

// Infix with the parentheses a reader needs; `inside`: the operand of a
// product or quotient, or the right operand of a sum.
std::string Infix(const ModelNode& n, bool inside) {
  switch (n.kind) {
    case Kind::kOperand:
    case Kind::kConst:
      return n.name;
    case Kind::kNeg:
      return "-" + Infix(*n.args[0], true);
    case Kind::kFunction: {
      std::string text = n.name + "(";
      for (size_t k = 0; k < n.args.size(); ++k) text += (k ? ", " : "") + Infix(*n.args[k], false);
      return text + ")";
    }
    case Kind::kMul:
    case Kind::kDiv:
      return Infix(*n.args[0], true) + (n.kind == Kind::kMul ? "*" : "/") + Infix(*n.args[1], true);
    case Kind::kAdd: {
      // A negated term reads as a subtraction, after the positive one.
      const ModelNode* first = n.args[0].get();
      const ModelNode* second = n.args[1].get();
      if (first->kind == Kind::kNeg && second->kind != Kind::kNeg) std::swap(first, second);
      const std::string text =
          second->kind == Kind::kNeg
              ? Infix(*first, false) + " - " + Infix(*second->args[0], true)
              : Infix(*first, false) + " + " + Infix(*second, true);
      return inside ? "(" + text + ")" : text;
    }
  }
  return "?";
}

bool Calls(const ModelNode& n) {
  if (n.kind == Kind::kFunction && !IsExactFunction(n.name)) return true;
  return std::any_of(n.args.begin(), n.args.end(), [](const NodePtr& a) { return Calls(*a); });
}

}  // namespace

std::string FormulaText(const ModelNode& node) { return Infix(node, false); }
bool CallsFunction(const ModelNode& node) { return Calls(node); }

ModelStructure StructureOf(const ElementwiseOpInfo& op, const FloatFormat& format,
                           const ModelProgram& program, int builtin) {
  const std::vector<std::string> operands = op.operand_names();
  const std::string storage = format.name;
  if (!program.text.empty() || builtin < 0) {
    // Its statements say it all; `working` among them.
    return Build(program.name, program.text, operands, Rounding{}, {storage});
  }
  if (IsBinary32(format)) {
    const ElementwiseModelInfo& m = op.models.at(static_cast<size_t>(builtin));
    return Build(std::string(m.name), SequenceText(op, m.sequence_of), operands,
                 Rounding{"f32", m.fused, m.fused}, {storage});
  }
  const NarrowModelInfo& m = NarrowModelInfos(op, format).at(static_cast<size_t>(builtin));
  switch (m.kind) {
    case NarrowModelInfo::kPerOp: {
      // Every operation, a multiply-add's two included, rounded to the format.
      const auto& v = op.variants.at(m.sequence);
      return Build(m.name, std::string(v.op_sequence), operands,
                   Rounding{storage, false, m.fused_functions}, {storage});
    }
    case NarrowModelInfo::kOpmath:
    case NarrowModelInfo::kTruncating:
    case NarrowModelInfo::kHighwaySoft: {
      const ElementwiseModelInfo& f32 = op.models.at(m.f32_model);
      const std::string last = m.kind == NarrowModelInfo::kOpmath       ? storage
                               : m.kind == NarrowModelInfo::kTruncating ? storage + "_rz"
                                                                        : storage + "_hwy_soft";
      return Build(m.name, SequenceText(op, f32.sequence_of), operands,
                   Rounding{"f32", f32.fused, f32.fused}, {"f32", last, storage});
    }
  }
  ModelStructure none;
  none.name = m.name;
  none.error = "unknown rounding kind";
  return none;
}

ModelParting FirstParting(const ModelStructure& a, const ModelStructure& b) {
  ModelParting p;
  if (a.out == nullptr || b.out == nullptr) {
    p.cause = "unknown";
    p.nodes_apart = SIZE_MAX;
    p.detail = a.out == nullptr ? a.error : b.error;
    return p;
  }
  if (FormulaKey(*a.out) != FormulaKey(*b.out)) {
    p.cause = "formula";
    p.nodes_apart = SIZE_MAX;
    p.detail = fmt::format("{} computes {}, {} computes {}", a.name, FormulaText(*a.out), b.name,
                           FormulaText(*b.out));
    return p;
  }
  // The same formula, so the same tree: the first node (innermost first)
  // whose roundings differ.
  std::vector<std::pair<const ModelNode*, const ModelNode*>> na, nb;
  PostOrder(a.out, nullptr, na);
  PostOrder(b.out, nullptr, nb);
  for (size_t k = 0; k < na.size() && k < nb.size(); ++k) {
    const ModelNode& x = *na[k].first;
    const ModelNode& y = *nb[k].first;
    if (x.rounding != y.rounding || x.fused_inside != y.fused_inside) ++p.nodes_apart;
  }
  for (size_t k = 0; k < na.size() && k < nb.size(); ++k) {
    const ModelNode& x = *na[k].first;
    const ModelNode& y = *nb[k].first;
    if (x.kind == Kind::kFunction && x.fused_inside != y.fused_inside && x.rounding == y.rounding) {
      p.cause = "fusion";
      p.detail = fmt::format("the multiply-adds inside {}() are fused in {}, two roundings in {}", x.name,
                             x.fused_inside ? a.name : b.name, x.fused_inside ? b.name : a.name);
      return p;
    }
    if (x.rounding == y.rounding) continue;
    // The sum a product feeds (through a sign: NegMulAdd's product).
    auto sum_of = [](const std::vector<std::pair<const ModelNode*, const ModelNode*>>& nodes, size_t at) {
      const ModelNode* parent = nodes[at].second;
      if (parent != nullptr && parent->kind == Kind::kNeg) {
        for (const auto& [node, up] : nodes) {
          if (node == parent) {
            parent = up;
            break;
          }
        }
      }
      return parent != nullptr && parent->kind == Kind::kAdd ? parent : nullptr;
    };
    const ModelNode* sum_a = sum_of(na, k);
    const ModelNode* sum_b = sum_of(nb, k);
    // Fusion: the product exact on one side, rounded on the other, into a
    // sum that rounds alike on both (else the formats differ too, and the
    // sum's rounding is where they part first in kind).
    if (x.kind == Kind::kMul && sum_a != nullptr && sum_b != nullptr && sum_a->rounding == sum_b->rounding &&
        (x.rounding.empty() || y.rounding.empty())) {
      const std::string& fused = x.rounding.empty() ? a.name : b.name;
      const std::string& twice = x.rounding.empty() ? b.name : a.name;
      p.cause = "fusion";
      p.detail = fmt::format("in {}, the product {} is exact inside one fused multiply-add in {}, "
                             "rounded before the sum in {}",
                             FormulaText(*sum_a), FormulaText(x), fused, twice);
      return p;
    }
    p.cause = "rounding format";
    p.detail = fmt::format("{} is {} in {}, {} in {}", FormulaText(x), RoundingText(x.rounding), a.name,
                           RoundingText(y.rounding), b.name);
    return p;
  }
  return p;  // the same structure
}

}  // namespace ulpgate
