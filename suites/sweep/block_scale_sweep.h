// A kernel's MX scale bytes over every non-negative binary32 amax (2^31
// patterns, made in registers by mx_scale_bytes_of_patterns) against the
// steps derived from the rule's definition (oracles/block_scale_steps.h):
// `ulpgate sweep --op mx_quantize` and the exhaustive test.
#ifndef ULPGATE_SUITES_SWEEP_BLOCK_SCALE_SWEEP_H_
#define ULPGATE_SUITES_SWEEP_BLOCK_SCALE_SWEEP_H_

#include <cstdint>
#include <optional>

#include "kernels/block_quant.h"
#include "oracles/block_format.h"
#include "oracles/float_format.h"

namespace ulpgate {

struct ScaleByteMismatch {
  uint32_t pattern = 0;  // the amax's binary32 pattern
  uint8_t kernel = 0, steps = 0;
};

struct ScaleByteSweep {
  size_t steps = 0;            // of the rule's step function
  uint64_t mismatches = 0;     // patterns where the kernel's byte differs
  std::optional<ScaleByteMismatch> first;  // the least such pattern
  double seconds = 0;
};

// Every pattern in [0, 2^31) on `threads` threads (0: every core).
ScaleByteSweep SweepScaleBytes(const BlockQuantKernels& kernels, ScaleRule rule,
                               const FloatFormat& element, unsigned threads = 0);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_SWEEP_BLOCK_SCALE_SWEEP_H_
