// A plugin library (ulpgate/plugin.h) opened and read: what it says, in one
// shape for both ABI versions, and a call of each kernel. Reading checks only
// what reading needs (the entry point, the version before the layout, the
// op's registration and arity); what the kernels claim (dtypes, models,
// names) is checked by who uses them: suites/engine/plugins.h on the host,
// kernels/iut/ in an implementation-under-test process. No MPFR here, so that
// the process that runs the kernels links the kernels only.
#ifndef ULPGATE_KERNELS_PLUGINS_PLUGIN_LIBRARY_H_
#define ULPGATE_KERNELS_PLUGINS_PLUGIN_LIBRARY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ulpgate {

// Calls a plugin's kernel on n elements in its format's storage lanes (float
// for f32, bit patterns for bf16 and f16): operands[k] is the op's operand k,
// as many as the op has. One signature for both ABI versions.
using PluginCall = std::function<void(const void* const* operands, void* out, size_t n)>;
// Calls a reduction (version 4) on tensors of the shape `extents` (`rank`
// values, the op's shape as --shape spells it): operands and outputs in the
// format's storage, whole tensors, row-major.
using ReductionCall =
    std::function<void(const void* const* operands, void* out, const size_t* extents, size_t rank)>;

// A library that cannot be used, with a one-line message that starts
// "--plugin PATH: ".
class PluginLibraryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A version 3 library's casts: `dtype` the destination, `model` the policy
// claimed (null: none), `call` one operand (the source's storage) and one
// code a byte out.
struct PluginLibraryKernel {
  const char* variant = nullptr;  // as the library gives them (may be null)
  const char* dtype = nullptr;
  const char* model = nullptr;
  bool has_f32 = false, has_u16 = false;
  PluginCall call;  // empty when it has neither function
  std::string op;   // its op where kernels differ in it (a cast's: "cast_f32"); else empty
  bool has_cast = false;
  // Version 4: a reduction (op its reduction op, dtype its format, model the
  // bit-exact model it claims or null) and its call.
  bool has_reduction = false;
  ReductionCall reduce;
};

struct PluginLibrary {
  uint32_t abi_version = 0;      // as the library says
  uint32_t expected_version = 0; // what its entry point's layout is
  const char* entry_name = nullptr;
  const char* name = nullptr;
  std::string op;                // version 1: ULPGATE_PLUGIN_V1_OP, given per kernel;
                                 // version 3: empty (each cast's op is its own)
  std::vector<PluginLibraryKernel> kernels;
};

// dlopen(path) (RTLD_LOCAL: two plugins may use the same symbol names) and
// its entry point, version 4's first, then 3's, then 2's. The library stays loaded. Throws
// PluginLibraryError where it cannot be loaded, has no entry point, returns
// null, carries another ABI version than its entry point's, names no op or
// an unknown one, or has another arity than its op; a version 3 cast whose
// source or destination is none of kernels/cast.h's; a version 4 reduction
// whose op is not a registered reduction op.
PluginLibrary OpenPluginLibrary(const std::string& path);

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_PLUGINS_PLUGIN_LIBRARY_H_
