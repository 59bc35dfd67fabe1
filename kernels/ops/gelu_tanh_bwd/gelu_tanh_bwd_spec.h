// GELU backward, PyTorch's tanh approximation (approximate='tanh'): grad times
// the derivative of x/2 * (1 + tanh(k (x + c x^3))), k = sqrt(2/pi),
// c = 0.044715 (the exact decimal in the oracle, rounded to binary32 in the
// kernels):
//   grad * ((1 + tanh u)/2 + x/2 (1 - tanh^2 u) k (1 + 3 c x^2)), u = k (x + c x^3).
//
// The kernels take tanh from Highway 1.0.3 (hwy/contrib/math), which
// oracles/highway_math.h reproduces bit for bit: every variant has a model per
// kind of target (multiply-adds fused or not).
#ifndef ULPGATE_KERNELS_OPS_GELU_TANH_BWD_SPEC_H_
#define ULPGATE_KERNELS_OPS_GELU_TANH_BWD_SPEC_H_

#include <array>
#include <string_view>

#include "kernels/ops/elementwise_spec.h"
#include "kernels/ops/gelu_tanh_bwd/gelu_tanh_bwd_factor.h"

namespace ulpgate {

struct GeluTanhBwdSpec {
  static constexpr std::string_view kName = "gelu_tanh_bwd";
  static constexpr std::string_view kDefinition =
      "grad * d/dx [x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))]";
  static constexpr std::array<OperandInfo, 2> kOperands = {{
      {"grad", "the gradient of the output", OperandDomain::kLogUniform, 0x1p-24, 0x1p8},
      {"x", "the forward input", OperandDomain::kUniform, -10.0, 10.0},
  }};

  // PyTorch's constants (Activation.cpp), rounded to binary32:
  // kBeta = RN(sqrt(2) * 2/sqrt(pi) / 2) = RN(sqrt(2/pi)), kKappa = RN(0.044715).
  static constexpr float kBeta = 0x1.988454p-1f;
  static constexpr float kKappa = 0x1.6e4e26p-5f;
  // The constants as the op_sequence texts below name them.
  static constexpr std::array<NamedConstant, 2> kConstants = {{{"kBeta", kBeta}, {"kKappa", kKappa}}};

  static constexpr std::array<ElementwiseVariantInfo, 2> kVariants = {{
      // PyTorch's CPU kernel, operation by operation (the vectorized path).
      {"torch",
       "u = kBeta*(x + kKappa*(x*x*x)); t = tanh(u); l = 0.5*x; "
       "d = kBeta*(1 + 3*kKappa*(x*x)); out = grad*(0.5*(1 + t) + l*(1 - t*t)*d)",
       "torch_fma", "torch_nofma"},
      {"muladd",
       "u = kBeta*MulAdd(kKappa, x*x*x, x); t = tanh(u); l = 0.5*x; "
       "d = kBeta*MulAdd(3*kKappa, x*x, 1); out = grad*MulAdd(l*NegMulAdd(t, t, 1), d, 0.5*(1 + t))",
       "muladd_fma", "muladd_nofma"},
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

  // The zero of the derivative (x = -0.7524614...: the two binary32 values around it), the cancellation of 1 + tanh
  // (x < -3), where x^3 overflows binary32 (|x| > 6.98e12) and the result is
  // NaN in the torch sequence (0 * inf).
  static constexpr std::array<double, 10> kLandmarks = {
      0.0, -0x1.8142a0p-1, -0x1.8142a2p-1, -3.0, -5.0, -9.0, 1.0, 0x1.965fe8p+42, 0x1p+43, -0x1p+43};
  static constexpr bool kExactDefinition = false;
  // Fourteen roundings and tanh's error (Highway 1.0.3: up to 4 ULP), counted
  // as eight more.
  static constexpr int kBoundRoundings = 22;
  // The factor Exact multiplies grad by, estimated in double-words with a
  // bound (gelu_tanh_bwd_factor.h): the sweep's exact tier over binary32 x.
  static constexpr auto kFastFactor = &GeluTanhBwdFactor;
  static constexpr auto kFastFactors = &GeluTanhBwdFactors;
  static constexpr auto kFastTermFactor = &GeluTanhBwdTermFactor;
};

namespace gelu_tanh_bwd_spec {
#include "kernels/ops/gelu_tanh_bwd/gelu_tanh_bwd_spec-inl.h"  // IWYU pragma: export
}  // namespace gelu_tanh_bwd_spec

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_OPS_GELU_TANH_BWD_SPEC_H_
