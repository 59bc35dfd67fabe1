#include "tools/run_limits.h"

#include <fmt/format.h>

#include "suites/reports/report.h"
#include "tools/text_table.h"

namespace ulpgate {

size_t CheckRunLimits(const std::vector<nlohmann::ordered_json>& records, const RunLimits& limits,
                      std::ostream& out) {
  size_t failed = 0;
  for (const nlohmann::ordered_json& r : records) {
    const std::string kind = r.contains("kind") ? r["kind"].get<std::string>() : "kernel";
    const std::string name = fmt::format("{}@{} {}{}", r["variant"].get<std::string>(),
                                         r["target"].get<std::string>(),
                                         r["suite"].get<std::string>(),
                                         kind == "kernel" ? "" : " (" + kind + ")");
    std::vector<std::string> why;
    if (limits.max_ulp) {
      const double max_ulp = r["max_ulp"].get<double>();
      if (max_ulp > *limits.max_ulp) why.push_back(fmt::format("max_ulp {} > {}", max_ulp, *limits.max_ulp));
      const uint64_t special = r["special_mismatch"].get<uint64_t>();
      if (special > 0) {
        why.push_back(fmt::format("{} special mismatch{} (unbounded error)", special,
                                  special == 1 ? "" : "es"));
      }
    }
    if (limits.require_conformance && kind != "peer") {
      const auto& c = r["conformance"];
      const uint64_t mismatches = c["mismatches"].get<uint64_t>();
      if (mismatches > 0) {
        const std::string follows =
            c["model"].is_null() ? "follows no model" : "follows " + c["model"].get<std::string>();
        std::string text = fmt::format("{} output{} differ from its model {} ({})", mismatches,
                                       mismatches == 1 ? "" : "s",
                                       c["expected"].get<std::string>(), follows);
        // The first input where they differ, and its replay, are on the
        // run's line for the case (whether or not conformance is required).
        if (c.contains("first_mismatch_input")) {
          text += fmt::format(", first at input #{}", c["first_mismatch_input"]["index"].get<uint64_t>());
        }
        why.push_back(std::move(text));
      }
    }
    if (why.empty()) continue;
    ++failed;
    std::string text;
    for (const std::string& w : why) text += (text.empty() ? "" : "; ") + w;
    PrintWrapped(out, "FAIL " + name + ": " + text, 2);
  }
  return failed;
}

void WriteRunReport(const std::string& path, const nlohmann::ordered_json& report) {
  if (path == "-") {
    std::cout << report.dump(2) << '\n' << std::flush;
    if (!std::cout) throw std::runtime_error("stdout: write failed");
  } else {
    WriteJsonFile(path, report);
  }
}

}  // namespace ulpgate
