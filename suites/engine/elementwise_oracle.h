// The oracle side of every elementwise op (kernels/ops/registered_ops.h): its
// spec's templates instantiated with the exact arithmetic (the op's value, the
// value of each sequence, the magnitude of its terms) and with the binary32
// and format emulations (the bit-exact models), and what follows from the
// tables: the variants and models of each format, the model a target's
// kernel must follow, the models as programs of the model language.
//
// Operands are passed as floats holding values of the run's format, in the
// op's operand order.
#ifndef ULPGATE_SUITES_ENGINE_ELEMENTWISE_ORACLE_H_
#define ULPGATE_SUITES_ENGINE_ELEMENTWISE_ORACLE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/elementwise_ops.h"
#include "kernels/registry.h"
#include "oracles/double_word.h"
#include "oracles/fast_ulp.h"
#include "oracles/format.h"
#include "oracles/model_expr.h"
#include "oracles/mpfr_number.h"
#include "oracles/reduction_bound.h"
#include "oracles/tracing_arith.h"

namespace ulpgate {

// The precision of the value of an op whose definition calls a function
// (exp, erf, tanh): 320 bits. Its value is then not exact but within a few
// units of 2^-320 relative, and no input of a binary32 op lands within that
// of a rounding boundary or a histogram bound: a transcendental value of a
// non-zero rational is not a dyadic rational, and near the zeros of these
// ops' results a binary32 input leaves a result no smaller than about 2^-40
// of the terms that cancel, so 280 bits or more survive the cancellation.
inline constexpr mpfr_prec_t kElementwiseFunctionPrecision = 320;

// ---- Staging: an op with every operand but the first known.
//
// Where a sequence combines its first operand (grad) with values of the others
// only through + - * / and multiply-adds, each time with the value it last
// computed from it (never a function of it, never two values of it but in
// v - v*c), what is left to compute once the others are known is a chain of
// steps on the first operand, each one operation of the sequence's arithmetic
// with known values. The sweep stages each model once per value of the other
// operands and applies the chain to every first operand: the same operations
// on the same values as the model, so the same bits.
enum class ChainStep : uint8_t {
  kMul,             // v * c
  kDiv,             // v / c
  kDivInto,         // c / v
  kAdd,             // v + c
  kSub,             // v - c
  kSubFrom,         // c - v
  kMulAdd,          // MulAdd(v, c, d) = v*c + d
  kAddProduct,      // MulAdd(c, d, v) = c*d + v
  kNegMulAdd,       // NegMulAdd(v, c, d) = d - v*c
  kSubProduct,      // NegMulAdd(c, d, v) = v - c*d
  kSubSelfProduct,  // NegMulAdd(v, c, v) = v - v*c
};
struct StagedChain {
  std::vector<ChainStep> steps;
  std::vector<double> c, d;  // per step, its known operands (d unused by one-operand steps)
};

class ElementwiseOracle {
 public:
  virtual ~ElementwiseOracle() = default;
  virtual const ElementwiseOpInfo& op() const = 0;
  // The op's value: exact for a definition of ring operations
  // (kExactDefinition), else at kElementwiseFunctionPrecision.
  virtual MpfrNumber Exact(const float* operands) const = 0;
  // The real value of sequence v, no step rounded: a variant's
  // (op().variants), or past them a model sequence's (op().model_sequences;
  // ElementwiseOpInfo::SequenceIndex).
  virtual MpfrNumber VariantExact(size_t v, const float* operands) const = 0;
  // The magnitudes of the terms the definition adds, summed (TermMagnitude).
  virtual MpfrNumber TermMagnitude(const float* operands) const = 0;
  // Binary32 model m of op().models: emulated in MPFR, or from the hardware's
  // binary32 arithmetic (`native`: equal but for NaN payloads, and about 100
  // times faster).
  virtual float Model(size_t m, const float* operands, bool native) const = 0;
  // Variant v's sequence with every operation rounded to `format` (a 16-bit
  // format's per-op variants); `fused_functions`: the multiply-adds inside
  // Highway's functions are fused (an FMA target). `native`: from double
  // arithmetic instead of MPFR, equal but for NaN payloads.
  virtual double PerOp(size_t v, bool fused_functions, const FloatFormat& format,
                       const double* operands, bool native) const = 0;
  // The op's value held in two doubles, where they can hold it and settle its
  // rounding to `format` (oracles/fast_ulp.h): the engine's fast exact tier.
  // nullopt where they cannot, or for an op without such a tier.
  virtual std::optional<TwoDoubleExact> FastExact(const float* operands,
                                                  const FloatFormat& format) const = 0;
  // TermMagnitude exactly as at most 4 double-words of nonnegative
  // quantities, into terms[0 .. 8) (oracles/fast_ulp.h, FastBoundFraction);
  // how many, or 0 for an op without such a tier or operands it does not take.
  virtual size_t FastTermMagnitude(const float* operands, double* terms) const = 0;
  // Binary32 model m (native arithmetic) staged at operands[1..]; nullopt
  // where its sequence does more with the first operand than a chain holds.
  virtual std::optional<StagedChain> StageModel(size_t m, const float* operands) const = 0;
  // Variant v's per-op sequence in `format` (PerOp, native) staged the same way.
  virtual std::optional<StagedChain> StagePerOp(size_t v, bool fused_functions,
                                                const FloatFormat& format,
                                                const double* operands) const = 0;
  // The op's value staged: a factor f such that Exact({g, operands[1..]}) is
  // g * f for every g, nullopt where the definition does more with its first
  // operand than multiply it by values of the others. f is the exact product
  // of the factors the definition multiplies by, each computed as Exact
  // computes it; Exact rounds each product to its precision (320 bits for a
  // definition that calls a function, none for a ring definition), so the two
  // agree to within 2^-318 relatively, exactly for a ring definition.
  // *products_exact (when given): whether Exact's products with any binary32
  // g are exact (a ring definition, or factors short enough for 320 bits),
  // so that Exact is g * f exactly.
  // *factors (when given): the factors themselves, in the order Exact
  // multiplies by them, for ExactFromFactors.
  virtual std::optional<MpfrNumber> ExactFactor(const float* operands,
                                                bool* products_exact = nullptr,
                                                std::vector<MpfrNumber>* factors = nullptr) const = 0;
  // ExactFactor estimated in double-words with a bound (oracles/double_word.h)
  // by the op's own code (HasFastFactor in kernels/ops/elementwise_spec.h):
  // nullopt where it cannot bound it usefully, or for an op without one.
  virtual std::optional<FactorEstimate> FastFactor(const float* operands) const = 0;
  // FastFactor at second operands second[0 .. n) (the first's value does
  // not matter), bit for bit, into out's columns where plain (the op's batch,
  // FactorEstimateColumns); false, writing nothing, for an op without a batch
  // (the caller takes FastFactor one by one).
  virtual bool FastFactors(const float* second, size_t n, const FactorEstimateColumns& out) const = 0;
  virtual bool HasFastFactor() const = 0;
  // TermMagnitude({1, operands[1]}) within kFastTermFactorError relatively
  // (HasFastTermFactor in kernels/ops/elementwise_spec.h), the op's own
  // estimate: nullopt where it cannot say, or for an op without one.
  virtual std::optional<double> FastTermFactor(const float* operands) const = 0;
  virtual bool HasFastTermFactor() const = 0;
  // Exact({first, the operands the factors came from}) bit for bit: the same
  // products in the same arithmetic, without recomputing the factors.
  virtual MpfrNumber ExactFromFactors(float first, const std::vector<MpfrNumber>& factors) const = 0;
  // Sequence v (as VariantExact numbers them) through the tracing arithmetic of `explain`
  // (oracles/tracing_arith.h), on the operands' traced values.
  virtual TracingArith::Value Trace(size_t v, TracingArith& arith,
                                    const std::vector<TracingArith::Value>& operands) const = 0;
  // The relative condition number per operand, |x_k (d op / d x_k) / op|,
  // from the op's value at 2048 bits and at x_k (1 + 2^-100): a relative
  // error of about 2^-100, far below what a display or a threshold uses. NaN for a non-finite operand,
  // +inf where the op is 0 and its derivative is not.
  virtual std::vector<double> Condition(const float* operands) const = 0;
};

// Every registered op's oracle, by its info or its name (nullptr for a name
// that is not an elementwise op).
const ElementwiseOracle& OracleOf(const ElementwiseOpInfo& op);
const ElementwiseOracle* FindOracle(std::string_view op);

// Whether the op runs in a format: f32 and the rows of kNarrowFormats.
bool RunsIn(const ElementwiseOpInfo& op, const FloatFormat& format);
// The formats it runs in, f32 first.
std::vector<std::string> ElementwiseDtypes(const ElementwiseOpInfo& op);

// The variants of an op in a format (f32: kVariants; bf16, f16:
// kNarrowVariants). Throws InputError for a format the op does not run in.
std::vector<std::string> VariantNames(const ElementwiseOpInfo& op, const FloatFormat& format);

// The models of a 16-bit format, described: how each rounds, and the binary32
// model or the sequence it runs.
struct NarrowModelInfo {
  std::string name;
  enum Kind { kOpmath, kPerOp, kTruncating, kHighwaySoft } kind;
  size_t f32_model = 0;   // kOpmath, kTruncating, kHighwaySoft: index in op.models
  size_t sequence = 0;    // kPerOp: index in op.variants
  bool fused_functions = false;  // kPerOp: Highway's multiply-adds fused
};
// In this order, from the tables:
//   <m>_opmath for each binary32 model m: m's output rounded once to the
//     format (to nearest even);
//   each per-op variant: its sequence with every operation rounded to the
//     format; where the sequence's models differ between FMA targets and the
//     others (a function with multiply-adds inside), two: <variant>_fma and
//     <variant>_nofma;
//   for each Highway-converting variant and each binary32 model of its
//     sequence: bf16 <m>_opmath_truncating (Highway 1.0.3's DemoteTo drops
//     the low 16 bits), f16 <m>_opmath_hwy_soft (the model between Highway
//     1.0.3's software conversions, oracles/highway_f16.h).
const std::vector<NarrowModelInfo>& NarrowModelInfos(const ElementwiseOpInfo& op,
                                                     const FloatFormat& format);

// Every model of the op in a format: f32 op.models, else NarrowModelInfos.
std::vector<std::string> ModelNames(const ElementwiseOpInfo& op, const FloatFormat& format);
// Every model's output for one input (values of the format), in ModelNames
// order. A NaN operand of a 16-bit format is its sign's quiet NaN.
std::vector<float> ModelOutputs(const ElementwiseOpInfo& op, const FloatFormat& format,
                                const float* operands, bool native = false);
// The same into out[0, ModelCount(op, format)), allocating nothing.
void ModelOutputsInto(const ElementwiseOpInfo& op, const FloatFormat& format,
                      const float* operands, bool native, float* out);
size_t ModelCount(const ElementwiseOpInfo& op, const FloatFormat& format);
// One of them: model `model` (an index into ModelNames).
float ModelOutput(const ElementwiseOpInfo& op, const FloatFormat& format, size_t model,
                  const float* operands, bool native = false);
// Model `model` (ModelNames order) of `format` staged at operands[1..]
// (values of the format; operands[0] is ignored), the operands converted as
// ModelOutput converts them; nullopt where the model's sequence does more
// with the first operand than a chain holds.
std::optional<StagedChain> StageModelOutput(const ElementwiseOpInfo& op, const FloatFormat& format,
                                            size_t model, const float* operands);

// One model staged at many values of the other operands, the same steps at
// each: constants [step][entry].
struct StagedColumns {
  std::vector<ChainStep> steps;
  std::vector<std::vector<double>> c, d;
  size_t size() const { return c.empty() ? 0 : c[0].size(); }
};
// For i < n: out[i] = ModelOutput(op, format, model, {first, the operands of
// entry e}, native = true) with e = entry + i (or `entry` for every i when
// `broadcast`), NaN canonical. first[i] is a value of the format; in a 16-bit
// format first_bits[i] is its pattern as a kernel receives it (a NaN its
// sign's quiet NaN).
void ApplyStagedModel(const ElementwiseOpInfo& op, const FloatFormat& format, size_t model,
                      const StagedColumns& columns, size_t entry, bool broadcast,
                      const float* first, const uint16_t* first_bits, size_t n, float* out);

// The model a target's kernel of `variant` must follow in `format`; throws
// InputError for an unknown variant.
std::string ExpectedModel(const ElementwiseOpInfo& op, const FloatFormat& format,
                          std::string_view variant, const TargetInfo& target);

// The models `check` compares outputs with, as programs of the model language
// (oracles/model_expr.h), for outputs stored in `format`: those of the op's
// binary32 models that have an expression, and in a 16-bit format each one's
// <m>_opmath (working f32, one rounding), its per-step form (working format
// the storage format; named after the per-op variant that runs the sequence,
// else <m>_per_op) and, in bf16, <m>_opmath_truncating. Where a name is also
// one of ModelNames, the two are the same model (a test).
std::vector<ModelProgram> ModelPrograms(const ElementwiseOpInfo& op, const FloatFormat& format);

// The op's sequences that call exp, erf or tanh, as programs of the model
// language with those functions free (oracles/model_expr.h: any binary32
// within kModelFunctionUlps of the function), read from their op_sequence
// texts with the spec's named constants: what a kernel that computes a
// sequence's arithmetic with other implementations of its functions
// follows (`compare` names "function implementation" from them). In f32,
// <sequence>.free, or <sequence>_fma.free and _nofma.free where it has
// multiply-adds; in a 16-bit format <sequence>[_fma|_nofma]_opmath.free
// (working f32, one rounding), <sequence>_per_op.free (every step
// rounded to the format, a multiply-add twice) and, where it has
// multiply-adds, <sequence>_fma_per_op.free (each one rounding). Each built-in model of such
// a sequence follows its free form (a test).
std::vector<ModelProgram> FreeFunctionModels(const ElementwiseOpInfo& op, const FloatFormat& format);

// The classical bound of a backward-stable evaluation for one input, in the
// reductions' terms (oracles/reduction_bound.h): A the term magnitude, m the
// op's bound roundings, U an underflow allowance of m half-ulps of the
// smallest subnormal; the bound fraction |y - x| / (gamma_m A + U) is then
// at most 1 for an evaluation that is as good as its formula allows, and
// far below the ULP error where the result cancels. In a 16-bit format of
// precision p the evaluation may round every step to the format (an eager
// framework): A and U are scaled by 2^(24 - p), so that gamma_m A is about
// m 2^-p times the terms, and U is m half-ulps of the format's smallest
// subnormal; MeasureBoundFraction adds the final rounding.
// nullopt where there is no such bound: an infinite or NaN operand, or
// terms beyond MPFR's exponent range (exp of a large operand).
std::optional<ReductionBound> ElementwiseBound(const ElementwiseOpInfo& op, const float* operands,
                                               const FloatFormat& format);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_ENGINE_ELEMENTWISE_ORACLE_H_
