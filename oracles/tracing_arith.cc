#include "oracles/tracing_arith.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "oracles/exact.h"
#include "oracles/float_text.h"
#include "oracles/highway_math.h"
#include "oracles/ieee_emulation.h"
#include "oracles/ulp_metric.h"

namespace ulpgate {
namespace {

// Precision for binary32 values and for results that are NaN or infinite.
constexpr mpfr_prec_t kBinary32Bits = 24;

void CheckExact(int ternary, const char* what) {
  if (ternary != 0) throw InexactError(std::string("tracing arithmetic rounded ") + what);
}

// Bits that hold a +- b exactly: from one above the larger leading bit (the
// carry) down to the lower of the two last bits. A zero operand adds nothing.
mpfr_prec_t SumPrecision(mpfr_srcptr a, mpfr_srcptr b) {
  const bool a_regular = mpfr_regular_p(a) != 0, b_regular = mpfr_regular_p(b) != 0;
  if (!a_regular && !b_regular) return kBinary32Bits;
  if (!a_regular) return mpfr_get_prec(b) + 1;
  if (!b_regular) return mpfr_get_prec(a) + 1;
  const long high = std::max<long>(mpfr_get_exp(a), mpfr_get_exp(b)) + 1;
  const long low = std::min<long>(mpfr_get_exp(a) - mpfr_get_prec(a),
                                  mpfr_get_exp(b) - mpfr_get_prec(b));
  return std::max<mpfr_prec_t>(high - low, kBinary32Bits);
}

MpfrNumber ExactSum(const MpfrNumber& a, const MpfrNumber& b, bool subtract) {
  MpfrNumber r(SumPrecision(a.get(), b.get()));
  CheckExact(subtract ? mpfr_sub(r.get(), a.get(), b.get(), MPFR_RNDN)
                      : mpfr_add(r.get(), a.get(), b.get(), MPFR_RNDN),
             subtract ? "a - b" : "a + b");
  return r;
}

// A p-bit times a q-bit significand has at most p + q bits.
MpfrNumber ExactProduct(const MpfrNumber& a, const MpfrNumber& b) {
  MpfrNumber r(a.precision() + b.precision());
  CheckExact(mpfr_mul(r.get(), a.get(), b.get(), MPFR_RNDN), "a * b");
  return r;
}

MpfrNumber Negated(const MpfrNumber& a) {
  MpfrNumber r(a);
  mpfr_neg(r.get(), r.get(), MPFR_RNDN);  // exact: same precision
  return r;
}

// (|x| + |y|) / |r|: how much relative errors in x and y grow in r = x +- y.
double CancellationFactor(const MpfrNumber& x, const MpfrNumber& y, const MpfrNumber& r) {
  if (!x.IsFinite() || !y.IsFinite() || !r.IsFinite()) return 1;
  MpfrNumber sum(64), magnitude(64);
  mpfr_abs(sum.get(), x.get(), MPFR_RNDN);
  mpfr_abs(magnitude.get(), y.get(), MPFR_RNDN);
  mpfr_add(sum.get(), sum.get(), magnitude.get(), MPFR_RNDN);
  if (r.IsZero()) return sum.IsZero() ? 1 : std::numeric_limits<double>::infinity();
  mpfr_abs(magnitude.get(), r.get(), MPFR_RNDN);
  mpfr_div(sum.get(), sum.get(), magnitude.get(), MPFR_RNDN);
  return mpfr_get_d(sum.get(), MPFR_RNDN);
}

std::vector<int> Union(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  return a;
}

// Operands are parenthesized where the reader could otherwise regroup them:
// sums inside products and on the right of a difference, and a product on the
// right of a product (float multiplication is not associative).
std::string Wrap(const TracingArith::Value& v, bool wrap) {
  return wrap ? "(" + v.expression + ")" : v.expression;
}
std::string ProductText(const TracingArith::Value& a, const TracingArith::Value& b) {
  using Form = TracingArith::Form;
  return Wrap(a, a.form == Form::kSum) + "*" + Wrap(b, b.form != Form::kAtom);
}
std::string SumText(const TracingArith::Value& a, const std::string& sign, const TracingArith::Value& b) {
  return a.expression + " " + sign + " " + Wrap(b, b.form == TracingArith::Form::kSum);
}
std::string SumText(const TracingArith::Value& a, const std::string& sign, const std::string& b_product) {
  return a.expression + " " + sign + " " + b_product;
}

}  // namespace

TracingArith::TracingArith(bool fused_negmuladd, int rounded_steps)
    : fused_(fused_negmuladd), rounded_steps_(rounded_steps) {}

TracingArith::Value TracingArith::Input(const std::string& name, float x) const {
  Value v{MpfrNumber(kBinary32Bits, x), name, Form::kAtom, -1, {}};
  return v;
}

TracingArith::Value TracingArith::Const(float c) const {
  // 9 significant digits read back to the same float, and constants in specs
  // are short ("1"), so the decimal is both exact and readable.
  return Value{MpfrNumber(kBinary32Bits, c), DecimalFloat(c), Form::kAtom, -1, {}};
}

TracingArith::Value TracingArith::Record(std::string operation, std::string expression,
                                         Form form, std::vector<const Value*> operands,
                                         MpfrNumber exact, double cancellation,
                                         float (*model)(float, bool)) {
  Step step;
  step.operation = std::move(operation);
  step.expression = expression;
  for (const Value* v : operands) {
    step.operands.push_back(v->expression);
    step.operand_steps.push_back(v->step);
    step.operand_values.push_back(v->number);
    if (v->step >= 0) step.depends_on = Union(step.depends_on, {v->step});
    step.depends_on = Union(step.depends_on, v->depends_on);
  }
  const int index = static_cast<int>(steps_.size());
  step.rounded = rounded_steps_ < 0 || index < rounded_steps_;
  step.cancellation = cancellation;
  if (step.rounded && model != nullptr) {
    // A rounded step's operands are binary32: every step before it rounded.
    const float x = RoundToBinary32(operands.front()->number.get());
    step.value = MpfrNumber(kBinary32Bits, model(x, fused_));
  } else if (step.rounded) {
    // exact is the operation's exact result (or the quotient to 320 bits,
    // never a binary32 midpoint), so this is its one correct rounding: the
    // IEEE result of the operation on these operands.
    step.value = MpfrNumber(kBinary32Bits, RoundToBinary32(exact.get()));
  } else {
    step.value = exact;
  }
  step.exact = std::move(exact);
  Value result{step.value, std::move(expression), form, index, step.depends_on};
  steps_.push_back(std::move(step));
  return result;
}

TracingArith::Value TracingArith::Add(const Value& a, const Value& b) {
  MpfrNumber r = ExactSum(a.number, b.number, false);
  const double c = CancellationFactor(a.number, b.number, r);
  return Record("add", SumText(a, "+", b), Form::kSum, {&a, &b}, std::move(r), c);
}

TracingArith::Value TracingArith::Sub(const Value& a, const Value& b) {
  MpfrNumber r = ExactSum(a.number, b.number, true);
  const double c = CancellationFactor(a.number, b.number, r);
  return Record("sub", SumText(a, "-", b), Form::kSum, {&a, &b}, std::move(r), c);
}

TracingArith::Value TracingArith::Mul(const Value& a, const Value& b) {
  return Record("mul", ProductText(a, b), Form::kProduct, {&a, &b}, ExactProduct(a.number, b.number),
                1);
}

TracingArith::Value TracingArith::MulAdd(const Value& a, const Value& b, const Value& c) {
  if (!fused_) return Add(Mul(a, b), c);
  // The product is exact, so one exact sum gives fma's single rounding the
  // exact value it rounds; zero signs follow IEEE addition, as fma's do.
  const MpfrNumber product = ExactProduct(a.number, b.number);
  MpfrNumber r = ExactSum(product, c.number, false);
  const double k = CancellationFactor(product, c.number, r);
  return Record("fma", ProductText(a, b) + " + " + Wrap(c, c.form == Form::kSum), Form::kSum,
                {&a, &b, &c}, std::move(r), k);
}

TracingArith::Value TracingArith::NegMulAdd(const Value& a, const Value& b, const Value& c) {
  if (!fused_) return Sub(c, Mul(a, b));
  // c - a*b as c + (-a)*b, the sum exact: IEEE fma(-a, b, c)'s exact value,
  // zero signs included (a zero c - a*b takes +0 unless both addends are -0).
  const MpfrNumber product = ExactProduct(Negated(a.number), b.number);
  MpfrNumber r = ExactSum(c.number, product, false);
  const double k = CancellationFactor(c.number, product, r);
  return Record("fma", SumText(c, "-", ProductText(a, b)), Form::kSum, {&a, &b, &c},
                std::move(r), k);
}

TracingArith::Value TracingArith::Div(const Value& a, const Value& b) {
  MpfrNumber r(kTracingFunctionBits);
  mpfr_div(r.get(), a.number.get(), b.number.get(), MPFR_RNDN);
  return Record("div", Wrap(a, a.form == Form::kSum) + "/" + Wrap(b, b.form != Form::kAtom),
                Form::kProduct, {&a, &b}, std::move(r), 1);
}

namespace {
float ModelExp(float x, bool fused) { return ExpOfSequences(x, fused); }
float ModelTanh(float x, bool fused) { return HighwayTanh(x, fused); }
float ModelErf(float x, bool fused) { return ErfOfSequences(x, fused); }
}  // namespace

TracingArith::Value TracingArith::Exp(const Value& a) {
  MpfrNumber r(kTracingFunctionBits);
  mpfr_exp(r.get(), a.number.get(), MPFR_RNDN);
  return Record("exp", "exp(" + a.expression + ")", Form::kAtom, {&a}, std::move(r), 1, ModelExp);
}

TracingArith::Value TracingArith::Tanh(const Value& a) {
  MpfrNumber r(kTracingFunctionBits);
  mpfr_tanh(r.get(), a.number.get(), MPFR_RNDN);
  return Record("tanh", "tanh(" + a.expression + ")", Form::kAtom, {&a}, std::move(r), 1,
                ModelTanh);
}

TracingArith::Value TracingArith::Erf(const Value& a) {
  MpfrNumber r(kTracingFunctionBits);
  mpfr_erf(r.get(), a.number.get(), MPFR_RNDN);
  return Record("erf", "erf(" + a.expression + ")", Form::kAtom, {&a}, std::move(r), 1, ModelErf);
}

double SignedUlpDifference(const MpfrNumber& from, const MpfrNumber& to,
                           const MpfrNumber& unit_of) {
  if (!from.IsFinite() || !to.IsFinite() || !unit_of.IsFinite()) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  MpfrNumber difference = ExactSum(to, from, true);
  // Scaling by a power of two is exact, so the one rounding is to double.
  mpfr_div_2si(difference.get(), difference.get(), UlpExponent(unit_of.get()), MPFR_RNDN);
  return mpfr_get_d(difference.get(), MPFR_RNDN);
}

double SignedUlpError(const MpfrNumber& exact, const MpfrNumber& approx) {
  return SignedUlpDifference(exact, approx, exact);
}

}  // namespace ulpgate
