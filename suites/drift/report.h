// The drift report (JSON); tools/drift_chart.h draws it.
#ifndef ULPGATE_SUITES_DRIFT_REPORT_H_
#define ULPGATE_SUITES_DRIFT_REPORT_H_

#include <nlohmann/json.hpp>

#include <string>

#include "suites/drift/run.h"

namespace ulpgate {

// Everything needed to replay the run elsewhere: the scenario, the batch and
// the initial parameters as hex floats, the per-epoch losses of the reference
// (decimal, 17 digits) and of each run (hex floats), parameter errors,
// summary figures and in-situ histograms. Fields are documented in docs/drift.md.
nlohmann::ordered_json DriftJson(const DriftResult& result);

// A curve's summary figures (and a run's final parameter errors, when given)
// as DriftJson writes them under "summary".
nlohmann::ordered_json CurveSummaryJson(const CurveSummary& summary,
                                        const std::vector<double>* param_max_relative = nullptr,
                                        const std::vector<double>* param_max_ulp = nullptr);


}  // namespace ulpgate

#endif  // ULPGATE_SUITES_DRIFT_REPORT_H_
