// `ulpgate report`: the JSON reports of a session (run, matrix, drift with
// its attribution and recorded curves, check, gate) as one self-contained
// HTML page for people: ULP-error histograms per variant and target on shared
// labelled axes, error maps and the colour scale they use, the target matrix,
// checks of outputs made elsewhere with the models they follow, drift curves
// and attribution bars, the gate's verdict, counts and rows with their
// waivers, messages and replay commands. No network: styles, charts (inline
// SVG) and the little script are in the page.
#ifndef ULPGATE_TOOLS_HTML_REPORT_H_
#define ULPGATE_TOOLS_HTML_REPORT_H_

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ulpgate {

struct ReportFile {
  std::string path;
  nlohmann::ordered_json json;
};

// The formats the page draws: ulpgate-run-1, ulpgate-matrix-1,
// ulpgate-drift-3 (and -2, its subset), ulpgate-check-1, ulpgate-gate-2.
bool IsReportFormat(const std::string& format);

// The page. Files of other formats are left out (the caller says which).
std::string HtmlReport(const std::vector<ReportFile>& files, const std::string& title);

}  // namespace ulpgate

#endif  // ULPGATE_TOOLS_HTML_REPORT_H_
