#include "oracles/model_expr.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "oracles/double_word.h"
#include "oracles/mpfr_number.h"

namespace ulpgate {

namespace {

// Whether every x strictly between s and its neighbour rounds like s: false
// when s is a rounding breakpoint (a midpoint of the format, or one of its
// values when rounding toward zero).
bool IsBreakpoint(const FloatFormat& f, double s, bool toward_zero) {
  if (s == 0 || !std::isfinite(s)) return toward_zero;
  const double scaled = std::ldexp(s, -QuantumExponent(f, s));  // exact
  const double frac = std::fabs(scaled - std::trunc(scaled));
  return toward_zero ? frac == 0 : frac == 0.5;
}

}  // namespace

double RoundPair(const FloatFormat& f, double s, double err, bool toward_zero) {
  // The exact value x = s + err lies strictly between s and s's neighbour
  // toward err. Every breakpoint of the rounding (a midpoint, or a value of
  // the format toward zero) is a double, so none lies strictly between two
  // neighbouring doubles and x rounds like every point of that open
  // interval. Of s and the neighbour at most one is a breakpoint (a format of
  // at most 52 bits has no two breakpoints one double apart): round the one
  // that is not.
  if (err == 0 || !std::isfinite(s)) return RoundDouble(f, s, toward_zero);
  if (!IsBreakpoint(f, s, toward_zero)) return RoundDouble(f, s, toward_zero);
  const double next = std::nextafter(s, err > 0 ? std::numeric_limits<double>::infinity()
                                                : -std::numeric_limits<double>::infinity());
  return RoundDouble(f, next, toward_zero);
}

namespace {

// Whether the number `text` (what strtod read) is exactly v. strtod rounds:
// 1.00000000000000000001 would be 1, 1e-400 and 0x1p-2000 zero, values of
// every format that the text does not write. 53 bits suffice: a value of
// the working format has at most 24, so a text that writes one converts
// exactly.
bool Writes(const std::string& text, double v) {
  MpfrNumber exact(53);
  char* end = nullptr;
  const int inexact = mpfr_strtofr(exact.get(), text.c_str(), &end, 0, MPFR_RNDN);
  return inexact == 0 && *end == '\0' && mpfr_cmp_d(exact.get(), v) == 0;
}

// Recursive descent over the grammar in model_expr.h, emitting code as it
// goes.
class Parser {
 public:
  using Op = ModelProgram::Op;
  using Instr = ModelProgram::Instr;

  Parser(ModelProgram& program, std::string_view text, const std::vector<std::string>& operands,
         size_t column_offset)
      : p_(program), text_(text), operands_(operands), offset_(column_offset) {}

  void Program() {
    SkipSpace();
    if (pos_ == text_.size()) Fail(pos_, "empty model: expected statements such as 'out = grad*t'");
    bool first = true;
    while (true) {
      SkipSpace();
      if (pos_ == text_.size()) break;
      Statement(first);
      first = false;
      SkipSpace();
      if (pos_ == text_.size()) break;
      Expect(';');
    }
    const auto out = names_.find("out");
    if (out == names_.end()) Fail(text_.size(), "no 'out = ...': the model's result is out");
    p_.out = out->second;
  }

 private:
  [[noreturn]] void Fail(size_t pos, const std::string& what) const {
    throw ModelSyntaxError(
        fmt::format("model '{}', column {}: {}", p_.name, offset_ + pos + 1, what), offset_ + pos + 1);
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Accept(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::string Found() {
    SkipSpace();
    if (pos_ >= text_.size()) return "the end";
    return fmt::format("'{}'", text_[pos_]);
  }
  void Expect(char c) {
    if (!Accept(c)) Fail(pos_, fmt::format("expected '{}', found {}", c, Found()));
  }
  bool AtIdentifier() {
    SkipSpace();
    return pos_ < text_.size() &&
           (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_');
  }
  std::string Identifier() {
    SkipSpace();
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }
  int Emit(Instr instr) {
    p_.code.push_back(instr);
    return static_cast<int>(p_.code.size()) - 1;
  }
  int Arith(Op op, int a, int b, int c = -1) {
    Instr i{op};
    i.a = a;
    i.b = b;
    i.c = c;
    i.format = p_.working;
    return Emit(i);
  }

  void Statement(bool first) {
    const size_t start = (SkipSpace(), pos_);
    if (!AtIdentifier()) Fail(pos_, "expected a statement ('name = expression'), found " + Found());
    const std::string name = Identifier();
    if (name == "working" && !Accept('=')) {
      if (!first) Fail(start, "'working FORMAT' must be the first statement");
      const size_t at = (SkipSpace(), pos_);
      const std::string format = Identifier();
      const FloatFormat* f = FindFormat(format);
      if (f == nullptr || f->bits > 32) {
        Fail(at, "unknown working format '" + format + "' (" + RoundingFormatNames() + ")");
      }
      p_.working = f;
      return;
    }
    if (name != "working") Expect('=');
    for (const std::string& operand : operands_) {
      if (name == operand) Fail(start, "'" + name + "' is an operand: it cannot be assigned");
    }
    if (FindFormat(name) != nullptr || IsFunction(name)) {
      Fail(start, "'" + name + "' is a function: it cannot be assigned");
    }
    rhs_start_ = (SkipSpace(), pos_);
    names_[name] = Expression();
  }
  // The keyword `word` (not the start of a longer name), consumed.
  bool AcceptWord(std::string_view word) {
    SkipSpace();
    if (text_.substr(pos_, word.size()) != word) return false;
    const size_t end = pos_ + word.size();
    if (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_')) return false;
    pos_ = end;
    return true;
  }

  static bool IsFunction(const std::string& name) {
    return name == "fma" || name == "neg" || name == "sqrt" || ExactFunction(name) || FreeFunction(name) ||
           RoundingFormat(name) != nullptr;
  }
  static int ExactFunction(const std::string& name) { return ExactModelFunctionArity(name); }
  static std::optional<ModelFunction> FreeFunction(const std::string& name) {
    for (ModelFunction f : {ModelFunction::kExp, ModelFunction::kErf, ModelFunction::kTanh, ModelFunction::kLog}) {
      if (name == ModelFunctionName(f)) return f;
    }
    return std::nullopt;
  }
  // The registered formats of at most 32 bits, which are the working
  // formats and the rounding functions: "f32, bf16, f16, float8_e4m3fn, ...".
  static std::string RoundingFormatNames() {
    std::string names;
    for (const FloatFormat* f : Formats()) {
      if (f->bits <= 32) names += (names.empty() ? "" : ", ") + std::string(f->name);
    }
    return names;
  }
  // A registered format of at most 32 bits by name (f32, bf16, float8_e4m3fn,
  // ...), or its _rz form; nullptr for another name.
  static const FloatFormat* RoundingFormat(const std::string& name, bool* toward_zero = nullptr) {
    std::string base = name;
    const bool rz = base.size() > 3 && base.compare(base.size() - 3, 3, "_rz") == 0;
    if (rz) base.resize(base.size() - 3);
    if (toward_zero) *toward_zero = rz;
    const FloatFormat* f = FindFormat(base);
    return f != nullptr && f->bits <= 32 ? f : nullptr;
  }

  int Expression() {
    int left = Term();
    while (true) {
      if (Accept('+')) {
        left = Arith(Op::kAdd, left, Term());
      } else if (Accept('-')) {
        left = Arith(Op::kSub, left, Term());
      } else {
        return left;
      }
    }
  }
  int Term() {
    int left = Unary();
    while (true) {
      if (Accept('*')) {
        left = Arith(Op::kMul, left, Unary());
      } else if (Accept('/')) {
        left = Arith(Op::kDiv, left, Unary());
      } else {
        return left;
      }
    }
  }
  // Counts one level of the parser's recursion while it lives.
  struct Nested {
    explicit Nested(Parser& p) : parser(p) {
      if (++parser.depth_ > kMaxModelNesting) {
        parser.Fail(parser.pos_, fmt::format("nested more than {} levels deep (parentheses, calls, "
                                             "unary minus)", kMaxModelNesting));
      }
    }
    ~Nested() { --parser.depth_; }
    Parser& parser;
  };

  int Unary() {
    const Nested level(*this);
    if (Accept('-')) {
      Instr i{Op::kNeg};
      i.a = Unary();
      return Emit(i);
    }
    return Primary();
  }
  int Primary() {
    SkipSpace();
    const size_t start = pos_;
    if (Accept('(')) {
      const int r = Expression();
      Expect(')');
      return r;
    }
    if (pos_ < text_.size() &&
        (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.')) {
      return Number();
    }
    if (!AtIdentifier()) Fail(pos_, "expected a number, a name or '(', found " + Found());
    const std::string name = Identifier();
    if (Accept('(')) return Call(name, start);
    for (size_t k = 0; k < operands_.size(); ++k) {
      if (name == operands_[k]) {
        Instr i{Op::kOperand};
        i.operand = static_cast<int>(k);
        return Emit(i);
      }
    }
    const auto it = names_.find(name);
    if (it == names_.end()) {
      std::string known;
      for (const auto& o : operands_) known += (known.empty() ? "" : ", ") + o;
      for (const auto& n : names_) known += ", " + n.first;
      Fail(start, "unknown name '" + name + "' (defined here: " + known + ")");
    }
    return it->second;
  }
  int Number() {
    SkipSpace();
    const size_t start = pos_;
    const std::string rest(text_.substr(pos_));
    char* end = nullptr;
    const double v = std::strtod(rest.c_str(), &end);
    if (end == rest.c_str()) Fail(start, "expected a number");
    const std::string written = rest.substr(0, static_cast<size_t>(end - rest.c_str()));
    pos_ += written.size();
    if (!std::isfinite(v) || !IsRepresentable(*p_.working, v) || !Writes(written, v)) {
      Fail(start, fmt::format("{} is not a value of the working format {}",
                              text_.substr(start, pos_ - start), p_.working->name));
    }
    Instr i{Op::kConst};
    i.value = v;
    return Emit(i);
  }
  int Call(const std::string& name, size_t start) {
    std::vector<int> args;
    if (!Accept(')')) {
      do {
        args.push_back(Expression());
      } while (Accept(','));
      Expect(')');
    }
    auto arity = [&](size_t n) {
      if (args.size() != n) {
        Fail(start, fmt::format("{}() takes {} argument{}, got {}", name, n, n == 1 ? "" : "s",
                                args.size()));
      }
    };
    if (name == "fma") {
      arity(3);
      return Arith(Op::kFma, args[0], args[1], args[2]);
    }
    if (name == "neg") {
      arity(1);
      Instr i{Op::kNeg};
      i.a = args[0];
      return Emit(i);
    }
    if (name == "sqrt") {
      arity(1);
      return Arith(Op::kSqrt, args[0], -1);
    }
    if (const int n = ExactFunction(name)) {
      arity(static_cast<size_t>(n));
      Instr i{name == "abs"        ? Op::kAbs
              : name == "copysign" ? Op::kCopysign
              : name == "min"      ? Op::kMin
              : name == "max"      ? Op::kMax
              : name == "scalb"    ? Op::kScalb
                                   : Op::kIfLess};
      if (i.op == Op::kScalb) i.format = p_.working;  // the only one that rounds
      i.a = args[0];
      if (n > 1) i.b = args[1];
      if (n > 2) i.c = args[2], i.d = args[3];
      return Emit(i);
    }
    if (const auto f = FreeFunction(name)) {
      arity(1);
      if (AcceptWord("as")) {
        // An implementation written out: the value is the expression's, and
        // the call is the function's only for the model's structure (what
        // `compare` parts on), so no value of it is searched.
        if (start != rhs_start_) {
          Fail(start, fmt::format("'{}(...) as' begins a statement of its own: NAME = {}(ARG) as EXPRESSION", name,
                                  name));
        }
        Instr i{Op::kImplemented};
        i.a = args[0];
        i.b = Expression();
        i.function = *f;
        i.call = p_.implemented_calls++;
        return Emit(i);
      }
      if (p_.function_calls == kMaxModelFunctionCalls) {
        Fail(start, fmt::format("more than {} calls of exp, erf, tanh or log: each call's value is searched, and "
                                "the search grows {}-fold per call",
                                kMaxModelFunctionCalls, 2 * kModelFunctionUlps + 1));
      }
      Instr i{Op::kFunction};
      i.a = args[0];
      i.format = p_.working;
      i.function = *f;
      i.call = p_.function_calls++;
      return Emit(i);
    }
    bool toward_zero = false;
    if (const FloatFormat* f = RoundingFormat(name, &toward_zero)) {
      arity(1);
      Instr i{toward_zero ? Op::kRoundTowardZero : Op::kRound};
      i.a = args[0];
      i.format = f;
      return Emit(i);
    }
    Fail(start, "unknown function '" + name + "' (fma, neg, sqrt, abs, copysign, min, max, if_less, scalb, exp, erf, tanh, log, or a format to round to, NAME or NAME_rz: " +
                    RoundingFormatNames() + ")");
  }

  ModelProgram& p_;
  std::string_view text_;
  const std::vector<std::string>& operands_;
  size_t offset_;
  size_t rhs_start_ = 0;  // where the statement's expression begins
  size_t pos_ = 0;
  int depth_ = 0;  // Nested levels now open
  std::map<std::string, int> names_;
};

}  // namespace

int ExactModelFunctionArity(std::string_view name) {
  if (name == "abs") return 1;
  if (name == "copysign" || name == "min" || name == "max" || name == "scalb") return 2;
  if (name == "if_less") return 4;
  return 0;
}

const char* ModelFunctionName(ModelFunction f) {
  switch (f) {
    case ModelFunction::kExp: return "exp";
    case ModelFunction::kErf: return "erf";
    case ModelFunction::kTanh: return "tanh";
    case ModelFunction::kLog: return "log";
  }
  return "?";
}

namespace {

// min or max of two values: NaN where either is one, and of two zeros the
// negative one for min and the positive one for max, as IEEE 754-2019's
// minimum and maximum (a kernel's clamp of a zero keeps its sign either way).
double MinMax(bool max, double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == b) return (std::signbit(a) != max) ? a : b;
  return (a < b) != max ? a : b;
}

// The binary32 `ulps` binary32 values from the one nearest f(x) (glibc's
// binary64 functions are within an ULP of binary64, so that is the nearest
// but where f(x) is within 2^-29 ULP of a binary32 midpoint: a free
// function's value is searched around it, which covers the difference).
double FunctionNear(ModelFunction f, double x, int ulps) {
  double y = 0;
  switch (f) {
    case ModelFunction::kExp: y = std::exp(x); break;
    case ModelFunction::kErf: y = std::erf(x); break;
    case ModelFunction::kTanh: y = std::tanh(x); break;
    case ModelFunction::kLog: y = std::log(x); break;
  }
  float v = static_cast<float>(RoundDouble(kBinary32, y));
  for (; ulps > 0 && std::isfinite(v); --ulps) v = std::nextafter(v, std::numeric_limits<float>::infinity());
  for (; ulps < 0 && std::isfinite(v); ++ulps) v = std::nextafter(v, -std::numeric_limits<float>::infinity());
  return v;
}

// How many binary32 values `v` lies from the one nearest f(x) (signed;
// saturated far away and for a NaN).
int UlpsFromNearest(ModelFunction f, double x, double v) {
  const float nearest = static_cast<float>(FunctionNear(f, x, 0));
  const float value = static_cast<float>(v);
  if (std::isnan(value) || std::isnan(nearest)) return std::numeric_limits<int>::max();
  auto ordered = [](float y) {
    int32_t bits = 0;
    std::memcpy(&bits, &y, sizeof bits);
    return bits < 0 ? -static_cast<int64_t>(bits & 0x7fffffff) : static_cast<int64_t>(bits);
  };
  const int64_t d = ordered(value) - ordered(nearest);
  return static_cast<int>(std::clamp<int64_t>(d, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
}

// scaleB(a, n) rounded once to `f`: NaN where n is no integer (an infinity
// or a NaN included), as sqrt of a negative is NaN: evaluation has no other
// way to refuse a value. a has at most 24 significant bits and n is clamped
// where the result is 0 or infinite in every format of at most 32 bits
// either way (|a| lies in [2^-149, 2^128)), so std::ldexp is exact in a
// double (whose subnormals begin far below 2^-151, under which every such
// format gives a zero) and RoundDouble is the only rounding.
double ScaleB(const FloatFormat& f, double a, double n) {
  if (!std::isfinite(n) || n != std::trunc(n)) return std::numeric_limits<double>::quiet_NaN();
  const int e = static_cast<int>(std::clamp(n, -2000.0, 2000.0));
  return RoundDouble(f, std::ldexp(a, e));
}

bool SameResult(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

// Calls `visit(offsets)` for every choice of the calls' offsets in
// [-kModelFunctionUlps, kModelFunctionUlps], nearest first per call, until
// it returns true.
template <class F>
bool ForEachOffsets(int calls, F&& visit) {
  int offsets[kMaxModelFunctionCalls] = {};
  int digits[kMaxModelFunctionCalls] = {};
  const int radix = 2 * kModelFunctionUlps + 1;
  // Digit d stands for the offset 0, 1, -1, 2, -2, ...
  auto offset = [](int d) { return d % 2 == 1 ? (d + 1) / 2 : -(d / 2); };
  while (true) {
    for (int k = 0; k < calls; ++k) offsets[k] = offset(digits[k]);
    if (visit(static_cast<const int*>(offsets))) return true;
    int k = 0;
    while (k < calls && ++digits[k] == radix) digits[k++] = 0;
    if (k == calls) return false;
  }
}

}  // namespace

double ModelProgram::Evaluate(const double* operands) const {
  static constexpr int kNearest[kMaxModelFunctionCalls] = {};
  return EvaluateWith(operands, kNearest, nullptr);
}

double ModelProgram::EvaluateToward(const double* operands, double target) const {
  const double nearest = Evaluate(operands);
  if (function_calls == 0 || SameResult(nearest, target)) return nearest;
  const bool found = ForEachOffsets(function_calls, [&](const int* offsets) {
    return SameResult(EvaluateWith(operands, offsets, nullptr), target);
  });
  return found ? target : nearest;
}

std::vector<std::vector<ModelProgram::FunctionValue>> ModelProgram::FunctionValuesToward(
    const double* operands, double target, size_t limit) const {
  std::vector<std::vector<FunctionValue>> found;
  if (limit == 0) return found;
  ForEachOffsets(function_calls, [&](const int* offsets) {
    std::vector<FunctionValue> values(static_cast<size_t>(function_calls + implemented_calls));
    if (SameResult(EvaluateWith(operands, offsets, values.data()), target)) found.push_back(std::move(values));
    return found.size() >= limit;
  });
  return found;
}

double ModelProgram::EvaluateWith(const double* operands, const int* offsets, FunctionValue* values) const {
  // Every value is one of a format of at most 24 significant bits (operands,
  // constants and results are rounded to f32, bf16 or f16), so a product is
  // exact in a double (at most 48 bits, exponents far inside its range), and
  // a sum or a fused a*b + c is a double s plus its exact error (TwoSum);
  // RoundPair rounds that pair as the exact value. A quotient and a square
  // root are rounded to 53 bits and then to at most 24: 53 >= 2*24 + 2 makes
  // that double rounding innocuous (Figueroa, 1995). Results of 16 registers
  // or fewer stay on the stack.
  double small[16];
  std::vector<double> large;
  double* r = small;
  if (code.size() > 16) {
    large.resize(code.size());
    r = large.data();
  }
  for (size_t k = 0; k < code.size(); ++k) {
    const Instr& i = code[k];
    DoubleWord sum;
    switch (i.op) {
      case Op::kOperand:
        r[k] = operands[i.operand];
        continue;
      case Op::kConst:
        r[k] = i.value;
        continue;
      case Op::kNeg:
        r[k] = -r[i.a];
        continue;
      case Op::kRound:
        r[k] = RoundDouble(*i.format, r[i.a]);
        continue;
      case Op::kRoundTowardZero:
        r[k] = RoundDouble(*i.format, r[i.a], true);
        continue;
      case Op::kMul:
        r[k] = RoundDouble(*i.format, r[i.a] * r[i.b]);
        continue;
      case Op::kDiv:
        r[k] = RoundDouble(*i.format, r[i.a] / r[i.b]);
        continue;
      case Op::kSqrt:
        r[k] = RoundDouble(*i.format, std::sqrt(r[i.a]));
        continue;
      case Op::kAbs:
        r[k] = std::fabs(r[i.a]);
        continue;
      case Op::kCopysign:
        r[k] = std::copysign(r[i.a], r[i.b]);
        continue;
      case Op::kMin:
      case Op::kMax:
        r[k] = MinMax(i.op == Op::kMax, r[i.a], r[i.b]);
        continue;
      case Op::kIfLess:
        r[k] = r[i.a] < r[i.b] ? r[i.c] : r[i.d];
        continue;
      case Op::kScalb:
        r[k] = ScaleB(*i.format, r[i.a], r[i.b]);
        continue;
      case Op::kImplemented:
        r[k] = r[i.b];
        if (values != nullptr) {
          values[function_calls + i.call] = {i.function, r[i.a], r[i.b], r[i.b],
                                             UlpsFromNearest(i.function, r[i.a], r[i.b])};
        }
        continue;
      case Op::kFunction: {
        const double near = FunctionNear(i.function, r[i.a], offsets[i.call]);
        const double v = RoundDouble(*i.format, near);
        if (values != nullptr) values[i.call] = {i.function, r[i.a], near, v, offsets[i.call]};
        r[k] = v;
        continue;
      }
      case Op::kAdd:
        sum = TwoSum(r[i.a], r[i.b]);
        break;
      case Op::kSub:
        sum = TwoSum(r[i.a], -r[i.b]);
        break;
      case Op::kFma:
        sum = TwoSum(r[i.a] * r[i.b], r[i.c]);
        break;
    }
    // An infinity or NaN operand makes the error NaN: the double sum is the
    // answer.
    r[k] = std::isfinite(sum.hi) ? RoundPair(*i.format, sum.hi, sum.lo) : sum.hi;
  }
  return RoundDouble(*storage, r[out]);
}

ModelProgram ParseModel(std::string_view name, std::string_view text,
                        const std::vector<std::string>& operands, const FloatFormat& storage,
                        size_t column_offset) {
  ModelProgram program;
  program.name = std::string(name);
  program.text = std::string(text);
  program.storage = &storage;
  Parser(program, text, operands, column_offset).Program();
  return program;
}

ModelProgram ParseModelSpec(std::string_view spec, const std::vector<std::string>& operands,
                            const FloatFormat& storage) {
  const size_t sep = spec.find_first_of(":=");
  size_t start = 0;
  while (start < spec.size() && std::isspace(static_cast<unsigned char>(spec[start]))) ++start;
  size_t end = sep == std::string_view::npos ? spec.size() : sep;
  while (end > start && std::isspace(static_cast<unsigned char>(spec[end - 1]))) --end;
  const std::string_view name = spec.substr(start, end - start);
  bool valid = sep != std::string_view::npos && !name.empty();
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') valid = false;
  }
  if (!valid) {
    throw ModelSyntaxError(fmt::format("model '{}', column 1: expected NAME: statements (or "
                                       "NAME=statements), e.g. 'mac_left: p = grad*t; out = "
                                       "fma(-p, t, grad)'",
                                       spec),
                           1);
  }
  return ParseModel(name, spec.substr(sep + 1), operands, storage, sep + 1);
}

}  // namespace ulpgate
