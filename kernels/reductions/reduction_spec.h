// What a reduction op is, as data: the rows every reduction folder's spec
// fills in (kernels/reductions/<family>/<family>_spec.h), and the run-time
// description the generic code reads (ReductionOpInfo). A reduction is
//   - its shape: named extents ({batch, in, out}, {n}, {rows, cols}), from
//     which every tensor's shape, the output's and the reduction's length
//     follow (TensorExtents);
//   - its operands, each with its role, shape and how the input suites draw
//     it (OperandKind, TermRole, the axis it is reduced along);
//   - its variants: an op sequence each, the schedule (the order its terms
//     are combined in) and an op-defined form (the mean by division or by the
//     reciprocal); the model each must follow per target follows from the
//     schedule (ExpectedReductionModel), unless the spec declares its own
//     (kExpectedModel, kCandidateModels below);
//   - its templates (<family>_spec-inl.h): per op a struct whose Gather
//     collects what one output element depends on (ElementTerms), whose Model
//     evaluates a model over the binary32 emulation and whose Exact gives the
//     element's exact value and error bound over MPFR (ExactArith) - nothing
//     here assumes a sum of products: an op computes what it likes from the
//     terms it gathered (sqrt, exp and log for a row-wise norm or softmax);
//   - its kernels (<family>-inl.h, Highway): Kernel<kVariant>, one per row of
//     kVariants, with the one signature of every reduction (ReductionKernel).
//
// Adding a reduction: see kernels/reductions/registered_reductions.h.
//
// Plain C++: no Highway types and no MPFR, so suites/ and tools/ include it.
#ifndef ULPGATE_KERNELS_REDUCTIONS_REDUCTION_SPEC_H_
#define ULPGATE_KERNELS_REDUCTIONS_REDUCTION_SPEC_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ulpgate {

struct ReductionOpInfo;

// Every reduction kernel, in every format: operands[k] is operand k of the
// spec's kOperands (row-major, its shape from the extents), out the output,
// both in the storage of the format (float for f32, the bit patterns,
// uint16_t, of bf16 and f16); extents[e] is extent e of the spec's kExtents.
// A scalar operand is a one-element tensor.
using ReductionKernel = void (*)(const void* const* operands, void* out, const size_t* extents);

// The most extents an op's shape has, and the highest rank of a tensor.
inline constexpr size_t kMaxReductionRank = 4;

// The largest extent the kernels accept: N must be exact in binary32 for the
// MSE's mean, and n*u <= 1/2 keeps the error bound finite.
inline constexpr size_t kMaxReductionLength = size_t{1} << 22;

// A tensor's shape as the op's extents it spans, outermost first (rank 0: a
// scalar, stored as one element).
struct TensorExtents {
  std::array<uint8_t, kMaxReductionRank> extent{};
  uint8_t rank = 0;
};
constexpr TensorExtents ScalarShape() { return {}; }
constexpr TensorExtents Extents(uint8_t a) { return {{a}, 1}; }
constexpr TensorExtents Extents(uint8_t a, uint8_t b) { return {{a, b}, 2}; }
constexpr TensorExtents Extents(uint8_t a, uint8_t b, uint8_t c) { return {{a, b, c}, 3}; }

// One extent of an op's shape: its name ("batch"), as --shape and messages
// write it ("B"), and its size when --shape is not given.
struct ReductionExtentInfo {
  std::string_view name;
  std::string_view letters;
  size_t default_size;
};

// What an operand is, for the suites that draw by meaning (training,
// well_conditioned's grad_out) ...
enum class OperandKind { kActivation, kWeight, kBias, kGradient, kPrediction, kTarget, kGradOut };
// ... and its place in the terms: the left operand (negated in the suites'
// mirrored pairs), the right one, or outside the reduction (a bias, a scalar).
enum class TermRole { kLeft, kRight, kOutside };

struct ReductionOperandInfo {
  std::string_view name;
  std::string_view role;  // in words
  TensorExtents shape;
  OperandKind kind;
  TermRole term_role;
  // The axis of `shape` the reduction runs along (0: rows, or the index of a
  // 1-D tensor; 1: columns), -1 for none. The suites draw term k of an
  // output from index k along it; block operands scale blocks along it.
  int reduction_axis;
};

struct ReductionOutputInfo {
  std::string_view name;  // "y", "loss": messages write y[3,1]
  TensorExtents shape;
};

// The order in which a variant combines the terms of one output: a
// vocabulary shared by the ops, each using the ones it has.
enum class ReductionSchedule {
  kSequentialFused,    // acc = MulAdd(p_k, q_k, acc)
  kSequentialUnfused,  // acc = acc + RN(p_k q_k)
  kLaneParallel,       // one MulAdd accumulator per lane, then ReduceLanes
  kPairwise,           // cascade of the rounded terms
  kElementwise,        // no reduction (mse_bwd)
};

struct ReductionVariantInfo {
  std::string_view name;
  ReductionSchedule schedule;
  // What the op does around its reduction, an index its templates read (the
  // MSE's mean: 0 by division, 1 by the reciprocal); 0 for most ops.
  int form;
  // Appended to the model's name, so that models of different forms differ.
  std::string_view model_suffix;
  std::string_view op_sequence;
};

// How the `exact` suite keeps every intermediate an exact integer: the
// integers' bits given p (the format's precision) and the terms' count.
enum class ExactFill {
  kProducts,            // (n + 1) 4^b <= 2^p
  kPlainSum,            // n 2^b <= 2^p
  kSquaredDifferences,  // |y - t| <= 2^(b+1), n 4^(b+1) <= 2^p
};

// How the `adversarial` suite draws: each instance takes one of the op's
// families by name (kAdversarialFamilies); the family's generator is the
// suites' (suites/inputs/reduction_suites.cc), written once per kind of terms.
enum class AdversarialDraw {
  kProducts,     // sums of products and plain sums: mirrored pairs, products' ranges
  kDifferences,  // functions of y - t: equal, near-equal, overflowing differences
};

// A shape as values of an op's extents, in the order of its kExtents.
struct ReductionShape {
  std::array<size_t, kMaxReductionRank> extent{1, 1, 1, 1};
  size_t rank = 0;

  size_t operator[](size_t e) const { return extent[e]; }
  size_t& operator[](size_t e) { return extent[e]; }
  const size_t* data() const { return extent.data(); }
  friend bool operator==(const ReductionShape& a, const ReductionShape& b) {
    return a.rank == b.rank && a.extent == b.extent;
  }
};

// What one output element depends on, gathered by its op (Spec's templates'
// Gather) into contiguous arrays: `vectors` the op's term sequences (a dot
// product's p and q, a row), `scalars` the values outside them (a bias,
// grad_out), `count` an integer the op uses (the MSE's N), `position` where
// the element sits in what it reduces (an index within its row). The op's
// spec says which is which.
struct ElementTerms {
  std::vector<std::vector<float>> vectors;
  std::vector<float> scalars;
  uint64_t count = 0;
  size_t position = 0;
};

// An element's exact value, numerator / denominator, and the ingredients of
// its error bound (oracles/reduction_bound.h), in an exact arithmetic's
// values V (MPFR's on the oracle side): the spec's Exact returns one.
template <class V>
struct ReductionExactParts {
  V numerator;
  uint64_t denominator = 1;
  V abs_sum;               // A: the terms' magnitudes, times the denominator
  uint64_t roundings = 0;  // m
  V underflow;             // U, absolute
  V peak;                  // bounds every exact intermediate
};

// A bit-exact model: a variant's schedule evaluated in binary32 with MulAdd
// fused or not and, for the lane-parallel schedule, a lane count.
struct ReductionModel {
  ReductionSchedule schedule = ReductionSchedule::kSequentialUnfused;
  bool fused = false;  // MulAdd rounds once
  size_t lanes = 1;    // kLaneParallel only
  int form = 0;        // the variant's form
  std::string_view suffix;

  // "sequential_fused", "sequential_unfused", "lane_parallel_x8_fused",
  // "pairwise", "framework", then the variant's suffix. The fused/unfused
  // suffix is left out where the op has no MulAdd.
  std::string Name(const ReductionOpInfo& op) const;
};

// An op as the generic code sees it, built from its spec
// (registered_reductions.h); ReductionOps() holds one per registered op.
struct ReductionOpInfo {
  size_t index = 0;               // in ReductionOps()
  std::string_view name;          // the CLI's name, e.g. "linear_fwd"
  std::string_view definition;    // in words and indices
  std::string_view family;        // the folder: kernels/reductions/<family>/
  std::vector<ReductionExtentInfo> extents;
  std::vector<ReductionOperandInfo> operand_info;
  // Operand names in the kernel's argument order, e.g. {"x", "w", "b"}.
  std::vector<std::string> operands;
  ReductionOutputInfo output;
  int reduction_extent = -1;      // the extent summed over; -1: none (length 1)
  std::vector<ReductionVariantInfo> variants;
  bool fused_matters = true;      // whether MulAdd occurs (not in a plain sum)
  // The input suites' stream of the op: every draw depends on it, so it is
  // fixed per op (an op's inputs, and so its goldens, never change when
  // another is registered).
  uint64_t input_stream = 0;
  std::vector<std::string> adversarial_families;
  AdversarialDraw adversarial_draw = AdversarialDraw::kProducts;
  ExactFill exact_fill = ExactFill::kProducts;
  std::vector<ReductionShape> training_shapes;  // the drift model's layers
  ReductionShape golden_shape;                  // what `golden bless` measures
  size_t golden_instances = 0;
  // Whether Eigen's float product x W^T + b computes the op (operands x, w,
  // b): the engine's peer (suites/engine/eigen_peer.h).
  bool eigen_peer = false;
  // The element's terms (ElementTerms), from the instance's operands.
  ElementTerms (*gather)(const std::vector<std::vector<float>>& operands,
                         const ReductionShape& shape, size_t element) = nullptr;
  // The model a variant follows on a target with `lanes` float lanes whose
  // MulAdd is fused or not, and the models it is compared with.
  ReductionModel (*expected_model)(const ReductionOpInfo& op, const ReductionVariantInfo& variant,
                                   size_t lanes, bool fused_muladd) = nullptr;
  std::vector<ReductionModel> (*candidate_models)(const ReductionOpInfo& op,
                                                  const ReductionVariantInfo& variant) = nullptr;
};

// Every registered op, in the order of ULPGATE_REDUCTION_OPS.
const std::vector<ReductionOpInfo>& ReductionOps();
// nullptr when unknown.
const ReductionOpInfo* FindReductionOp(std::string_view name);
// -1 when the op has no such variant.
int ReductionVariantIndex(const ReductionOpInfo& op, std::string_view variant);

// Element counts of a tensor, of the operand tensors and of the output,
// row-major shapes.
std::vector<size_t> TensorShape(const TensorExtents& t, const ReductionShape& shape);
std::vector<std::vector<size_t>> ReductionOperandShapes(const ReductionOpInfo& op,
                                                        const ReductionShape& shape);
std::vector<size_t> ReductionOutputShape(const ReductionOpInfo& op, const ReductionShape& shape);
size_t ReductionOutputCount(const ReductionOpInfo& op, const ReductionShape& shape);
// The number of terms one output reduces (1 for an elementwise op).
size_t ReductionLength(const ReductionOpInfo& op, const ReductionShape& shape);
// The op's shape with every extent at its default.
ReductionShape DefaultShape(const ReductionOpInfo& op);

// The model a variant should follow on a target with `lanes` float lanes
// whose MulAdd is fused or not (TargetInfo::f32_lanes,
// TargetInfo::fused_muladd): the op's own rule, or the schedules' below.
ReductionModel ExpectedReductionModel(const ReductionOpInfo& op,
                                      const ReductionVariantInfo& variant, size_t lanes,
                                      bool fused_muladd);
// The models a variant is compared with; the report lists each one the
// kernel matched on every output.
std::vector<ReductionModel> CandidateReductionModels(const ReductionOpInfo& op,
                                                     const ReductionVariantInfo& variant);

// The schedules' rule: sequential_fma follows the fused model where MulAdd is
// an FMA and the unfused one elsewhere; lane_parallel the model with the
// target's lane count and fusion; the others one model on every target. The
// candidates: the schedule fused and unfused and, for the lane-parallel
// schedule, every x86 lane count.
ReductionModel ScheduleExpectedModel(const ReductionOpInfo& op,
                                     const ReductionVariantInfo& variant, size_t lanes,
                                     bool fused_muladd);
std::vector<ReductionModel> ScheduleCandidateModels(const ReductionOpInfo& op,
                                                    const ReductionVariantInfo& variant);

// The lane counts of the x86 targets Highway 1.0.3 compiles: SCALAR 1,
// SSSE3/SSE4 4, AVX2 8, AVX3/AVX3_DL 16.
inline constexpr size_t kX86LaneCounts[] = {1, 4, 8, 16};

// Index of the row named `name` in a table of rows with a `name`, at compile
// time; -1 if none.
template <class Row, size_t kSize>
constexpr int ReductionRowIndex(const std::array<Row, kSize>& rows, std::string_view name) {
  for (size_t i = 0; i < kSize; ++i) {
    if (rows[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

// Whether a spec declares its own model rule:
//   static constexpr auto kExpectedModel = &F;    // as ReductionOpInfo::expected_model
//   static constexpr auto kCandidateModels = &G;  // as ReductionOpInfo::candidate_models
// Without them the schedules' rule applies.
template <class Spec, class = void>
struct HasOwnModels {
  static constexpr bool kValue = false;
};
template <class Spec>
struct HasOwnModels<Spec, std::void_t<decltype(Spec::kExpectedModel),
                                      decltype(Spec::kCandidateModels)>> {
  static constexpr bool kValue = true;
};

// Whether a spec's exact value needs rounding operations (sqrt, exp, log:
// no finite precision holds them), declared as
//   static constexpr bool kExactRounds = true;
// The oracle then evaluates its Exact with ExactArith::Rounding, at a
// precision far above binary32's; without it every operation is checked exact.
template <class Spec, class = void>
struct ExactRoundsOf {
  static constexpr bool kValue = false;
};
template <class Spec>
struct ExactRoundsOf<Spec, std::void_t<decltype(Spec::kExactRounds)>> {
  static constexpr bool kValue = Spec::kExactRounds;
};

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_REDUCTIONS_REDUCTION_SPEC_H_
