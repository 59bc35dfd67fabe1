// Matrix products whose reduction tree depends on the call (its batch size,
// its thread count, where its operands lie, how many calls came before),
// planted to show what `ulpgate invariance` finds (`--kernel planted:NAME`)
// and to test it: each names the tree it uses for every call, so the expected
// verdict follows from its definition, not from the code under test. (The
// accelerator-like planted kernels of `reveal`, one tree whatever the call,
// are planted_kernels.h's.)
//
//   sequential         one binary32 accumulator, k = 0, 1, ..., K-1, for every
//                      shape: batch-invariant and deterministic
//   split_by_batch     sequential below m = 8 (kPlantedSplitBatch); from 8
//                      rows on, split-K in two halves summed apart and then
//                      added, as a library that picks its kernel by shape
//   split_by_threads   K cut into as many parts as SetThreads gave (1 until
//                      set), each part summed sequentially, the parts added
//                      in order: the bits depend on the thread count only
//   peel_to_alignment  as a SIMD kernel that sums A's row one element at a
//                      time until its address is 32-byte aligned, then eight
//                      lane accumulators, added pairwise, then the head: the
//                      bits depend on where the row starts in memory
//   order_by_call      sequential forward on one call, backward on the next
//                      (a counter in the door), as a kernel whose order
//                      depends on a race: run to run nondeterministic
//
// Operands and outputs are binary32; the products are rounded before they are
// added (sources are compiled with -ffp-contract=off).
#ifndef ULPGATE_SUITES_REVEAL_PLANTED_INVARIANCE_H_
#define ULPGATE_SUITES_REVEAL_PLANTED_INVARIANCE_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "suites/reveal/dot_door.h"

namespace ulpgate {

inline constexpr char kPlantedPrefix[] = "planted:";
// The batch size from which split_by_batch splits K.
inline constexpr size_t kPlantedSplitBatch = 8;

// The planted kernels' names, without the prefix, in the order above.
std::vector<std::string> InvariancePlantedNames();

// The planted kernel of that name (with or without "planted:"); nullptr for
// an unknown name. Its Name() is "planted:NAME".
std::unique_ptr<DotDoor> MakeInvariancePlantedDoor(std::string_view name);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REVEAL_PLANTED_INVARIANCE_H_
