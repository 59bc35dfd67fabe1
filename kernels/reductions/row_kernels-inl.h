// Row reductions over Highway vectors: RMSNorm and softmax, forward and
// backward (kernels/reductions/row_ops.h), the sequences of
// rmsnorm/rmsnorm_spec-inl.h and softmax/softmax_spec-inl.h run per row.
//
// Contract, per row of n (1 <= n <= kMaxRowLength) binary32 lanes, any
// alignment, outputs not aliasing inputs:
//   - the statistic: sequential and Welford schedules and the online pass run
//     in one-lane vectors of the target (its MulAdd, Exp and Log, bit for bit
//     the same in one lane as in many); the lane-parallel schedule in full
//     vectors, the last chunk padded (+0, or -inf where the term is an
//     exponential, whose Exp is then +0), joined by the spec's halving tree;
//     the row's maximum in full vectors (exact, so the same for every
//     variant); the scalar steps between (mean, sqrt, reciprocal) are single
//     correctly rounded binary32 operations, the same in any arithmetic;
//   - the elements: full vectors, the tail through one padded vector, so every
//     element runs the body's instructions.
//   model: the variant's sequence over the binary32 emulation with the
//     target's MulAdd (fused on AVX2/AVX3/AVX3_DL) and, for the lane-parallel
//     schedule, its lane count (suites/engine/reductions/row_models.h).
//   error: within the first-order bounds of docs/design.md "Row reductions".
// bf16 and f16: operands promoted exactly, the binary32 kernel, each output
// rounded once to nearest even (kernels/narrow_convert-inl.h's exact
// conversions), as reduction_narrow-inl.h does for the linear ops.

#if defined(ULPGATE_KERNELS_REDUCTIONS_ROW_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_REDUCTIONS_ROW_KERNELS_INL_H_
#undef ULPGATE_KERNELS_REDUCTIONS_ROW_KERNELS_INL_H_
#else
#define ULPGATE_KERNELS_REDUCTIONS_ROW_KERNELS_INL_H_
#endif

#include <cmath>
#include <limits>
#include <vector>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "kernels/narrow_convert-inl.h"
#include "kernels/reductions/rmsnorm/rmsnorm_spec.h"
#include "kernels/reductions/row_ops.h"
#include "kernels/reductions/softmax/softmax_spec.h"
#include "kernels/vector_arith-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

// The sequences, compiled for this target.
namespace rmsnorm_spec {
#include "kernels/reductions/row_schedules-inl.h"
#include "kernels/reductions/rmsnorm/rmsnorm_spec-inl.h"
}  // namespace rmsnorm_spec
namespace softmax_spec {
#include "kernels/reductions/row_schedules-inl.h"
#include "kernels/reductions/softmax/softmax_spec-inl.h"
}  // namespace softmax_spec

namespace impl {

// VectorArith with what the row sequences add: Sqrt (correctly rounded),
// Highway's Log, and the maximum as x > m ? x : m on every target (hn::Max
// keeps the first operand of a tie on SCALAR and the second on x86, which
// differs for zeros of both signs).
template <class D>
struct RowVectorArith : VectorArith<D> {
  using Value = hn::Vec<D>;
  HWY_INLINE Value Sqrt(Value a) const { return hn::Sqrt(a); }
  HWY_INLINE Value Log(Value a) const { return hn::Log(this->d, a); }
  HWY_INLINE Value Max(Value m, Value x) const { return hn::IfThenElse(hn::Gt(x, m), x, m); }
};

template <class D>
HWY_INLINE RowVectorArith<D> MakeArith(D d) {
  RowVectorArith<D> a;
  a.d = d;
  return a;
}

// Host binary32 for the scalar steps: one correctly rounded operation each
// (-ffp-contract=off, no excess precision on x86-64).
struct RowScalarArith : ScalarArith {
  HWY_INLINE float Sqrt(float a) const { return std::sqrt(a); }
  HWY_INLINE float Max(float m, float x) const { return x > m ? x : m; }
};

// Lanes p[0 .. count-1], `pad` above.
template <class D>
HWY_INLINE hn::Vec<D> LoadPadded(D d, const float* HWY_RESTRICT p, size_t count, float pad) {
  if (count >= hn::Lanes(d)) return hn::LoadU(d, p);
  HWY_ALIGN float buffer[hn::MaxLanes(d)];
  for (size_t j = 0; j < hn::MaxLanes(d); ++j) buffer[j] = j < count ? p[j] : pad;
  return hn::Load(d, buffer);
}

// A row's operands at index k for an arithmetic over tag D (one lane, or
// full vectors padded past n); unused operands may be null.
template <class D>
struct KernelRow {
  D d;
  const float* x;
  const float* g;
  const float* dy;
  const float* y;
  size_t n;
  float pad;
  float shift;  // softmax's maximum
  template <class A>
  HWY_INLINE hn::Vec<D> X(const A&, size_t k) const { return LoadPadded(d, x + k, n - k, pad); }
  template <class A>
  HWY_INLINE hn::Vec<D> G(const A&, size_t k) const { return LoadPadded(d, g + k, n - k, pad); }
  template <class A>
  HWY_INLINE hn::Vec<D> Dy(const A&, size_t k) const { return LoadPadded(d, dy + k, n - k, pad); }
  template <class A>
  HWY_INLINE hn::Vec<D> Y(const A&, size_t k) const { return LoadPadded(d, y + k, n - k, pad); }
  template <class A>
  HWY_INLINE hn::Vec<D> Shift(const A&) const { return hn::Set(d, shift); }
};

using OneLane = hn::CappedTag<float, 1>;
using FullLanes = hn::ScalableTag<float>;

// The mean of a row's terms by schedule kStat: RN(sum / n) of a sequential or
// lane-parallel sum, or Welford's running mean.
template <class Term, RowStat kStat>
HWY_INLINE float RowMean(const float* x, const float* g, const float* dy, size_t n) {
  const RowScalarArith sa;
  if constexpr (kStat == RowStat::kLaneParallel) {
    const FullLanes d;
    const auto la = MakeArith(d);
    const KernelRow<FullLanes> row{d, x, g, dy, nullptr, n, 0.0f, 0.0f};
    return rmsnorm_spec::MeanOfSum(sa, rmsnorm_spec::LaneParallelSum<Term>(la, sa, row, n), n);
  } else {
    const OneLane d;
    const auto a = MakeArith(d);
    const KernelRow<OneLane> row{d, x, g, dy, nullptr, n, 0.0f, 0.0f};
    if constexpr (kStat == RowStat::kWelford) {
      return hn::GetLane(rmsnorm_spec::WelfordMean<Term>(a, row, n));
    } else {
      static_assert(kStat == RowStat::kSequential, "RMSNorm: sequential, lane-parallel or Welford");
      return sa.Div(hn::GetLane(rmsnorm_spec::SequentialSum<Term>(a, row, n)),
                    static_cast<float>(n));
    }
  }
}

// out[i] = f(arith, a[i], b[i], c[i]) over full vectors and one padded tail;
// b and c may repeat a where the op has fewer operands.
template <class F>
HWY_INLINE void RowElements(const float* a, const float* b, const float* c, float* out, size_t n,
                            const F& f) {
  const FullLanes d;
  const auto arith = MakeArith(d);
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(f(arith, hn::LoadU(d, a + i), hn::LoadU(d, b + i), hn::LoadU(d, c + i)), d,
               out + i);
  }
  if (i == n) return;
  HWY_ALIGN float result[hn::MaxLanes(d)];
  const size_t rest = n - i;
  hn::Store(f(arith, LoadPadded(d, a + i, rest, 0.0f), LoadPadded(d, b + i, rest, 0.0f),
              LoadPadded(d, c + i, rest, 0.0f)),
            d, result);
  for (size_t j = 0; j < rest; ++j) out[i + j] = result[j];
}

template <RowStat kStat, RowFinish kFinish>
HWY_INLINE void RmsNormFwdRow(const float* x, const float* g, float* y, size_t n, float eps) {
  const RowScalarArith sa;
  const float mean = RowMean<rmsnorm_spec::SquareTerm, kStat>(x, nullptr, nullptr, n);
  const float scale = rmsnorm_spec::RowScale<kFinish>(sa, mean, eps);
  RowElements(x, g, g, y, n, [scale](const auto& a, auto xv, auto gv, auto) HWY_ATTR {
    return rmsnorm_spec::ForwardElement<kFinish>(a, xv, gv, a.Const(scale));
  });
}

template <RowStat kStat, RowFinish kFinish>
HWY_INLINE void RmsNormBwdRow(const float* dy, const float* x, const float* g, float* dx,
                              size_t n, float eps) {
  const RowScalarArith sa;
  const float mean = RowMean<rmsnorm_spec::SquareTerm, kStat>(x, nullptr, nullptr, n);
  const float mean_dot = RowMean<rmsnorm_spec::WeightedGradTerm, kStat>(x, g, dy, n);
  const float scale = rmsnorm_spec::RowScale<kFinish>(sa, mean, eps);
  const float neg_k = rmsnorm_spec::BackwardNegCoefficient<kFinish>(sa, scale, mean_dot);
  RowElements(dy, x, g, dx, n, [scale, neg_k](const auto& a, auto dyv, auto xv, auto gv) HWY_ATTR {
    return rmsnorm_spec::BackwardElement<kFinish>(a, dyv, xv, gv, a.Const(scale), a.Const(neg_k));
  });
}

// The row's maximum and sum of exponentials by schedule kStat.
template <RowStat kStat>
HWY_INLINE void MaxAndSum(const float* x, size_t n, float& max, float& sum) {
  const RowScalarArith sa;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  if constexpr (kStat == RowStat::kOnline) {
    const OneLane d;
    const auto a = MakeArith(d);
    const KernelRow<OneLane> row{d, x, nullptr, nullptr, nullptr, n, kNegInf, 0.0f};
    auto row_max = hn::Zero(d);
    auto row_sum = row_max;
    softmax_spec::OnlineMaxSum(a, row, n, row_max, row_sum);
    max = hn::GetLane(row_max);
    sum = hn::GetLane(row_sum);
  } else {
    const FullLanes d;
    const auto la = MakeArith(d);
    const KernelRow<FullLanes> padded{d, x, nullptr, nullptr, nullptr, n, kNegInf, 0.0f};
    max = softmax_spec::RowMax(la, sa, padded, n);
    if constexpr (kStat == RowStat::kLaneParallel) {
      const KernelRow<FullLanes> row{d, x, nullptr, nullptr, nullptr, n, kNegInf, max};
      sum = softmax_spec::LaneParallelSum<softmax_spec::ExpTerm>(la, sa, row, n);
    } else {
      static_assert(kStat == RowStat::kSequential, "softmax: sequential, lane-parallel or online");
      const OneLane d1;
      const auto a = MakeArith(d1);
      const KernelRow<OneLane> row{d1, x, nullptr, nullptr, nullptr, n, kNegInf, max};
      sum = hn::GetLane(softmax_spec::SequentialSum<softmax_spec::ExpTerm>(a, row, n));
    }
  }
}

template <RowStat kStat, RowFinish kFinish>
HWY_INLINE void SoftmaxFwdRow(const float* x, float* y, size_t n) {
  const RowScalarArith sa;
  float max, sum;
  MaxAndSum<kStat>(x, n, max, sum);
  const float scale = kFinish == RowFinish::kReciprocal ? softmax_spec::Reciprocal(sa, sum) : sum;
  RowElements(x, x, x, y, n, [max, scale](const auto& a, auto xv, auto, auto) HWY_ATTR {
    return softmax_spec::SoftmaxElement<kFinish>(a, xv, a.Const(max), a.Const(scale));
  });
}

template <RowStat kStat>
HWY_INLINE void LogSoftmaxFwdRow(const float* x, float* y, size_t n) {
  float max, sum;
  MaxAndSum<kStat>(x, n, max, sum);
  const OneLane d1;
  const float log_sum = hn::GetLane(MakeArith(d1).Log(hn::Set(d1, sum)));
  RowElements(x, x, x, y, n, [max, log_sum](const auto& a, auto xv, auto, auto) HWY_ATTR {
    return softmax_spec::LogSoftmaxElement(a, xv, a.Const(max), a.Const(log_sum));
  });
}

// The backward passes' row sum by schedule kStat.
template <class Term, RowStat kStat>
HWY_INLINE float RowSum(const float* dy, const float* y, size_t n) {
  const RowScalarArith sa;
  if constexpr (kStat == RowStat::kLaneParallel) {
    const FullLanes d;
    const auto la = MakeArith(d);
    const KernelRow<FullLanes> row{d, nullptr, nullptr, dy, y, n, 0.0f, 0.0f};
    return softmax_spec::LaneParallelSum<Term>(la, sa, row, n);
  } else {
    static_assert(kStat == RowStat::kSequential, "backward softmax: sequential or lane-parallel");
    const OneLane d;
    const auto a = MakeArith(d);
    const KernelRow<OneLane> row{d, nullptr, nullptr, dy, y, n, 0.0f, 0.0f};
    return hn::GetLane(softmax_spec::SequentialSum<Term>(a, row, n));
  }
}

template <RowStat kStat>
HWY_INLINE void SoftmaxBwdRow(const float* dy, const float* y, float* dx, size_t n) {
  const float dot = RowSum<softmax_spec::GradOutputTerm, kStat>(dy, y, n);
  RowElements(dy, y, y, dx, n, [dot](const auto& a, auto dyv, auto yv, auto) HWY_ATTR {
    return softmax_spec::SoftmaxBackwardElement(a, dyv, yv, a.Const(dot));
  });
}

template <RowStat kStat>
HWY_INLINE void LogSoftmaxBwdRow(const float* dy, const float* y, float* dx, size_t n) {
  const float grad_sum = RowSum<softmax_spec::GradTerm, kStat>(dy, y, n);
  RowElements(dy, y, y, dx, n, [grad_sum](const auto& a, auto dyv, auto yv, auto) HWY_ATTR {
    return softmax_spec::LogSoftmaxBackwardElement(a, dyv, yv, a.Const(grad_sum));
  });
}

}  // namespace impl

// The binary32 kernel (RowKernel's contract, kernels/reductions/row_ops.h).
template <RowOp kOp, RowStat kStat, RowFinish kFinish>
HWY_NOINLINE void RowF32(const void* const* operands, void* out, size_t rows, size_t n,
                         float eps) {
  const auto in = [operands](size_t k) { return static_cast<const float*>(operands[k]); };
  float* o = static_cast<float*>(out);
  for (size_t r = 0; r < rows; ++r) {
    const size_t at = r * n;
    if constexpr (kOp == RowOp::kRmsNormFwd) {
      impl::RmsNormFwdRow<kStat, kFinish>(in(0) + at, in(1), o + at, n, eps);
    } else if constexpr (kOp == RowOp::kRmsNormBwd) {
      impl::RmsNormBwdRow<kStat, kFinish>(in(0) + at, in(1) + at, in(2), o + at, n, eps);
    } else if constexpr (kOp == RowOp::kSoftmaxFwd) {
      impl::SoftmaxFwdRow<kStat, kFinish>(in(0) + at, o + at, n);
    } else if constexpr (kOp == RowOp::kLogSoftmaxFwd) {
      impl::LogSoftmaxFwdRow<kStat>(in(0) + at, o + at, n);
    } else if constexpr (kOp == RowOp::kSoftmaxBwd) {
      impl::SoftmaxBwdRow<kStat>(in(0) + at, in(1) + at, o + at, n);
    } else {
      static_assert(kOp == RowOp::kLogSoftmaxBwd, "an op without a kernel");
      impl::LogSoftmaxBwdRow<kStat>(in(0) + at, in(1) + at, o + at, n);
    }
  }
}

// bf16 and f16: promote every operand (exact), the binary32 kernel, round
// every output once (Conv: ExactBf16 or ExactF16).
template <class Conv, RowOp kOp, RowStat kStat, RowFinish kFinish>
HWY_NOINLINE void RowNarrow(const void* const* operands, void* out, size_t rows, size_t n,
                            float eps) {
  const RowOpInfo& info = GetRowOp(kOp);
  const size_t count = info.operands.size();
  std::vector<std::vector<float>> promoted(count);
  std::vector<const void*> pointers(count);
  const hn::ScalableTag<float> d;
  const narrow::U16<decltype(d)> du;
  const size_t lanes = hn::Lanes(d);
  const auto convert_all = [&](const uint16_t* from, float* to, size_t total) HWY_ATTR {
    for (size_t i = 0; i < total; i += lanes) {
      const size_t rest = total - i < lanes ? total - i : lanes;
      HWY_ALIGN uint16_t in[hn::MaxLanes(d)] = {};
      HWY_ALIGN float conv[hn::MaxLanes(d)];
      for (size_t j = 0; j < rest; ++j) in[j] = from[i + j];
      hn::Store(Conv::Promote(d, hn::Load(du, in)), d, conv);
      for (size_t j = 0; j < rest; ++j) to[i + j] = conv[j];
    }
  };
  for (size_t k = 0; k < count; ++k) {
    const size_t total = IsRowWeight(info, k) ? n : rows * n;
    promoted[k].resize(total + 1);  // +1: never empty
    convert_all(static_cast<const uint16_t*>(operands[k]), promoted[k].data(), total);
    pointers[k] = promoted[k].data();
  }
  std::vector<float> y(rows * n + 1);
  RowF32<kOp, kStat, kFinish>(pointers.data(), y.data(), rows, n, eps);
  uint16_t* o = static_cast<uint16_t*>(out);
  const size_t total = rows * n;
  for (size_t i = 0; i < total; i += lanes) {
    const size_t rest = total - i < lanes ? total - i : lanes;
    HWY_ALIGN float in[hn::MaxLanes(d)] = {};
    HWY_ALIGN uint16_t conv[hn::MaxLanes(d)];
    for (size_t j = 0; j < rest; ++j) in[j] = y[i + j];
    hn::Store(Conv::Demote(d, hn::Load(d, in)), du, conv);
    for (size_t j = 0; j < rest; ++j) o[i + j] = conv[j];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_REDUCTIONS_ROW_KERNELS_INL_H_
