// The model a target's kernel of a variant must follow: what Highway's
// operations on that target (fused or two-rounding multiply-adds, hardware or
// software f16 conversions, truncating bf16 demotion) make of the variant's
// op sequence. Plain logic over the op's tables and TargetInfo, no oracle, so
// that an IUT built for another ISA can say what its kernels claim.
#ifndef ULPGATE_KERNELS_EXPECTED_MODEL_H_
#define ULPGATE_KERNELS_EXPECTED_MODEL_H_

#include <string>
#include <string_view>

#include "kernels/elementwise_ops.h"
#include "kernels/registry.h"

namespace ulpgate {

// Empty when the op has no such variant in the format (f32, bf16, f16).
std::string ExpectedModelName(const ElementwiseOpInfo& op, std::string_view format,
                              std::string_view variant, const TargetInfo& target);

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_EXPECTED_MODEL_H_
