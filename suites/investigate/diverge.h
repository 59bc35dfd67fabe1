// `ulpgate diverge`: a guided search for the inputs where two computations of
// an op disagree most, in the manner of the published worst-case searches for
// floating-point functions: random restarts, hill climbing over neighbouring
// bit patterns, and refinement of the input intervals where the disagreement
// is largest.
//
// The search is generic: it sees only a number of binary32 operands and a
// scorer that evaluates a batch of inputs. Operands are searched as their
// positions in the ordered list of finite binary32 values (the "key": -0 and
// +0 are one key; infinities and NaN are not searched), so "neighbouring bit
// patterns" are neighbouring floats and an interval of keys is an interval of
// the real line. Every elementwise op plugs in through
// ElementwiseDivergeScorer; linear and mse would plug in with their own scorer
// (their operands flattened).
//
// Deterministic: a pure function of (scorer, options); one thread.
#ifndef ULPGATE_SUITES_DIVERGE_H_
#define ULPGATE_SUITES_DIVERGE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/elementwise_ops.h"
#include "kernels/registry.h"

namespace ulpgate {

// What comparing the two sides on one input gave.
struct DivergeEvaluation {
  double ulp = 0;        // disagreement; meaningless when special
  // The sides' outputs. When b is the exact value, b is that value rounded to
  // binary32, for display: the disagreement is measured against the exact value.
  float a = 0, b = 0;
  bool special = false;  // NaN or infinity against something else: not ranked
};

// Evaluates inputs columns[k][i] (k: operand), one result per input.
using DivergeScorer = std::function<void(const std::vector<std::vector<float>>& columns,
                                         std::vector<DivergeEvaluation>* results)>;

struct DivergeOptions {
  uint64_t evaluations = 100000;  // inputs evaluated on both sides, in all
  uint64_t seed = 1;
  size_t keep = 16;               // distinct worst inputs reported
};

struct DivergePoint {
  std::vector<float> operands;
  DivergeEvaluation evaluation;
  uint64_t found_at = 0;  // 1-based index of the evaluation that found it
};

struct DivergeResult {
  std::vector<DivergePoint> worst;  // by disagreement, largest first; distinct inputs
  uint64_t evaluations = 0;
  // (evaluation, best disagreement so far), each time the best improved.
  std::vector<std::pair<uint64_t, double>> improvements;
  uint64_t special_mismatches = 0;
  std::optional<DivergePoint> first_special;
  // The first evaluation whose disagreement reached `threshold`; 0 if none did.
  uint64_t FirstReaching(double threshold) const;
};

DivergeResult SearchDivergence(size_t operand_count, const DivergeScorer& scorer,
                               const DivergeOptions& options);

// One side of an elementwise op's comparison: a variant's kernel on a target,
// or the op's exact value.
struct DivergeSide {
  std::string variant;  // empty: the exact value
  const TargetInfo* target = nullptr;
  bool exact() const { return variant.empty(); }
  std::string Label() const;  // "mac_unfused@AVX2", "exact"
};

// Disagreement = MeasureUlpError(b, a): |a - b| / ulp(b) with b taken as the
// exact value, so it is in ULPs of the b side (the ULP error of docs/design.md "Numerics" when b is
// exact; its special rules decide infinities and NaN). `a` must not be exact.
// Throws std::invalid_argument for an unknown variant or a missing target.
// Binary32 kernels of any elementwise op.
DivergeScorer ElementwiseDivergeScorer(const ElementwiseOpInfo& op, const DivergeSide& a,
                                       const DivergeSide& b);
DivergeResult DivergeElementwise(const ElementwiseOpInfo& op, const DivergeSide& a,
                                 const DivergeSide& b, const DivergeOptions& options);

// The worst inputs in the input-file format of suites/inputs/inputs.h (one tuple per
// line in operand order, C99 hex floats; readable by `run --inputs` and fit
// for golden/ as a worst-case list): a '#' header with `header_lines` (what
// produced the file, how to regenerate and replay it) and the column names,
// then one line per input, largest disagreement first, with its disagreement
// and both sides' values after a '#'.
std::string DivergeInputFileText(const DivergeResult& result,
                                 const std::vector<std::string>& operand_names,
                                 const std::vector<std::string>& header_lines);

// Monotone maps between finite floats and keys in [-kMaxKey, kMaxKey].
inline constexpr int64_t kMaxDivergeKey = 0x7f7fffff;
int64_t FloatKey(float x);
float KeyFloat(int64_t key);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_DIVERGE_H_
