// The one home of the commands reports print to reproduce what they report:
// one kernel on one input (run's worst and first-off inputs, faults, sweeps,
// goldens, diverge), one case again (the HTML report, the gate, the matrix).
// Each names its kernel as every command takes it (suites/engine/kernel_names.h)
// and carries the --plugin PATH or --iut 'COMMAND' the kernel comes from, so
// that it runs as printed from the folder the report was made in.
#ifndef ULPGATE_SUITES_REPORTS_REPLAY_H_
#define ULPGATE_SUITES_REPORTS_REPLAY_H_

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "suites/engine/engine.h"

namespace ulpgate {

// A kernel as a command line names it.
struct ReplayKernel {
  std::string op, dtype = "f32", variant, target;
  // Where it comes from, as LoadPlugins takes it: empty for a built-in
  // kernel, a plugin library's path, or kIutSource + an IUT's command.
  std::string source;
  // Measured on its expected model, the target not runnable here
  // (--emulate-unsupported).
  bool model = false;
};

// Of a case of a run (CaseResult::source); of a kernel on a target (a
// plugin's source from the target); of a report's case record ("op",
// "dtype", "variant", "target", "kind", and "plugin" or "iut").
ReplayKernel ReplayKernelOf(const CaseResult& result);
ReplayKernel ReplayKernelOf(const std::string& op, const std::string& dtype, const std::string& variant,
                            const TargetInfo& target);
ReplayKernel ReplayKernelOf(const nlohmann::ordered_json& record);

// The source of a plugin's kernel as a report's case record carries it:
// {"plugin": PATH} or {"iut": COMMAND}; nothing for a built-in kernel.
void AddSourceJson(const std::string& source, nlohmann::ordered_json& record);

// " --plugin PATH" or " --iut 'COMMAND'"; empty for a built-in kernel.
std::string SourceArguments(const ReplayKernel& kernel);

// The command that computes the kernel's output on one input again and
// shows its error: `explain` (rounding by rounding) in f32 where the kernel
// runs here and explain knows the op; else `run` on the input from stdin.
std::string ReplayInputCommand(const ReplayKernel& kernel, const std::vector<std::string>& operand_names,
                               const std::vector<float>& operands);

// `explain` of the op's models on one input, no kernel: for outputs made
// elsewhere, which ulpgate cannot compute again.
std::string ExplainModelsCommand(const std::string& op, const std::vector<std::string>& operand_names,
                                 const std::vector<float>& operands);

// `explain` of several kernels of one op on one input (f32).
std::string ExplainCommand(const std::vector<ReplayKernel>& kernels,
                           const std::vector<std::string>& operand_names, const std::vector<float>& operands);

// `compare` of two sides on one input (--input NAME=VALUE per operand):
// `a` and `b` as --a and --b name them (kernels), `arguments` the
// --plugin/--iut flags they need.
std::string CompareInputCommand(const std::string& op, const std::string& dtype, const std::string& a,
                                const std::string& b, const std::vector<std::string>& operand_names,
                                const std::vector<float>& operands, const std::string& arguments);

// The `run` that measures one case again: the same suite (or input file:
// "file:PATH"), seed and count give the same inputs and call plan, so the
// same numbers. `shape`: a reduction's (then n counts instances).
std::string ReplayRunCommand(const ReplayKernel& kernel, const std::string& suite, uint64_t seed,
                             uint64_t n, const std::string& shape = "");

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REPORTS_REPLAY_H_
