// Shared pieces of the ulpgate subcommands.
#ifndef ULPGATE_TOOLS_CLI_H_
#define ULPGATE_TOOLS_CLI_H_

#include <CLI/CLI.hpp>

#include <stdexcept>
#include <string>
#include <vector>

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

// Splits "a,b,c"; "all" or empty gives {}.
std::vector<std::string> SplitList(const std::string& spec);

// The exit status a subcommand asks for when it finishes without error (the
// gate's 1 for a failed budget, say); 0 unless set.
int& ExitStatus();

void AddListCommand(CLI::App& app);
void AddRunCommand(CLI::App& app);
void AddExplainCommand(CLI::App& app);
void AddDivergeCommand(CLI::App& app);
void AddMatrixCommand(CLI::App& app);
void AddDriftCommand(CLI::App& app);
void AddGoldenCommand(CLI::App& app);
void AddGateCommand(CLI::App& app);

}  // namespace ulpgate

#endif  // ULPGATE_TOOLS_CLI_H_
