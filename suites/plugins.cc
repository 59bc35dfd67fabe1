#include "suites/plugins.h"

#include <dlfcn.h>

#include <fmt/format.h>

#include "suites/inputs.h"
#include "suites/tanh_bwd_oracle.h"
#include "suites/tanh_bwd_suites.h"

namespace ulpgate {

std::vector<PluginKernel> LoadPlugin(const std::string& path) {
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
    if (op != "tanh_bwd") {
      throw InputError(fmt::format("{} ({}): unknown op '{}' (plugins take tanh_bwd)", where, variant, op));
    }
    if (dtype != kBinary32.name) {
      throw InputError(fmt::format("{} ({}): dtype '{}' (plugins take f32)", where, variant, dtype));
    }
    if (kernel.f32 == nullptr) throw InputError(fmt::format("{} ({}): no function", where, variant));
    PluginKernel p;
    p.plugin = plugin->name;
    p.path = path;
    p.variant = variant;
    p.f32 = kernel.f32;
    if (model.find(':') != std::string::npos) {
      try {
        p.model = ParseModelSpec(model, kTanhBwdOperands, kBinary32);
      } catch (const ModelSyntaxError& e) {
        throw InputError(fmt::format("{} ({}): {}", where, variant, e.what()));
      }
    } else {
      bool found = false;
      std::string known;
      for (ModelProgram& m : TanhBwdModelPrograms(kBinary32)) {
        known += (known.empty() ? "" : ", ") + m.name;
        if (m.name == model) {
          p.model = std::move(m);
          found = true;
        }
      }
      if (!found) {
        throw InputError(fmt::format("{} ({}): unknown model '{}' ({}; or NAME: statements)", where,
                                     variant, model, known));
      }
    }
    kernels.push_back(std::move(p));
  }
  return kernels;
}

}  // namespace ulpgate
