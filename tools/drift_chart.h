// The drift report drawn for people: each float run's loss beside the exact
// run's and its relative deviation from it, in two panels sharing one legend
// (a run keeps its colour and dash in both), runs grouped by precision and
// named by what tells them apart, recorded curves beside them.
#ifndef ULPGATE_TOOLS_DRIFT_CHART_H_
#define ULPGATE_TOOLS_DRIFT_CHART_H_

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "suites/drift/run.h"

namespace ulpgate {

// What tells runs apart, as fields in a fixed order (precision, tanh_bwd,
// linear, bias, mse, sgd, target).
struct RunFields {
  std::vector<std::pair<std::string, std::string>> fields;
};
RunFields FieldsOf(const RunConfig& config);
RunFields FieldsOf(const nlohmann::ordered_json& report_run);  // a DriftJson "runs" entry

// Names made of the fields that differ between the runs ("bf16 tanh_bwd=mac_per_op,sgd=fused"
// when precision, tanh_bwd and sgd differ; "tanh_bwd=mac@AVX2" for a single run). With
// `without_precision`, the precision is left out (it heads the run's group).
std::vector<std::string> RunShortNames(const std::vector<RunFields>& runs,
                                       bool without_precision = false);
std::vector<std::string> RunShortNames(const std::vector<const FloatRunResult*>& runs);

// The chart of a DriftJson report (with its "compare" curves, if any); `id`
// keeps several charts in one page apart.
std::string DriftChartSvg(const nlohmann::ordered_json& report, const std::string& id = "drift");

}  // namespace ulpgate

#endif  // ULPGATE_TOOLS_DRIFT_CHART_H_
