// Drift: float training runs composed of ulpgate's own SIMD kernels on one
// target, with the variant of every op chosen per run, beside the exact
// shadow run (drift_reference.h), measured epoch by epoch.
#ifndef ULPGATE_SUITES_DRIFT_RUN_H_
#define ULPGATE_SUITES_DRIFT_RUN_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "suites/drift_reference.h"
#include "suites/drift_scenario.h"
#include "suites/statistics.h"

namespace ulpgate {

// The kernels of one float run: a target and a variant per op.
struct RunConfig {
  const TargetInfo* target = nullptr;
  std::string tanh_bwd = "mac";
  std::string linear = "sequential_fma";  // linear_fwd, linear_bwd_input, linear_bwd_weight
  std::string bias = "sequential";        // linear_bwd_bias
  std::string mse = "sequential_fma";     // mse_fwd
  std::string sgd = "unfused";            // "unfused": w - RN(lr*g); "fused": NegMulAdd
  // Evaluate the models of the target's kernels (suites/drift_models.h)
  // instead of calling them: for a target this CPU cannot run. The results of
  // a conforming target are the same bit for bit; the label does not change.
  bool model = false;
  // "tanh_bwd=mac,linear=sequential_fma,bias=sequential,mse=sequential_fma,sgd=unfused@AVX2"
  std::string Label() const;
};

// Parses "op=variant,op=variant" (ops: tanh_bwd, linear, bias, mse, sgd) over
// the defaults above; throws InputError on an unknown op or variant.
RunConfig ParseRunConfig(const std::string& spec, const TargetInfo* target);

struct LagAt {
  size_t epoch;           // a reference epoch
  double reference_loss;  // the reference's loss there
  // Epochs after `epoch` at which the run first reaches that loss (negative:
  // earlier); empty when it never does within the run.
  std::optional<long> lag;
};

struct FloatRunResult {
  RunConfig config;
  std::vector<float> loss;               // per epoch, at w before the perturbation
  std::vector<double> param_max_relative;  // per epoch start, against the reference
  std::vector<double> param_max_ulp;
  // Every kernel call of the run checked against the exact value of that call
  // on the same inputs, per op.
  std::map<std::string, ErrorStatistics> in_situ;
  Parameters final_parameters;
  // Summary.
  double final_relative_deviation = 0;
  double max_relative_deviation = 0;
  size_t max_deviation_epoch = 0;
  std::vector<LagAt> lags;
};

struct DriftResult {
  Scenario scenario;
  size_t epochs = 0;
  Batch batch;
  Parameters initial;
  ReferenceRun reference;
  std::vector<FloatRunResult> runs;
};

// Runs the reference and every configured float run for `epochs` epochs (the
// scenario's when 0), the float runs on `threads` threads (0: every core; the
// results do not depend on it). progress(epoch, epochs) is called now and then.
DriftResult RunDrift(const Scenario& scenario, const std::vector<RunConfig>& runs, size_t epochs,
                     const std::function<void(size_t, size_t)>& progress = nullptr,
                     unsigned threads = 0);

// The epochs at which lag is measured: 10%, 25%, 50%, 75% and 100% of the run.
std::vector<size_t> LagEpochs(size_t epochs);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_DRIFT_RUN_H_
