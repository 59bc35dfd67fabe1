// ulpgate's own linear_fwd kernels (kernels/registry.h) as matrix products
// under test: y = x W^T + b is C = A B^T with A = x, B = W and a bias of -0,
// the one value whose addition leaves every sum's bits as they were (-0 + -0
// is -0 and -0 + v is v), so the door shows the dot products' own encodings.
#ifndef ULPGATE_SUITES_REVEAL_BUILTIN_DOOR_H_
#define ULPGATE_SUITES_REVEAL_BUILTIN_DOOR_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/registry.h"
#include "oracles/float_format.h"
#include "suites/reveal/dot_door.h"

namespace ulpgate {

// The linear_fwd variant `variant` compiled for `target` with operands and
// output in `format` (f32, or a 16-bit format of kNarrowFormats with binary32
// accumulation). Named "linear_fwd/VARIANT@TARGET", with " bf16" or " f16"
// appended for a 16-bit format. Single-threaded: SetThreads is refused.
// Throws std::invalid_argument for an unknown variant or format, or a target
// not compiled.
std::unique_ptr<DotDoor> MakeLinearFwdDoor(std::string_view variant, const TargetInfo& target,
                                           const FloatFormat& format);

// The linear_fwd variants' names, in reduction_spec.h's order.
std::vector<std::string> LinearFwdVariantNames();

// reveal's names for them: sequential_fma, sequential (sequential_unfused),
// lane_parallel, pairwise, in f32 with a bias of +0 (which changes no output
// reveal reads). nullptr when the variant is unknown or the target not
// compiled; the target must be runnable on this CPU to be called.
const std::vector<std::string>& BuiltinDotVariants();
std::unique_ptr<DotDoor> MakeBuiltinDoor(const std::string& variant, const TargetInfo& target);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REVEAL_BUILTIN_DOOR_H_
