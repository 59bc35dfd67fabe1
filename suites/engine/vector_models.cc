// Compiles the models of every registered op (vector_models.h) once per
// Highway target and dispatches to the best one this CPU runs.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "suites/engine/vector_models.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include "hwy/highway.h"
#include "kernels/ops/registered_ops-inl.h"
#include "kernels/vector_arith-inl.h"
#include "oracles/highway_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {
namespace vector_models {

#if HWY_NATIVE_FMA && HWY_ARCH_X86

namespace hn = hwy::HWY_NAMESPACE;
using DF = hn::ScalableTag<float>;

// NativeModelArith (suites/engine/elementwise_oracle.cc) over vectors: the
// kernels' arithmetic, but MulAdd fused or not as the model says and the
// functions the models' (not Highway's own).
template <bool kFused>
struct ModelVectorArith : VectorArith<DF> {
  using Value = hn::Vec<DF>;
  highway_math::ModelMath<DF, kFused> math;

  HWY_INLINE Value MulAdd(Value a, Value b, Value c) const {
    return kFused ? hn::MulAdd(a, b, c) : hn::Add(hn::Mul(a, b), c);
  }
  HWY_INLINE Value NegMulAdd(Value a, Value b, Value c) const {
    return kFused ? hn::NegMulAdd(a, b, c) : hn::Sub(c, hn::Mul(a, b));
  }
  HWY_INLINE Value Exp(Value a) const { return math.ExpOfSequences(a); }
  HWY_INLINE Value Tanh(Value a) const { return math.Tanh(a); }
  HWY_INLINE Value Erf(Value a) const { return math.Erf(a); }
};

template <class Seq, int kSequence, bool kFused, size_t... k>
void Run(const float* const* x, size_t n, float* out, std::index_sequence<k...>) {
  const DF d;
  ModelVectorArith<kFused> a{{d}, {d}};
  const hn::RebindToUnsigned<DF> du;
  const auto nan = hn::BitCast(d, hn::Set(du, 0x7fc00000u));
  const size_t lanes = hn::Lanes(d);
  for (size_t i = 0; i < n; i += lanes) {
    const hn::Vec<DF> y = Seq::template At<kSequence>(a, hn::LoadU(d, x[k] + i)...);
    hn::StoreU(hn::IfThenElse(hn::IsNaN(y), nan, y), d, out + i);
  }
}

template <class Spec, class Seq, size_t... m>
void ModelsOf(size_t model, const float* const* x, size_t n, float* out, std::index_sequence<m...>) {
  const auto one = [&](auto index) HWY_ATTR {
    constexpr ElementwiseModelInfo kInfo = Spec::kModels[decltype(index)::value];
    constexpr int kSequence = SequenceIndex<Spec>(kInfo.sequence_of);
    static_assert(kSequence >= 0, "a model names an unknown sequence");
    Run<Seq, kSequence, kInfo.fused>(x, n, out, std::make_index_sequence<Spec::kOperands.size()>());
  };
  ((model == m ? (one(std::integral_constant<size_t, m>()), true) : false) || ...);
}

bool Models(size_t op, size_t model, const float* const* x, size_t n, float* out) {
  size_t index = 0;
  bool done = false;
#define ULPGATE_VECTOR_MODELS_OF(Spec, ns)                                                     \
  if (!done && index++ == op) {                                                               \
    if (model >= Spec::kModels.size()) throw std::out_of_range("model index out of range");    \
    ModelsOf<Spec, ns::Sequences>(model, x, n, out, std::make_index_sequence<Spec::kModels.size()>()); \
    done = true;                                                                              \
  }
  ULPGATE_ELEMENTWISE_OPS(ULPGATE_VECTOR_MODELS_OF)
#undef ULPGATE_VECTOR_MODELS_OF
  if (!done) throw std::out_of_range("op index out of range");
  return true;
}

#else

bool Models(size_t, size_t, const float* const*, size_t, float*) { return false; }

#endif  // HWY_NATIVE_FMA && HWY_ARCH_X86

}  // namespace vector_models

bool VectorModelsOf(size_t op, size_t model, const float* const* x, size_t n, float* out) {
  return vector_models::Models(op, model, x, n, out);
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernels/elementwise_ops.h"
#include "kernels/registry.h"
#include "suites/engine/vector_models.h"

namespace ulpgate {

HWY_EXPORT(VectorModelsOf);

bool VectorModelOutputs(const ElementwiseOpInfo& op, size_t model, const float* const* operands,
                        size_t n, float* out) {
  // The registry applies the target restriction to Highway when first used;
  // dispatch must come after it.
  static const bool ready = (CompiledTargets(), true);
  (void)ready;
  return HWY_DYNAMIC_DISPATCH(VectorModelsOf)(op.index, model, operands, n, out);
}

}  // namespace ulpgate
#endif  // HWY_ONCE
