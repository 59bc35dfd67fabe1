// Elementwise kernels of a training step: tanh forward, ReLU forward and
// backward, the SGD update (two roundings or fused) and SAM's perturbation.
//
// Contract, for every kernel below:
//   lanes: float (binary32); any n, any alignment; outputs may alias inputs
//     elementwise (out == w is how the optimizer updates in place).
//   tanh forward: Highway's contrib Tanh (hwy/contrib/math/math-inl.h), an
//     approximation with no bit-exact model; its error is measured against
//     MPFR in the drift suite's in-situ histograms.
//   ReLU: exact (selection only); ReLU'(0) = 0.
//   SGD and SAM steps: the sequences of train_step_spec-inl.h; SgdStepFused
//     uses NegMulAdd and so is one rounding on AVX2/AVX3/AVX3_DL and two
//     elsewhere, like every NegMulAdd in Highway 1.0.3.

#if defined(ULPGATE_KERNELS_TRAIN_STEP_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_TRAIN_STEP_INL_H_
#undef ULPGATE_KERNELS_TRAIN_STEP_INL_H_
#else
#define ULPGATE_KERNELS_TRAIN_STEP_INL_H_
#endif

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "kernels/vector_arith-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

namespace train_step_spec {
#include "kernels/train_step_spec-inl.h"
}  // namespace train_step_spec

namespace impl {

// out[i] = f(arith, in[i]) for any n; the tail through one stack vector.
template <class D, class F>
HWY_INLINE void Elementwise1(D d, const float* in, float* out, size_t n, F f) {
  const VectorArith<D> arith{d};
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(f(arith, hn::LoadU(d, in + i)), d, out + i);
  if (i == n) return;
  HWY_ALIGN float tail_in[hn::MaxLanes(d)] = {};
  HWY_ALIGN float tail_out[hn::MaxLanes(d)];
  for (size_t j = 0; i + j < n; ++j) tail_in[j] = in[i + j];
  hn::Store(f(arith, hn::Load(d, tail_in)), d, tail_out);
  for (size_t j = 0; i + j < n; ++j) out[i + j] = tail_out[j];
}

}  // namespace impl

HWY_NOINLINE void TanhForward(const float* x, float* y, size_t n) {
  const hn::ScalableTag<float> d;
  impl::Elementwise1(d, x, y, n, [d](const auto&, auto v) HWY_ATTR { return hn::Tanh(d, v); });
}

HWY_NOINLINE void ReluForward(const float* x, float* y, size_t n) {
  const hn::ScalableTag<float> d;
  impl::Elementwise1(d, x, y, n, [d](const auto&, auto v) HWY_ATTR {
    return hn::IfThenElseZero(hn::Gt(v, hn::Zero(d)), v);
  });
}

// dh = dy where h > 0, else 0.
HWY_NOINLINE void ReluBackward(const float* dy, const float* h, float* dh, size_t n) {
  const hn::ScalableTag<float> d;
  impl::Elementwise2(d, dy, h, dh, n, [d](const auto&, auto g, auto x) HWY_ATTR {
    return hn::IfThenElseZero(hn::Gt(x, hn::Zero(d)), g);
  });
}

HWY_NOINLINE void SgdStep(float* w, const float* g, float lr, size_t n) {
  impl::Elementwise2(hn::ScalableTag<float>(), w, g, w, n,
                     [lr](const auto& a, auto wv, auto gv) HWY_ATTR {
                       return train_step_spec::SgdStep(a, wv, gv, a.Const(lr));
                     });
}

HWY_NOINLINE void SgdStepFused(float* w, const float* g, float lr, size_t n) {
  impl::Elementwise2(hn::ScalableTag<float>(), w, g, w, n,
                     [lr](const auto& a, auto wv, auto gv) HWY_ATTR {
                       return train_step_spec::SgdStepFused(a, wv, gv, a.Const(lr));
                     });
}

HWY_NOINLINE void SamPerturb(const float* w, const float* g, float scale, float* out, size_t n) {
  impl::Elementwise2(hn::ScalableTag<float>(), w, g, out, n,
                     [scale](const auto& a, auto wv, auto gv) HWY_ATTR {
                       return train_step_spec::SamPerturb(a, wv, gv, a.Const(scale));
                     });
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_TRAIN_STEP_INL_H_
