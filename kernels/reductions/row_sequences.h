// The row reductions' sequences over a binary32 arithmetic, whole rows at a
// time: the op sequences of rmsnorm/rmsnorm_spec-inl.h and
// softmax/softmax_spec-inl.h with Highway 1.0.3's Exp and Log ported
// operation by operation (oracles/highway_math.h) and MulAdd fused or not as
// the arithmetic's; a lane-parallel statistic over as many emulated lanes as
// the target's vector has. Over the binary32 emulation (oracles/
// ieee_emulation.h) this is a variant's bit-exact model
// (suites/engine/reductions/row_models.h).
//
// Plain C++ templates, no MPFR: the arithmetic is the caller's.
#ifndef ULPGATE_KERNELS_REDUCTIONS_ROW_SEQUENCES_H_
#define ULPGATE_KERNELS_REDUCTIONS_ROW_SEQUENCES_H_

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <vector>

#include "kernels/reductions/rmsnorm/rmsnorm_spec.h"
#include "kernels/reductions/row_ops.h"
#include "kernels/reductions/softmax/softmax_spec.h"
#include "oracles/highway_math.h"

namespace ulpgate {

// One row's operands as binary32 values (a 16-bit format's promoted exactly),
// by role; an op reads the ones its definition names (row_ops.h), the others
// may be null. g has n values, the others the row's n.
struct RowOperands {
  const float* x = nullptr;
  const float* g = nullptr;
  const float* dy = nullptr;
  const float* y = nullptr;
};

namespace row_models_detail {

// A binary32 arithmetic B (the emulation, Binary32Arith, or any with Value =
// float and fused()) with what the row sequences call: Highway's Exp
// (ExpOfSequences: +inf above 104, as the kernels' VectorArith::Exp) and Log,
// their multiply-adds fused as B's, and the maximum as the kernels take it
// (x > m ? x : m).
template <class B>
class RowFunctionArith {
 public:
  using Value = float;
  explicit RowFunctionArith(const B& base) : b_(base) {}
  bool fused() const { return b_.fused(); }
  float Const(float c) const { return c; }
  float Zero() const { return 0.0f; }
  float Add(float a, float b) const { return b_.Add(a, b); }
  float Sub(float a, float b) const { return b_.Sub(a, b); }
  float Mul(float a, float b) const { return b_.Mul(a, b); }
  float Div(float a, float b) const { return b_.Div(a, b); }
  float Sqrt(float a) const { return b_.Sqrt(a); }
  float MulAdd(float a, float b, float c) const { return b_.MulAdd(a, b, c); }
  float Exp(float a) const { return FunctionResult(b_, ExpOfSequences(a, fused()), 0); }
  float Log(float a) const { return FunctionResult(b_, HighwayLog(a, fused()), 0); }
  // 1/sqrt(v) as one function: binary32's correctly rounded square root and
  // quotient (the harness contracts nothing), then the format's rounding.
  float Rsqrt(float v) const { return FunctionResult(b_, 1.0f / std::sqrt(v), 0); }
  float Max(float m, float x) const { return x > m ? x : m; }

 private:
  // An arithmetic that rounds every result to a narrower format (NumPy's
  // float16, ml_dtypes' bfloat16, XLA's per-op 16-bit code: a function
  // computed in binary32 and its result rounded to the format, as every +
  // and * is) declares RoundFunction; the others keep the binary32 value.
  template <class A>
  static auto FunctionResult(const A& b, float v, int) -> decltype(b.RoundFunction(v)) {
    return b.RoundFunction(v);
  }
  template <class A>
  static float FunctionResult(const A&, float v, long) {
    return v;
  }
  const B& b_;
};

// L lanes of a RowFunctionArith S, operation by operation: one vector
// instruction.
template <class S>
class RowLaneArith {
 public:
  using Value = std::vector<float>;
  RowLaneArith(const S& scalar, size_t lanes) : s_(scalar), lanes_(lanes) {}
  size_t Lanes() const { return lanes_; }
  Value Zero() const { return Value(lanes_, 0.0f); }
  Value Const(float c) const { return Value(lanes_, c); }
  Value ToScalars(const Value& v) const { return v; }
  Value Add(const Value& a, const Value& b) const {
    return Map(a, b, [this](float p, float q) { return s_.Add(p, q); });
  }
  Value Sub(const Value& a, const Value& b) const {
    return Map(a, b, [this](float p, float q) { return s_.Sub(p, q); });
  }
  Value Mul(const Value& a, const Value& b) const {
    return Map(a, b, [this](float p, float q) { return s_.Mul(p, q); });
  }
  Value Max(const Value& a, const Value& b) const {
    return Map(a, b, [this](float p, float q) { return s_.Max(p, q); });
  }
  Value MulAdd(const Value& a, const Value& b, const Value& c) const {
    Value r(lanes_);
    for (size_t j = 0; j < lanes_; ++j) r[j] = s_.MulAdd(a[j], b[j], c[j]);
    return r;
  }
  Value Exp(const Value& a) const {
    Value r(lanes_);
    for (size_t j = 0; j < lanes_; ++j) r[j] = s_.Exp(a[j]);
    return r;
  }

 private:
  template <class F>
  Value Map(const Value& a, const Value& b, F f) const {
    Value r(lanes_);
    for (size_t j = 0; j < lanes_; ++j) r[j] = f(a[j], b[j]);
    return r;
  }
  const S& s_;
  size_t lanes_;
};

// The operands at k: one value for the scalar arithmetic, lanes k .. k+L-1
// padded past n for the lane arithmetic, as the kernels' loads give them.
struct ModelRow {
  RowOperands operands;
  size_t n;
  float pad;
  float shift;

  template <class A>
  float At(const float* p, const A&, size_t k) const {
    return p[k];
  }
  template <class S>
  std::vector<float> At(const float* p, const RowLaneArith<S>& la, size_t k) const {
    std::vector<float> v(la.Lanes());
    for (size_t j = 0; j < v.size(); ++j) v[j] = k + j < n ? p[k + j] : pad;
    return v;
  }
  template <class A>
  typename A::Value X(const A& a, size_t k) const { return At(operands.x, a, k); }
  template <class A>
  typename A::Value G(const A& a, size_t k) const { return At(operands.g, a, k); }
  template <class A>
  typename A::Value Dy(const A& a, size_t k) const { return At(operands.dy, a, k); }
  template <class A>
  typename A::Value Y(const A& a, size_t k) const { return At(operands.y, a, k); }
  template <class A>
  typename A::Value Shift(const A& a) const { return a.Const(shift); }
};

inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();

template <class Term, class A>
float RowMean(RowStat stat, const A& a, size_t lanes, const ModelRow& row, size_t n) {
  switch (stat) {
    case RowStat::kSequential:
      return rmsnorm_spec::MeanOfSum(a, rmsnorm_spec::SequentialSum<Term>(a, row, n), n);
    case RowStat::kLaneParallel: {
      const RowLaneArith<A> la(a, lanes);
      return rmsnorm_spec::MeanOfSum(a, rmsnorm_spec::LaneParallelSum<Term>(la, a, row, n), n);
    }
    case RowStat::kWelford:
      return rmsnorm_spec::WelfordMean<Term>(a, row, n);
    case RowStat::kOnline:
      break;
  }
  throw std::invalid_argument("RMSNorm: no online statistic");
}

template <RowFinish kFinish, class A>
std::vector<float> RmsNorm(bool backward, RowStat stat, const A& a, size_t lanes,
                           const RowOperands& in, size_t n, float eps) {
  const ModelRow row{in, n, 0.0f, 0.0f};
  const float mean = RowMean<rmsnorm_spec::SquareTerm>(stat, a, lanes, row, n);
  const float scale = rmsnorm_spec::RowScale<kFinish>(a, mean, eps);
  std::vector<float> out(n);
  if (!backward) {
    for (size_t i = 0; i < n; ++i) {
      out[i] = rmsnorm_spec::ForwardElement<kFinish>(a, in.x[i], in.g[i], scale);
    }
    return out;
  }
  const float mean_dot = RowMean<rmsnorm_spec::WeightedGradTerm>(stat, a, lanes, row, n);
  const float neg_k = rmsnorm_spec::BackwardNegCoefficient<kFinish>(a, scale, mean_dot);
  for (size_t i = 0; i < n; ++i) {
    out[i] = rmsnorm_spec::BackwardElement<kFinish>(a, in.dy[i], in.x[i], in.g[i], scale, neg_k);
  }
  return out;
}

// The row's maximum and sum of exponentials.
template <class A>
softmax_spec::MaxAndSum<float> MaxAndSum(RowStat stat, const A& a, size_t lanes,
                                         const RowOperands& in, size_t n) {
  if (stat == RowStat::kOnline) {
    softmax_spec::MaxAndSum<float> both;
    softmax_spec::OnlineMaxSum(a, ModelRow{in, n, kNegInf, 0.0f}, n, both.max, both.sum);
    return both;
  }
  const RowLaneArith<A> la(a, lanes);
  const float max = softmax_spec::RowMax(la, a, ModelRow{in, n, kNegInf, 0.0f}, n);
  const ModelRow row{in, n, kNegInf, max};
  if (stat == RowStat::kLaneParallel) {
    return {max, softmax_spec::LaneParallelSum<softmax_spec::ExpTerm>(la, a, row, n)};
  }
  return {max, softmax_spec::SequentialSum<softmax_spec::ExpTerm>(a, row, n)};
}

template <class Term, class A>
float RowSum(RowStat stat, const A& a, size_t lanes, const RowOperands& in, size_t n) {
  const ModelRow row{in, n, 0.0f, 0.0f};
  if (stat == RowStat::kLaneParallel) {
    const RowLaneArith<A> la(a, lanes);
    return softmax_spec::LaneParallelSum<Term>(la, a, row, n);
  }
  return softmax_spec::SequentialSum<Term>(a, row, n);
}

}  // namespace row_models_detail

// What a row's outputs depend on beyond its operands: the values its
// reduction gives every element (RowOpInfo::statistics names them: the mean
// of squares, the sum of exponentials ...), and softmax's row maximum, which
// no order of evaluation changes (RowMax).
struct RowStatistics {
  float max = 0;
  std::array<float, 2> value{};
};

// The statistics of one row of `op` as `variant` reduces them, its
// lane-parallel statistic over `lanes` lanes, every operation of `base`.
template <class B>
RowStatistics RowStatisticsOf(const B& base, const RowOpInfo& op, const RowVariant& variant,
                              size_t lanes, const RowOperands& in, size_t n) {
  const row_models_detail::RowFunctionArith<B> a(base);
  using namespace row_models_detail;
  RowStatistics s;
  switch (op.op) {
    case RowOp::kRmsNormFwd:
    case RowOp::kRmsNormBwd: {
      const ModelRow row{in, n, 0.0f, 0.0f};
      s.value[0] = RowMean<rmsnorm_spec::SquareTerm>(variant.stat, a, lanes, row, n);
      if (op.op == RowOp::kRmsNormBwd) {
        s.value[1] = RowMean<rmsnorm_spec::WeightedGradTerm>(variant.stat, a, lanes, row, n);
      }
      return s;
    }
    case RowOp::kSoftmaxFwd:
    case RowOp::kLogSoftmaxFwd: {
      const auto both = MaxAndSum(variant.stat, a, lanes, in, n);
      s.max = both.max;
      s.value[0] = both.sum;
      return s;
    }
    case RowOp::kSoftmaxBwd:
      s.value[0] = RowSum<softmax_spec::GradOutputTerm>(variant.stat, a, lanes, in, n);
      return s;
    case RowOp::kLogSoftmaxBwd:
      s.value[0] = RowSum<softmax_spec::GradTerm>(variant.stat, a, lanes, in, n);
      return s;
  }
  throw std::logic_error("RowStatisticsOf: unknown op");
}

// The sum of the magnitudes of the terms each statistic reduces (for a mean,
// divided by n), in binary64: what the error bound of a binary32 sum of them
// is proportional to. Each term rounded on its own by `base`.
template <class B>
std::array<double, 2> RowStatisticMagnitudes(const B& base, const RowOpInfo& op,
                                             const RowOperands& in, size_t n) {
  const row_models_detail::RowFunctionArith<B> a(base);
  using namespace row_models_detail;
  std::array<double, 2> m{};
  auto add = [&](auto term, const ModelRow& row, size_t k, double scale) {
    double total = 0;
    for (size_t i = 0; i < n; ++i) total += std::fabs(static_cast<double>(term.Rounded(a, row, i)));
    m[k] = total * scale;
  };
  const double mean = 1.0 / static_cast<double>(n);
  switch (op.op) {
    case RowOp::kRmsNormFwd:
    case RowOp::kRmsNormBwd: {
      const ModelRow row{in, n, 0.0f, 0.0f};
      add(rmsnorm_spec::SquareTerm{}, row, 0, mean);
      if (op.op == RowOp::kRmsNormBwd) add(rmsnorm_spec::WeightedGradTerm{}, row, 1, mean);
      return m;
    }
    case RowOp::kSoftmaxFwd:
    case RowOp::kLogSoftmaxFwd: {
      const RowLaneArith<decltype(a)> la(a, 1);
      const float max = softmax_spec::RowMax(la, a, ModelRow{in, n, kNegInf, 0.0f}, n);
      add(softmax_spec::ExpTerm{}, ModelRow{in, n, kNegInf, max}, 0, 1.0);
      return m;
    }
    case RowOp::kSoftmaxBwd:
      add(softmax_spec::GradOutputTerm{}, ModelRow{in, n, 0.0f, 0.0f}, 0, 1.0);
      return m;
    case RowOp::kLogSoftmaxBwd:
      add(softmax_spec::GradTerm{}, ModelRow{in, n, 0.0f, 0.0f}, 0, 1.0);
      return m;
  }
  throw std::logic_error("RowStatisticMagnitudes: unknown op");
}

// The elements of one row from its statistics: the variant's finish (or
// another implementation's epilogue, `step`), every operation of `base`.
// sink(i, y_i) takes the outputs in order and returns false to stop early (a
// search that has seen a mismatch).
// `function_values`, where given, are the values of the function each element
// calls on its operands alone (RowOpInfo::element_function: log-softmax
// backward's Exp(y_i)), in place of Highway's: another implementation's.
// `statistic_function`, where given, is the value of the function the
// elements take of the row's statistic, in place of the epilogue's own:
// log-softmax's Log(S), RMSNorm's scale r where it multiplies by one (the
// rsqrt finish and form); another implementation's.
template <class B, class Sink>
void RowEpilogue(const B& base, const RowOpInfo& op, RowFinish finish, RowEpilogueStep step,
                 const RowOperands& in, size_t n, float eps, const RowStatistics& s, Sink&& sink,
                 const float* function_values = nullptr, const float* statistic_function = nullptr) {
  const row_models_detail::RowFunctionArith<B> a(base);
  switch (op.op) {
    case RowOp::kRmsNormFwd:
    case RowOp::kRmsNormBwd: {
      const bool rsqrt = finish == RowFinish::kRsqrt || step == RowEpilogueStep::kRsqrtFunction;
      const float scale = rsqrt && statistic_function != nullptr ? *statistic_function
                          : step == RowEpilogueStep::kRsqrtFunction ? a.Rsqrt(a.Add(s.value[0], eps))
                          : rsqrt ? rmsnorm_spec::RowScale<RowFinish::kRsqrt>(a, s.value[0], eps)
                                  : rmsnorm_spec::RowScale<RowFinish::kSqrtDivide>(a, s.value[0], eps);
      if (op.op == RowOp::kRmsNormFwd) {
        for (size_t i = 0; i < n; ++i) {
          const float y = rsqrt ? rmsnorm_spec::ForwardElement<RowFinish::kRsqrt>(a, in.x[i], in.g[i], scale)
                                : rmsnorm_spec::ForwardElement<RowFinish::kSqrtDivide>(a, in.x[i], in.g[i], scale);
          if (!sink(i, y)) return;
        }
        return;
      }
      const float neg_k = rsqrt ? rmsnorm_spec::BackwardNegCoefficient<RowFinish::kRsqrt>(a, scale, s.value[1])
                                : rmsnorm_spec::BackwardNegCoefficient<RowFinish::kSqrtDivide>(a, scale, s.value[1]);
      for (size_t i = 0; i < n; ++i) {
        const float dx =
            rsqrt ? rmsnorm_spec::BackwardElement<RowFinish::kRsqrt>(a, in.dy[i], in.x[i], in.g[i], scale, neg_k)
                  : rmsnorm_spec::BackwardElement<RowFinish::kSqrtDivide>(a, in.dy[i], in.x[i], in.g[i], scale,
                                                                          neg_k);
        if (!sink(i, dx)) return;
      }
      return;
    }
    case RowOp::kSoftmaxFwd: {
      if (finish == RowFinish::kReciprocal) {
        const float inverse = softmax_spec::Reciprocal(a, s.value[0]);
        for (size_t i = 0; i < n; ++i) {
          // SoftmaxElement's sequence with the exponential given.
          const float y = function_values != nullptr
                              ? a.Mul(function_values[i], inverse)
                              : softmax_spec::SoftmaxElement<RowFinish::kReciprocal>(a, in.x[i], s.max, inverse);
          if (!sink(i, y)) return;
        }
      } else {
        for (size_t i = 0; i < n; ++i) {
          const float y = function_values != nullptr
                              ? a.Div(function_values[i], s.value[0])
                              : softmax_spec::SoftmaxElement<RowFinish::kDivide>(a, in.x[i], s.max, s.value[0]);
          if (!sink(i, y)) return;
        }
      }
      return;
    }
    case RowOp::kLogSoftmaxFwd: {
      const float log_sum = statistic_function != nullptr ? *statistic_function : a.Log(s.value[0]);
      for (size_t i = 0; i < n; ++i) {
        if (!sink(i, softmax_spec::LogSoftmaxElement(a, in.x[i], s.max, log_sum))) return;
      }
      return;
    }
    case RowOp::kSoftmaxBwd:
      for (size_t i = 0; i < n; ++i) {
        const float dx = step == RowEpilogueStep::kProductDifference
                             ? a.MulAdd(a.Mul(a.Const(-1.0f), in.y[i]), s.value[0], a.Mul(in.dy[i], in.y[i]))
                             : softmax_spec::SoftmaxBackwardElement(a, in.dy[i], in.y[i], s.value[0]);
        if (!sink(i, dx)) return;
      }
      return;
    case RowOp::kLogSoftmaxBwd:
      for (size_t i = 0; i < n; ++i) {
        // The contracted step rounds once whatever the target's MulAdd:
        // exact product and sum, then one rounding (std::fma).
        const float e = function_values != nullptr ? function_values[i] : a.Exp(in.y[i]);
        // LogSoftmaxBackwardElement's sequence with the exponential given.
        const float dx = step == RowEpilogueStep::kContracted ? std::fma(-e, s.value[0], in.dy[i])
                                                              : a.Sub(in.dy[i], a.Mul(e, s.value[0]));
        if (!sink(i, dx)) return;
      }
      return;
  }
  throw std::logic_error("RowEpilogue: unknown op");
}

// The n binary32 outputs of one row of `op` by `variant`, its lane-parallel
// statistic over `lanes` lanes, every operation of `base` (a binary32
// arithmetic with fused()): its statistics, then its epilogue. Throws
// std::invalid_argument for n = 0 or n > kMaxRowLength.
template <class B>
std::vector<float> RowSequenceOutputs(const B& base, const RowOpInfo& op,
                                      const RowVariant& variant, size_t lanes,
                                      const RowOperands& in, size_t n, float eps) {
  if (n == 0 || n > kMaxRowLength) throw std::invalid_argument("row length out of range");
  const RowStatistics s = RowStatisticsOf(base, op, variant, lanes, in, n);
  std::vector<float> out(n);
  RowEpilogue(base, op, variant.finish, RowEpilogueStep::kVariant, in, n, eps, s, [&](size_t i, float y) {
    out[i] = y;
    return true;
  });
  return out;
}

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_REDUCTIONS_ROW_SEQUENCES_H_
