// Drift: float training runs composed of ulpgate's own SIMD kernels on one
// target, in a precision, with the variant of every op chosen per run, beside
// the exact shadow run (suites/drift/exact_ops.h), measured epoch by epoch.
// Attribution runs (suites/drift/attribution.h) compute chosen ops exactly
// and round the others; they are measured the same way.
#ifndef ULPGATE_SUITES_DRIFT_RUN_H_
#define ULPGATE_SUITES_DRIFT_RUN_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "suites/drift/exact_ops.h"
#include "suites/drift/float_ops.h"
#include "suites/drift/precision.h"
#include "suites/drift/scenario.h"
#include "suites/engine/statistics.h"

namespace ulpgate {

// The kernels of one float run: a target, a precision and a variant per op.
struct RunConfig {
  const TargetInfo* target = nullptr;
  DriftPrecision precision;
  std::string tanh_bwd = "mac";  // a tanh_bwd variant of the compute format
  std::string linear = "sequential_fma";  // linear_fwd, linear_bwd_input, linear_bwd_weight
  std::string bias = "sequential";        // linear_bwd_bias
  std::string mse = "sequential_fma";     // mse_fwd
  std::string sgd = "unfused";            // "unfused": w - RN(lr*g); "fused": NegMulAdd
  // Evaluate the models of the target's kernels (suites/drift/kernels.h)
  // instead of calling them: for a target this CPU cannot run. The results of
  // a conforming target are the same bit for bit; the label does not change.
  bool model = false;
  // Attribution: these ops are computed exactly (MPFR) and the others as the
  // kernels round them; empty for a float run.
  std::vector<StepOp> exact_ops;

  // The variants as a run spec: "tanh_bwd=mac,linear=sequential_fma,
  // bias=sequential,mse=sequential_fma,sgd=unfused".
  std::string Spec() const;
  // "<spec>@AVX2" in f32, "bf16 <spec>@AVX2" in another precision, then
  // " [exact: op, op]" or " [only op rounded]" for an attribution run.
  std::string Label() const;
};

// The default run spec's tanh_bwd variant in a format: "mac", or
// "mac_opmath" in a 16-bit format.
std::string DefaultTanhBwdVariant(const FloatFormat& format);

// Parses "op=variant,op=variant" (ops: tanh_bwd, linear, bias, mse, sgd) over
// the defaults above (tanh_bwd: DefaultTanhBwdVariant of the compute format);
// throws InputError on an unknown op or variant.
RunConfig ParseRunConfig(const std::string& spec, const TargetInfo* target,
                         const DriftPrecision& precision = {});

struct LagAt {
  size_t epoch;           // a reference epoch
  double reference_loss;  // the reference's loss there
  // Epochs after `epoch` at which the run first reaches that loss (negative:
  // earlier); empty when it never does within the run.
  std::optional<long> lag;
};

// Deviation of a loss curve from the reference: figures every run, recorded
// curve and attribution run shares.
struct CurveSummary {
  double final_relative_deviation = 0;   // |run - reference| / reference at the last epoch
  double final_signed_deviation = 0;     // (run - reference) / reference at the last epoch
  double max_relative_deviation = 0;
  size_t max_deviation_epoch = 0;
  std::vector<LagAt> lags;
  // The run's loss falls over its last quarter by less than a tenth of what
  // the reference's falls and ends above it: it stopped learning while the
  // exact run did not.
  bool stalled = false;
};
CurveSummary SummarizeCurve(const std::vector<double>& loss, const std::vector<double>& reference);

struct FloatRunResult {
  RunConfig config;
  std::vector<double> loss;                // per epoch, at w before the perturbation
  std::vector<double> param_max_relative;  // per epoch start, against the reference
  std::vector<double> param_max_ulp;       // in ULPs of the master format
  // Every kernel call of the run checked against the exact value of that call
  // on the same inputs, per op (float runs only).
  InSituStatistics in_situ;
  // The parameters after the last epoch (attribution runs: rounded to the
  // master format).
  Parameters final_parameters;
  CurveSummary summary;
};

struct DriftResult {
  Scenario scenario;
  size_t epochs = 0;
  Batch batch;
  Parameters initial;
  ReferenceRun reference;
  std::vector<FloatRunResult> runs;
};

// Runs the reference and every configured run for `epochs` epochs (the
// scenario's when 0), the runs on `threads` threads (0: every core; the
// results do not depend on it). progress(epoch, epochs) is called now and then.
DriftResult RunDrift(const Scenario& scenario, const std::vector<RunConfig>& runs, size_t epochs,
                     const std::function<void(size_t, size_t)>& progress = nullptr,
                     unsigned threads = 0);

// The epochs at which lag is measured: 10%, 25%, 50%, 75% and 100% of the run.
std::vector<size_t> LagEpochs(size_t epochs);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_DRIFT_RUN_H_
