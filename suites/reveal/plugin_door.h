// A plugin's linear_fwd (ulpgate/plugin.h, ABI version 4) presented as a
// DotDoor (suites/reveal/dot_door.h): C = A B^T is the linear layer's
// y = x w^T + b with x = A [m, k], w = B [n, k] and a zero bias, called with
// extents {m, k, n}. Out of process by default (the kernel runs in
// ulpgate-iut, so that a crash, a hang or a write outside its output is a
// DotDoorError, never a result); in process on request.
#ifndef ULPGATE_SUITES_REVEAL_PLUGIN_DOOR_H_
#define ULPGATE_SUITES_REVEAL_PLUGIN_DOOR_H_

#include <functional>
#include <memory>
#include <string>

#include "kernels/plugins/plugin_library.h"
#include "oracles/float_format.h"
#include "suites/reveal/dot_door.h"

namespace ulpgate {

struct PluginDoorOptions {
  // Call the library in this process: faster, and a crash ends the program
  // (a write outside the output is still caught, by guard elements).
  bool in_process = false;
  // The IUT that runs it out of process; empty: the ulpgate-iut beside the
  // running program (BundledIutPath).
  std::string iut_path;
  double timeout_seconds = 10.0;  // per call, out of process
};

// The plugin at `path`, its linear_fwd kernel `variant` (its f32 kernel of
// that name where it has one, else its only one). Throws DotDoorError when
// the library does not load or has no such kernel.
std::unique_ptr<DotDoor> MakePluginDotDoor(const std::string& path, const std::string& variant,
                                           const PluginDoorOptions& options = {});

// A DotDoor over any linear_fwd call (shared by the plugin's and the IUT's
// doors): `call` takes the operands x, w, b in `format`'s storage and extents
// {m, k, n}; it may throw, and whatever it throws becomes a DotDoorError
// naming the door.
// set_threads: SetThreads's answer (none: the door cannot set them).
std::unique_ptr<DotDoor> MakeLinearFwdDotDoor(std::string name, const FloatFormat& format,
                                              ReductionCall call,
                                              std::function<bool(unsigned)> set_threads = {});

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REVEAL_PLUGIN_DOOR_H_
