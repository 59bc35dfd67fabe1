// The op sequences of tanh backward, written once, and their names.
//
// tanh_bwd(grad, t) = grad * (1 - t^2), with t = tanh(x) from the forward pass.
// Each variant below is one fixed sequence of rounded operations, written as a
// template over an "arithmetic" A that decides what one operation means:
//   - over Highway vectors (kernels/vector_arith-inl.h) it is the SIMD kernel;
//   - over the binary32 emulation (oracles/ieee_emulation.h) it is the variant's
//     bit-exact model, with A deciding whether NegMulAdd rounds once or twice;
//   - over exact MPFR numbers (oracles/exact.h) it is the real value the sequence
//     stands for, which must equal the op's exact value for every variant.
// So a change to a sequence changes kernel and model together; the goldens
// (golden/) are what notice such a change.
//
// A provides: using Value; Value Const(float); Value Mul(a, b); Value Sub(a, b);
// Value NegMulAdd(a, b, c) = c - a*b as one instruction (fused or not is A's).
#ifndef ULPGATE_KERNELS_OPS_TANH_BWD_SPEC_H_
#define ULPGATE_KERNELS_OPS_TANH_BWD_SPEC_H_

#include <array>
#include <string_view>

#include "kernels/ops/elementwise_spec.h"

namespace ulpgate {

struct TanhBwdSpec {
  static constexpr std::string_view kName = "tanh_bwd";
  static constexpr std::string_view kDefinition = "grad * (1 - t^2), t = tanh(x)";
  static constexpr std::array<OperandInfo, 2> kOperands = {{
      {"grad", "the gradient of the output", OperandDomain::kLogUniform, 0x1p-24, 0x1p8},
      {"t", "tanh(x), the forward output", OperandDomain::kUniform, -1.0, 1.0},
  }};

  // Names and op sequences, in the order reports list them, with the model
  // the kernel should match where NegMulAdd is a fused instruction and where
  // it is two roundings.
  static constexpr std::array<ElementwiseVariantInfo, 4> kVariants = {{
      {"mac", "r = t*t; out = NegMulAdd(grad, r, grad)", "mac_fused", "mac_unfused"},
      {"mac_unfused", "r = t*t; p = grad*r; out = grad - p", "mac_unfused", "mac_unfused"},
      {"mulsub", "r = t*t; s = 1 - r; out = grad*s", "mulsub", "mulsub"},
      {"mulsub_fma", "s = NegMulAdd(t, t, 1); out = grad*s", "mulsub_fused", "mulsub"},
  }};

  // Sequences only models evaluate (elementwise_spec.h): the formula as bug
  // reports and user code write it, grad - grad*t*t, which C and Python
  // evaluate as grad - (grad*t)*t; PyTorch's eager result of that expression
  // follows none of the variants' models.
  static constexpr std::array<ModelSequenceInfo, 1> kModelSequences = {{
      {"mac_left", "p = grad*t; out = NegMulAdd(p, t, grad)"},
  }};

  // The bit-exact models: a sequence evaluated in binary32 with NegMulAdd
  // fused or not. The expression is the same model in the model language
  // (oracles/model_expr.h), each operation rounded once to the working
  // format: what `list` prints and `check` runs; a test holds it equal to the
  // template's model on every suite.
  static constexpr std::array<ElementwiseModelInfo, 6> kModels = {{
      {"mac_fused", "mac", true, "r = t*t; out = fma(-grad, r, grad)"},
      {"mac_unfused", "mac_unfused", false, "r = t*t; p = grad*r; out = grad - p"},
      {"mulsub", "mulsub", false, "r = t*t; s = 1 - r; out = grad*s"},
      {"mulsub_fused", "mulsub_fma", true, "s = fma(-t, t, 1); out = grad*s"},
      {"mac_left_fused", "mac_left", true, "p = grad*t; out = fma(-p, t, grad)"},
      {"mac_left_unfused", "mac_left", false, "p = grad*t; q = p*t; out = grad - q"},
  }};

  // The variants in the 16-bit formats; adding one is a line here (the
  // registry and the models follow).
  static constexpr std::array<NarrowVariantInfo, 7> kNarrowVariants = {{
      {"mac_opmath", "mac", NarrowRounding::kOpmath,
       "in f32: r = t*t; out = NegMulAdd(grad, r, grad); rounded once to the format"},
      {"mac_unfused_opmath", "mac_unfused", NarrowRounding::kOpmath,
       "in f32: r = t*t; p = grad*r; out = grad - p; rounded once to the format"},
      {"mulsub_opmath", "mulsub", NarrowRounding::kOpmath,
       "in f32: r = t*t; s = 1 - r; out = grad*s; rounded once to the format"},
      {"mulsub_fma_opmath", "mulsub_fma", NarrowRounding::kOpmath,
       "in f32: s = NegMulAdd(t, t, 1); out = grad*s; rounded once to the format"},
      {"mac_per_op", "mac_unfused", NarrowRounding::kPerOp,
       "r = t*t; p = grad*r; out = grad - p, each step rounded to the format"},
      {"mulsub_per_op", "mulsub", NarrowRounding::kPerOp,
       "r = t*t; s = 1 - r; out = grad*s, each step rounded to the format"},
      {"mulsub_opmath_hwy", "mulsub", NarrowRounding::kHighwayConvert,
       "mulsub_opmath converted by Highway 1.0.3's PromoteTo/DemoteTo"},
  }};

  // Values of t worth landing on: 0, +-1 (the zeros of the result), 1/2,
  // RN(1/sqrt(2)) (where 1 - t*t stops being exact), the last value below 1
  // (the cancellation at its worst) and a value past 1.
  static constexpr std::array<double, 6> kLandmarks = {0.0,          1.0, 0.5, 0x1.6a09e6p-1,
                                                       0x1.fffffep-1, 1.5};
  // Every sequence is exact in kExactDefinitionPrecision bits
  // (oracles/exact.h). The widest intermediate is grad - grad*t*t: grad*t*t
  // has at most 72 significant bits, and its least significant bit lies at
  // most 298 binades (the range of t*t) below grad's, so the difference spans
  // at most 23 + 298 + 2 < 330 bits; grad*(1 - t*t) at most 24 + 300.
  static constexpr bool kExactDefinition = true;
  // The roundings a backward-stable evaluation meets (three operations).
  static constexpr int kBoundRoundings = 3;
  // Tiers of its own (elementwise_spec.h), older than ops as folders: its
  // suites (suites/inputs/tanh_bwd_suites.h: the training suite and t*t ties,
  // kept so that its goldens stay byte-identical), its value in two doubles
  // (oracles/fast_ulp.h, suites/engine/tanh_bwd_oracle.h) and the sweep's
  // vector tier (suites/sweep/sweep_tier-inl.h: the MAC forms use grad twice,
  // which the staged tier of the other ops cannot hold).
  static constexpr OwnTiers kOwnTiers = {/*suites=*/true, /*two_double_exact=*/true,
                                         /*vector_sweep=*/true};
};

// The tables under their earlier names, for the code that is tanh_bwd's own
// (its suites, the sweep's vector tier, the drift network's tanh layer).
inline constexpr const auto& kTanhBwdVariants = TanhBwdSpec::kVariants;
inline constexpr const auto& kTanhBwdModels = TanhBwdSpec::kModels;
inline constexpr const auto& kTanhBwdNarrowVariants = TanhBwdSpec::kNarrowVariants;
using TanhBwdVariantInfo = ElementwiseVariantInfo;
using TanhBwdModelInfo = ElementwiseModelInfo;
using TanhBwdNarrowVariantInfo = NarrowVariantInfo;

inline constexpr const auto& kTanhBwdModelSequences = TanhBwdSpec::kModelSequences;

// Index of a sequence, at compile time, as SequenceAt numbers them: a row of
// kTanhBwdVariants, then one of kTanhBwdModelSequences; -1 if none.
constexpr int TanhBwdSequenceIndex(std::string_view name) {
  return SequenceIndex<TanhBwdSpec>(name);
}
inline constexpr size_t kTanhBwdSequenceCount = SequenceCount<TanhBwdSpec>();

// The templates, after the tables: SequenceAt maps a row of kTanhBwdVariants
// or of kTanhBwdModelSequences to its template.
namespace tanh_bwd_spec {

#include "kernels/ops/tanh_bwd/tanh_bwd_spec-inl.h"  // IWYU pragma: export

}  // namespace tanh_bwd_spec

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_OPS_TANH_BWD_SPEC_H_
