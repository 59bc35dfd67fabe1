// The arithmetic of kernels/*_spec.h over Highway vectors: one rounded
// operation per Highway op, so a spec instantiated with it is the SIMD kernel.
// Whether NegMulAdd is one rounding is the target's business: in Highway 1.0.3
// it is an FMA instruction on AVX2/AVX3/AVX3_DL and `add - mul*x` (two
// roundings) on SSSE3/SSE4/SCALAR; the conformance check finds out which.

#if defined(ULPGATE_KERNELS_VECTOR_ARITH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_VECTOR_ARITH_INL_H_
#undef ULPGATE_KERNELS_VECTOR_ARITH_INL_H_
#else
#define ULPGATE_KERNELS_VECTOR_ARITH_INL_H_
#endif

#include <cmath>
#include <iterator>
#include <limits>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "oracles/erf_polynomial.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D>
struct VectorArith {
  using Value = hn::Vec<D>;
  D d;

  HWY_INLINE Value Const(float c) const { return hn::Set(d, c); }
  HWY_INLINE Value Zero() const { return hn::Zero(d); }
  HWY_INLINE Value Add(Value a, Value b) const { return hn::Add(a, b); }
  HWY_INLINE Value Sub(Value a, Value b) const { return hn::Sub(a, b); }
  HWY_INLINE Value Mul(Value a, Value b) const { return hn::Mul(a, b); }
  HWY_INLINE Value Div(Value a, Value b) const { return hn::Div(a, b); }
  HWY_INLINE Value MulAdd(Value a, Value b, Value c) const {
    return hn::MulAdd(a, b, c);
  }
  HWY_INLINE Value NegMulAdd(Value a, Value b, Value c) const {
    return hn::NegMulAdd(a, b, c);
  }

  // NaN lanes are computed on 0 and then made NaN again (a + a, quiet):
  // Highway 1.0.3's Exp and Tanh convert their argument to int32, which on
  // SCALAR is a C++ cast, undefined for NaN (UBSan: float-cast-overflow);
  // the SIMD targets' conversion instructions are defined for every input
  // and are left as they are.
  HWY_INLINE Value NaNToZero(Value a) const {
#if HWY_TARGET == HWY_SCALAR
    return hn::IfThenZeroElse(hn::IsNaN(a), a);
#else
    return a;
#endif
  }
  HWY_INLINE Value NaNBack(Value a, Value y) const {
#if HWY_TARGET == HWY_SCALAR
    return hn::IfThenElse(hn::IsNaN(a), hn::Add(a, a), y);
#else
    (void)a;
    return y;
#endif
  }

  // The functions of the op sequences (kernels/ops/), each modelled bit for
  // bit by oracles/highway_math.h. Exp is Highway's, whose result above its
  // valid range (104) is garbage (its 2^q reconstruction wraps): +inf there,
  // as the true exponential overflows from 88.72 on.
  HWY_INLINE Value Exp(Value a) const {
    const Value upper = hn::Set(d, 104.0f);
    return hn::IfThenElse(hn::Gt(a, upper), hn::Set(d, std::numeric_limits<float>::infinity()),
                          NaNBack(a, hn::Exp(d, NaNToZero(a))));
  }
  HWY_INLINE Value Tanh(Value a) const {
    return NaNBack(a, hn::Tanh(d, NaNToZero(a)));
  }
  // Highway 1.0.3 has no erf: oracles/erf_polynomial.h's, both pieces
  // computed in every lane and one kept (ErfOfSequences, which the conformance
  // tests hold this to, computes only the one it keeps).
  HWY_INLINE Value Erf(Value x) const {
    const auto horner = [this](const auto& c, Value v) HWY_ATTR {
      const size_t n = std::size(c);
      Value p = hn::Set(d, c[n - 1]);
      for (size_t k = n - 1; k-- > 0;) p = hn::MulAdd(p, v, hn::Set(d, c[k]));
      return p;
    };
    const Value a = hn::Abs(x);
    const Value small = hn::MulAdd(x, horner(kErfSmall, hn::Mul(x, x)), x);
    // A NaN lane is put back at the end: Min need not keep it.
    const Value clamped = hn::Min(hn::IfThenZeroElse(hn::IsNaN(a), a), hn::Set(d, kErfClamp));
    const Value q = hn::IfThenElse(hn::Lt(clamped, hn::Set(d, kErfNearEnd)),
                                   horner(kErfNear, hn::Sub(clamped, hn::Set(d, 1.0f))),
                                   horner(kErfFar, hn::Sub(clamped, hn::Set(d, 3.0f))));
    const Value large = hn::CopySign(hn::Sub(hn::Set(d, 1.0f), Exp(q)), x);
    const Value y = hn::IfThenElse(hn::Lt(a, hn::Set(d, kErfSmallEnd)), small, large);
    return hn::IfThenElse(hn::IsNaN(x), hn::Add(x, x), y);
  }

  // For the lane-parallel schedules (kernels/reductions/sum_of_terms-inl.h): the lanes of a
  // vector as a buffer of floats, to be reduced in the spec's fixed order.
  struct LaneBuffer {
    alignas(64) float lane[hn::MaxLanes(D())];
    float& operator[](size_t i) { return lane[i]; }
  };
  HWY_INLINE size_t Lanes() const { return hn::Lanes(d); }
  HWY_INLINE LaneBuffer ToScalars(Value v) const {
    LaneBuffer buffer;
    hn::Store(v, d, buffer.lane);
    return buffer;
  }
};

// Host binary32 arithmetic, for the scalar steps of a kernel (the horizontal
// reduction of a lane-parallel schedule, the bias of one output). Each
// operation is one SSE instruction rounding once: every translation unit is
// compiled with -ffp-contract=off, and x86-64 has no excess precision.
struct ScalarArith {
  using Value = float;
  HWY_INLINE float Const(float c) const { return c; }
  HWY_INLINE float Zero() const { return 0.0f; }
  HWY_INLINE float Add(float a, float b) const { return a + b; }
  HWY_INLINE float Sub(float a, float b) const { return a - b; }
  HWY_INLINE float Mul(float a, float b) const { return a * b; }
  HWY_INLINE float Div(float a, float b) const { return a / b; }
};

namespace impl {

// Storage lanes are the compute lanes: float in, float out.
struct SameLanes {
  template <class D>
  static HWY_INLINE hn::Vec<D> Promote(D /*d*/, hn::Vec<D> v) {
    return v;
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> Demote(D /*d*/, hn::Vec<D> v) {
    return v;
  }
};

// out[i] = Conv::Demote(f(arith, Conv::Promote(a[i]), Conv::Promote(b[i])))
// for any n and any (unaligned) pointers to storage lanes T (float, or the
// bit patterns of a 16-bit format, kernels/narrow_convert-inl.h); out may be a
// or b (each vector is loaded before its result is stored). The tail goes
// through one full vector on the stack so that every lane of every call runs
// the same instruction sequence as in the body; padding lanes hold 0 (+0),
// which no op here traps on.
template <class Conv, class T, class D, class A, class F>
HWY_INLINE void ElementwiseConverted2(D d, const A& arith, const T* a, const T* b, T* out,
                                      size_t n, F f) {
  const hn::Rebind<T, D> dt;
  const size_t lanes = hn::Lanes(d);
  const auto one = [&](const T* pa, const T* pb, T* po) HWY_ATTR {
    const auto va = Conv::Promote(d, hn::LoadU(dt, pa));
    const auto vb = Conv::Promote(d, hn::LoadU(dt, pb));
    hn::StoreU(Conv::Demote(d, f(arith, va, vb)), dt, po);
  };
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) one(a + i, b + i, out + i);
  if (i == n) return;
  HWY_ALIGN T tail_a[hn::MaxLanes(d)] = {};
  HWY_ALIGN T tail_b[hn::MaxLanes(d)] = {};
  HWY_ALIGN T tail_out[hn::MaxLanes(d)];
  const size_t rest = n - i;
  for (size_t j = 0; j < rest; ++j) {
    tail_a[j] = a[i + j];
    tail_b[j] = b[i + j];
  }
  one(tail_a, tail_b, tail_out);
  for (size_t j = 0; j < rest; ++j) out[i + j] = tail_out[j];
}

// The binary32 case: out[i] = f(arith, a[i], b[i]).
template <class D, class F>
HWY_INLINE void Elementwise2(D d, const float* a, const float* b, float* out, size_t n, F f) {
  ElementwiseConverted2<SameLanes>(d, VectorArith<D>{d}, a, b, out, n, f);
}

}  // namespace impl
}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_VECTOR_ARITH_INL_H_
