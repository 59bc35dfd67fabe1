// Kernels from shared libraries (ulpgate/plugin.h): loaded, validated, and
// registered for the process, each plugin as a target of its own beside the
// compiled ones, so that every command that takes targets (run, check,
// matrix, explain, diverge, golden, gate) takes a plugin's the same way.
#ifndef ULPGATE_SUITES_PLUGINS_H_
#define ULPGATE_SUITES_PLUGINS_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/plugins/plugin_library.h"
#include "kernels/registry.h"
#include "suites/engine/iut_client.h"
#include "oracles/model_expr.h"
#include "ulpgate/plugin.h"

namespace ulpgate {


struct PluginKernel {
  std::string variant;
  const FloatFormat* format = &kBinary32;  // its operands' and outputs' format
  ModelProgram model;   // what it claims (a built-in model's program, or the user's)
  PluginCall call;
};

// How the kernels of the plugins loaded from now on run. Out of process: in
// the ulpgate-iut beside this program (docs/iut.md), one process per plugin,
// so that a kernel that crashes, hangs past the timeout or writes outside
// its output is a fault of its case (suites/engine/kernel_fault.h) while the
// rest goes on. In process (the library's default; the CLI's with
// --in-process): called directly, faster, and a crash ends the program.
struct PluginProcessOptions {
  bool in_process = true;
  double kernel_timeout_seconds = kDefaultKernelTimeoutSeconds;
};
void SetPluginProcessOptions(const PluginProcessOptions& options);
const PluginProcessOptions& CurrentPluginProcessOptions();

// A loaded plugin. Its target carries the plugin's name, is supported (the
// library loaded, so this CPU runs it) and has no Highway target bit.
struct LoadedPlugin {
  std::string path;  // the library, as given
  uint32_t abi_version = 0;
  std::string op;    // the elementwise op every one of its kernels computes
  TargetInfo target;
  std::vector<PluginKernel> kernels;
  bool in_process = true;  // how its kernels run (PluginProcessOptions)
  const PluginKernel* Find(std::string_view variant, std::string_view dtype = "f32") const;
  bool HasDtype(std::string_view dtype) const;
  // Whether it has kernels of `op` in `dtype`.
  bool Gives(std::string_view op_name, std::string_view dtype) const {
    return op == op_name && HasDtype(dtype);
  }
};

// Loads a plugin and checks everything it says: the entry point, the ABI
// version, its name (not a compiled target's, nor another plugin's), its op
// (a registered elementwise op; version 1: ULPGATE_PLUGIN_V1_OP, given per
// kernel) and arity (the op's), each kernel's dtype, model and function, and
// that no variant name repeats.
// Throws InputError, one line naming the file and what is wrong. The library
// stays loaded; loading the same path again returns the same plugin.
const LoadedPlugin& LoadPlugin(const std::string& path);

// Loads every path (--plugin, repeatable) and returns their targets in order.
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
