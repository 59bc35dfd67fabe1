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
#ifndef ULPGATE_KERNELS_TANH_BWD_SPEC_H_
#define ULPGATE_KERNELS_TANH_BWD_SPEC_H_

#include <array>
#include <string_view>

namespace ulpgate {

// Names and op sequences, in the order reports list them.
struct TanhBwdVariantInfo {
  std::string_view name;
  std::string_view op_sequence;
  // The model the kernel should match where NegMulAdd is a fused instruction,
  // and where it is two roundings.
  std::string_view model_fused_target;
  std::string_view model_unfused_target;
};

inline constexpr std::array<TanhBwdVariantInfo, 4> kTanhBwdVariants = {{
    {"mac", "r = t*t; out = NegMulAdd(grad, r, grad)", "mac_fused", "mac_unfused"},
    {"mac_unfused", "r = t*t; p = grad*r; out = grad - p", "mac_unfused",
     "mac_unfused"},
    {"mulsub", "r = t*t; s = 1 - r; out = grad*s", "mulsub", "mulsub"},
    {"mulsub_fma", "s = NegMulAdd(t, t, 1); out = grad*s", "mulsub_fused",
     "mulsub"},
}};

// The bit-exact models: a variant's sequence evaluated in binary32 with
// NegMulAdd fused or not.
struct TanhBwdModelInfo {
  std::string_view name;
  std::string_view sequence_of;  // the variant whose sequence it evaluates
  bool fused;
  // The same model in the model language (oracles/model_expr.h), each
  // operation rounded once to the working format: what `list` prints and
  // `check` runs; a test holds it equal to the template's model on every suite.
  std::string_view expression;
};

inline constexpr std::array<TanhBwdModelInfo, 4> kTanhBwdModels = {{
    {"mac_fused", "mac", true, "r = t*t; out = fma(-grad, r, grad)"},
    {"mac_unfused", "mac_unfused", false, "r = t*t; p = grad*r; out = grad - p"},
    {"mulsub", "mulsub", false, "r = t*t; s = 1 - r; out = grad*s"},
    {"mulsub_fused", "mulsub_fma", true, "s = fma(-t, t, 1); out = grad*s"},
}};

// The variants in the 16-bit formats (bf16, f16): operands and output in the
// format, the arithmetic of one of the binary32 sequences above.
enum class NarrowRounding {
  kOpmath,          // promote exactly, the binary32 sequence, one rounding to the format
  kPerOp,           // every operation's result rounded to the format (eager frameworks)
  kHighwayConvert,  // kOpmath with Highway 1.0.3's own PromoteTo and DemoteTo
};

struct TanhBwdNarrowVariantInfo {
  std::string_view name;
  std::string_view sequence;  // the kTanhBwdVariants entry whose op sequence it runs
  NarrowRounding rounding;
  std::string_view description;
};

// Adding a variant is one line here (the registry and the models follow).
inline constexpr std::array<TanhBwdNarrowVariantInfo, 7> kTanhBwdNarrowVariants = {{
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

// Index of a binary32 variant in kTanhBwdVariants, at compile time; -1 if none.
constexpr int TanhBwdSequenceIndex(std::string_view name) {
  for (size_t i = 0; i < kTanhBwdVariants.size(); ++i) {
    if (kTanhBwdVariants[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

// The templates, after the tables: SequenceAt maps a row of kTanhBwdVariants
// to its template.
namespace tanh_bwd_spec {

#include "kernels/tanh_bwd_spec-inl.h"  // IWYU pragma: export

}  // namespace tanh_bwd_spec

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_TANH_BWD_SPEC_H_
