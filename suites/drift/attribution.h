// Attribution: which op of a training step a float run's deviation comes
// from. For each op of the network, two attribution runs beside the float run
// and the exact run (suites/drift/mixed_ops.h):
//   alone    only that op rounded (every other op exact): the deviation that
//            op makes by itself, reading its operands as its format stores
//            them and computing as its kernel does;
//   without  only that op exact (every other op rounded): what is left when
//            that op's own arithmetic is taken out (its exact result is
//            rounded once by the op that reads it, as storage would).
// An op's share of the final loss deviation is its alone run's signed final
// deviation over the float run's. Were the deviations additive (small
// perturbations of a smooth training run), the shares would add up to one;
// what they leave over is reported as the interaction, so shares plus
// interaction add up to exactly 100%. Largest share first; the dominant op is
// the first. When the float run stalls (stops learning while the exact run
// does not), the ops that stall it alone and the ops whose exact form lets it
// learn again are named.
#ifndef ULPGATE_SUITES_DRIFT_ATTRIBUTION_H_
#define ULPGATE_SUITES_DRIFT_ATTRIBUTION_H_

#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "suites/drift/run.h"

namespace ulpgate {

struct OpShare {
  StepOp op;
  const FloatRunResult* alone = nullptr;    // only this op rounded
  const FloatRunResult* without = nullptr;  // only this op exact
  // alone's signed final deviation / the float run's (NaN when the float
  // run's is 0).
  double share = 0;
};

struct Attribution {
  const FloatRunResult* full = nullptr;  // the float run: every op rounded
  std::vector<OpShare> ops;              // the ops the network has, largest |share| first
  double interaction = 0;                // 1 - the sum of the shares
  bool stalled = false;                  // the float run stalls
  std::vector<StepOp> stalls_alone;      // ops whose alone run stalls too
  std::vector<StepOp> unstalled_without; // ops whose without run does not stall
};

struct AttributionResult {
  DriftResult drift;  // the float runs, then every attribution run
  std::vector<Attribution> attributions;  // one per float run
};

// The ops a scenario's training step has (no tanh ops without a tanh layer,
// no grad_norm or sam_perturb under plain SGD).
std::vector<StepOp> StepOpsOf(const Scenario& scenario);

// Attributes each configured float run (which must have no exact ops).
AttributionResult RunAttribution(const Scenario& scenario, const std::vector<RunConfig>& runs,
                                 size_t epochs,
                                 const std::function<void(size_t, size_t)>& progress = nullptr,
                                 unsigned threads = 0);

nlohmann::ordered_json AttributionJson(const Attribution& attribution);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_DRIFT_ATTRIBUTION_H_
