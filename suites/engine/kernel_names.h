// How every command names kernels (--variant): a built-in variant by its
// name, on every target the command runs; a plugin's or an IUT's kernel by
// its own name, as the reports' tables show it (variant, target); and
// NAME@TARGET for the one kernel of that name on that target, where several
// share a name (two plugins' kernels, a built-in variant and a plugin's).
// run, sweep, check, explain and diverge take names through here, and the
// replay commands (suites/reports/replay.h) write them so.
#ifndef ULPGATE_SUITES_ENGINE_KERNEL_NAMES_H_
#define ULPGATE_SUITES_ENGINE_KERNEL_NAMES_H_

#include <string>
#include <string_view>
#include <vector>

#include "kernels/registry.h"
#include "oracles/format.h"

namespace ulpgate {

// One name of a --variant list, split at its '@'.
struct KernelName {
  std::string variant;
  std::string target;  // empty: every target that has a kernel of that name
};
KernelName ParseKernelName(std::string_view name);

// Whether a list of names (empty: every kernel) selects `variant` on `target`.
bool KernelSelected(const std::vector<std::string>& names, std::string_view variant,
                    std::string_view target);

// Throws InputError unless every name names a kernel of `op` in `format`: a
// built-in variant, or a kernel of a plugin among `targets` (its compiled
// targets are not looked at: a built-in variant is one on every target). The
// message lists what exists: "unknown variant 'of' of sigmoid_bwd in f32
// (built-in: torch, mul3, fms; flaky: ok, off, segv, hang)".
// `option` begins the messages that name one given name.
void CheckKernelNames(std::string_view op, const FloatFormat& format,
                      const std::vector<std::string>& names,
                      const std::vector<const TargetInfo*>& targets, std::string_view option = "--variant");

// What a command's --variant SPEC runs, as RunOptions::variants takes it:
// "all" (empty: every kernel), "none" (only the plugins' kernels; *builtin
// set false), or a comma-separated list of names, each checked
// (CheckKernelNames). A list that names none of the plugins' kernels leaves
// them all in (as NAME@PLUGIN), so that `--variant fms --plugin P` still
// measures P's kernels beside the built-in fms.
std::vector<std::string> ResolveKernelNames(std::string_view op, const FloatFormat& format,
                                            const std::string& spec,
                                            const std::vector<const TargetInfo*>& plugins,
                                            bool* builtin);

// The one kernel `name` names among `targets` (compiled and plugins'), for
// commands that take one: a plugin's, or a built-in variant on
// `default_target` unless NAME@TARGET names another. Throws InputError when
// none has it, or when it is ambiguous (a built-in variant and a plugin's
// kernel, or two plugins' kernels, share the name), listing each as
// NAME@TARGET.
struct NamedKernel {
  std::string variant;
  const TargetInfo* target = nullptr;
};
NamedKernel ResolveOneKernel(std::string_view op, const FloatFormat& format, const std::string& name,
                             const std::vector<const TargetInfo*>& targets,
                             const TargetInfo* default_target, std::string_view option = "--variant");

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_ENGINE_KERNEL_NAMES_H_
