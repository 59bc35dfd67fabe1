// Loss curves recorded elsewhere (a framework's training run on a device, say
// tools/python/torch_drift.py's) placed beside the exact run and ulpgate's own
// runs: deviation, lag, and the ulpgate run it is closest to.
#ifndef ULPGATE_SUITES_DRIFT_CURVES_H_
#define ULPGATE_SUITES_DRIFT_CURVES_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suites/drift/run.h"

namespace ulpgate {

struct RecordedCurve {
  std::string label;
  std::string path;
  std::vector<double> loss;  // per epoch, from epoch 0
  // A JSON curve's "ops": what each op of the first steps computed
  // (torch_drift.py --record-ops), as the curve lists it; null when absent.
  // suites/investigate/recorded_ops.h reads and matches it.
  nlohmann::ordered_json ops;
  // A JSON curve's "experiment": a run made with a framework setting
  // (`setting`) that removes one cause of difference (`removes`, a word of
  // suites/investigate/recorded_ops.h's vocabulary); empty otherwise.
  std::string experiment_setting, experiment_removes;
  // What torch_drift.py says of the run: its precision, device and whether
  // it was compiled ("" and false where the curve does not say).
  std::string precision, device;
  bool compiled = false;
};

// Reads per-epoch losses: a JSON list of numbers (or an object with a "loss"
// list, as torch_drift.py writes, and optionally its "ops"), a CSV or text file (one loss per line, or
// "epoch,loss" rows; a header line and '#' comments are skipped), or a 1-D
// .npy of float32 or float64. Throws InputError, one line naming the file and
// the place, on anything else (an empty curve, a value that is not a number).
RecordedCurve ReadLossCurve(const std::string& path, const std::string& label);
// The same for text already read (JSON when `path` ends in .json, else CSV or
// text); `path` names it in messages.
RecordedCurve ParseLossCurve(const std::string& text, const std::string& path,
                             const std::string& label);

struct CurveComparison {
  RecordedCurve curve;
  size_t epochs = 0;     // compared: the shorter of the curve and the runs
  CurveSummary summary;  // against the exact run
  // Mean over the compared epochs of |curve - run| / reference, per run of
  // the drift result, and the run it is smallest for.
  std::vector<double> distance;
  size_t closest = 0;
};

CurveComparison CompareCurve(const RecordedCurve& curve, const DriftResult& drift);

nlohmann::ordered_json CurveComparisonJson(const CurveComparison& comparison,
                                           const DriftResult& drift);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_DRIFT_CURVES_H_
