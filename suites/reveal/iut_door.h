// An IUT's linear_fwd (docs/iut.md, protocol version 3: "reduce") presented
// as a DotDoor: C = A B^T as y = x w^T + b with x = A, w = B and a zero
// bias. The IUT runs in a process of its own, so that its crash, its hang
// or its refusal is a DotDoorError, never a result.
#ifndef ULPGATE_SUITES_REVEAL_IUT_DOOR_H_
#define ULPGATE_SUITES_REVEAL_IUT_DOOR_H_

#include <memory>
#include <string>

#include "suites/reveal/dot_door.h"

namespace ulpgate {

// The environment variables SetThreads gives the IUT: ulpgate's own, then
// those of the usual thread pools (OpenMP, OpenBLAS, BLIS).
inline constexpr const char* kIutThreadVariables[] = {"ULPGATE_IUT_THREADS", "OMP_NUM_THREADS",
                                                      "OPENBLAS_NUM_THREADS", "BLIS_NUM_THREADS"};

// The IUT `command` (run by /bin/sh), its linear_fwd kernel `variant`
// ("NAME", or "NAME@TARGET" where several targets offer one; its f32 kernel
// where it has several dtypes). SetThreads(t) restarts the IUT with
// kIutThreadVariables set to t. Throws DotDoorError when the IUT does not
// start, does not greet as version 3 or offers no such kernel.
std::unique_ptr<DotDoor> MakeIutDotDoor(const std::string& command, const std::string& variant,
                                        double timeout_seconds = 10.0);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REVEAL_IUT_DOOR_H_
