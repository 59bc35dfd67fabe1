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

namespace {

// One kernel as either ABI version lists it.
struct KernelEntry {
  const char* variant;
  const char* dtype;
  const char* model;
  bool has_f32, has_u16;
  PluginCall call;
};

// What a plugin says, in one shape for both ABI versions.
struct PluginEntry {
  uint32_t abi_version = 0;
  const char* name = nullptr;
  std::string op;
  std::vector<KernelEntry> kernels;
};

std::string OpNames() {
  std::string names;
  for (const ElementwiseOpInfo& op : ElementwiseOps()) names += (names.empty() ? "" : ", ") + std::string(op.name);
  return names;
}

// Version 1: the op per kernel (ULPGATE_PLUGIN_V1_OP), two operands in
// separate arguments.
PluginEntry ReadVersion1(const ulpgate_plugin& plugin, const std::string& path) {
  PluginEntry e;
  e.abi_version = plugin.abi_version;
  e.name = plugin.name;
  if (plugin.kernel_count == 0 || plugin.kernels == nullptr) return e;
  for (size_t k = 0; k < plugin.kernel_count; ++k) {
    const ulpgate_plugin_kernel& kernel = plugin.kernels[k];
    const std::string op = kernel.op == nullptr ? "" : kernel.op;
    const std::string variant = kernel.variant == nullptr ? "" : kernel.variant;
    if (op.empty()) throw InputError(fmt::format("--plugin {}: kernel {} ({}): no op", path, k, variant));
    if (op != ULPGATE_PLUGIN_V1_OP) {
      throw InputError(fmt::format(
          "--plugin {}: kernel {} ({}): unknown op '{}' (version 1 plugins take {}; "
          "other ops: version 2, ulpgate_plugin_v2)", path, k, variant, op, ULPGATE_PLUGIN_V1_OP));
    }
    e.op = op;
    const ulpgate_binary_f32_fn f32 = kernel.f32;
    const ulpgate_binary_u16_fn u16 = kernel.u16;
    PluginCall call;
    if (f32 != nullptr) {
      call = [f32](const void* const* in, void* out, size_t n) {
        f32(static_cast<const float*>(in[0]), static_cast<const float*>(in[1]),
            static_cast<float*>(out), n);
      };
    } else if (u16 != nullptr) {
      call = [u16](const void* const* in, void* out, size_t n) {
        u16(static_cast<const uint16_t*>(in[0]), static_cast<const uint16_t*>(in[1]),
            static_cast<uint16_t*>(out), n);
      };
    }
    e.kernels.push_back({kernel.variant, kernel.dtype, kernel.model, f32 != nullptr,
                         u16 != nullptr, std::move(call)});
  }
  return e;
}

// Version 2: the op and arity once, operands as an array of the op's arity.
PluginEntry ReadVersion2(const ulpgate_plugin_v2& plugin, const std::string& path) {
  PluginEntry e;
  e.abi_version = plugin.abi_version;
  e.name = plugin.name;
  if (plugin.abi_version != ULPGATE_PLUGIN_V2_ABI_VERSION) return e;
  if (plugin.op == nullptr || *plugin.op == '\0') {
    throw InputError(fmt::format("--plugin {}: the plugin names no op ({})", path, OpNames()));
  }
  e.op = plugin.op;
  const ElementwiseOpInfo* op = FindElementwiseOp(e.op);
  if (op == nullptr) {
    throw InputError(fmt::format("--plugin {}: unknown op '{}' (plugins take {})", path, e.op, OpNames()));
  }
  if (plugin.arity != op->arity()) {
    std::string names;
    for (const std::string& o : op->operand_names()) names += (names.empty() ? "" : ", ") + o;
    throw InputError(fmt::format("--plugin {}: arity {}, but {} takes {} operands ({})", path,
                                 plugin.arity, e.op, op->arity(), names));
  }
  if (plugin.kernel_count == 0 || plugin.kernels == nullptr) return e;
  for (size_t k = 0; k < plugin.kernel_count; ++k) {
    const ulpgate_plugin_v2_kernel& kernel = plugin.kernels[k];
    const ulpgate_f32_fn f32 = kernel.f32;
    const ulpgate_u16_fn u16 = kernel.u16;
    PluginCall call;
    if (f32 != nullptr) {
      call = [f32](const void* const* in, void* out, size_t n) {
        f32(reinterpret_cast<const float* const*>(in), static_cast<float*>(out), n);
      };
    } else if (u16 != nullptr) {
      call = [u16](const void* const* in, void* out, size_t n) {
        u16(reinterpret_cast<const uint16_t* const*>(in), static_cast<uint16_t*>(out), n);
      };
    }
    e.kernels.push_back({kernel.variant, kernel.dtype, kernel.model, f32 != nullptr,
                         u16 != nullptr, std::move(call)});
  }
  return e;
}

}  // namespace

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
  // Version 2's entry first: a library may export both, for older ulpgates.
  using EntryV2 = const ulpgate_plugin_v2* (*)();
  using Entry = const ulpgate_plugin* (*)();
  PluginEntry plugin;
  uint32_t expected_version = 0;
  const char* entry_name = nullptr;
  if (const auto v2 = reinterpret_cast<EntryV2>(dlsym(library, "ulpgate_plugin_v2_entry"))) {
    entry_name = "ulpgate_plugin_v2_entry";
    expected_version = ULPGATE_PLUGIN_V2_ABI_VERSION;
    const ulpgate_plugin_v2* p = v2();
    if (p == nullptr) throw InputError(fmt::format("--plugin {}: {} returned null", path, entry_name));
    plugin = ReadVersion2(*p, path);
  } else if (const auto v1 = reinterpret_cast<Entry>(dlsym(library, "ulpgate_plugin_entry"))) {
    entry_name = "ulpgate_plugin_entry";
    expected_version = ULPGATE_PLUGIN_ABI_VERSION;
    const ulpgate_plugin* p = v1();
    if (p == nullptr) throw InputError(fmt::format("--plugin {}: {} returned null", path, entry_name));
    // The version is read before anything else of a layout it may not have.
    if (p->abi_version != ULPGATE_PLUGIN_ABI_VERSION) {
      plugin.abi_version = p->abi_version;
    } else {
      plugin = ReadVersion1(*p, path);
    }
  } else {
    throw InputError(fmt::format(
        "--plugin {}: no ulpgate_plugin_entry or ulpgate_plugin_v2_entry (see ulpgate/plugin.h)", path));
  }
  if (plugin.abi_version != expected_version) {
    throw InputError(fmt::format("--plugin {}: ABI version {}, this ulpgate takes {} from {} "
                                 "(versions 1 and 2: ulpgate_plugin_entry, ulpgate_plugin_v2_entry)",
                                 path, plugin.abi_version, expected_version, entry_name));
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
    KernelEntry& kernel = plugin.kernels[k];
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
  LoadedPlugin loaded;
  loaded.path = path;
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
