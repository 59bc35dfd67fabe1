// A row reduction's outputs with the row statistics set free: which
// epilogues (the variants' finishes, the forms other implementations write,
// RowEpilogueForm) reproduce a side's outputs bit for bit when the values the
// row's reduction gives its elements (RowStatistics: the mean of squares, the
// sum of exponentials, sum dy y ...) may be any binary32 values near the
// exact ones, and which values do, row by row.
//
// This is what `compare` rests a reduction's cause on where a side follows
// none of ulpgate's schedules (suites/investigate/compare.h): two sides that
// one epilogue reproduces, each with its own statistics, compute the same
// elements from differently summed rows ("tree"); sides that only different
// epilogues reproduce part where those epilogues do ("formula", "fusion").
//
// The search: per row, every binary32 value within the error bound of a
// binary32 sum of the row's n terms (2 gamma_n sum |t_k|, on each side of the
// sequential model's value: each side's sum lies within gamma_(n-1) sum |t_k|
// of the exact one), in ULPs of that value, capped at kRowStatisticWindow
// (1-D) or kRowStatisticWindow2 (two statistics, the RMSNorm backward pass);
// a row's elements in order, the first mismatch ending a candidate.
#ifndef ULPGATE_SUITES_ENGINE_REDUCTIONS_ROW_STATISTICS_H_
#define ULPGATE_SUITES_ENGINE_REDUCTIONS_ROW_STATISTICS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/reductions/row_ops.h"
#include "kernels/reductions/row_sequences.h"
#include "suites/inputs/reduction_problem.h"

namespace ulpgate {

// The most ULPs searched on each side of a statistic, one statistic or two.
inline constexpr int64_t kRowStatisticWindow = int64_t{1} << 12;
inline constexpr int64_t kRowStatisticWindow2 = int64_t{1} << 9;
// The most values kept per row of a fit (past it the row is `capped`).
inline constexpr size_t kRowStatisticHits = 4096;

// An epilogue a side may follow: a finish of the op's variants or another
// declared form (RowOpInfo::other_epilogues), with MulAdd (and Highway's Exp
// and Log) fused or not.
struct RowEpilogueCandidate {
  std::string name;      // "rsqrt_unfused", "product_difference_fused", "sqrt_divide_unfused_per_op"
  RowFinish finish = RowFinish::kPlain;
  RowEpilogueStep step = RowEpilogueStep::kVariant;
  bool fused = false;
  // Every +, -, *, / and sqrt rounded to the side's 16-bit format (its
  // binary32 result rounded again, as NumPy's float16 and ml_dtypes' bfloat16
  // compute), the statistic a value of the format: "_per_op" in the name.
  // Only for bf16 and f16 outputs; Highway's Exp and Log are computed in
  // binary32 and their results rounded to the format too (an exp of another
  // library in binary32 rounds to the same 16-bit value but where it lies
  // within its error of a rounding boundary).
  bool per_op = false;
  // The row's statistic a value of the format and the function the elements
  // take of it (Log of the sum) rounded to it, the elements' arithmetic in
  // binary32 (RowFormRounding::kStatisticInFormat): searched over the
  // format's values as per_op is. Only for bf16 and f16 outputs.
  bool statistic_in_format = false;
  // A form an op declares (RowOpInfo::other_epilogues), whose `cause` names
  // what two sides part on; false for a variant's finish.
  bool declared = false;
  std::string form;      // "rsqrt", "product_difference": the name without fusion
  std::string cause;     // the cause word of a declared form; "formula" for a finish
  std::string sequence;  // in words
};
// Every candidate but the per_op ones (SearchRowStatistics adds those for a
// 16-bit format); `sixteen_bit`: with the forms that differ only per op
// (RowFormRounding::kPerOpOnly), which the caller then searches per op, and
// those whose statistic is kept in the format (statistic_in_format).
std::vector<RowEpilogueCandidate> RowEpilogueCandidates(const RowOpInfo& op, bool sixteen_bit = false);

// A statistic value as an integer that counts binary32 values in order, so
// that two values' difference is their distance in ULPs (+0 and -0 are one).
int64_t OrderedFloat(float v);
float FloatFromOrdered(int64_t k);

struct RowFit {
  RowEpilogueCandidate epilogue;
  bool fits = false;        // every row reproduced
  int64_t unfit_row = -1;   // the first row no value reproduces
  // Per row: the statistics' values (OrderedFloat of value[0], value[1])
  // that reproduce it, in the order searched; `capped` when there were more
  // than kRowStatisticHits.
  std::vector<std::vector<std::array<int64_t, 2>>> hits;
  std::vector<bool> capped;
};

struct RowStatisticSearch {
  size_t rows = 0;        // over every instance
  size_t n = 0;           // the row length
  size_t statistics = 1;  // values per row
  std::vector<RowStatistics> centers;            // per row: the sequential model's
  std::vector<std::array<int64_t, 2>> window;    // per row and statistic: ULPs searched each way
  std::vector<std::array<double, 2>> bound_ulp;  // the bound in ULPs of the center
  std::vector<RowFit> fits;                      // one per candidate, RowEpilogueCandidates' order
  // The 16-bit format's name and how many of its values the per-op
  // epilogues searched each way; empty and 0 in binary32.
  std::string format;
  int64_t format_window = 0;
  // The distance between neighbouring values of the 16-bit format, in
  // binary32 values (OrderedFloat), 2^(24 - p); 1 in binary32.
  int64_t format_step = 1;
  // Per row, where the statistic goes through functions the elements do not
  // compute again (RowOpInfo::unpinned_functions: log-softmax forward's exp
  // and log) and the format is 16-bit: how far, in binary32 values at the
  // statistic, a per-op side's value may lie from the one found here because
  // its exp and log are not Highway's but within kRowFunctionWindow ULPs of
  // them: the terms' exps rounded to the format (the most the rounded values
  // of exps that near can move the row's sum, one term at a time), and one
  // value of the format for the log (a log that near moves the edge of the
  // statistics one log value serves by far less than the format's step).
  // Empty otherwise.
  std::vector<int64_t> function_slack;
};

// Searches `outputs` (every instance's, in order, values of inputs.format)
// over every candidate epilogue (for a 16-bit format, each also per_op: its
// statistic searched over the format's values, up to the same limits). Throws std::invalid_argument when the op is
// not a row op.
RowStatisticSearch SearchRowStatistics(const ReductionInputSet& inputs, const std::vector<float>& outputs);

// Where a side fits no epilogue because its elements call a function of
// their own (RowOpInfo::element_function), both sides together: per row, a
// statistic per side and, per element, one function value shared by both
// sides (within kRowFunctionWindow ULPs of Highway's), with which a's
// epilogue gives a's element and b's b's. Sharing the values says the two
// call one implementation; what is left is where their epilogues or sums
// part.
inline constexpr int64_t kRowFunctionWindow = 4;
// The most pairs of statistics tried for a row no one value serves, nearest
// first: past them the row counts as not served.
inline constexpr size_t kRowFunctionPairs = 256;

struct SharedFunctionPair {
  RowEpilogueCandidate a, b;
  // Per row: the statistic of each side (OrderedFloat), the values nearest
  // each other that serve, and whether no one value serves both (apart).
  std::vector<std::array<int64_t, 2>> statistic;  // {a's, b's}
  std::vector<bool> apart;
};

struct SharedFunctionSearch {
  std::string function;  // "exp(y)"
  size_t rows = 0;
  int64_t window = 0;    // ULPs searched each way for a statistic
  std::vector<SharedFunctionPair> pairs;  // those that serve every row
};

// Empty `function` when the op wires none. One statistic only.
SharedFunctionSearch SearchSharedFunctionValues(const ReductionInputSet& inputs, const std::vector<float>& a,
                                                const std::vector<float>& b);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_ENGINE_REDUCTIONS_ROW_STATISTICS_H_
