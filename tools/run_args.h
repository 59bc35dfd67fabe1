// The options of `ulpgate run`, shared by the tanh_bwd and the reduction paths.
#ifndef ULPGATE_TOOLS_RUN_ARGS_H_
#define ULPGATE_TOOLS_RUN_ARGS_H_

#include <cstdint>
#include <string>

namespace ulpgate {

struct RunArgs {
  std::string kernel;
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
  // Reductions only.
  std::string shape;
  int64_t instance = -1;  // >= 0: only this instance of the suite
  bool emulate_unsupported = false;
};

// The linear and MSE ops (tools/run_reduction.cc).
void RunReductionCommand(const RunArgs& args);

}  // namespace ulpgate

#endif  // ULPGATE_TOOLS_RUN_ARGS_H_
