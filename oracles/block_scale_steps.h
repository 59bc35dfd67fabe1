// Each MX scale rule's byte (oracles/block_scale.h ScaleByte) is a step
// function of the block's amax over binary32 patterns: its steps, derived
// from the rules' definitions alone (exact reasoning on binary32 patterns and
// in double, never by calling ScaleByte or a kernel), so that the model and
// every kernel can be held to them on every non-negative binary32 amax.
#ifndef ULPGATE_ORACLES_BLOCK_SCALE_STEPS_H_
#define ULPGATE_ORACLES_BLOCK_SCALE_STEPS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "oracles/block_format.h"
#include "oracles/float_format.h"

namespace ulpgate {

// (first pattern, byte) for each step in increasing patterns, from (0, 0) to
// infinity's step (0xff): byte(p) is the byte of the last step whose first
// pattern is <= p. `element` is an MX element format.
std::vector<std::pair<uint32_t, uint8_t>> ScaleByteSteps(ScaleRule rule, const FloatFormat& element);

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_BLOCK_SCALE_STEPS_H_
