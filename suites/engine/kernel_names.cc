#include "suites/engine/kernel_names.h"

#include <algorithm>

#include <fmt/format.h>

#include "kernels/elementwise_ops.h"
#include "kernels/reductions/reduction_spec.h"
#include "suites/engine/op_table.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/engine/plugins.h"
#include "suites/inputs/inputs.h"

namespace ulpgate {

namespace {

std::vector<std::string> BuiltinVariants(std::string_view op, const FloatFormat& format) {
  // A reduction's variants run in every format of its op, and its peer where
  // it has one.
  if (const ReductionOpInfo* reduction = FindReductionOp(op)) {
    std::vector<std::string> names;
    for (const ReductionVariantInfo& v : reduction->variants) names.emplace_back(v.name);
    for (const std::string& peer : PeerVariants(op, format.name)) names.push_back(peer);
    return names;
  }
  const ElementwiseOpInfo* info = FindElementwiseOp(op);
  if (info == nullptr || !RunsIn(*info, format)) return {};
  return VariantNames(*info, format);
}

bool Contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<const LoadedPlugin*> PluginsAmong(const std::vector<const TargetInfo*>& targets) {
  std::vector<const LoadedPlugin*> plugins;
  for (const TargetInfo* t : targets) {
    if (const LoadedPlugin* p = PluginOf(*t)) plugins.push_back(p);
  }
  return plugins;
}

// Every kernel there is to name: "built-in: a, b; flaky: ok, off".
std::string KnownKernels(std::string_view op, const FloatFormat& format,
                         const std::vector<const LoadedPlugin*>& plugins) {
  std::string text;
  const std::vector<std::string> builtin = BuiltinVariants(op, format);
  if (!builtin.empty()) {
    text = "built-in:";
    for (size_t i = 0; i < builtin.size(); ++i) text += (i ? ", " : " ") + builtin[i];
  }
  for (const LoadedPlugin* p : plugins) {
    std::string kernels;
    for (const PluginKernel& k : p->kernels) {
      if (k.op == op && k.format->name == format.name) kernels += (kernels.empty() ? " " : ", ") + k.variant;
    }
    if (!kernels.empty()) text += (text.empty() ? "" : "; ") + p->target.name + ":" + kernels;
  }
  return text.empty() ? "none" : text;
}

std::vector<std::string> SplitNames(const std::string& spec) {
  std::vector<std::string> names;
  size_t at = 0;
  while (at <= spec.size()) {
    const size_t end = std::min(spec.find(',', at), spec.size());
    if (end > at) names.push_back(spec.substr(at, end - at));
    at = end + 1;
  }
  return names;
}

}  // namespace

KernelName ParseKernelName(std::string_view name) {
  const size_t at = name.find('@');
  if (at == std::string_view::npos) return {std::string(name), ""};
  return {std::string(name.substr(0, at)), std::string(name.substr(at + 1))};
}

bool KernelSelected(const std::vector<std::string>& names, std::string_view variant,
                    std::string_view target) {
  if (names.empty()) return true;
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) {
    const KernelName k = ParseKernelName(n);
    return k.variant == variant && (k.target.empty() || k.target == target);
  });
}

void CheckKernelNames(std::string_view op, const FloatFormat& format,
                      const std::vector<std::string>& names,
                      const std::vector<const TargetInfo*>& targets, std::string_view option) {
  const std::vector<std::string> builtin = BuiltinVariants(op, format);
  const std::vector<const LoadedPlugin*> plugins = PluginsAmong(targets);
  for (const std::string& name : names) {
    const KernelName k = ParseKernelName(name);
    const std::string known = KnownKernels(op, format, plugins);
    if (k.variant.empty()) {
      throw InputError(fmt::format("{} '{}': no kernel name ({})", option, name, known));
    }
    if (!k.target.empty()) {
      const LoadedPlugin* plugin = FindPlugin(k.target);
      const bool given = plugin != nullptr && std::find(plugins.begin(), plugins.end(), plugin) != plugins.end();
      const TargetInfo* compiled = FindTarget(k.target);
      if (given) {
        if (plugin->Find(k.variant, format.name, op) == nullptr) {
          throw InputError(fmt::format("{} {}: {} has no {} kernel '{}' in {} ({})", option, name, k.target,
                                       op, k.variant, format.name, known));
        }
      } else if (compiled != nullptr && compiled->name == k.target) {
        if (!Contains(builtin, k.variant)) {
          throw InputError(fmt::format("{} {}: no built-in {} variant '{}' in {} ({})", option, name, op,
                                       k.variant, format.name, known));
        }
      } else {
        std::string compiled_names, loaded;
        for (const TargetInfo& t : CompiledTargets()) compiled_names += (compiled_names.empty() ? "" : ", ") + t.name;
        for (const LoadedPlugin* p : plugins) loaded += (loaded.empty() ? "" : ", ") + p->target.name;
        throw InputError(fmt::format("{} {}: no target '{}' (compiled: {}; plugins and IUTs: {})", option, name,
                                     k.target, compiled_names,
                                     loaded.empty() ? std::string("none given") : loaded));
      }
      continue;
    }
    const bool exists = Contains(builtin, k.variant) ||
                        std::any_of(plugins.begin(), plugins.end(), [&](const LoadedPlugin* p) {
                          return p->Find(k.variant, format.name, op) != nullptr;
                        });
    if (!exists) {
      throw InputError(fmt::format("unknown variant '{}' of {} in {} ({})", k.variant, op, format.name, known));
    }
  }
}

std::vector<std::string> ResolveKernelNames(std::string_view op, const FloatFormat& format,
                                            const std::string& spec,
                                            const std::vector<const TargetInfo*>& plugins,
                                            bool* builtin) {
  *builtin = spec != "none";
  if (spec == "none" || spec == "all" || spec.empty()) return {};
  std::vector<std::string> names = SplitNames(spec);
  CheckKernelNames(op, format, names, plugins);
  bool names_plugin_kernel = false;
  for (const LoadedPlugin* p : PluginsAmong(plugins)) {
    for (const PluginKernel& k : p->kernels) {
      if (k.op == op && k.format->name == format.name && KernelSelected(names, k.variant, p->target.name)) {
        names_plugin_kernel = true;
      }
    }
  }
  if (!names_plugin_kernel) {
    for (const LoadedPlugin* p : PluginsAmong(plugins)) {
      for (const PluginKernel& k : p->kernels) {
        if (k.op == op && k.format->name == format.name) names.push_back(k.variant + "@" + p->target.name);
      }
    }
  }
  return names;
}

NamedKernel ResolveOneKernel(std::string_view op, const FloatFormat& format, const std::string& name,
                             const std::vector<const TargetInfo*>& targets,
                             const TargetInfo* default_target, std::string_view option) {
  CheckKernelNames(op, format, {name}, targets, option);
  const KernelName k = ParseKernelName(name);
  std::vector<NamedKernel> found;
  if (!k.target.empty()) {
    const LoadedPlugin* plugin = FindPlugin(k.target);
    return {k.variant, plugin != nullptr ? &plugin->target : FindTarget(k.target)};
  }
  if (Contains(BuiltinVariants(op, format), k.variant) && default_target != nullptr) {
    found.push_back({k.variant, default_target});
  }
  for (const LoadedPlugin* p : PluginsAmong(targets)) {
    if (p->Find(k.variant, format.name, op) != nullptr) found.push_back({k.variant, &p->target});
  }
  if (found.size() != 1) {
    std::string choices;
    for (const NamedKernel& f : found) choices += (choices.empty() ? "" : ", ") + f.variant + "@" + f.target->name;
    throw InputError(fmt::format("{} {}: several kernels have that name ({}): name one as NAME@TARGET",
                                 option, name, choices));
  }
  return found.front();
}

}  // namespace ulpgate
