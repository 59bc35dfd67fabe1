#include "suites/drift/attribution.h"

#include <algorithm>
#include <cmath>

#include "suites/drift/report.h"
#include "suites/inputs/inputs.h"

namespace ulpgate {
namespace {

bool HasLayer(const Scenario& s, const char* type) {
  return std::any_of(s.layers.begin(), s.layers.end(),
                     [&](const LayerSpec& l) { return l.type == type; });
}

nlohmann::ordered_json OpList(const std::vector<StepOp>& ops) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (StepOp op : ops) j.push_back(StepOpName(op));
  return j;
}

}  // namespace

std::vector<StepOp> StepOpsOf(const Scenario& s) {
  std::vector<StepOp> ops;
  for (StepOp op : AllStepOps()) {
    if ((op == StepOp::kTanhFwd || op == StepOp::kTanhBwd) && !HasLayer(s, "tanh")) continue;
    if (op == StepOp::kRelu && !HasLayer(s, "relu")) continue;
    if ((op == StepOp::kGradNorm || op == StepOp::kSamPerturb) && s.optimizer != "sam") continue;
    ops.push_back(op);
  }
  return ops;
}

AttributionResult RunAttribution(const Scenario& scenario, const std::vector<RunConfig>& runs,
                                 size_t epochs, const std::function<void(size_t, size_t)>& progress,
                                 unsigned threads) {
  const std::vector<StepOp> ops = StepOpsOf(scenario);
  std::vector<RunConfig> configs;
  for (const RunConfig& run : runs) {
    if (!run.exact_ops.empty()) throw InputError("attribution starts from a float run");
    configs.push_back(run);
  }
  // After the float runs: for each run, for each op, alone then without.
  for (const RunConfig& run : runs) {
    for (StepOp op : ops) {
      RunConfig alone = run, without = run;
      for (StepOp other : ops) {
        if (other != op) alone.exact_ops.push_back(other);
      }
      // An op the network lacks is never computed: exact or not makes no
      // difference, so it is left out of the label.
      without.exact_ops = {op};
      configs.push_back(alone);
      configs.push_back(without);
    }
  }
  AttributionResult result;
  result.drift = RunDrift(scenario, configs, epochs, progress, threads);
  const std::vector<FloatRunResult>& r = result.drift.runs;
  for (size_t i = 0; i < runs.size(); ++i) {
    Attribution a;
    a.full = &r[i];
    const double full = a.full->summary.final_signed_deviation;
    a.stalled = a.full->summary.stalled;
    double sum = 0;
    for (size_t k = 0; k < ops.size(); ++k) {
      const size_t base = runs.size() + 2 * (i * ops.size() + k);
      OpShare share{ops[k], &r[base], &r[base + 1], NAN};
      if (full != 0) share.share = share.alone->summary.final_signed_deviation / full;
      sum += share.share;
      if (a.stalled && share.alone->summary.stalled) a.stalls_alone.push_back(ops[k]);
      if (a.stalled && !share.without->summary.stalled) a.unstalled_without.push_back(ops[k]);
      a.ops.push_back(share);
    }
    a.interaction = full != 0 ? 1 - sum : NAN;
    std::stable_sort(a.ops.begin(), a.ops.end(), [](const OpShare& x, const OpShare& y) {
      return std::fabs(x.alone->summary.final_signed_deviation) >
             std::fabs(y.alone->summary.final_signed_deviation);
    });
    result.attributions.push_back(std::move(a));
  }
  return result;
}

nlohmann::ordered_json AttributionJson(const Attribution& a) {
  auto number = [](double x) {
    return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json();
  };
  nlohmann::ordered_json j;
  j["label"] = a.full->config.Label();
  j["target"] = a.full->config.target->name;
  j["precision"] = a.full->config.precision.Name();
  j["variants"] = a.full->config.Spec();
  j["summary"] = CurveSummaryJson(a.full->summary, &a.full->param_max_relative,
                                  &a.full->param_max_ulp);
  for (const OpShare& s : a.ops) {
    nlohmann::ordered_json op;
    op["op"] = StepOpName(s.op);
    op["share"] = number(s.share);
    op["alone"] = CurveSummaryJson(s.alone->summary, &s.alone->param_max_relative,
                                   &s.alone->param_max_ulp);
    op["without"] = CurveSummaryJson(s.without->summary, &s.without->param_max_relative,
                                     &s.without->param_max_ulp);
    nlohmann::ordered_json loss = nlohmann::ordered_json::array();
    for (double l : s.alone->loss) loss.push_back(l);
    op["alone_loss"] = loss;
    j["ops"].push_back(op);
  }
  j["interaction"] = number(a.interaction);
  j["dominant"] = a.ops.empty() ? nlohmann::ordered_json() : StepOpName(a.ops.front().op);
  j["stalled"] = a.stalled;
  if (a.stalled) {
    j["stalls_alone"] = OpList(a.stalls_alone);
    j["unstalled_without"] = OpList(a.unstalled_without);
  }
  return j;
}

}  // namespace ulpgate
