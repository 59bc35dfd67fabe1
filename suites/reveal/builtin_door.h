// ulpgate's own linear_fwd kernels as dot-product doors: y = x W^T + 0 on one
// compiled target, with x = A [m, k] and W = B [n, k], so that `reveal` and
// `invariance` see them as they see any other kernel. The bias is -0, the one
// value whose addition changes no output's bits (-0 + -0 is -0 and -0 + v is
// v), so that invariance sees a dot product's own zero signs.
#ifndef ULPGATE_SUITES_REVEAL_BUILTIN_DOOR_H_
#define ULPGATE_SUITES_REVEAL_BUILTIN_DOOR_H_

#include <memory>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "suites/reveal/dot_door.h"

namespace ulpgate {

// The linear_fwd variants a door can take: sequential_fma, sequential
// (sequential_unfused), lane_parallel, pairwise.
const std::vector<std::string>& BuiltinDotVariants();

// nullptr when the variant is unknown or the target not compiled; the target
// must be runnable on this CPU to be called.
std::unique_ptr<DotDoor> MakeBuiltinDoor(const std::string& variant, const TargetInfo& target);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REVEAL_BUILTIN_DOOR_H_
