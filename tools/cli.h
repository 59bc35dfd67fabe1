// Shared pieces of the ulpgate subcommands.
#ifndef ULPGATE_TOOLS_CLI_H_
#define ULPGATE_TOOLS_CLI_H_

#include <CLI/CLI.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/elementwise_ops.h"
#include "kernels/registry.h"

namespace ulpgate {

// Bad arguments or bad input files: reported on one line, exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "all" -> every target this CPU supports (and the names of those it does not,
// in *skipped); else a comma-separated list of target names, each of which
// must be compiled and supported.
std::vector<const TargetInfo*> ResolveTargets(const std::string& spec,
                                              std::vector<std::string>* skipped);

// For the golden files and the gate, which check every compiled target
// (those this CPU cannot run on their models): "all" -> every compiled
// target; else a comma-separated list of compiled target names ("best": the
// best runnable one).
std::vector<const TargetInfo*> ResolveCompiledTargets(const std::string& spec);

// The targets ResolveTargets skipped, each group followed by why:
// "AVX3, AVX3_DL (left out by ULPGATE_CPU_TARGETS 'max:AVX2')".
std::string DescribeSkipped(const std::vector<std::string>& skipped);

// --plugin PATH (repeatable): a shared library of kernels (ulpgate/plugin.h)
// whose kernels join the built-in ones under a target named after the plugin.
// `more` ends the help text.
void AddPluginOption(CLI::App* cmd, std::vector<std::string>* paths, const std::string& more = "");

// --variant's help, the same on every command that takes it: the names of
// suites/engine/kernel_names.h; `none` ends it (what --variant none does),
// empty where the command has no none.
std::string VariantHelp(const std::string& none);

// --threads N: worker threads, 1 to kMaxThreads; 0 (the default) for every
// core. Every command's results are independent of it.
void AddThreadsOption(CLI::App* cmd, unsigned* threads);

// The targets of golden and gate with plugins: the compiled targets `spec`
// names (ResolveCompiledTargets; empty: all of them, or none when plugins are
// given) followed by the targets of the plugins loaded from `plugin_paths`.
std::vector<const TargetInfo*> TargetsAndPlugins(const std::string& spec,
                                                 const std::vector<std::string>& plugin_paths);

// Limits of the counts the CLI takes, so that a typo fails with a message
// naming the limit instead of asking for terabytes.
inline constexpr uint64_t kMaxElementwiseInputs = uint64_t{1} << 26;  // 512 MiB of operands
inline constexpr uint64_t kMaxInstances = uint64_t{1} << 20;
inline constexpr uint64_t kMaxEpochs = 1000000;
inline constexpr uint64_t kMaxThreads = 1024;
inline constexpr uint64_t kMaxSeed = ~uint64_t{0};

// A CLI11 check of a count option: a whole decimal number from `min` to `max`
// (no sign, no exponent), e.g. "--n: expected the number of inputs: a whole
// number from 1 to 67108864 = 2^26, got '-5'". `what` names the quantity.
CLI::Validator CountValidator(const std::string& what, uint64_t min, uint64_t max);
// A number of seconds from `min` to `max`: "expected WHAT: seconds from 0.001
// to 86400, got '0'".
CLI::Validator SecondsValidator(const std::string& what, double min, double max);
// A number >= 0 (a ULP limit): "expected WHAT: a number >= 0, such as 1.5, got 'abc'".
CLI::Validator NonNegativeValidator(const std::string& what);

// A whole number, decimal or 0x hex (a sweep's index); UsageError naming `what`.
uint64_t ParseIndex(const std::string& text, const std::string& what);
// --shard K/N: (K, N), K from 0 to N-1.
std::pair<uint64_t, uint64_t> ParseShard(const std::string& spec);

// Splits "a,b,c"; "all" or empty gives {}.
std::vector<std::string> SplitList(const std::string& spec);

// The exit status a subcommand asks for when it finishes without error (the
// gate's 1 for a failed budget, say); 0 unless set.
int& ExitStatus();
// Exit statuses: 0 all is well, 1 a limit, budget or golden failed, 2 bad
// usage or input, 3 a kernel crashed, hung or wrote outside its output (its
// case reported, every report written).
inline constexpr int kExitKernelFault = 3;

// The registered elementwise op of that name; UsageError naming them all
// otherwise.
const ElementwiseOpInfo& ElementwiseOpArgument(const std::string& name);
// The registered elementwise ops' names, comma-separated, for help texts and
// messages.
std::string ElementwiseOpNames();

void AddListCommand(CLI::App& app);
void AddRunCommand(CLI::App& app);
void AddExplainCommand(CLI::App& app);
void AddDivergeCommand(CLI::App& app);
void AddCompareCommand(CLI::App& app);
void AddMatrixCommand(CLI::App& app);
void AddDriftCommand(CLI::App& app);
void AddGoldenCommand(CLI::App& app);
void AddGateCommand(CLI::App& app);
void AddCheckCommand(CLI::App& app);  // check, and suite export
void AddSweepCommand(CLI::App& app);  // sweep, and merge
void AddReportCommand(CLI::App& app);
void AddStochasticCommand(CLI::App& app);
void AddRevealCommand(CLI::App& app);

}  // namespace ulpgate

#endif  // ULPGATE_TOOLS_CLI_H_
