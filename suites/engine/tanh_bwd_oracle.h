// tanh_bwd's oracle and models: the op sequences of kernels/ops/tanh_bwd/tanh_bwd_spec.h
// instantiated with the exact and the binary32-emulated arithmetic.
#ifndef ULPGATE_SUITES_TANH_BWD_ORACLE_H_
#define ULPGATE_SUITES_TANH_BWD_ORACLE_H_

#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <string_view>
#include <vector>

#include "kernels/registry.h"
#include "oracles/format.h"

#include "kernels/ops/tanh_bwd/tanh_bwd_spec.h"
#include "oracles/exact.h"
#include "oracles/ieee_emulation.h"
#include "oracles/model_expr.h"

namespace ulpgate {

// The op's exact value, grad * (1 - t^2) in extended-real arithmetic.
MpfrNumber TanhBwdExact(float grad, float t);

// The exact real value of one sequence, a variant's or a model sequence
// (no rounding at any step).
MpfrNumber TanhBwdVariantExact(std::string_view variant, float grad, float t);

// A model's output (kTanhBwdModels names). Throws std::invalid_argument for an
// unknown name.
float TanhBwdModel(std::string_view model, float grad, float t);

// Every model, in kTanhBwdModels order.
std::array<float, kTanhBwdModels.size()> TanhBwdModels(float grad, float t);
// The same from the hardware's binary32 arithmetic (NativeBinary32Arith):
// equal to TanhBwdModels but for NaN payloads, and about 100 times faster.
std::array<float, kTanhBwdModels.size()> TanhBwdModelsNative(float grad, float t);

// Index of a variant or model in kTanhBwdVariants / kTanhBwdModels, or -1.
int TanhBwdVariantIndex(std::string_view variant);
int TanhBwdModelIndex(std::string_view model);

// The bit-exact models of the 16-bit variants (kTanhBwdNarrowVariants) in
// `format` (bf16 or f16), in this order:
//   <m>_opmath for each binary32 model m: m's output rounded once to the
//     format (to nearest even);
//   mac_per_op, mulsub_per_op: the sequence with every operation rounded to
//     the format (FormatArith);
//   bf16: mulsub_opmath_truncating: the binary32 mulsub rounded toward zero
//     (Highway 1.0.3's DemoteTo drops the low 16 bits);
//   f16: mulsub_opmath_hwy_soft: the binary32 mulsub between Highway 1.0.3's
//     software conversions (oracles/highway_f16.h).
const std::vector<std::string>& TanhBwdNarrowModelNames(const FloatFormat& format);
// The same models described: how each rounds, and the binary32 model or the
// sequence it runs (what a vectorized evaluation needs, suites/sweep/sweep_tier.h).
struct TanhBwdNarrowModelInfo {
  std::string name;
  enum Kind { kOpmath, kPerOp, kTruncating, kHighwaySoft } kind;
  size_t f32_model = 0;       // kOpmath, kTruncating, kHighwaySoft: index in kTanhBwdModels
  std::string_view sequence;  // kPerOp: a kTanhBwdVariants name
};
const std::vector<TanhBwdNarrowModelInfo>& TanhBwdNarrowModelInfos(const FloatFormat& format);
// Every model's output for one input (values of the format, as floats), in
// TanhBwdNarrowModelNames order. The operands are the format's bit patterns:
// a NaN's payload is what Highway's software conversion turns into a number.
std::vector<float> TanhBwdNarrowModels(const FloatFormat& format, uint16_t grad_bits,
                                       uint16_t t_bits);
// The same from double arithmetic (no MPFR): equal but for NaN payloads.
std::vector<float> TanhBwdNarrowModelsNative(const FloatFormat& format, uint16_t grad_bits,
                                             uint16_t t_bits);
// The models `check` compares outputs with, as programs of the model
// language (oracles/model_expr.h), for outputs stored in `format`:
//   f32: the binary32 models (kTanhBwdModels' expressions);
//   bf16, f16: for each binary32 model m, <m>_opmath (working format f32, one
//   rounding to the format) and its per-step form (working format the
//   storage format; named after the per-op variant that runs the sequence,
//   mac_per_op and mulsub_per_op, else <m>_per_op); bf16 also
//   <m>_opmath_truncating (the result truncated to bf16).
// Where a name is also one of TanhBwdNarrowModelNames, the two are the same
// model (a test). Highway's software f16 conversion is not expressible.
std::vector<ModelProgram> TanhBwdModelPrograms(const FloatFormat& format);

// The model a target's kernel of a 16-bit variant must follow.
std::string ExpectedNarrowModel(const FloatFormat& format, std::string_view variant,
                                const TargetInfo& target);
// Index in kTanhBwdNarrowVariants, or -1.
int TanhBwdNarrowVariantIndex(std::string_view variant);

// A sequence (a variant's or a model sequence's) run through any arithmetic:
// the one place that maps a sequence's name to its template.
namespace tanh_bwd_detail {
template <class A, class V, size_t... kIndex>
V SequenceByIndex(size_t index, A& a, const V& grad, const V& t, std::index_sequence<kIndex...>) {
  std::optional<V> out;
  ((index == kIndex ? (out.emplace(tanh_bwd_spec::SequenceAt<static_cast<int>(kIndex)>(a, grad, t)),
                       true)
                    : false) ||
   ...);
  return std::move(*out);
}
}  // namespace tanh_bwd_detail

template <class A, class V = typename A::Value>
V TanhBwdSequence(std::string_view variant, A& a, const V& grad, const V& t) {
  const int index = TanhBwdSequenceIndex(variant);
  if (index < 0) {
    throw std::invalid_argument("unknown tanh_bwd sequence '" + std::string(variant) + "'");
  }
  return tanh_bwd_detail::SequenceByIndex(static_cast<size_t>(index), a, grad, t,
                                          std::make_index_sequence<kTanhBwdSequenceCount>());
}

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_TANH_BWD_ORACLE_H_
