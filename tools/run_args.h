// The options of `ulpgate run`, shared by the elementwise and the reduction
// paths.
#ifndef ULPGATE_TOOLS_RUN_ARGS_H_
#define ULPGATE_TOOLS_RUN_ARGS_H_

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <ostream>
#include <vector>
#include <optional>
#include <string>

namespace ulpgate {

struct RunArgs {
  std::string kernel;
  std::string dtype = "f32";  // operands' and outputs' format
  std::string variant = "all";
  std::string target = "all";
  std::string suite;
  std::string inputs_path;
  uint64_t n = 0;
  uint64_t seed = 1;
  std::string json_path;
  std::string dump_path;
  std::string save_inputs_path;
  unsigned threads = 0;
  bool quiet = false;
  std::string by;  // operand to map errors by (elementwise ops)
  std::vector<std::string> plugins;  // shared libraries of kernels (ulpgate/plugin.h)
  std::optional<double> max_ulp;  // exit 1 when a case's max ULP error is above it
  bool require_conformance = false;  // exit 1 when a case does not follow its model
  std::string oracle = "fast";       // elementwise ops: "fast" or "mpfr" (every output through MPFR)
  // Reductions only.
  std::string shape;
  int64_t instance = -1;  // >= 0: only this instance of the suite
  bool emulate_unsupported = false;
  // The linear ops: block-quantize the multiplied operands ("mxfp8_e4m3",
  // "mxfp4/rceil", "nvfp4"; suites/inputs/block_operands.h); empty: as drawn.
  std::string operands;
};

// The linear and MSE ops (tools/run_reduction.cc).
void RunReductionCommand(const RunArgs& args);

// What every path of `run` does last: prints the text (to stderr when --dump -
// or --json - owns stdout) through `print_text`, the rows over --max-ulp or
// failing --require-conformance, writes the JSON report and the dump, and sets
// exit status 1 when a row failed.
void FinishRun(const RunArgs& args, const std::vector<nlohmann::ordered_json>& records,
               const std::function<void()>& print_text,
               const std::function<void(std::ostream&)>& write_dump);

}  // namespace ulpgate

#endif  // ULPGATE_TOOLS_RUN_ARGS_H_
