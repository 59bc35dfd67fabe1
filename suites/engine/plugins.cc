#include "suites/engine/plugins.h"

#include <algorithm>
#include <deque>
#include <memory>

#include <fmt/format.h>

#include "suites/inputs/inputs.h"
#include "kernels/narrow_formats.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/elementwise_oracle.h"

namespace ulpgate {

namespace {

// Every plugin loaded in this process; a deque, so that targets keep their
// addresses while more plugins load.
std::deque<LoadedPlugin>& Loaded() {
  static std::deque<LoadedPlugin> plugins;
  return plugins;
}

PluginProcessOptions& ProcessOptions() {
  static PluginProcessOptions options;
  return options;
}

}  // namespace

void SetPluginProcessOptions(const PluginProcessOptions& options) { ProcessOptions() = options; }
const PluginProcessOptions& CurrentPluginProcessOptions() { return ProcessOptions(); }

const PluginKernel* LoadedPlugin::Find(std::string_view variant, std::string_view dtype) const {
  for (const PluginKernel& k : kernels) {
    if (k.variant == variant && k.format->name == dtype) return &k;
  }
  return nullptr;
}

bool LoadedPlugin::HasDtype(std::string_view dtype) const {
  return std::any_of(kernels.begin(), kernels.end(),
                     [&](const PluginKernel& k) { return k.format->name == dtype; });
}

const LoadedPlugin* FindPlugin(std::string_view target_name) {
  for (const LoadedPlugin& p : Loaded()) {
    if (p.target.name == target_name) return &p;
  }
  return nullptr;
}

const LoadedPlugin* PluginOf(const TargetInfo& target) {
  for (const LoadedPlugin& p : Loaded()) {
    if (&p.target == &target) return &p;
  }
  return nullptr;
}

bool IsPluginTarget(const TargetInfo& target) { return PluginOf(target) != nullptr; }

const TargetInfo* FindAnyTarget(std::string_view name) {
  if (const LoadedPlugin* p = FindPlugin(name)) return &p->target;
  const TargetInfo* t = FindTarget(name);
  return t != nullptr && t->name == name ? t : nullptr;
}

std::vector<std::string> PluginVariants(const std::vector<const TargetInfo*>& targets,
                                        std::string_view op, std::string_view dtype) {
  std::vector<std::string> variants;
  for (const TargetInfo* t : targets) {
    const LoadedPlugin* p = PluginOf(*t);
    if (p == nullptr || p->op != op) continue;
    for (const PluginKernel& k : p->kernels) {
      if (k.format->name == dtype) variants.push_back(k.variant);
    }
  }
  return variants;
}

std::vector<std::string> LoadedPluginVariants(std::string_view op, std::string_view dtype) {
  std::vector<std::string> variants;
  for (const LoadedPlugin& p : Loaded()) {
    if (p.op != op) continue;
    for (const PluginKernel& k : p.kernels) {
      if (k.format->name == dtype) variants.push_back(k.variant);
    }
  }
  return variants;
}

void RequirePluginOp(const std::vector<const TargetInfo*>& targets, std::string_view op) {
  for (const TargetInfo* t : targets) {
    const LoadedPlugin* p = PluginOf(*t);
    if (p != nullptr && p->op != op) {
      throw InputError(fmt::format("plugin {} ({}) gives {} kernels, not {}", p->target.name,
                                   p->path, p->op, op));
    }
  }
}

std::vector<std::string> LoadedPluginNames() {
  std::vector<std::string> names;
  for (const LoadedPlugin& p : Loaded()) names.push_back(p.target.name);
  return names;
}

std::vector<const TargetInfo*> LoadPlugins(const std::vector<std::string>& paths) {
  std::vector<const TargetInfo*> targets;
  for (const std::string& path : paths) {
    const TargetInfo* t = &LoadPlugin(path).target;
    if (std::find(targets.begin(), targets.end(), t) == targets.end()) targets.push_back(t);
  }
  return targets;
}

const LoadedPlugin& LoadPlugin(const std::string& path) {
  for (const LoadedPlugin& p : Loaded()) {
    if (p.path == path) return p;
  }
  PluginLibrary plugin;
  try {
    plugin = OpenPluginLibrary(path);
  } catch (const PluginLibraryError& e) {
    throw InputError(e.what());
  }
  if (plugin.name == nullptr || *plugin.name == '\0') {
    throw InputError(fmt::format("--plugin {}: the plugin has no name", path));
  }
  if (plugin.kernels.empty()) {
    throw InputError(fmt::format("--plugin {}: the plugin lists no kernels", path));
  }
  const std::string name = plugin.name;
  if (FindTarget(name) != nullptr) {
    throw InputError(fmt::format("--plugin {}: the plugin is named '{}', a compiled target's name",
                                 path, name));
  }
  if (const LoadedPlugin* other = FindPlugin(name)) {
    throw InputError(fmt::format("--plugin {}: the plugin is named '{}', as {} is", path, name,
                                 other->path));
  }
  const ElementwiseOpInfo* op_info = FindElementwiseOp(plugin.op);
  std::vector<PluginKernel> kernels;
  for (size_t k = 0; k < plugin.kernels.size(); ++k) {
    PluginLibraryKernel& kernel = plugin.kernels[k];
    const std::string where = fmt::format("--plugin {}: kernel {}", path, k);
    auto text = [&](const char* s, const char* what) {
      if (s == nullptr || *s == '\0') throw InputError(fmt::format("{}: no {}", where, what));
      return std::string(s);
    };
    const std::string variant = text(kernel.variant, "variant name");
    const std::string dtype = text(kernel.dtype, "dtype");
    const std::string model = text(kernel.model, "model");
    const FloatFormat* format = FindFormat(dtype);
    if (format == nullptr || format->bits > 32 ||
        (format->bits < 32 && NarrowFormatIndex(format->name) < 0)) {
      throw InputError(
          fmt::format("{} ({}): dtype '{}' (plugins take f32, bf16, f16)", where, variant, dtype));
    }
    const bool narrow = format->bits < 32;
    if (!(narrow ? kernel.has_u16 : kernel.has_f32)) {
      throw InputError(fmt::format("{} ({}): no function (a {} kernel's is `{}`)", where, variant,
                                   dtype, narrow ? "u16" : "f32"));
    }
    if (narrow ? kernel.has_f32 : kernel.has_u16) {
      throw InputError(fmt::format("{} ({}): a {} kernel has only its `{}` function", where,
                                   variant, dtype, narrow ? "u16" : "f32"));
    }
    for (const PluginKernel& earlier : kernels) {
      if (earlier.variant == variant && earlier.format == format) {
        throw InputError(fmt::format("{} ({}): a second {} kernel of that name", where, variant, dtype));
      }
    }
    PluginKernel p;
    p.variant = variant;
    p.format = format;
    p.call = std::move(kernel.call);
    if (model.find(':') != std::string::npos) {
      try {
        p.model = ParseModelSpec(model, op_info->operand_names(), *format);
      } catch (const ModelSyntaxError& e) {
        throw InputError(fmt::format("{} ({}): {}", where, variant, e.what()));
      }
    } else {
      bool found = false;
      std::string known;
      for (const std::string& builtin : ModelNames(*op_info, *format)) {
        known += (known.empty() ? "" : ", ") + builtin;
        if (builtin == model) found = true;
      }
      // The program of a built-in model, where it has one (f16's Highway
      // software conversion is named, not written).
      p.model.name = model;
      for (ModelProgram& m : ModelPrograms(*op_info, *format)) {
        if (m.name == model) p.model = std::move(m);
      }
      if (!found) {
        throw InputError(fmt::format("{} ({}): unknown model '{}' ({}; or NAME: statements)", where,
                                     variant, model, known));
      }
    }
    kernels.push_back(std::move(p));
  }
  const PluginProcessOptions& process = ProcessOptions();
  if (!process.in_process) {
    // The same library, loaded again by the IUT; this process keeps only
    // what the plugin says of its kernels.
    auto iut = std::make_shared<IutProcess>(
        std::vector<std::string>{BundledIutPath(), "--plugin", path}, process.kernel_timeout_seconds);
    for (PluginKernel& k : kernels) {
      IutCall call;
      call.op = plugin.op;
      call.dtype = k.format->name;
      call.target = name;
      call.variant = k.variant;
      call.arity = op_info->arity();
      k.call = [iut, call](const void* const* in, void* out, size_t n) mutable {
        IutCall c = call;
        c.n = n;
        iut->Call(c, in, out);
      };
    }
  }
  LoadedPlugin loaded;
  loaded.path = path;
  loaded.in_process = process.in_process;
  loaded.abi_version = plugin.abi_version;
  loaded.op = plugin.op;
  loaded.target.name = name;
  loaded.target.supported = true;
  loaded.target.cpu_supported = true;
  loaded.target.f32_lanes = 1;
  loaded.kernels = std::move(kernels);
  return Loaded().emplace_back(std::move(loaded));
}

}  // namespace ulpgate
