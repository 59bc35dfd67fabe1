// Kernels from shared libraries (ulpgate/plugin.h): loaded, validated, and
// handed to the engine beside the built-in kernels.
#ifndef ULPGATE_SUITES_PLUGINS_H_
#define ULPGATE_SUITES_PLUGINS_H_

#include <string>
#include <vector>

#include "oracles/model_expr.h"
#include "ulpgate/plugin.h"

namespace ulpgate {

struct PluginKernel {
  std::string plugin;   // the plugin's name: the target its rows carry
  std::string path;     // the library
  std::string variant;
  ModelProgram model;   // what it claims (a built-in model's program, or the user's)
  ulpgate_binary_f32_fn f32 = nullptr;
};

// Loads a plugin and checks everything it says: the entry point, the ABI
// version, each kernel's op, dtype, model and function. Throws InputError,
// one line naming the file and what is wrong. The library stays loaded.
std::vector<PluginKernel> LoadPlugin(const std::string& path);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_PLUGINS_H_
