// Kernels from shared libraries (ulpgate/plugin.h): loaded, validated, and
// registered for the process, each plugin as a target of its own beside the
// compiled ones, so that every command that takes targets (run, check,
// matrix, explain, diverge, golden, gate) takes a plugin's the same way.
#ifndef ULPGATE_SUITES_PLUGINS_H_
#define ULPGATE_SUITES_PLUGINS_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/plugins/plugin_library.h"
#include "kernels/reductions/reduction_spec.h"
#include "kernels/registry.h"
#include "suites/engine/iut_client.h"
#include "oracles/cast_policy.h"
#include "oracles/model_expr.h"
#include "ulpgate/plugin.h"

namespace ulpgate {


struct PluginKernel {
  std::string op;       // the elementwise op it computes, or a cast op ("cast_f32")
  std::string variant;
  // Its operands' and outputs' format; a cast's destination (its source is
  // its op's), its outputs one code a byte.
  const FloatFormat* format = &kBinary32;
  // What it claims (a built-in model's program, or the user's); no name: it
  // claims none (an IUT's kernel may not), and is measured only.
  ModelProgram model;
  // A cast's claim: the policy of the exact cast model it follows; none: it
  // claims none.
  std::optional<CastPolicy> policy;
  PluginCall call;
  // A reduction (op a reduction op: plugin ABI version 4, an IUT's "reduce"):
  // its call over whole tensors, and the model it claims as the reports name
  // it ("sequential_fused", "pairwise"); empty: it claims none.
  ReductionCall reduce;
  std::string reduction_model;
};

// The models a reduction's kernel may claim or be matched with: every
// candidate model of every variant of the op, by name, in table order.
std::vector<std::string> ReductionModelNames(const ReductionOpInfo& op);

// How the kernels of the plugins loaded from now on run. Out of process: in
// the ulpgate-iut beside this program (docs/iut.md), one process per plugin,
// so that a kernel that crashes, hangs past the timeout or writes outside
// its output is a fault of its case (suites/engine/kernel_fault.h) while the
// rest goes on. In process (the library's default; the CLI's with
// --in-process): called directly, faster, and a crash ends the program.
struct PluginProcessOptions {
  bool in_process = true;
  double kernel_timeout_seconds = kDefaultKernelTimeoutSeconds;  // <= 0: from the call times (IutProcess)
};
void SetPluginProcessOptions(const PluginProcessOptions& options);
const PluginProcessOptions& CurrentPluginProcessOptions();

// A loaded plugin, or one target an IUT offers (--iut COMMAND: the kernels
// its "kernel" lines name under that target). Its target carries the
// plugin's name, is supported (the library loaded, or the IUT answered, so
// it runs) and has no Highway target bit.
struct LoadedPlugin {
  std::string path;         // the library, as given; an IUT's command line
  bool from_iut = false;    // offered by the IUT `path` (--iut), not a library
  uint32_t abi_version = 0;  // a library's
  std::vector<std::string> ops;  // the elementwise ops of its kernels, in order
  TargetInfo target;
  std::vector<PluginKernel> kernels;
  bool in_process = true;  // how its kernels run (PluginProcessOptions)
  // Its kernel `variant` in `dtype` (of `op`, when given).
  const PluginKernel* Find(std::string_view variant, std::string_view dtype = "f32",
                           std::string_view op = {}) const;
  // Whether it has kernels of `op` (any op when empty) in `dtype`.
  bool HasDtype(std::string_view dtype, std::string_view op = {}) const;
  bool GivesOp(std::string_view op) const;
  bool Gives(std::string_view op_name, std::string_view dtype) const {
    return HasDtype(dtype, op_name);
  }
  std::string OpsText() const;  // its ops, comma-separated
  // How a command line names it: "--plugin PATH" or "--iut 'COMMAND'".
  std::string Argument() const;
  // As LoadPlugins takes it: the path, or kIutSource + the IUT's command.
  std::string Source() const;
};

// The prefix under which --iut COMMAND travels among the --plugin paths
// (AddPluginOption): LoadPlugins starts an IUT for such an entry.
inline constexpr std::string_view kIutSource = "--iut=";
// How a command line gives such an entry: "--plugin PATH" or "--iut 'COMMAND'"
// (quoted for a POSIX shell).
std::string PluginSourceArgument(const std::string& entry);

// Loads a plugin and checks everything it says: the entry point, the ABI
// version, its name (not a compiled target's, nor another plugin's), its op
// (a registered elementwise op; version 1: ULPGATE_PLUGIN_V1_OP, given per
// kernel) and arity (the op's), each kernel's dtype, model and function, and
// that no variant name repeats.
// Throws InputError, one line naming the file and what is wrong. The library
// stays loaded; loading the same path again returns the same plugin.
const LoadedPlugin& LoadPlugin(const std::string& path);

// Starts the IUT `command` (run by /bin/sh; PluginProcessOptions' timeout per
// call) and registers every target it offers as a plugin target of the
// kernels it names (docs/iut.md). A kernel's model is the one its line
// claims, else the built-in model of its variant's name, else none. Throws
// InputError when it does not start or greet, offers nothing, or offers what
// this build does not know. Starting the same command again returns the same targets.
std::vector<const TargetInfo*> LoadIut(const std::string& command);

// Registers kernels made here (the Python package's callables) as a plugin
// target named plugin.target.name; throws InputError if the name is taken.
const TargetInfo* RegisterPluginKernels(LoadedPlugin plugin);

// Loads every path (--plugin, repeatable; an entry kIutSource + COMMAND is an
// IUT's, LoadIut) and returns their targets in order.
std::vector<const TargetInfo*> LoadPlugins(const std::vector<std::string>& paths);

// The loaded plugin a target is (by name or by the target itself); nullptr
// for a compiled target.
const LoadedPlugin* FindPlugin(std::string_view target_name);
const LoadedPlugin* PluginOf(const TargetInfo& target);
bool IsPluginTarget(const TargetInfo& target);

// A compiled target or a loaded plugin's, by name (exact, as FindTarget takes
// it); nullptr if neither.
const TargetInfo* FindAnyTarget(std::string_view name);

// The variants of `op` in `dtype` of the plugins among `targets`, in order.
std::vector<std::string> PluginVariants(const std::vector<const TargetInfo*>& targets,
                                        std::string_view op, std::string_view dtype = "f32");
// The variants of `op` in `dtype` of every loaded plugin, and the names of
// their targets.
std::vector<std::string> LoadedPluginVariants(std::string_view op, std::string_view dtype = "f32");
std::vector<std::string> LoadedPluginNames();

// Throws InputError unless every plugin among `targets` gives kernels of `op`:
// "plugin NAME (PATH) gives OP kernels, not OTHER_OP".
void RequirePluginOp(const std::vector<const TargetInfo*>& targets, std::string_view op);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_PLUGINS_H_
