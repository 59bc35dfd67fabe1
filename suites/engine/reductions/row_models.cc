#include "suites/engine/reductions/row_models.h"

#include <limits>
#include <stdexcept>

#include "kernels/reductions/rmsnorm/rmsnorm_spec.h"
#include "kernels/reductions/softmax/softmax_spec.h"
#include "oracles/highway_math.h"
#include "oracles/ieee_emulation.h"

namespace ulpgate {
namespace {

// The binary32 emulation with what the row sequences call: Highway's Exp
// (ExpOfSequences: +inf above 104, as the kernels' VectorArith::Exp) and Log,
// their multiply-adds fused as the arithmetic's, and the maximum as the
// kernels take it (x > m ? x : m).
class RowModelArith : public Binary32Arith {
 public:
  explicit RowModelArith(bool fused) : Binary32Arith(fused) {}
  float Exp(float a) const { return ExpOfSequences(a, fused()); }
  float Log(float a) const { return HighwayLog(a, fused()); }
  float Max(float m, float x) const { return x > m ? x : m; }
};

// L lanes of RowModelArith, operation by operation: one vector instruction.
class RowLaneArith {
 public:
  using Value = std::vector<float>;
  RowLaneArith(const RowModelArith& scalar, size_t lanes) : s_(scalar), lanes_(lanes) {}
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
  const RowModelArith& s_;
  size_t lanes_;
};

// The operands at k: one value for the scalar arithmetic, lanes k .. k+L-1
// padded past n for the lane arithmetic, as the kernels' loads give them.
struct ModelRow {
  RowOperands operands;
  size_t n;
  float pad;
  float shift;

  float At(const float* p, const RowModelArith&, size_t k) const { return p[k]; }
  std::vector<float> At(const float* p, const RowLaneArith& la, size_t k) const {
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

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

template <class Term>
float RowMean(RowStat stat, const RowModelArith& a, const RowModel& model, const ModelRow& row,
              size_t n) {
  switch (stat) {
    case RowStat::kSequential:
      return rmsnorm_spec::MeanOfSum(a, rmsnorm_spec::SequentialSum<Term>(a, row, n), n);
    case RowStat::kLaneParallel: {
      const RowLaneArith la(a, model.lanes);
      return rmsnorm_spec::MeanOfSum(a, rmsnorm_spec::LaneParallelSum<Term>(la, a, row, n), n);
    }
    case RowStat::kWelford:
      return rmsnorm_spec::WelfordMean<Term>(a, row, n);
    case RowStat::kOnline:
      break;
  }
  throw std::invalid_argument("RMSNorm: no online statistic");
}

template <RowFinish kFinish>
std::vector<float> RmsNorm(bool backward, RowStat stat, const RowModelArith& a,
                           const RowModel& model, const RowOperands& in, size_t n, float eps) {
  const ModelRow row{in, n, 0.0f, 0.0f};
  const float mean = RowMean<rmsnorm_spec::SquareTerm>(stat, a, model, row, n);
  const float scale = rmsnorm_spec::RowScale<kFinish>(a, mean, eps);
  std::vector<float> out(n);
  if (!backward) {
    for (size_t i = 0; i < n; ++i) {
      out[i] = rmsnorm_spec::ForwardElement<kFinish>(a, in.x[i], in.g[i], scale);
    }
    return out;
  }
  const float mean_dot = RowMean<rmsnorm_spec::WeightedGradTerm>(stat, a, model, row, n);
  const float neg_k = rmsnorm_spec::BackwardNegCoefficient<kFinish>(a, scale, mean_dot);
  for (size_t i = 0; i < n; ++i) {
    out[i] = rmsnorm_spec::BackwardElement<kFinish>(a, in.dy[i], in.x[i], in.g[i], scale, neg_k);
  }
  return out;
}

// The row's maximum and sum of exponentials.
softmax_spec::MaxAndSum<float> MaxAndSum(RowStat stat, const RowModelArith& a,
                                         const RowModel& model, const RowOperands& in, size_t n) {
  if (stat == RowStat::kOnline) return softmax_spec::OnlineMaxSum(a, ModelRow{in, n, kNegInf, 0.0f}, n);
  const RowLaneArith la(a, model.lanes);
  const float max = softmax_spec::RowMax(la, a, ModelRow{in, n, kNegInf, 0.0f}, n);
  const ModelRow row{in, n, kNegInf, max};
  if (stat == RowStat::kLaneParallel) {
    return {max, softmax_spec::LaneParallelSum<softmax_spec::ExpTerm>(la, a, row, n)};
  }
  return {max, softmax_spec::SequentialSum<softmax_spec::ExpTerm>(a, row, n)};
}

template <class Term>
float RowSum(RowStat stat, const RowModelArith& a, const RowModel& model, const RowOperands& in,
             size_t n) {
  const ModelRow row{in, n, 0.0f, 0.0f};
  if (stat == RowStat::kLaneParallel) {
    const RowLaneArith la(a, model.lanes);
    return softmax_spec::LaneParallelSum<Term>(la, a, row, n);
  }
  return softmax_spec::SequentialSum<Term>(a, row, n);
}

}  // namespace

RowOperands RowOperandsOf(const RowOpInfo& op, const std::vector<const float*>& tensors,
                          size_t r, size_t n) {
  RowOperands row;
  for (size_t k = 0; k < op.operands.size(); ++k) {
    const std::string_view name = op.operands[k];
    const float* p = tensors.at(k) + (IsRowWeight(op, k) ? 0 : r * n);
    if (name == "x") row.x = p;
    else if (name == "g") row.g = p;
    else if (name == "dy") row.dy = p;
    else if (name == "y") row.y = p;
  }
  return row;
}

std::string RowModel::Name(const RowVariant& variant) const {
  std::string name(variant.name);
  if (variant.stat == RowStat::kLaneParallel) name += "_x" + std::to_string(lanes);
  return name + (fused ? "_fused" : "_unfused");
}

RowModel ExpectedRowModel(bool fused_muladd, size_t f32_lanes) {
  return {fused_muladd, RowParallelLanes(f32_lanes)};
}

std::vector<float> RowModelOutputs(const RowOpInfo& op, const RowVariant& variant,
                                   const RowModel& model, const RowOperands& in, size_t n,
                                   float eps) {
  if (n == 0 || n > kMaxRowLength) throw std::invalid_argument("row length out of range");
  const RowModelArith a(model.fused);
  std::vector<float> out(n);
  switch (op.op) {
    case RowOp::kRmsNormFwd:
    case RowOp::kRmsNormBwd: {
      const bool backward = op.op == RowOp::kRmsNormBwd;
      return variant.finish == RowFinish::kRsqrt
                 ? RmsNorm<RowFinish::kRsqrt>(backward, variant.stat, a, model, in, n, eps)
                 : RmsNorm<RowFinish::kSqrtDivide>(backward, variant.stat, a, model, in, n, eps);
    }
    case RowOp::kSoftmaxFwd: {
      const auto both = MaxAndSum(variant.stat, a, model, in, n);
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
      const auto both = MaxAndSum(variant.stat, a, model, in, n);
      const float log_sum = a.Log(both.sum);
      for (size_t i = 0; i < n; ++i) {
        out[i] = softmax_spec::LogSoftmaxElement(a, in.x[i], both.max, log_sum);
      }
      return out;
    }
    case RowOp::kSoftmaxBwd: {
      const float dot = RowSum<softmax_spec::GradOutputTerm>(variant.stat, a, model, in, n);
      for (size_t i = 0; i < n; ++i) {
        out[i] = softmax_spec::SoftmaxBackwardElement(a, in.dy[i], in.y[i], dot);
      }
      return out;
    }
    case RowOp::kLogSoftmaxBwd: {
      const float sum = RowSum<softmax_spec::GradTerm>(variant.stat, a, model, in, n);
      for (size_t i = 0; i < n; ++i) {
        out[i] = softmax_spec::LogSoftmaxBackwardElement(a, in.dy[i], in.y[i], sum);
      }
      return out;
    }
  }
  throw std::logic_error("RowModelOutputs: unknown op");
}

}  // namespace ulpgate
