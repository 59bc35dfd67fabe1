// Planted kernels: matrix products that add up as accelerators do, each a
// known tree and arithmetic, for `reveal` to recover exactly (tests, and the
// CLI's --kernel planted:NAME).
//   fp8_trunc14_promote128  E4M3 operands, exact products, a chain in an adder
//                           that keeps 14 bits after alignment and truncates
//                           the rest, promoted to a binary32 sum every 128
//                           terms (DeepSeek-V3's account of FP8 GEMM on H800)
//   bf16_fused4             bf16 operands, each group of four exact products
//                           added to the binary32 accumulator with one
//                           rounding (a tensor core's fused dot-add)
//   f32_splitk3             f32 operands, split-K into three uneven parts
//                           (3/8, 1/4, 3/8 of k), each an FMA chain, summed
//                           left to right at the end
//   f32_splitk3_late        the same with the first part one term longer: a
//                           changed tree, for the golden check's test
#ifndef ULPGATE_SUITES_REVEAL_PLANTED_KERNELS_H_
#define ULPGATE_SUITES_REVEAL_PLANTED_KERNELS_H_

#include <memory>
#include <string>
#include <vector>

#include "suites/reveal/dot_door.h"

namespace ulpgate {

struct PlantedKernelInfo {
  std::string name;
  std::string description;
};
const std::vector<PlantedKernelInfo>& PlantedKernels();

// nullptr for an unknown name (without the "planted:" prefix).
std::unique_ptr<DotDoor> MakePlantedDoor(const std::string& name);

// The split points of f32_splitk3 (and _late) for k terms: part ends.
std::vector<size_t> SplitKEnds(size_t k, bool late);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REVEAL_PLANTED_KERNELS_H_
