#include "suites/engine/elementwise_oracle.h"

#include "kernels/expected_model.h"

#include <algorithm>
#include <cctype>
#include <array>
#include <cmath>
#include <memory>
#include <limits>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "kernels/narrow_formats.h"
#include "oracles/float_text.h"
#include "kernels/ops/registered_ops.h"
#include "oracles/exact.h"
#include "oracles/highway_f16.h"
#include "oracles/highway_math.h"
#include "oracles/ieee_emulation.h"
#include "oracles/round_bits.h"
#include "suites/inputs/inputs.h"

namespace ulpgate {
namespace {

float ToFloat(double v) { return static_cast<float>(v); }  // exact for values of the formats

// Calls f(std::integral_constant<size_t, k>) for the k == i below kCount: the
// one place a run-time row index becomes a template argument.
template <size_t kCount, class F, size_t... k>
auto AtIndex(size_t i, F&& f, std::index_sequence<k...>) {
  using Result = decltype(f(std::integral_constant<size_t, 0>()));
  if constexpr (std::is_void_v<Result>) {
    ((i == k ? (f(std::integral_constant<size_t, k>()), true) : false) || ...);
  } else {
    std::optional<Result> out;
    ((i == k ? (out.emplace(f(std::integral_constant<size_t, k>())), true) : false) || ...);
    return std::move(*out);
  }
}
template <size_t kCount, class F>
auto AtIndex(size_t i, F&& f) {
  if (i >= kCount) throw std::out_of_range("row index out of range");
  return AtIndex<kCount>(i, std::forward<F>(f), std::make_index_sequence<kCount>());
}

// The functions of the op sequences over the models' arithmetics: Highway's,
// ported operation by operation (oracles/highway_math.h), their multiply-adds
// fused as the arithmetic's are.
class ModelArith : public Binary32Arith {
 public:
  explicit ModelArith(bool fused) : Binary32Arith(fused) {}
  float Exp(float a) const { return ExpOfSequences(a, fused()); }
  float Tanh(float a) const { return HighwayTanh(a, fused()); }
  float Erf(float a) const { return ErfOfSequences(a, fused()); }
};
class NativeModelArith : public NativeBinary32Arith {
 public:
  explicit NativeModelArith(bool fused) : NativeBinary32Arith(fused), fused_(fused) {}
  float Exp(float a) const { return ExpOfSequences(a, fused_); }
  float Tanh(float a) const { return HighwayTanh(a, fused_); }
  float Erf(float a) const { return ErfOfSequences(a, fused_); }

 private:
  bool fused_;
};

// Every operation rounded to a 16-bit format, in MPFR (FormatArith) or from
// double arithmetic: a product of two values of a format of p <= 11 bits is
// exact in a double, and a sum, difference or quotient rounded to 53 bits and
// then to p bits is rounded once correctly (53 >= 2p + 2: the double rounding
// is innocuous, subnormal and overflowing results included, as RoundDouble
// rounds exactly). A multiply-add is two operations (eager frameworks have no
// fused op); a function is computed in binary32 as the kernels do
// (kernels/elementwise-inl.h: RoundingArith) and rounded to the format.
class PerOpArith : public FormatArith {
 public:
  PerOpArith(const FloatFormat& format, bool fused_functions)
      : FormatArith(format, false), fused_functions_(fused_functions) {}
  // A constant rounded to the format, as the kernels hold it.
  double Const(double c) const { return RoundDouble(format(), c); }
  double MulAdd(double a, double b, double c) const { return Add(Mul(a, b), c); }
  double NegMulAdd(double a, double b, double c) const { return Sub(c, Mul(a, b)); }
  double Exp(double a) const { return Round(ExpOfSequences(ToFloat(a), fused_functions_)); }
  double Tanh(double a) const { return Round(HighwayTanh(ToFloat(a), fused_functions_)); }
  double Erf(double a) const { return Round(ErfOfSequences(ToFloat(a), fused_functions_)); }

 private:
  double Round(float y) const { return RoundDouble(format(), y); }
  bool fused_functions_;
};
class NativePerOpArith {
 public:
  using Value = double;
  NativePerOpArith(const FloatFormat& format, bool fused_functions)
      : format_(&format), fused_functions_(fused_functions) {}
  double Const(double c) const { return RoundDouble(*format_, c); }
  double Add(double a, double b) const { return RoundDouble(*format_, a + b); }
  double Sub(double a, double b) const { return RoundDouble(*format_, a - b); }
  double Mul(double a, double b) const { return RoundDouble(*format_, a * b); }
  double Div(double a, double b) const { return RoundDouble(*format_, a / b); }
  double MulAdd(double a, double b, double c) const { return Add(Mul(a, b), c); }
  double NegMulAdd(double a, double b, double c) const { return Sub(c, Mul(a, b)); }
  double Exp(double a) const { return Round(ExpOfSequences(ToFloat(a), fused_functions_)); }
  double Tanh(double a) const { return Round(HighwayTanh(ToFloat(a), fused_functions_)); }
  double Erf(double a) const { return Round(ErfOfSequences(ToFloat(a), fused_functions_)); }

 private:
  double Round(float y) const { return RoundDouble(*format_, y); }
  const FloatFormat* format_;
  bool fused_functions_;
};

// The arithmetic of staging (elementwise_oracle.h): Inner's values for what
// is known, and for the first operand a place in the chain. An operation of
// known values is Inner's; one that takes the chain's last value and known
// ones appends a step; anything else marks the staging failed (its result is
// then meaningless, and StagedChain is not returned).
template <class Inner>
class StagingArith {
 public:
  using IV = typename Inner::Value;
  struct Value {
    int head;  // >= 0: the chain's value after `head` steps; -1: known
    IV v;      // the known value (a placeholder in the chain's)
  };
  explicit StagingArith(Inner& inner) : inner_(inner), placeholder_(inner.Const(0.0f)) {}
  bool ok() const { return ok_; }
  void MarkFailed() { ok_ = false; }
  Inner& inner() { return inner_; }
  StagedChain& chain() { return chain_; }
  Value First() const { return {0, placeholder_}; }
  Value Known(IV v) const { return {-1, std::move(v)}; }

  template <class... A>
  Value Const(A&&... a) { return Known(inner_.Const(std::forward<A>(a)...)); }
  Value Zero() { return Known(inner_.Zero()); }
  Value Pi() { return Known(inner_.Pi()); }
  Value Decimal(const char* text) { return Known(inner_.Decimal(text)); }
#define ULPGATE_STAGE_UNARY(F) \
  Value F(const Value& a) {    \
    if (a.head >= 0) return Fail(); \
    return Known(inner_.F(a.v));    \
  }
  ULPGATE_STAGE_UNARY(Neg)
  ULPGATE_STAGE_UNARY(Abs)
  ULPGATE_STAGE_UNARY(Sqrt)
  ULPGATE_STAGE_UNARY(Exp)
  ULPGATE_STAGE_UNARY(Tanh)
  ULPGATE_STAGE_UNARY(Erf)
  ULPGATE_STAGE_UNARY(Erfc)
#undef ULPGATE_STAGE_UNARY

  // Floating-point + and * are commutative (IEEE's and MPFR's alike), so
  // c + v and c * v are the steps of v + c and v * c.
  Value Add(const Value& a, const Value& b) {
    if (a.head < 0 && b.head < 0) return Known(inner_.Add(a.v, b.v));
    if (a.head >= 0 && b.head < 0) return Push(a, ChainStep::kAdd, b.v);
    if (a.head < 0 && b.head >= 0) return Push(b, ChainStep::kAdd, a.v);
    return Fail();
  }
  Value Mul(const Value& a, const Value& b) {
    if (a.head < 0 && b.head < 0) return Known(inner_.Mul(a.v, b.v));
    if (a.head >= 0 && b.head < 0) return Push(a, ChainStep::kMul, b.v);
    if (a.head < 0 && b.head >= 0) return Push(b, ChainStep::kMul, a.v);
    return Fail();
  }
  Value Sub(const Value& a, const Value& b) {
    if (a.head < 0 && b.head < 0) return Known(inner_.Sub(a.v, b.v));
    if (a.head >= 0 && b.head < 0) return Push(a, ChainStep::kSub, b.v);
    if (a.head < 0 && b.head >= 0) return Push(b, ChainStep::kSubFrom, a.v);
    return Fail();
  }
  Value Div(const Value& a, const Value& b) {
    if (a.head < 0 && b.head < 0) return Known(inner_.Div(a.v, b.v));
    if (a.head >= 0 && b.head < 0) return Push(a, ChainStep::kDiv, b.v);
    if (a.head < 0 && b.head >= 0) return Push(b, ChainStep::kDivInto, a.v);
    return Fail();
  }
  // a*b + c: the product's operands commute (one rounding or two alike).
  Value MulAdd(const Value& a, const Value& b, const Value& c) {
    const int staged = (a.head >= 0) + (b.head >= 0) + (c.head >= 0);
    if (staged == 0) return Known(inner_.MulAdd(a.v, b.v, c.v));
    if (staged != 1) return Fail();
    if (c.head >= 0) return Push(c, ChainStep::kAddProduct, a.v, b.v);
    return a.head >= 0 ? Push(a, ChainStep::kMulAdd, b.v, c.v) : Push(b, ChainStep::kMulAdd, a.v, c.v);
  }
  // c - a*b.
  Value NegMulAdd(const Value& a, const Value& b, const Value& c) {
    const int staged = (a.head >= 0) + (b.head >= 0) + (c.head >= 0);
    if (staged == 0) return Known(inner_.NegMulAdd(a.v, b.v, c.v));
    if (staged == 1) {
      if (c.head >= 0) return Push(c, ChainStep::kSubProduct, a.v, b.v);
      return a.head >= 0 ? Push(a, ChainStep::kNegMulAdd, b.v, c.v)
                         : Push(b, ChainStep::kNegMulAdd, a.v, c.v);
    }
    // v - v*k: the same value twice, the chain's last.
    if (staged == 2 && c.head >= 0 && (a.head >= 0) != (b.head >= 0)) {
      const Value& v = a.head >= 0 ? a : b;
      const Value& k = a.head >= 0 ? b : a;
      if (v.head != c.head) return Fail();
      return Push(c, ChainStep::kSubSelfProduct, k.v);
    }
    return Fail();
  }

 private:
  Value Fail() {
    ok_ = false;
    return First();
  }
  Value Push(const Value& v, ChainStep step, const IV& c) { return Push(v, step, c, placeholder_); }
  Value Push(const Value& v, ChainStep step, const IV& c, const IV& d) {
    // Only the chain's last value may go on: an earlier one used again
    // would make the chain a tree.
    if (v.head != static_cast<int>(chain_.steps.size())) return Fail();
    chain_.steps.push_back(step);
    known_c_.push_back(c);
    known_d_.push_back(d);
    return {static_cast<int>(chain_.steps.size()), placeholder_};
  }

 public:
  std::vector<IV> known_c_, known_d_;

 private:
  Inner& inner_;
  IV placeholder_;
  StagedChain chain_;
  bool ok_ = true;
};

// The chain's steps in an arithmetic A (the model's own), from v.
template <class A, class T>
T ApplyChainStep(const A& a, ChainStep step, T v, T c, T d) {
  switch (step) {
    case ChainStep::kMul: return a.Mul(v, c);
    case ChainStep::kDiv: return a.Div(v, c);
    case ChainStep::kDivInto: return a.Div(c, v);
    case ChainStep::kAdd: return a.Add(v, c);
    case ChainStep::kSub: return a.Sub(v, c);
    case ChainStep::kSubFrom: return a.Sub(c, v);
    case ChainStep::kMulAdd: return a.MulAdd(v, c, d);
    case ChainStep::kAddProduct: return a.MulAdd(c, d, v);
    case ChainStep::kNegMulAdd: return a.NegMulAdd(v, c, d);
    case ChainStep::kSubProduct: return a.NegMulAdd(c, d, v);
    case ChainStep::kSubSelfProduct: return a.NegMulAdd(v, c, v);
  }
  return v;
}

// The oracle of one registered op: Spec's tables, Seq its templates.
template <class Spec, class Seq>
class OracleFor final : public ElementwiseOracle {
  static constexpr size_t kArity = Spec::kOperands.size();
  using Operands = std::make_index_sequence<kArity>;

 public:
  explicit OracleFor(const ElementwiseOpInfo& op) : op_(op) {}
  const ElementwiseOpInfo& op() const override { return op_; }

  MpfrNumber Exact(const float* x) const override {
    ExactArith a = Arith();
    return Call(a, x, Operands(), [&](auto&... v) { return Seq::Exact(a, v...); });
  }
  MpfrNumber VariantExact(size_t v, const float* x) const override {
    return AtIndex<SequenceCount<Spec>()>(v, [&](auto k) {
      ExactArith a = Arith();
      return Call(a, x, Operands(),
                  [&](auto&... o) { return Seq::template At<static_cast<int>(k())>(a, o...); });
    });
  }
  MpfrNumber TermMagnitude(const float* x) const override {
    ExactArith a = ExactArith::Rounding(kElementwiseFunctionPrecision);
    return Call(a, x, Operands(), [&](auto&... v) { return Seq::TermMagnitude(a, v...); });
  }
  float Model(size_t m, const float* x, bool native) const override {
    return AtIndex<Spec::kModels.size()>(m, [&](auto k) -> float {
      constexpr ElementwiseModelInfo kInfo = Spec::kModels[k()];
      constexpr int kSequence = SequenceIndex<Spec>(kInfo.sequence_of);
      static_assert(kSequence >= 0, "a model names an unknown sequence");
      if (native) {
        NativeModelArith a(kInfo.fused);
        return Apply<kSequence>(a, x, Operands());
      }
      ModelArith a(kInfo.fused);
      return Apply<kSequence>(a, x, Operands());
    });
  }
  std::optional<TwoDoubleExact> FastExact(const float* x,
                                          const FloatFormat& format) const override {
    // The op whose spec declares the two-double tier (one at most,
    // registered_ops.h); the others measure every output in MPFR.
    if constexpr (OwnTiersOf<Spec>::kTiers.two_double_exact) {
      static_assert(kArity == 2, "the two-double tier takes (grad, t)");
      return FastTanhBwdExactValue(x[0], x[1], format);
    } else {
      return std::nullopt;
    }
  }
  size_t FastTermMagnitude(const float* x, double* terms) const override {
    if constexpr (OwnTiersOf<Spec>::kTiers.two_double_exact) {
      return FastTanhBwdTermMagnitude(x[0], x[1], terms) ? 2 : 0;
    } else {
      return 0;
    }
  }
  std::optional<StagedChain> StageModel(size_t m, const float* x) const override {
    return AtIndex<Spec::kModels.size()>(m, [&](auto k) -> std::optional<StagedChain> {
      constexpr ElementwiseModelInfo kInfo = Spec::kModels[k()];
      constexpr int kSequence = SequenceIndex<Spec>(kInfo.sequence_of);
      NativeModelArith inner(kInfo.fused);
      StagingArith<NativeModelArith> a(inner);
      StageAt<kSequence>(a, x, Operands());
      if (!a.ok()) return std::nullopt;
      return Finish(a);
    });
  }
  std::optional<StagedChain> StagePerOp(size_t v, bool fused_functions, const FloatFormat& format,
                                        const double* x) const override {
    return AtIndex<Spec::kVariants.size()>(v, [&](auto k) -> std::optional<StagedChain> {
      if constexpr (SequenceHasModel<Spec>(Spec::kVariants[k()].name)) {
        NativePerOpArith inner(format, fused_functions);
        StagingArith<NativePerOpArith> a(inner);
        StageAt<static_cast<int>(k())>(a, x, Operands());
        if (!a.ok()) return std::nullopt;
        return Finish(a);
      } else {
        throw std::logic_error("a per-op model of a sequence without models");
      }
    });
  }
  std::optional<FactorEstimate> FastFactor(const float* x) const override {
    if constexpr (::ulpgate::HasFastFactor<Spec>::kValue) {
      static_assert(kArity == 2, "a fast factor takes the second of two operands");
      return Spec::kFastFactor(x[1]);
    } else {
      return std::nullopt;
    }
  }
  bool FastFactors(const float* second, size_t n, const FactorEstimateColumns& out) const override {
    if constexpr (::ulpgate::HasFastFactors<Spec>::kValue) {
      Spec::kFastFactors(second, n, out);
      return true;
    } else {
      return false;
    }
  }
  bool HasFastFactor() const override { return ::ulpgate::HasFastFactor<Spec>::kValue; }
  std::optional<double> FastTermFactor(const float* x) const override {
    if constexpr (::ulpgate::HasFastTermFactor<Spec>::kValue) {
      static_assert(kArity == 2, "a fast term factor takes the second of two operands");
      return Spec::kFastTermFactor(x[1]);
    } else {
      return std::nullopt;
    }
  }
  bool HasFastTermFactor() const override { return ::ulpgate::HasFastTermFactor<Spec>::kValue; }
  MpfrNumber ExactFromFactors(float first, const std::vector<MpfrNumber>& factors) const override {
    ExactArith a = Arith();
    MpfrNumber v = a.FromFloat(first);
    for (const MpfrNumber& c : factors) v = a.Mul(v, c);
    return v;
  }
  std::optional<MpfrNumber> ExactFactor(const float* x, bool* products_exact,
                                        std::vector<MpfrNumber>* factors) const override {
    ExactArith inner = Arith();
    StagingArith<ExactArith> a(inner);
    const auto result = ExactStaged(a, x, Operands());
    if (!a.ok() || result.head != static_cast<int>(a.chain().steps.size())) return std::nullopt;
    // The product of the factors, exactly: its precision the sum of theirs.
    mpfr_prec_t precision = 1, bits = kBinary32.precision;
    for (size_t i = 0; i < a.chain().steps.size(); ++i) {
      if (a.chain().steps[i] != ChainStep::kMul) return std::nullopt;
      precision += a.known_c_[i].precision();
      const MpfrNumber& c = a.known_c_[i];
      if (mpfr_regular_p(c.get())) bits += mpfr_min_prec(c.get());
    }
    if (products_exact != nullptr) {
      *products_exact = Spec::kExactDefinition || bits <= kElementwiseFunctionPrecision;
    }
    if (factors != nullptr) *factors = a.known_c_;
    MpfrNumber f(precision, 1.0f);
    for (const MpfrNumber& c : a.known_c_) mpfr_mul(f.get(), f.get(), c.get(), MPFR_RNDN);
    return f;
  }
  TracingArith::Value Trace(size_t v, TracingArith& arith,
                            const std::vector<TracingArith::Value>& x) const override {
    if (x.size() != kArity) throw std::invalid_argument("wrong operand count");
    return AtIndex<SequenceCount<Spec>()>(v, [&](auto k) {
      return TraceAt<static_cast<int>(k())>(arith, x, Operands());
    });
  }
  std::vector<double> Condition(const float* x) const override {
    std::vector<double> out(kArity, std::numeric_limits<double>::quiet_NaN());
    for (size_t k = 0; k < kArity; ++k) {
      if (!std::isfinite(x[k])) return out;
    }
    // 2048 bits: the relative change 2^-100 of an operand can move the op by
    // as little as 2^-100 of its squared smallest subnormal (2^-298), or at a
    // zero of the op (below) of 2^-300 of that, and that must still be far
    // above the working precision.
    ExactArith a = ExactArith::Rounding(2048);
    const std::array<MpfrNumber, kArity> v = Values(a, x, Operands());
    const MpfrNumber f = Evaluate(a, v);
    for (size_t k = 0; k < kArity; ++k) {
      if (x[k] == 0) {
        out[k] = 0;  // x_k times a finite derivative
        continue;
      }
      const MpfrNumber g = Evaluate(a, Moved(v, k, kConditionStep));
      if (!mpfr_zero_p(f.get())) {
        out[k] = RelativeChange(f, g);
        continue;
      }
      if (!mpfr_zero_p(g.get())) {
        out[k] = std::numeric_limits<double>::infinity();  // a zero the operand moves
        continue;
      }
      // 0/0: the op is 0 along x_k (grad where the derivative is 0). The limit
      // from beside the zero, every other operand moved by 2^-300: 1 for an
      // operand the op is proportional to.
      std::array<MpfrNumber, kArity> beside = v;
      for (size_t j = 0; j < kArity; ++j) {
        if (j != k) beside = Moved(beside, j, 300);
      }
      const MpfrNumber f0 = Evaluate(a, beside);
      out[k] = mpfr_zero_p(f0.get()) ? 0 : RelativeChange(f0, Evaluate(a, Moved(beside, k, kConditionStep)));
    }
    return out;
  }
  double PerOp(size_t v, bool fused_functions, const FloatFormat& format, const double* x,
               bool native) const override {
    return AtIndex<Spec::kVariants.size()>(v, [&](auto k) -> double {
      if constexpr (SequenceHasModel<Spec>(Spec::kVariants[k()].name)) {
        if (native) {
          NativePerOpArith a(format, fused_functions);
          return Apply<static_cast<int>(k())>(a, x, Operands());
        }
        PerOpArith a(format, fused_functions);
        return Apply<static_cast<int>(k())>(a, x, Operands());
      } else {
        throw std::logic_error("a per-op model of a sequence without models");
      }
    });
  }

 private:
  static ExactArith Arith() {
    return Spec::kExactDefinition ? ExactArith(kExactDefinitionPrecision)
                                  : ExactArith::Rounding(kElementwiseFunctionPrecision);
  }
  template <class F, size_t... k>
  static MpfrNumber Call(ExactArith& a, const float* x, std::index_sequence<k...>, F f) {
    std::array<MpfrNumber, kArity> v{a.FromFloat(x[k])...};
    return f(v[k]...);
  }
  template <size_t... k>
  static std::array<MpfrNumber, kArity> Values(ExactArith& a, const float* x,
                                               std::index_sequence<k...>) {
    return {a.FromFloat(x[k])...};
  }
  template <size_t... k>
  static MpfrNumber ExactOf(ExactArith& a, std::array<MpfrNumber, kArity>& v,
                            std::index_sequence<k...>) {
    return Seq::Exact(a, v[k]...);
  }
  static constexpr int kConditionStep = 100;  // the relative perturbation 2^-100
  static MpfrNumber Evaluate(ExactArith& a, std::array<MpfrNumber, kArity> v) {
    return ExactOf(a, v, Operands());
  }
  // v with operand k times (1 + 2^-step), exactly.
  static std::array<MpfrNumber, kArity> Moved(std::array<MpfrNumber, kArity> v, size_t k,
                                              int step) {
    MpfrNumber moved(v[k].precision() + step + 1);
    mpfr_mul_2si(moved.get(), v[k].get(), -step, MPFR_RNDN);   // exact
    mpfr_add(moved.get(), moved.get(), v[k].get(), MPFR_RNDN);  // exact in the bits given
    v[k] = moved;
    return v;
  }
  // |(g - f) / f| 2^kConditionStep: the relative derivative times x_k.
  static double RelativeChange(const MpfrNumber& f, const MpfrNumber& g) {
    MpfrNumber q(64);
    mpfr_sub(q.get(), g.get(), f.get(), MPFR_RNDN);
    mpfr_div(q.get(), q.get(), f.get(), MPFR_RNDN);
    mpfr_mul_2si(q.get(), q.get(), kConditionStep, MPFR_RNDN);
    return std::fabs(mpfr_get_d(q.get(), MPFR_RNDN));
  }
  template <int kSequence, size_t... k>
  static TracingArith::Value TraceAt(TracingArith& a, const std::vector<TracingArith::Value>& x,
                                     std::index_sequence<k...>) {
    return Seq::template At<kSequence>(a, x[k]...);
  }
  template <int kSequence, class A, class T, size_t... k>
  static void StageAt(A& a, const T* x, std::index_sequence<k...>) {
    using V = typename A::Value;
    const std::array<V, kArity> v{(k == 0 ? a.First() : a.Known(static_cast<typename A::IV>(x[k])))...};
    const V out = Seq::template At<kSequence>(a, v[k]...);
    if (out.head != static_cast<int>(a.chain().steps.size())) {
      // The result is not the chain's last value (or not of the first
      // operand at all): nothing to apply.
      a.MarkFailed();
    }
  }
  template <size_t... k>
  static StagingArith<ExactArith>::Value ExactStaged(StagingArith<ExactArith>& a, const float* x,
                                                     std::index_sequence<k...>) {
    using V = StagingArith<ExactArith>::Value;
    const std::array<V, kArity> v{(k == 0 ? a.First() : a.Known(a.inner().FromFloat(x[k])))...};
    return Seq::Exact(a, v[k]...);
  }
  template <class A>
  static StagedChain Finish(A& a) {
    StagedChain chain = a.chain();
    for (size_t i = 0; i < chain.steps.size(); ++i) {
      chain.c.push_back(static_cast<double>(a.known_c_[i]));
      chain.d.push_back(static_cast<double>(a.known_d_[i]));
    }
    return chain;
  }
  template <int kSequence, class A, class T, size_t... k>
  static auto Apply(A& a, const T* x, std::index_sequence<k...>) {
    using V = typename A::Value;
    return Seq::template At<kSequence>(a, static_cast<V>(x[k])...);
  }

  const ElementwiseOpInfo& op_;
};

const std::vector<std::unique_ptr<ElementwiseOracle>>& Oracles() {
  static const std::vector<std::unique_ptr<ElementwiseOracle>> oracles = [] {
    std::vector<std::unique_ptr<ElementwiseOracle>> all;
#define ULPGATE_ORACLE(Spec, ns) \
  all.push_back(std::make_unique<OracleFor<Spec, ns::Sequences>>(ElementwiseOps()[all.size()]));
    ULPGATE_ELEMENTWISE_OPS(ULPGATE_ORACLE)
#undef ULPGATE_ORACLE
    return all;
  }();
  return oracles;
}

// The format's row of kNarrowFormats; throws for a format without one.
const NarrowFormat& RequireNarrow(const ElementwiseOpInfo& op, const FloatFormat& format) {
  const int f = NarrowFormatIndex(format.name);
  if (f < 0) {
    throw InputError(std::string(op.name) + " has no kernels in " + format.name);
  }
  return kNarrowFormats[f];
}

bool FusedAndUnfusedDiffer(const ElementwiseVariantInfo& v) {
  return v.model_fused_target != v.model_unfused_target;
}

std::vector<NarrowModelInfo> BuildNarrowModels(const ElementwiseOpInfo& op,
                                               const NarrowFormat& format) {
  std::vector<NarrowModelInfo> models;
  for (size_t m = 0; m < op.models.size(); ++m) {
    models.push_back({std::string(op.models[m].name) + "_opmath", NarrowModelInfo::kOpmath, m,
                      0, false});
  }
  for (const NarrowVariantInfo& v : op.narrow_variants) {
    if (v.rounding != NarrowRounding::kPerOp) continue;
    const size_t sequence = static_cast<size_t>(op.VariantIndex(v.sequence));
    if (FusedAndUnfusedDiffer(op.variants[sequence])) {
      models.push_back({std::string(v.name) + "_fma", NarrowModelInfo::kPerOp, 0, sequence, true});
      models.push_back(
          {std::string(v.name) + "_nofma", NarrowModelInfo::kPerOp, 0, sequence, false});
    } else {
      models.push_back({std::string(v.name), NarrowModelInfo::kPerOp, 0, sequence, false});
    }
  }
  for (const NarrowVariantInfo& v : op.narrow_variants) {
    if (v.rounding != NarrowRounding::kHighwayConvert) continue;
    for (size_t m = 0; m < op.models.size(); ++m) {
      if (op.models[m].sequence_of != v.sequence) continue;
      const bool truncating = format.highway == HighwayConversion::kTruncatingDemotion;
      NarrowModelInfo model{std::string(op.models[m].name) +
                                (truncating ? "_opmath_truncating" : "_opmath_hwy_soft"),
                            truncating ? NarrowModelInfo::kTruncating : NarrowModelInfo::kHighwaySoft,
                            m, 0, false};
      const bool known = std::any_of(models.begin(), models.end(),
                                     [&](const NarrowModelInfo& o) { return o.name == model.name; });
      if (!known) models.push_back(model);
    }
  }
  return models;
}


}  // namespace

const ElementwiseOracle& OracleOf(const ElementwiseOpInfo& op) { return *Oracles()[op.index]; }

const ElementwiseOracle* FindOracle(std::string_view op) {
  const ElementwiseOpInfo* info = FindElementwiseOp(op);
  return info == nullptr ? nullptr : &OracleOf(*info);
}

bool RunsIn(const ElementwiseOpInfo& /*op*/, const FloatFormat& format) {
  return IsBinary32(format) || NarrowFormatIndex(format.name) >= 0;
}

std::vector<std::string> ElementwiseDtypes(const ElementwiseOpInfo& /*op*/) {
  std::vector<std::string> dtypes = {kBinary32.name};
  for (const NarrowFormat& f : kNarrowFormats) dtypes.emplace_back(f.format->name);
  return dtypes;
}

std::vector<std::string> VariantNames(const ElementwiseOpInfo& op, const FloatFormat& format) {
  std::vector<std::string> names;
  if (IsBinary32(format)) {
    for (const auto& v : op.variants) names.emplace_back(v.name);
  } else {
    RequireNarrow(op, format);
    for (const auto& v : op.narrow_variants) names.emplace_back(v.name);
  }
  return names;
}

const std::vector<NarrowModelInfo>& NarrowModelInfos(const ElementwiseOpInfo& op,
                                                     const FloatFormat& format) {
  static const auto models = [] {
    std::vector<std::array<std::vector<NarrowModelInfo>, kNarrowFormats.size()>> all;
    for (const ElementwiseOpInfo& o : ElementwiseOps()) {
      all.emplace_back();
      for (size_t f = 0; f < kNarrowFormats.size(); ++f) {
        all.back()[f] = BuildNarrowModels(o, kNarrowFormats[f]);
      }
    }
    return all;
  }();
  return models[op.index][&RequireNarrow(op, format) - kNarrowFormats.data()];
}

std::vector<std::string> ModelNames(const ElementwiseOpInfo& op, const FloatFormat& format) {
  std::vector<std::string> names;
  if (IsBinary32(format)) {
    for (const auto& m : op.models) names.emplace_back(m.name);
  } else {
    for (const NarrowModelInfo& m : NarrowModelInfos(op, format)) names.push_back(m.name);
  }
  return names;
}

float ModelOutput(const ElementwiseOpInfo& op, const FloatFormat& format, size_t model,
                  const float* operands, bool native) {
  const ElementwiseOracle& oracle = OracleOf(op);
  if (IsBinary32(format)) return oracle.Model(model, operands, native);
  // A 16-bit operand as its bit pattern (a NaN as its sign's quiet NaN), for
  // Highway's software conversions, which turn a NaN's payload into a number.
  std::array<uint16_t, kMaxElementwiseArity> bits{};
  std::array<double, kMaxElementwiseArity> wide{};
  for (size_t k = 0; k < op.arity(); ++k) {
    bits[k] = static_cast<uint16_t>(EncodeBits(format, operands[k]));
    wide[k] = DecodeBits(format, bits[k]);
  }
  std::array<float, kMaxElementwiseArity> narrowed{};
  for (size_t k = 0; k < op.arity(); ++k) narrowed[k] = ToFloat(wide[k]);
  const NarrowModelInfo& m = NarrowModelInfos(op, format).at(model);
  switch (m.kind) {
    case NarrowModelInfo::kOpmath: {
      const float y = oracle.Model(m.f32_model, narrowed.data(), native);
      return ToFloat(native ? RoundDouble(format, y) : RoundToFormat(format, y));
    }
    case NarrowModelInfo::kPerOp:
      return ToFloat(oracle.PerOp(m.sequence, m.fused_functions, format, wide.data(), native));
    case NarrowModelInfo::kTruncating: {
      const float y = oracle.Model(m.f32_model, narrowed.data(), native);
      if (std::isnan(y)) return y;
      if (native) return ToFloat(RoundDouble(format, y, /*toward_zero=*/true));
      MpfrNumber x(kBinary32.precision, y);
      return ToFloat(TruncateToFormat(format, x.get()));
    }
    case NarrowModelInfo::kHighwaySoft: {
      std::array<float, kMaxElementwiseArity> soft{};
      for (size_t k = 0; k < op.arity(); ++k) soft[k] = HighwaySoftF16ToF32(bits[k]);
      const float y = oracle.Model(m.f32_model, soft.data(), native);
      return ToFloat(DecodeBits(format, HighwaySoftF32ToF16(y)));
    }
  }
  throw std::logic_error("unknown kind of 16-bit model");
}

std::optional<StagedChain> StageModelOutput(const ElementwiseOpInfo& op, const FloatFormat& format,
                                            size_t model, const float* operands) {
  const ElementwiseOracle& oracle = OracleOf(op);
  if (IsBinary32(format)) return oracle.StageModel(model, operands);
  // The operands as ModelOutput converts them (operand 0 unused).
  std::array<uint16_t, kMaxElementwiseArity> bits{};
  std::array<double, kMaxElementwiseArity> wide{};
  std::array<float, kMaxElementwiseArity> narrowed{}, soft{};
  for (size_t k = 1; k < op.arity(); ++k) {
    bits[k] = static_cast<uint16_t>(EncodeBits(format, operands[k]));
    wide[k] = DecodeBits(format, bits[k]);
    narrowed[k] = ToFloat(wide[k]);
    soft[k] = HighwaySoftF16ToF32(bits[k]);
  }
  const NarrowModelInfo& m = NarrowModelInfos(op, format).at(model);
  switch (m.kind) {
    case NarrowModelInfo::kOpmath:
    case NarrowModelInfo::kTruncating:
      return oracle.StageModel(m.f32_model, narrowed.data());
    case NarrowModelInfo::kPerOp:
      return oracle.StagePerOp(m.sequence, m.fused_functions, format, wide.data());
    case NarrowModelInfo::kHighwaySoft:
      return oracle.StageModel(m.f32_model, soft.data());
  }
  return std::nullopt;
}

namespace {

// Every pattern's value in a 16-bit format of the kernels (DecodeBits),
// tabulated per row of kNarrowFormats: the staged models decode a first
// operand per output. Throws for a format without a row.
const std::vector<double>& DecodedPatterns(const FloatFormat& format) {
  static const auto tables = [] {
    std::array<std::vector<double>, kNarrowFormats.size()> all;
    for (size_t f = 0; f < kNarrowFormats.size(); ++f) {
      all[f].resize(size_t{1} << kNarrowFormats[f].format->bits);
      for (uint32_t b = 0; b < all[f].size(); ++b) all[f][b] = DecodeBits(*kNarrowFormats[f].format, b);
    }
    return all;
  }();
  return tables[NarrowRow(RequireNarrowFormat(format, "staged elementwise models"))];
}

// Applies the columns' chains in arithmetic A to v[0, n) in place: one
// loop per step, the step's kind decided outside it.
template <ChainStep kStep, class A, class T>
void ApplyStepLoop(const A& a, const double* c, const double* d, bool broadcast, T* v, size_t n) {
  if (broadcast) {
    const T cc = static_cast<T>(c[0]), dd = static_cast<T>(d[0]);
    for (size_t i = 0; i < n; ++i) v[i] = ApplyChainStep<A, T>(a, kStep, v[i], cc, dd);
  } else {
    for (size_t i = 0; i < n; ++i) {
      v[i] = ApplyChainStep<A, T>(a, kStep, v[i], static_cast<T>(c[i]), static_cast<T>(d[i]));
    }
  }
}

template <class A, class T>
void ApplyColumns(const A& a, const StagedColumns& columns, size_t entry, bool broadcast, T* v,
                  size_t n) {
  for (size_t s = 0; s < columns.steps.size(); ++s) {
    const double* c = columns.c[s].data() + entry;
    const double* d = columns.d[s].data() + entry;
    switch (columns.steps[s]) {
#define ULPGATE_STEP(kind) \
  case ChainStep::kind:    \
    ApplyStepLoop<ChainStep::kind>(a, c, d, broadcast, v, n); \
    break;
      ULPGATE_STEP(kMul)
      ULPGATE_STEP(kDiv)
      ULPGATE_STEP(kDivInto)
      ULPGATE_STEP(kAdd)
      ULPGATE_STEP(kSub)
      ULPGATE_STEP(kSubFrom)
      ULPGATE_STEP(kMulAdd)
      ULPGATE_STEP(kAddProduct)
      ULPGATE_STEP(kNegMulAdd)
      ULPGATE_STEP(kSubProduct)
      ULPGATE_STEP(kSubSelfProduct)
#undef ULPGATE_STEP
    }
  }
}

}  // namespace

void ApplyStagedModel(const ElementwiseOpInfo& op, const FloatFormat& format, size_t model,
                      const StagedColumns& columns, size_t entry, bool broadcast,
                      const float* first, const uint16_t* first_bits, size_t n, float* out) {
  if (IsBinary32(format)) {
    const NativeModelArith a(op.models.at(model).fused);
    std::copy(first, first + n, out);
    ApplyColumns(a, columns, entry, broadcast, out, n);
    for (size_t i = 0; i < n; ++i) out[i] = CanonicalNan(out[i]);
    return;
  }
  const NarrowModelInfo& m = NarrowModelInfos(op, format).at(model);
  if (m.kind == NarrowModelInfo::kPerOp) {
    const NativePerOpArith a(format, m.fused_functions);
    std::vector<double> v(n);
    const std::vector<double>& decoded = DecodedPatterns(format);
    for (size_t i = 0; i < n; ++i) v[i] = decoded[first_bits[i]];
    ApplyColumns(a, columns, entry, broadcast, v.data(), n);
    for (size_t i = 0; i < n; ++i) out[i] = CanonicalNan(ToFloat(v[i]));
    return;
  }
  const NativeModelArith a(op.models.at(m.f32_model).fused);
  const std::vector<double>& decoded = DecodedPatterns(format);
  for (size_t i = 0; i < n; ++i) {
    out[i] = m.kind == NarrowModelInfo::kHighwaySoft ? HighwaySoftF16ToF32(first_bits[i])
                                                     : ToFloat(decoded[first_bits[i]]);
  }
  ApplyColumns(a, columns, entry, broadcast, out, n);
  switch (m.kind) {
    case NarrowModelInfo::kOpmath: {
      // RoundDouble(format, y) by the bits of the binary32 y.
      const RoundingBits rounding = RoundingBitsOf(format);
      for (size_t i = 0; i < n; ++i) out[i] = CanonicalNan(RoundBinary32ToFormat(rounding, out[i]));
      break;
    }
    case NarrowModelInfo::kTruncating:
      for (size_t i = 0; i < n; ++i) {
        const float y = out[i];
        out[i] = CanonicalNan(std::isnan(y) ? y : ToFloat(RoundDouble(format, y, /*toward_zero=*/true)));
      }
      break;
    case NarrowModelInfo::kHighwaySoft:
      for (size_t i = 0; i < n; ++i) {
        out[i] = CanonicalNan(ToFloat(DecodeBits(format, HighwaySoftF32ToF16(out[i]))));
      }
      break;
    case NarrowModelInfo::kPerOp:
      break;
  }
}

size_t ModelCount(const ElementwiseOpInfo& op, const FloatFormat& format) {
  return IsBinary32(format) ? op.models.size() : NarrowModelInfos(op, format).size();
}

void ModelOutputsInto(const ElementwiseOpInfo& op, const FloatFormat& format,
                      const float* operands, bool native, float* out) {
  const size_t count = ModelCount(op, format);
  for (size_t m = 0; m < count; ++m) out[m] = ModelOutput(op, format, m, operands, native);
}

std::vector<float> ModelOutputs(const ElementwiseOpInfo& op, const FloatFormat& format,
                                const float* operands, bool native) {
  std::vector<float> out(ModelCount(op, format));
  ModelOutputsInto(op, format, operands, native, out.data());
  return out;
}

std::string ExpectedModel(const ElementwiseOpInfo& op, const FloatFormat& format,
                          std::string_view variant, const TargetInfo& target) {
  if (!IsBinary32(format)) RequireNarrow(op, format);
  const std::string model = ExpectedModelName(op, format.name, variant, target);
  if (model.empty()) {
    throw InputError("unknown " + std::string(op.name) + " variant '" + std::string(variant) + "'" +
                     (IsBinary32(format) ? "" : " in " + std::string(format.name)));
  }
  return model;
}

std::vector<ModelProgram> ModelPrograms(const ElementwiseOpInfo& op, const FloatFormat& format) {
  const std::vector<std::string> operands = op.operand_names();
  std::vector<ModelProgram> programs;
  if (IsBinary32(format)) {
    for (const ElementwiseModelInfo& m : op.models) {
      if (m.expression.empty()) continue;
      programs.push_back(ParseModel(m.name, m.expression, operands, format));
    }
    return programs;
  }
  const NarrowFormat& narrow = RequireNarrow(op, format);
  for (const ElementwiseModelInfo& m : op.models) {
    if (m.expression.empty()) continue;
    const std::string expression(m.expression);
    programs.push_back(
        ParseModel(std::string(m.name) + "_opmath", "working f32; " + expression, operands, format));
    std::string per_op = std::string(m.name) + "_per_op";
    for (const NarrowVariantInfo& v : op.narrow_variants) {
      if (v.rounding == NarrowRounding::kPerOp && v.sequence == m.sequence_of) per_op = v.name;
    }
    programs.push_back(ParseModel(per_op, std::string("working ") + format.name + "; " + expression,
                                  operands, format));
  }
  if (narrow.highway == HighwayConversion::kTruncatingDemotion) {
    for (const ElementwiseModelInfo& m : op.models) {
      if (m.expression.empty()) continue;
      // The last statement is "out = ...": truncate its value.
      std::string expression(m.expression);
      const size_t out = expression.rfind("out = ");
      expression = expression.substr(0, out) + "out = " + format.name + "_rz(" +
                   expression.substr(out + 6) + ")";
      programs.push_back(ParseModel(std::string(m.name) + "_opmath_truncating",
                                    "working f32; " + expression, operands, format));
    }
  }
  return programs;
}

namespace {

// An op_sequence text (kernels/ops/<op>/<op>_spec.h) in the model language:
// named constants as hexadecimal values of the working format (as a kernel
// holds them), MulAdd(a, b, c) as fma(a, b, c) where `fused`, else a*b + c,
// and NegMulAdd(a, b, c) as fma(-a, b, c) or c - a*b. Throws
// std::invalid_argument for unbalanced parentheses.
class SequenceText {
 public:
  SequenceText(std::string_view text, bool fused, const FloatFormat& working,
               const std::vector<NamedConstant>& constants)
      : text_(text), fused_(fused), working_(working), constants_(constants) {}

  std::string Translate() {
    std::string out = Until(false);
    if (pos_ != text_.size()) throw std::invalid_argument("unbalanced ')' in " + std::string(text_));
    return out;
  }

 private:
  // The text up to the end, or (inside a call) up to the ',' or ')' that ends
  // one argument, not consumed.
  std::string Until(bool argument) {
    std::string out;
    int depth = 0;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (argument && depth == 0 && (c == ',' || c == ')')) return out;
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        const size_t start = pos_;
        while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
        out += Name(text_.substr(start, pos_ - start));
        continue;
      }
      // A number's digits and exponent (1e-3, 0x1p-2) pass as they are.
      if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
        const size_t start = pos_;
        while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.' ||
                                       ((text_[pos_] == '-' || text_[pos_] == '+') &&
                                        (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'p')))) {
          ++pos_;
        }
        out += text_.substr(start, pos_ - start);
        continue;
      }
      if (c == '(') ++depth;
      if (c == ')') {
        if (depth == 0) throw std::invalid_argument("unbalanced ')' in " + std::string(text_));
        --depth;
      }
      out += c;
      ++pos_;
    }
    if (depth != 0 || argument) throw std::invalid_argument("unbalanced '(' in " + std::string(text_));
    return out;
  }
  std::string Name(std::string_view name) {
    for (const NamedConstant& k : constants_) {
      if (k.name == name) return fmt::format("{:a}", RoundDouble(working_, k.value));
    }
    if ((name != "MulAdd" && name != "NegMulAdd") || pos_ >= text_.size() || text_[pos_] != '(') {
      return std::string(name);
    }
    ++pos_;
    std::vector<std::string> args;
    while (true) {
      args.push_back(Until(true));
      if (text_[pos_++] == ')') break;
    }
    if (args.size() != 3) throw std::invalid_argument(std::string(name) + " takes 3 arguments");
    for (std::string& arg : args) {
      arg.erase(0, arg.find_first_not_of(' '));
      arg.erase(arg.find_last_not_of(' ') + 1);
    }
    const std::string& a = args[0];
    const std::string& b = args[1];
    const std::string& c = args[2];
    if (name == "MulAdd") {
      return fused_ ? "fma(" + a + ", " + b + ", " + c + ")" : "((" + a + ")*(" + b + ") + (" + c + "))";
    }
    return fused_ ? "fma(-(" + a + "), " + b + ", " + c + ")" : "((" + c + ") - (" + a + ")*(" + b + "))";
  }

  std::string_view text_;
  bool fused_;
  const FloatFormat& working_;
  const std::vector<NamedConstant>& constants_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<ModelProgram> FreeFunctionModels(const ElementwiseOpInfo& op, const FloatFormat& format) {
  const std::vector<std::string> operands = op.operand_names();
  std::vector<std::pair<std::string_view, std::string_view>> sequences;
  for (const auto& v : op.variants) sequences.emplace_back(v.name, v.op_sequence);
  for (const auto& m : op.model_sequences) sequences.emplace_back(m.name, m.op_sequence);
  std::vector<ModelProgram> programs;
  auto parse = [&](const std::string& name, const FloatFormat& working, std::string_view text, bool fused) {
    std::string body = SequenceText(text, fused, working, op.constants).Translate();
    if (!IsBinary32(working) || !IsBinary32(format)) body = std::string("working ") + working.name + "; " + body;
    return ParseModel(name, body, operands, format);
  };
  auto add = [&](const std::string& name, const FloatFormat& working, std::string_view text, bool fused) {
    programs.push_back(parse(name, working, text, fused));
  };
  for (const auto& [name, text] : sequences) {
    // A sequence without functions has its models already, bit for bit.
    if (parse(std::string(name), kBinary32, text, false).function_calls == 0) continue;
    const std::string base(name);
    std::vector<std::pair<std::string, bool>> forms = {{base, false}};
    if (text.find("MulAdd(") != std::string_view::npos) forms = {{base + "_fma", true}, {base + "_nofma", false}};
    if (IsBinary32(format)) {
      for (const auto& [form, fused] : forms) add(form + ".free", kBinary32, text, fused);
      continue;
    }
    for (const auto& [form, fused] : forms) add(form + "_opmath.free", kBinary32, text, fused);
    // Per op, a multiply-add as two operations (an eager framework's ops) or
    // one rounded to the format (a compiler that contracts each step's f32
    // code before rounding it: XLA's f16).
    add(base + "_per_op.free", format, text, false);
    if (forms.size() == 2) add(base + "_fma_per_op.free", format, text, true);
  }
  return programs;
}

std::optional<ReductionBound> ElementwiseBound(const ElementwiseOpInfo& op, const float* operands,
                                               const FloatFormat& format) {
  for (size_t k = 0; k < op.arity(); ++k) {
    if (!std::isfinite(operands[k])) return std::nullopt;
  }
  const MpfrNumber magnitude = OracleOf(op).TermMagnitude(operands);
  // exp(x) of a large binary32 x leaves MPFR's exponent range (about
  // 2^(2^30)), where the oracle's arithmetic holds it at the largest finite
  // number (oracles/exact.h): terms that large bound nothing a result can show.
  if (!mpfr_number_p(magnitude.get()) || mpfr_get_exp(magnitude.get()) >= mpfr_get_emax()) {
    return std::nullopt;
  }
  const mpfr_prec_t precision = kElementwiseFunctionPrecision;
  ReductionBound bound(precision);
  const long widen = kBinary32.precision - format.precision;  // 0 in f32
  mpfr_mul_2si(bound.abs_sum.get(), magnitude.get(), widen, MPFR_RNDU);
  // Terms beyond MPFR's exponent range (held at its least number) count as
  // 2^-2000, still a bound, and far below every bit the fraction's decisions
  // see (MeasureBoundFraction).
  if (mpfr_regular_p(bound.abs_sum.get()) && mpfr_get_exp(bound.abs_sum.get()) < -2000) {
    mpfr_set_ui_2exp(bound.abs_sum.get(), 1, -2000, MPFR_RNDU);
  }
  bound.roundings = static_cast<uint64_t>(op.bound_roundings);
  // m half-ulps of the format's smallest subnormal, each scaled by at most 2
  // on the way to the result (reduction_bound.h).
  mpfr_set_ui_2exp(bound.underflow.get(), bound.roundings, format.emin - format.precision + 1,
                   MPFR_RNDN);
  // The terms themselves bound the intermediates of an evaluation that does
  // not overflow before its result does.
  mpfr_mul_2ui(bound.peak.get(), magnitude.get(), 1, MPFR_RNDU);
  return bound;
}

}  // namespace ulpgate
