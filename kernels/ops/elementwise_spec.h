// What an elementwise op is, as data: the rows every op folder's spec fills
// in (kernels/ops/<op>/<op>_spec.h). An op is
//   - its operands (one to three, named, with their roles), the first of which
//     is what the op scales (grad, for a backward op);
//   - its definition, written once as templates (<op>_spec-inl.h) over an
//     arithmetic A: the exact value (Canonical), the magnitude its terms add up
//     to (TermMagnitude: what a backward-stable evaluation's error is measured
//     against) and its op sequences (SequenceAt), which are at once the SIMD
//     kernel (over Highway vectors), the bit-exact model (over the binary32 or
//     format emulation) and the sequence's exact value (over MPFR);
//   - its variants in f32 and in the 16-bit formats, and its models;
//   - its inputs: the domain of each operand and its landmarks.
// One line of kernels/ops/registered_ops.h makes an op known everywhere: the
// registry compiles its kernels on every target, and the engine, the sweep,
// the commands, goldens and the gate take it by name.
#ifndef ULPGATE_KERNELS_OPS_ELEMENTWISE_SPEC_H_
#define ULPGATE_KERNELS_OPS_ELEMENTWISE_SPEC_H_

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace ulpgate {

inline constexpr size_t kMaxElementwiseArity = 3;

// How the values of one operand are drawn by the op's `domain` suite.
enum class OperandDomain {
  kLogUniform,   // magnitude log-uniform in [lo, hi], random sign (a gradient)
  kUniform,      // uniform in [lo, hi] (a forward output such as tanh's or sigmoid's)
};

struct OperandInfo {
  std::string_view name;
  std::string_view role;
  OperandDomain domain;
  double lo, hi;
};

// A binary32 variant: one op sequence, and the model its kernel must follow
// where the target's NegMulAdd/MulAdd is one fused instruction and where it is
// two roundings. An empty model means the sequence calls a function no model
// reproduces bit for bit (Highway's Exp, say): its kernels are measured in
// ULPs and budgeted, and reports say they have no model.
struct ElementwiseVariantInfo {
  std::string_view name;
  std::string_view op_sequence;
  std::string_view model_fused_target;
  std::string_view model_unfused_target;
};

// A bit-exact model: a sequence evaluated in binary32 with its multiply-adds
// fused or not, and the same model in the model language
// (oracles/model_expr.h) for `check` and `list`. The sequence is a variant's,
// or one of the spec's model sequences (below).
struct ElementwiseModelInfo {
  std::string_view name;
  std::string_view sequence_of;  // the variant or model sequence it evaluates
  bool fused;
  std::string_view expression;
};

// An op sequence that only models evaluate: no kernel runs it. What another
// framework computes from a formula people write (a bug report's literal
// `grad - grad*t*t`, which C and Python evaluate left to right) is worth
// recognizing in outputs `check` reads, without a kernel of ours to budget
// and bless. A spec lists them, when it has any, as
//   static constexpr std::array<ModelSequenceInfo, N> kModelSequences;
// and its templates' At<k> takes them after the rows of kVariants.
struct ModelSequenceInfo {
  std::string_view name;
  std::string_view op_sequence;
};

// A constant an op_sequence text names (kAlpha): its value, so that the text
// reads as a model of the model language (FreeFunctionModels).
struct NamedConstant {
  std::string_view name;
  double value;
};

// The variants in the 16-bit formats (bf16, f16): operands and output in the
// format, the arithmetic of one of the binary32 sequences.
enum class NarrowRounding {
  kOpmath,          // promote exactly, the binary32 sequence, one rounding to the format
  kPerOp,           // every operation's result rounded to the format (eager frameworks)
  kHighwayConvert,  // kOpmath with Highway 1.0.3's own PromoteTo and DemoteTo
};

struct NarrowVariantInfo {
  std::string_view name;
  std::string_view sequence;  // the binary32 variant whose op sequence it runs
  NarrowRounding rounding;
  std::string_view description;
};

// Tiers an op may have beside the op-generic ones: code written for that one
// op outside its folder, which the generic paths hand the op to when its spec
// says so. A spec with any declares
//   static constexpr OwnTiers kOwnTiers = {...};
// (OwnTiersOf gives every other spec none). Each tier is written for one op,
// so at most one registered op declares each (registered_ops.h holds it).
struct OwnTiers {
  // Its input suites are its own (suites/inputs/), not drawn from its
  // operands' domains and landmarks by suites/inputs/elementwise_suites.h.
  bool suites = false;
  // The engine's fast exact tier: the op's value held in two doubles
  // (oracles/fast_ulp.h) wherever they settle its rounding.
  bool two_double_exact = false;
  // `sweep`'s vectorized exact tier computes the op's exact value and its
  // models in vector code (suites/sweep/sweep_tier.h); the other ops are
  // swept through staged tables or the engine.
  bool vector_sweep = false;
};

// Spec::kOwnTiers, or none for a spec without one.
template <class Spec, class = void>
struct OwnTiersOf {
  static constexpr OwnTiers kTiers{};
};
template <class Spec>
struct OwnTiersOf<Spec, std::void_t<decltype(Spec::kOwnTiers)>> {
  static constexpr OwnTiers kTiers = Spec::kOwnTiers;
};

// Whether a spec declares
//   static constexpr auto kFastFactor = &F;  // std::optional<FactorEstimate> F(float)
// the factor its exact value multiplies the first operand by, estimated from
// the second without MPFR (oracles/double_word.h; an op of two operands).
template <class Spec, class = void>
struct HasFastFactor {
  static constexpr bool kValue = false;
};
template <class Spec>
struct HasFastFactor<Spec, std::void_t<decltype(Spec::kFastFactor)>> {
  static constexpr bool kValue = true;
};

// Whether a spec with a kFastFactor also declares
//   static constexpr auto kFastFactors = &Fs;
//   // void Fs(const float* x, size_t n, const FactorEstimateColumns& out)
// kFastFactor of x[0 .. n) bit for bit, several at a time, into columns
// (oracles/double_word.h): faster where one estimate is a long chain of
// dependent roundings, and where the columns spare the estimates' records.
template <class Spec, class = void>
struct HasFastFactors {
  static constexpr bool kValue = false;
};
template <class Spec>
struct HasFastFactors<Spec, std::void_t<decltype(Spec::kFastFactors)>> {
  static constexpr bool kValue = true;
};

// Whether a spec declares
//   static constexpr auto kFastTermFactor = &T;  // std::optional<double> T(float)
// its term magnitude over |first operand| (TermMagnitude at a first operand
// of 1), estimated from the second without MPFR: within kFastTermFactorError
// relatively of the exact oracle's value, nullopt where it cannot say. What
// the engine's vectorized tier needs for a bound fraction's denominator.
template <class Spec, class = void>
struct HasFastTermFactor {
  static constexpr bool kValue = false;
};
template <class Spec>
struct HasFastTermFactor<Spec, std::void_t<decltype(Spec::kFastTermFactor)>> {
  static constexpr bool kValue = true;
};
// The bound a kFastTermFactor estimate keeps relatively: the engine widens its
// term sum's error allowance by this much (it allows 2^-45 in all).
inline constexpr double kFastTermFactorError = 0x1p-50;

// Index of the row named `name` in a table of rows with a `name`, at compile
// time; -1 if none.
template <class Row, size_t kSize>
constexpr int RowIndex(const std::array<Row, kSize>& rows, std::string_view name) {
  for (size_t i = 0; i < kSize; ++i) {
    if (rows[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

// Spec::kModelSequences, or no rows for a spec without one.
template <class Spec, class = void>
struct ModelSequencesOf {
  static constexpr std::array<ModelSequenceInfo, 0> kRows{};
};
template <class Spec>
struct ModelSequencesOf<Spec, std::void_t<decltype(Spec::kModelSequences)>> {
  static constexpr const auto& kRows = Spec::kModelSequences;
};

// Spec::kConstants, or none.
template <class Spec, class = void>
struct ConstantsOf {
  static constexpr std::array<NamedConstant, 0> kRows{};
};
template <class Spec>
struct ConstantsOf<Spec, std::void_t<decltype(Spec::kConstants)>> {
  static constexpr const auto& kRows = Spec::kConstants;
};

// The sequences of an op, as its templates' At<k> numbers them: the rows of
// kVariants, then those of kModelSequences.
template <class Spec>
constexpr size_t SequenceCount() {
  return Spec::kVariants.size() + ModelSequencesOf<Spec>::kRows.size();
}
// Index of a sequence by name, at compile time; -1 if none.
template <class Spec>
constexpr int SequenceIndex(std::string_view name) {
  const int variant = RowIndex(Spec::kVariants, name);
  if (variant >= 0) return variant;
  if constexpr (ModelSequencesOf<Spec>::kRows.size() == 0) {
    return -1;
  } else {
    const int model_only = RowIndex(ModelSequencesOf<Spec>::kRows, name);
    return model_only < 0 ? -1 : static_cast<int>(Spec::kVariants.size()) + model_only;
  }
}

// True when the variant's sequence has a model (then every function it calls
// is modelled bit for bit).
template <class Spec>
constexpr bool SequenceHasModel(std::string_view variant) {
  for (const auto& m : Spec::kModels) {
    if (m.sequence_of == variant) return true;
  }
  return false;
}

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_OPS_ELEMENTWISE_SPEC_H_
