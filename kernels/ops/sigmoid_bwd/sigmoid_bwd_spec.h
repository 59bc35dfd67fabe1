// sigmoid backward: sigmoid_bwd(grad, s) = grad * s * (1 - s), with s =
// sigmoid(x) the forward output (PyTorch's sigmoid_backward(grad_output,
// output)). No transcendental step: every variant has a bit-exact model.
//
// The arithmetic A of the templates (sigmoid_bwd_spec-inl.h) provides Const,
// Mul, Sub, NegMulAdd; the exact value also Abs and Add.
#ifndef ULPGATE_KERNELS_OPS_SIGMOID_BWD_SPEC_H_
#define ULPGATE_KERNELS_OPS_SIGMOID_BWD_SPEC_H_

#include <array>
#include <string_view>

#include "kernels/ops/elementwise_spec.h"
#include "kernels/ops/sigmoid_bwd/sigmoid_bwd_factor.h"

namespace ulpgate {

struct SigmoidBwdSpec {
  static constexpr std::string_view kName = "sigmoid_bwd";
  static constexpr std::string_view kDefinition = "grad * s * (1 - s), s = sigmoid(x)";
  static constexpr std::array<OperandInfo, 2> kOperands = {{
      {"grad", "the gradient of the output", OperandDomain::kLogUniform, 0x1p-24, 0x1p8},
      {"s", "sigmoid(x), the forward output", OperandDomain::kUniform, 0.0, 1.0},
  }};

  static constexpr std::array<ElementwiseVariantInfo, 3> kVariants = {{
      // PyTorch's CPU kernel (BinaryOpsKernel.cpp): a * (1 - b) * b.
      {"torch", "q = 1 - s; p = grad*q; out = p*s", "torch", "torch"},
      {"mul3", "p = grad*s; q = 1 - s; out = p*q", "mul3", "mul3"},
      // p*(1 - s) as p - p*s, one multiply-add: what a contracting compiler
      // may make of grad*s - grad*s*s.
      {"fms", "p = grad*s; out = NegMulAdd(p, s, p)", "fms_fused", "fms_unfused"},
  }};

  static constexpr std::array<ElementwiseModelInfo, 4> kModels = {{
      {"torch", "torch", false, "q = 1 - s; p = grad*q; out = p*s"},
      {"mul3", "mul3", false, "p = grad*s; q = 1 - s; out = p*q"},
      {"fms_fused", "fms", true, "p = grad*s; out = fma(-p, s, p)"},
      {"fms_unfused", "fms", false, "p = grad*s; q = p*s; out = p - q"},
  }};

  static constexpr std::array<NarrowVariantInfo, 4> kNarrowVariants = {{
      {"torch_opmath", "torch", NarrowRounding::kOpmath,
       "in f32: q = 1 - s; p = grad*q; out = p*s; rounded once to the format"},
      {"fms_opmath", "fms", NarrowRounding::kOpmath,
       "in f32: p = grad*s; out = NegMulAdd(p, s, p); rounded once to the format"},
      {"torch_per_op", "torch", NarrowRounding::kPerOp,
       "q = 1 - s; p = grad*q; out = p*s, each step rounded to the format"},
      {"torch_opmath_hwy", "torch", NarrowRounding::kHighwayConvert,
       "torch_opmath converted by Highway 1.0.3's PromoteTo/DemoteTo"},
  }};

  // Values of s worth landing on: the ends of (0, 1), where 1 - s is exact
  // (Sterbenz: s in [1/2, 1]) and where it rounds (s < 1/2), its last values
  // below 1, and the maximum of s(1 - s).
  static constexpr std::array<double, 8> kLandmarks = {
      0.0, 1.0, 0.5, 0x1.fffffep-1, 0x1.fffffcp-1, 0x1p-24, 0x1p-126, 0x1.000002p-1};
  // Every product and difference of binary32 values here is exact in
  // kExactDefinitionPrecision bits (oracles/exact.h): at most three factors,
  // differences spanning fewer than 400 binades.
  static constexpr bool kExactDefinition = true;
  // Its factor s (1 - s) exactly in two doubles (sigmoid_bwd_factor.h): the
  // sweep's exact tier over binary32 s.
  static constexpr auto kFastFactor = &SigmoidBwdFactor;
  static constexpr auto kFastTermFactor = &SigmoidBwdTermFactor;
  // The roundings a backward-stable evaluation meets (three operations).
  static constexpr int kBoundRoundings = 3;
};

namespace sigmoid_bwd_spec {
#include "kernels/ops/sigmoid_bwd/sigmoid_bwd_spec-inl.h"  // IWYU pragma: export
}  // namespace sigmoid_bwd_spec

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_OPS_SIGMOID_BWD_SPEC_H_
