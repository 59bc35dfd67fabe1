// The row reductions: ops that reduce along the last dimension of a
// [rows, n] tensor and then use the row's statistics on every element
// (RMSNorm and softmax, forward and backward). Their op sequences are written
// once as templates (kernels/reductions/<family>/<family>_spec-inl.h), as the
// linear and MSE reductions' are (kernels/reduction_spec-inl.h): over Highway
// vectors they are the kernels (row_kernels-inl.h), over the binary32
// emulation the bit-exact models (suites/engine/reductions/row_models.h).
//
// Plain C++: no Highway types, so suites/ and tools/ include it directly.
#ifndef ULPGATE_KERNELS_REDUCTIONS_ROW_OPS_H_
#define ULPGATE_KERNELS_REDUCTIONS_ROW_OPS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace ulpgate {

enum class RowOp {
  kRmsNormFwd,     // y_i = g_i x_i / sqrt(mean_j x_j^2 + eps)
  kRmsNormBwd,     // dx_i = r g_i dy_i - r^3 x_i mean_j(g_j dy_j x_j)
  kSoftmaxFwd,     // y_i = exp(x_i - max) / sum_j exp(x_j - max)
  kSoftmaxBwd,     // dx_i = y_i (dy_i - sum_j dy_j y_j)
  kLogSoftmaxFwd,  // y_i = x_i - max - log(sum_j exp(x_j - max))
  kLogSoftmaxBwd,  // dx_i = dy_i - exp(y_i) sum_j dy_j
};
inline constexpr size_t kRowOpCount = static_cast<size_t>(RowOp::kLogSoftmaxBwd) + 1;

// How a variant computes the row's statistic (sum of squares, sum of
// exponentials, dot product).
enum class RowStat {
  // One accumulator, k = 0, 1, ..., n-1, with the target's MulAdd where the
  // term is a product (fused on AVX2/AVX3/AVX3_DL, two roundings elsewhere).
  kSequential,
  // One accumulator per lane (lane j takes k = j, j+L, ...), then the lanes
  // joined by a halving tree: depends on the lane count L (4, 8, 16 on x86).
  kLaneParallel,
  // RMSNorm: the running mean of squares m_k = m_{k-1} + (t_k - m_{k-1}) / k
  // (Welford's update, without the variance).
  kWelford,
  // Softmax: one pass of running max and rescaled sum, s = s e^(m - m') +
  // e^(x - m') (Milakov and Gimelshein, "Online normalizer calculation for
  // softmax", 2018), then the final pass.
  kOnline,
};

// What a variant does with the statistic.
enum class RowFinish {
  kPlain,       // backward softmaxes: nothing to choose
  kRsqrt,       // RMSNorm: r = RN(1 / RN(sqrt(v))), then products by r
  kSqrtDivide,  // RMSNorm: s = RN(sqrt(v)), then each element divided by s
  kDivide,      // softmax: each exponential divided by the sum
  kReciprocal,  // softmax: each exponential times RN(1 / sum)
};

struct RowVariant {
  std::string_view name;
  RowStat stat;
  RowFinish finish;
};

// How the last step of an element is written, beside the variant's finish:
// what another implementation of the same op may do with the same row
// statistics. `compare` asks which of these reproduces a side's outputs with
// the row's statistics set free (suites/engine/reductions/row_statistics.h).
enum class RowEpilogueStep {
  kVariant,            // the variant's own sequence (row_sequences.h)
  kProductDifference,  // softmax backward: dx = MulAdd(-y, D, RN(dy y))
  kContracted,         // log-softmax backward: dx = MulAdd(-Exp(y), G, dy), always fused
  // RMSNorm: r = rsqrt(v) as one function (RN(1/RN(sqrt v)) in binary32,
  // rounded once to a 16-bit format), then products by r: XLA's x / sqrt(v)
  // rewritten as x * rsqrt(v). In binary32 it is the kRsqrt finish.
  kRsqrtFunction,
};

// Where a declared form rounds to a 16-bit output format.
enum class RowFormRounding {
  // As the finishes: searched in binary32 and, in 16 bits, per op too.
  kAny,
  // It differs from a finish only where every operation is rounded to the
  // format: searched only as `_per_op` there.
  kPerOpOnly,
  // The row's statistic and the function the elements take of it (log-
  // softmax's log of the sum) kept in the format, the elements' own
  // arithmetic in binary32 and rounded once: ATen's 16-bit kernels, which
  // hold the row's intermediates in the tensor's type. 16 bits only.
  kStatisticInFormat,
};

// An epilogue another implementation is known to write, declared by the
// family's spec: its name, the cause word when it is what two sides part on
// ("formula", "fusion"), and its sequence in words.
struct RowEpilogueForm {
  std::string_view name;
  RowEpilogueStep step;
  std::string_view cause;
  std::string_view sequence;
  RowFormRounding rounding;
};

struct RowOpInfo {
  RowOp op;
  std::string_view name;        // the CLI's name, e.g. "rmsnorm_fwd"
  std::string_view definition;  // in words and indices
  // Operand tensors in the kernel's order; "g" is [n], the others [rows, n].
  std::vector<std::string_view> operands;
  std::vector<RowVariant> variants;
  bool takes_eps;  // RMSNorm's eps
  // What the row's reduction gives the elements (RowStatistics::value), in
  // words: one or two per op.
  std::vector<std::string_view> statistics;
  // Epilogues beside the variants' finishes (RowEpilogueForm).
  std::vector<RowEpilogueForm> other_epilogues;
  // The functions the statistic's terms go through that the epilogue does
  // not compute again per element ("exp and log": log-softmax's elements
  // take log(sum exp) whole), so that a statistic set free absorbs their
  // implementations too: two sides whose statistics differ may differ in
  // those functions rather than in their sums. Empty where the epilogue
  // recomputes every term's function (softmax's Exp) or there is none.
  std::string_view unpinned_functions;
  // The function each element calls on its own operands, which another
  // implementation may compute otherwise ("exp(y)": log-softmax backward;
  // "exp(x - max)": softmax, of RN(x - max));
  // empty where none is wired (RowEpilogue's function_values).
  std::string_view element_function;
};

// The six ops, in the order above.
const std::vector<RowOpInfo>& RowOps();
const RowOpInfo& GetRowOp(RowOp op);
// nullptr when unknown.
const RowOpInfo* FindRowOp(std::string_view name);
// -1 when the op has no such variant.
int RowVariantIndex(const RowOpInfo& op, std::string_view variant);
// Whether operand k of op is the per-column weight g [n] (else [rows, n]).
bool IsRowWeight(const RowOpInfo& op, size_t k);

// eps = 1e-6 (LLaMA's RMSNorm, torch.nn.RMSNorm(eps=1e-6)) as PyTorch adds it
// to a float tensor: the Python float cast to the tensor's dtype, the binary32
// value nearest 1e-6, 0x1.0c6f7ap-20 = 9.99999997e-7. A bf16 or f16 run takes
// the same binary32 eps (its arithmetic is binary32).
inline constexpr float kDefaultRmsNormEps = 0x1.0c6f7ap-20f;

// The largest row length the kernels accept: n (and every k <= n) exact in
// binary32, and n u <= 1/4 keeps every error bound finite.
inline constexpr size_t kMaxRowLength = size_t{1} << 20;

// A kernel: operands[k] points to operand k (float for f32, the 16-bit
// patterns for bf16 and f16), row-major, rows of n elements (g: n); out holds
// rows * n outputs of the same format. Any alignment; out may not alias.
using RowKernel = void (*)(const void* const* operands, void* out, size_t rows, size_t n,
                           float eps);

// The kernel of (op, format "f32" | "bf16" | "f16", variant) compiled for a
// Highway target (TargetInfo::bits); nullptr when any is unknown or the
// target not compiled.
RowKernel FindRowKernel(RowOp op, std::string_view format, std::string_view variant,
                        int64_t target);

// Highway's Log over full vectors of a target, as the log-softmax kernels
// call it: out[i] = Log(in[i]); for the tests of its port
// (oracles/highway_math.h). nullptr when the target is not compiled.
using RowLogKernel = void (*)(const float* in, float* out, size_t n);
RowLogKernel FindRowLogKernel(int64_t target);

// The lane count of a kernel's lane-parallel statistic on a target with
// `f32_lanes` float lanes (TargetInfo::f32_lanes): its full vector.
inline size_t RowParallelLanes(size_t f32_lanes) { return f32_lanes; }

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_REDUCTIONS_ROW_OPS_H_
