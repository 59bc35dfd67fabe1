#include "suites/engine/plugins.h"

#include <dlfcn.h>

#include <algorithm>
#include <deque>

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

}  // namespace

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
                                        std::string_view dtype) {
  std::vector<std::string> variants;
  for (const TargetInfo* t : targets) {
    if (const LoadedPlugin* p = PluginOf(*t)) {
      for (const PluginKernel& k : p->kernels) {
        if (k.format->name == dtype) variants.push_back(k.variant);
      }
    }
  }
  return variants;
}

std::vector<std::string> LoadedPluginVariants(std::string_view dtype) {
  std::vector<std::string> variants;
  for (const LoadedPlugin& p : Loaded()) {
    for (const PluginKernel& k : p.kernels) {
      if (k.format->name == dtype) variants.push_back(k.variant);
    }
  }
  return variants;
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
  // RTLD_LOCAL: two plugins may use the same symbol names.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    throw InputError(fmt::format("--plugin {}: cannot load: {}", path, why ? why : "unknown error"));
  }
  using Entry = const ulpgate_plugin* (*)();
  const auto entry = reinterpret_cast<Entry>(dlsym(library, "ulpgate_plugin_entry"));
  if (entry == nullptr) {
    throw InputError(fmt::format("--plugin {}: no ulpgate_plugin_entry (see ulpgate/plugin.h)", path));
  }
  const ulpgate_plugin* plugin = entry();
  if (plugin == nullptr) throw InputError(fmt::format("--plugin {}: ulpgate_plugin_entry returned null", path));
  if (plugin->abi_version != ULPGATE_PLUGIN_ABI_VERSION) {
    throw InputError(fmt::format("--plugin {}: ABI version {}, this ulpgate takes {}", path,
                                 plugin->abi_version, ULPGATE_PLUGIN_ABI_VERSION));
  }
  if (plugin->name == nullptr || std::string(plugin->name).empty()) {
    throw InputError(fmt::format("--plugin {}: the plugin has no name", path));
  }
  if (plugin->kernel_count == 0 || plugin->kernels == nullptr) {
    throw InputError(fmt::format("--plugin {}: the plugin lists no kernels", path));
  }
  const std::string name = plugin->name;
  if (FindTarget(name) != nullptr) {
    throw InputError(fmt::format("--plugin {}: the plugin is named '{}', a compiled target's name",
                                 path, name));
  }
  if (const LoadedPlugin* other = FindPlugin(name)) {
    throw InputError(fmt::format("--plugin {}: the plugin is named '{}', as {} is", path, name,
                                 other->path));
  }
  std::vector<PluginKernel> kernels;
  for (size_t k = 0; k < plugin->kernel_count; ++k) {
    const ulpgate_plugin_kernel& kernel = plugin->kernels[k];
    const std::string where = fmt::format("--plugin {}: kernel {}", path, k);
    auto text = [&](const char* s, const char* what) {
      if (s == nullptr || *s == '\0') throw InputError(fmt::format("{}: no {}", where, what));
      return std::string(s);
    };
    const std::string op = text(kernel.op, "op");
    const std::string variant = text(kernel.variant, "variant name");
    const std::string dtype = text(kernel.dtype, "dtype");
    const std::string model = text(kernel.model, "model");
    if (op != kPluginOp) {
      throw InputError(fmt::format("{} ({}): unknown op '{}' (plugins take tanh_bwd)", where, variant, op));
    }
    const ElementwiseOpInfo* op_info = FindElementwiseOp(op);
    const FloatFormat* format = FindFormat(dtype);
    if (format == nullptr || format->bits > 32 ||
        (format->bits < 32 && NarrowFormatIndex(format->name) < 0)) {
      throw InputError(
          fmt::format("{} ({}): dtype '{}' (plugins take f32, bf16, f16)", where, variant, dtype));
    }
    const bool narrow = format->bits < 32;
    if ((narrow ? (void*)kernel.u16 : (void*)kernel.f32) == nullptr) {
      throw InputError(fmt::format("{} ({}): no function (a {} kernel's is `{}`)", where, variant,
                                   dtype, narrow ? "u16" : "f32"));
    }
    if ((narrow ? (void*)kernel.f32 : (void*)kernel.u16) != nullptr) {
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
    p.f32 = kernel.f32;
    p.u16 = kernel.u16;
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
  LoadedPlugin loaded;
  loaded.path = path;
  loaded.target.name = name;
  loaded.target.supported = true;
  loaded.target.cpu_supported = true;
  loaded.target.f32_lanes = 1;
  loaded.kernels = std::move(kernels);
  return Loaded().emplace_back(std::move(loaded));
}

}  // namespace ulpgate
