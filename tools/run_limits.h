// What makes `ulpgate run` fail: --max-ulp and --require-conformance, checked
// over the run's report records (the same records --json writes), and the
// routing of the text output when --dump - or --json - owns stdout.
#ifndef ULPGATE_TOOLS_RUN_LIMITS_H_
#define ULPGATE_TOOLS_RUN_LIMITS_H_

#include <nlohmann/json.hpp>

#include <iostream>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

namespace ulpgate {

inline constexpr const char* kRunReportFormat = "ulpgate-run-1";

struct RunLimits {
  std::optional<double> max_ulp;     // a case fails above it, or on a special mismatch
  bool require_conformance = false;  // a kernel or model case fails unless it follows its model
};

// Prints one line per failing case ("FAIL mac@AVX2 domain: max_ulp 3.5 > 1")
// and returns how many failed. Peer cases (no model) are exempt from
// conformance.
size_t CheckRunLimits(const std::vector<nlohmann::ordered_json>& records, const RunLimits& limits,
                      std::ostream& out);

// While alive, what is printed on std::cout goes to std::cerr: for a run whose
// machine-readable output (--dump -, --json -) owns stdout.
class StdoutToStderr {
 public:
  explicit StdoutToStderr(bool active)
      : saved_(active ? std::cout.rdbuf(std::cerr.rdbuf()) : nullptr) {}
  ~StdoutToStderr() {
    if (saved_ != nullptr) std::cout.rdbuf(saved_);
  }
  StdoutToStderr(const StdoutToStderr&) = delete;
  StdoutToStderr& operator=(const StdoutToStderr&) = delete;

 private:
  std::streambuf* saved_;
};

// Writes a run's JSON report: to stdout for "-", else atomically to the file.
void WriteRunReport(const std::string& path, const nlohmann::ordered_json& report);

}  // namespace ulpgate

#endif  // ULPGATE_TOOLS_RUN_LIMITS_H_
