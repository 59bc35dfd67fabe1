#include "kernels/plugins/plugin_library.h"

#include <dlfcn.h>

#include <fmt/format.h>

#include "kernels/cast.h"
#include "kernels/elementwise_ops.h"
#include "kernels/plugins/ulpgate/plugin.h"
#include "kernels/reductions/reduction_spec.h"

namespace ulpgate {

namespace {

std::string OpNames() {
  std::string names;
  for (const ElementwiseOpInfo& op : ElementwiseOps()) names += (names.empty() ? "" : ", ") + std::string(op.name);
  return names;
}

// Version 1: the op per kernel (ULPGATE_PLUGIN_V1_OP), two operands in
// separate arguments.
PluginLibrary ReadVersion1(const ulpgate_plugin& plugin, const std::string& path) {
  PluginLibrary e;
  e.abi_version = plugin.abi_version;
  e.name = plugin.name;
  if (plugin.kernel_count == 0 || plugin.kernels == nullptr) return e;
  for (size_t k = 0; k < plugin.kernel_count; ++k) {
    const ulpgate_plugin_kernel& kernel = plugin.kernels[k];
    const std::string op = kernel.op == nullptr ? "" : kernel.op;
    const std::string variant = kernel.variant == nullptr ? "" : kernel.variant;
    if (op.empty()) throw PluginLibraryError(fmt::format("--plugin {}: kernel {} ({}): no op", path, k, variant));
    if (op != ULPGATE_PLUGIN_V1_OP) {
      throw PluginLibraryError(fmt::format(
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
                         u16 != nullptr, std::move(call), {}, false, false, {}});
  }
  return e;
}

// Version 2: the op and arity once, operands as an array of the op's arity.
PluginLibrary ReadVersion2(const ulpgate_plugin_v2& plugin, const std::string& path) {
  PluginLibrary e;
  e.abi_version = plugin.abi_version;
  e.name = plugin.name;
  if (plugin.abi_version != ULPGATE_PLUGIN_V2_ABI_VERSION) return e;
  if (plugin.op == nullptr || *plugin.op == '\0') {
    throw PluginLibraryError(fmt::format("--plugin {}: the plugin names no op ({})", path, OpNames()));
  }
  e.op = plugin.op;
  const ElementwiseOpInfo* op = FindElementwiseOp(e.op);
  if (op == nullptr) {
    throw PluginLibraryError(fmt::format("--plugin {}: unknown op '{}' (plugins take {})", path, e.op, OpNames()));
  }
  if (plugin.arity != op->arity()) {
    std::string names;
    for (const std::string& o : op->operand_names()) names += (names.empty() ? "" : ", ") + o;
    throw PluginLibraryError(fmt::format("--plugin {}: arity {}, but {} takes {} operands ({})", path,
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
                         u16 != nullptr, std::move(call), {}, false, false, {}});
  }
  return e;
}

// Version 3: casts, each with its source and destination.
PluginLibrary ReadVersion3(const ulpgate_plugin_v3& plugin, const std::string& path) {
  PluginLibrary e;
  e.abi_version = plugin.abi_version;
  e.name = plugin.name;
  if (plugin.abi_version != ULPGATE_PLUGIN_V3_ABI_VERSION) return e;
  if (plugin.cast_count == 0 || plugin.casts == nullptr) return e;
  for (size_t k = 0; k < plugin.cast_count; ++k) {
    const ulpgate_plugin_v3_cast& cast = plugin.casts[k];
    const std::string variant = cast.variant == nullptr ? "" : cast.variant;
    const std::string from = cast.from == nullptr ? "" : cast.from;
    const std::string to = cast.to == nullptr ? "" : cast.to;
    if (FindCastSource(from) == nullptr) {
      throw PluginLibraryError(fmt::format(
          "--plugin {}: cast {} ({}): source '{}' (casts are from f32, bf16, f16)", path, k, variant, from));
    }
    if (FindCastDestination(to) == nullptr) {
      std::string known;
      for (const FloatFormat* f : kCastDestinations) known += (known.empty() ? "" : ", ") + std::string(f->name);
      throw PluginLibraryError(
          fmt::format("--plugin {}: cast {} ({}): destination '{}' (casts go to {})", path, k, variant, to, known));
    }
    const ulpgate_cast_fn fn = cast.fn;
    PluginLibraryKernel kernel;
    kernel.variant = cast.variant;
    kernel.dtype = cast.to;
    kernel.model = cast.policy;
    kernel.op = "cast_" + from;
    kernel.has_cast = fn != nullptr;
    if (fn != nullptr) {
      kernel.call = [fn](const void* const* in, void* out, size_t n) { fn(in[0], out, n); };
    }
    e.kernels.push_back(std::move(kernel));
  }
  return e;
}

// Version 4: reductions, each naming its op; shapes travel as extents.
PluginLibrary ReadVersion4(const ulpgate_plugin_v4& plugin, const std::string& path) {
  PluginLibrary e;
  e.abi_version = plugin.abi_version;
  e.name = plugin.name;
  if (plugin.abi_version != ULPGATE_PLUGIN_V4_ABI_VERSION) return e;
  if (plugin.reduction_count == 0 || plugin.reductions == nullptr) return e;
  for (size_t k = 0; k < plugin.reduction_count; ++k) {
    const ulpgate_plugin_v4_reduction& r = plugin.reductions[k];
    const std::string variant = r.variant == nullptr ? "" : r.variant;
    const std::string op = r.op == nullptr ? "" : r.op;
    if (FindReductionOp(op) == nullptr) {
      std::string known;
      for (const ReductionOpInfo& o : ReductionOps()) known += (known.empty() ? "" : ", ") + std::string(o.name);
      throw PluginLibraryError(fmt::format(
          "--plugin {}: reduction {} ({}): unknown op '{}' (version 4 plugins take {})", path, k, variant, op, known));
    }
    const ulpgate_reduction_fn fn = r.fn;
    PluginLibraryKernel kernel;
    kernel.variant = r.variant;
    kernel.dtype = r.dtype;
    kernel.model = r.model;
    kernel.op = op;
    kernel.has_reduction = fn != nullptr;
    if (fn != nullptr) {
      kernel.reduce = [fn](const void* const* in, void* out, const size_t* extents, size_t rank) {
        fn(in, out, extents, rank);
      };
    }
    e.kernels.push_back(std::move(kernel));
  }
  return e;
}

}  // namespace

PluginLibrary OpenPluginLibrary(const std::string& path) {
  // RTLD_LOCAL: two plugins may use the same symbol names.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    throw PluginLibraryError(fmt::format("--plugin {}: cannot load: {}", path, why ? why : "unknown error"));
  }
  // Version 2's entry first: a library may export both, for older ulpgates.
  using EntryV2 = const ulpgate_plugin_v2* (*)();
  using Entry = const ulpgate_plugin* (*)();
  PluginLibrary plugin;
  uint32_t expected_version = 0;
  const char* entry_name = nullptr;
  using EntryV3 = const ulpgate_plugin_v3* (*)();
  using EntryV4 = const ulpgate_plugin_v4* (*)();
  if (const auto v4 = reinterpret_cast<EntryV4>(dlsym(library, "ulpgate_plugin_v4_entry"))) {
    entry_name = "ulpgate_plugin_v4_entry";
    expected_version = ULPGATE_PLUGIN_V4_ABI_VERSION;
    const ulpgate_plugin_v4* p = v4();
    if (p == nullptr) throw PluginLibraryError(fmt::format("--plugin {}: {} returned null", path, entry_name));
    plugin = ReadVersion4(*p, path);
  } else if (const auto v3 = reinterpret_cast<EntryV3>(dlsym(library, "ulpgate_plugin_v3_entry"))) {
    entry_name = "ulpgate_plugin_v3_entry";
    expected_version = ULPGATE_PLUGIN_V3_ABI_VERSION;
    const ulpgate_plugin_v3* p = v3();
    if (p == nullptr) throw PluginLibraryError(fmt::format("--plugin {}: {} returned null", path, entry_name));
    plugin = ReadVersion3(*p, path);
  } else if (const auto v2 = reinterpret_cast<EntryV2>(dlsym(library, "ulpgate_plugin_v2_entry"))) {
    entry_name = "ulpgate_plugin_v2_entry";
    expected_version = ULPGATE_PLUGIN_V2_ABI_VERSION;
    const ulpgate_plugin_v2* p = v2();
    if (p == nullptr) throw PluginLibraryError(fmt::format("--plugin {}: {} returned null", path, entry_name));
    plugin = ReadVersion2(*p, path);
  } else if (const auto v1 = reinterpret_cast<Entry>(dlsym(library, "ulpgate_plugin_entry"))) {
    entry_name = "ulpgate_plugin_entry";
    expected_version = ULPGATE_PLUGIN_ABI_VERSION;
    const ulpgate_plugin* p = v1();
    if (p == nullptr) throw PluginLibraryError(fmt::format("--plugin {}: {} returned null", path, entry_name));
    // The version is read before anything else of a layout it may not have.
    if (p->abi_version != ULPGATE_PLUGIN_ABI_VERSION) {
      plugin.abi_version = p->abi_version;
    } else {
      plugin = ReadVersion1(*p, path);
    }
  } else {
    throw PluginLibraryError(fmt::format(
        "--plugin {}: no ulpgate_plugin_entry, ulpgate_plugin_v2_entry, ulpgate_plugin_v3_entry or "
        "ulpgate_plugin_v4_entry "
        "(see ulpgate/plugin.h)", path));
  }
  if (plugin.abi_version != expected_version) {
    throw PluginLibraryError(fmt::format("--plugin {}: ABI version {}, this ulpgate takes {} from {} "
                                 "(versions 1 to 4: ulpgate_plugin_entry, ulpgate_plugin_v2_entry, "
                                 "ulpgate_plugin_v3_entry, ulpgate_plugin_v4_entry)",
                                 path, plugin.abi_version, expected_version, entry_name));
  }
  plugin.expected_version = expected_version;
  plugin.entry_name = entry_name;
  return plugin;
}

}  // namespace ulpgate
