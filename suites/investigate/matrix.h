// `ulpgate matrix`: variant x target, over the standard suites: the model each
// kernel conforms to bit for bit, its maximum ULP error per suite, and which
// (variant, target) cases produce bit-identical outputs (digest groups).
//
// Built on RunElementwise (suites/engine/engine.h): one run per suite, every supported
// target, deterministic for a seed whatever the thread count. A model counts
// as conformed to only when the kernel matched it on every input of every
// suite. Targets compiled but not supported by this CPU are listed with the
// model they should follow and not run.
#ifndef ULPGATE_SUITES_MATRIX_H_
#define ULPGATE_SUITES_MATRIX_H_

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/elementwise_ops.h"
#include "kernels/registry.h"
#include "suites/engine/engine.h"
#include "suites/inputs/inputs.h"

namespace ulpgate {

struct MatrixCell {
  std::string variant;
  const TargetInfo* target = nullptr;
  bool run = false;                   // false: compiled, but this CPU cannot run it
  std::string expected_model;         // what the target's NegMulAdd implies
  std::vector<std::string> matching;  // models matched on every input of every suite
  std::string model;                  // expected if matched, else the first match, else ""
  std::vector<double> max_ulp;        // per suite, over non-special results
  std::vector<uint64_t> special_mismatch;  // per suite
  uint64_t digest = 0;                // FNV-1a over the per-suite output digests
  int group = -1;                     // index into ConformanceMatrix::groups; -1 if not run
  // Set when the kernel faulted (crashed, hung, wrote outside its output) on
  // a suite: that suite's case, with the fault, and its inputs. The cell is
  // then not measured (no model, no group) and never as expected.
  std::optional<CaseResult> fault;
  std::shared_ptr<const InputSet> fault_inputs;
  bool as_expected() const { return run && !fault && model == expected_model; }
};

struct ConformanceMatrix {
  std::string op;
  std::vector<std::string> suites;
  uint64_t n_per_suite = 0;
  uint64_t seed = 0;
  std::vector<std::string> variants;
  std::vector<const TargetInfo*> targets;   // every compiled target, narrowest first; then plugins
  std::vector<MatrixCell> cells;            // variant-major, targets in that order; then plugins'
  std::vector<std::vector<size_t>> groups;  // cells with bit-identical outputs, in order of first cell

  // nullptr where the variant has no kernel on the target (a plugin's).
  const MatrixCell* Find(const std::string& variant, const std::string& target) const;
  // Every case run here conforms to the model its target should follow.
  bool AllAsExpected() const;
  // Some kernel faulted.
  bool AnyFault() const;
};

// n_per_suite inputs of each of the op's suites with the given seed, in f32.
// Plugins' targets (suites/engine/plugins.h) are columns after the compiled
// ones, their kernels rows of their own, each expected to follow the model it
// claims.
// progress, when set, is called now and then with (inputs done, inputs in all suites).
ConformanceMatrix BuildMatrix(const ElementwiseOpInfo& op, uint64_t n_per_suite, uint64_t seed,
                              unsigned threads = 0,
                              const std::vector<const TargetInfo*>& plugins = {},
                              const std::function<void(uint64_t, uint64_t)>& progress = nullptr);

// "A", "B", ..., "Z", "AA", ...
std::string GroupName(int group);

nlohmann::ordered_json MatrixJson(const ConformanceMatrix& matrix);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_MATRIX_H_
