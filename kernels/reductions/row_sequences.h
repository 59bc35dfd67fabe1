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
  float Exp(float a) const { return ExpOfSequences(a, fused()); }
  float Log(float a) const { return HighwayLog(a, fused()); }
  float Max(float m, float x) const { return x > m ? x : m; }

 private:
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

// The n binary32 outputs of one row of `op` by `variant`, its lane-parallel
// statistic over `lanes` lanes, every operation of `base` (a binary32
// arithmetic with fused()). Throws std::invalid_argument for n = 0 or
// n > kMaxRowLength.
template <class B>
std::vector<float> RowSequenceOutputs(const B& base, const RowOpInfo& op,
                                      const RowVariant& variant, size_t lanes,
                                      const RowOperands& in, size_t n, float eps) {
  if (n == 0 || n > kMaxRowLength) throw std::invalid_argument("row length out of range");
  const row_models_detail::RowFunctionArith<B> a(base);
  using namespace row_models_detail;
  std::vector<float> out(n);
  switch (op.op) {
    case RowOp::kRmsNormFwd:
    case RowOp::kRmsNormBwd: {
      const bool backward = op.op == RowOp::kRmsNormBwd;
      return variant.finish == RowFinish::kRsqrt
                 ? RmsNorm<RowFinish::kRsqrt>(backward, variant.stat, a, lanes, in, n, eps)
                 : RmsNorm<RowFinish::kSqrtDivide>(backward, variant.stat, a, lanes, in, n, eps);
    }
    case RowOp::kSoftmaxFwd: {
      const auto both = MaxAndSum(variant.stat, a, lanes, in, n);
      if (variant.finish == RowFinish::kReciprocal) {
        const float inverse = softmax_spec::Reciprocal(a, both.sum);
        for (size_t i = 0; i < n; ++i) {
          out[i] = softmax_spec::SoftmaxElement<RowFinish::kReciprocal>(a, in.x[i], both.max,
                                                                         inverse);
        }
      } else {
        for (size_t i = 0; i < n; ++i) {
          out[i] = softmax_spec::SoftmaxElement<RowFinish::kDivide>(a, in.x[i], both.max, both.sum);
        }
      }
      return out;
    }
    case RowOp::kLogSoftmaxFwd: {
      const auto both = MaxAndSum(variant.stat, a, lanes, in, n);
      const float log_sum = a.Log(both.sum);
      for (size_t i = 0; i < n; ++i) {
        out[i] = softmax_spec::LogSoftmaxElement(a, in.x[i], both.max, log_sum);
      }
      return out;
    }
    case RowOp::kSoftmaxBwd: {
      const float dot = RowSum<softmax_spec::GradOutputTerm>(variant.stat, a, lanes, in, n);
      for (size_t i = 0; i < n; ++i) {
        out[i] = softmax_spec::SoftmaxBackwardElement(a, in.dy[i], in.y[i], dot);
      }
      return out;
    }
    case RowOp::kLogSoftmaxBwd: {
      const float sum = RowSum<softmax_spec::GradTerm>(variant.stat, a, lanes, in, n);
      for (size_t i = 0; i < n; ++i) {
        out[i] = softmax_spec::LogSoftmaxBackwardElement(a, in.dy[i], in.y[i], sum);
      }
      return out;
    }
  }
  throw std::logic_error("RowSequenceOutputs: unknown op");
}

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_REDUCTIONS_ROW_SEQUENCES_H_
