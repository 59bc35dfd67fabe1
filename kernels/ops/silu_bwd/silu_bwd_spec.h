// SiLU backward: silu_bwd(grad, x) = grad * sig(x) * (1 + x * (1 - sig(x))),
// sig(x) = 1 / (1 + exp(-x)) (PyTorch's silu_backward(grad_output, input)).
//
// The kernels take exp from Highway 1.0.3 (hwy/contrib/math, at most 1 ULP);
// oracles/highway_math.h reproduces it bit for bit, so every variant has a
// model per kind of target (multiply-adds fused or not). Besides the ULP
// error, outputs are measured against the error bound of a backward-stable
// evaluation (TermMagnitude).
#ifndef ULPGATE_KERNELS_OPS_SILU_BWD_SPEC_H_
#define ULPGATE_KERNELS_OPS_SILU_BWD_SPEC_H_

#include <array>
#include <string_view>

#include "kernels/ops/elementwise_spec.h"
#include "kernels/ops/silu_bwd/silu_bwd_factor.h"

namespace ulpgate {

struct SiluBwdSpec {
  static constexpr std::string_view kName = "silu_bwd";
  static constexpr std::string_view kDefinition =
      "grad * sig(x) * (1 + x * (1 - sig(x))), sig(x) = 1 / (1 + exp(-x))";
  static constexpr std::array<OperandInfo, 2> kOperands = {{
      {"grad", "the gradient of the output", OperandDomain::kLogUniform, 0x1p-24, 0x1p8},
      {"x", "the forward input", OperandDomain::kUniform, -20.0, 20.0},
  }};

  static constexpr std::array<ElementwiseVariantInfo, 2> kVariants = {{
      // PyTorch's CPU kernel (Activation.cpp): dy * sig * (1 + x * (1 - sig)).
      {"torch", "e = exp(-x); sig = 1/(1 + e); p = grad*sig; w = 1 + x*(1 - sig); out = p*w", "torch_fma", "torch_nofma"},
      {"muladd", "e = exp(-x); sig = 1/(1 + e); p = grad*sig; w = MulAdd(x, 1 - sig, 1); out = p*w", "muladd_fma", "muladd_nofma"},
  }};
  // Models: each sequence with every multiply-add (its own and those inside
  // Highway's functions) fused (the targets with FMA) or two roundings. They
  // have no expression: the model language has no transcendental functions.
  static constexpr std::array<ElementwiseModelInfo, 4> kModels = {{
      {"torch_fma", "torch", true, ""},
      {"torch_nofma", "torch", false, ""},
      {"muladd_fma", "muladd", true, ""},
      {"muladd_nofma", "muladd", false, ""},
  }};

  static constexpr std::array<NarrowVariantInfo, 3> kNarrowVariants = {{
      {"torch_opmath", "torch", NarrowRounding::kOpmath,
       "the f32 torch sequence, rounded once to the format"},
      {"muladd_opmath", "muladd", NarrowRounding::kOpmath,
       "the f32 muladd sequence, rounded once to the format"},
      {"torch_per_op", "torch", NarrowRounding::kPerOp,
       "the torch sequence with each step rounded to the format"},
  }};

  // The zero of the derivative (x = -1.2784645...: the two binary32 values around it), where the result cancels;
  // where sig(x) rounds to 1 in binary32 (x > 16.6) and where exp(-x)
  // overflows (x < -88.72) or underflows.
  static constexpr std::array<double, 10> kLandmarks = {
      0.0, -0x1.474974p+0, -0x1.474976p+0, 0x1.0a2b24p+4, -0x1.62e43p+6, -0x1.62e42ep+6,
      0x1.9fe368p+6, 1.0, -1.0, 0x1p-20};
  // exp is transcendental: the exact value is evaluated at kOraclePrecision
  // bits (ExactArith's rounding mode for functions), not exactly.
  static constexpr bool kExactDefinition = false;
  // The factor Exact multiplies grad by, estimated in double-words with a
  // bound (silu_bwd_factor.h): the sweep's exact tier over binary32 x.
  static constexpr auto kFastFactor = &SiluBwdFactor;
  static constexpr auto kFastFactors = &SiluBwdFactors;
  static constexpr auto kFastTermFactor = &SiluBwdTermFactor;
  // Seven roundings and exp's 1 ULP (counted as two more).
  static constexpr int kBoundRoundings = 9;
};

namespace silu_bwd_spec {
#include "kernels/ops/silu_bwd/silu_bwd_spec-inl.h"  // IWYU pragma: export
}  // namespace silu_bwd_spec

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_OPS_SILU_BWD_SPEC_H_
