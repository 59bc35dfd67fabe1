// GELU backward, PyTorch's exact definition (approximate='none'):
// gelu_bwd(grad, x) = grad * (Phi(x) + x * phi(x)), Phi(x) = (1 + erf(x/sqrt(2)))/2,
// phi(x) = exp(-x^2/2) / sqrt(2 pi).
//
// For x below about -4, 1 + erf(x/sqrt(2)) cancels: a kernel that follows the
// definition loses every bit of Phi(x) there, so its ULP error is huge while
// its error stays a fraction of u |grad| (TermMagnitude): the bound fraction
// says which. The kernels take exp from Highway 1.0.3 and erf from
// oracles/erf_polynomial.h (oracles/highway_math.h models both bit for bit),
// so every variant has a model per kind of target.
#ifndef ULPGATE_KERNELS_OPS_GELU_BWD_SPEC_H_
#define ULPGATE_KERNELS_OPS_GELU_BWD_SPEC_H_

#include <array>
#include <string_view>

#include "kernels/ops/elementwise_spec.h"
#include "kernels/ops/gelu_bwd/gelu_bwd_factor.h"

namespace ulpgate {

struct GeluBwdSpec {
  static constexpr std::string_view kName = "gelu_bwd";
  static constexpr std::string_view kDefinition =
      "grad * (Phi(x) + x * phi(x)), Phi(x) = (1 + erf(x / sqrt(2))) / 2, "
      "phi(x) = exp(-x^2 / 2) / sqrt(2 pi)";
  static constexpr std::array<OperandInfo, 2> kOperands = {{
      {"grad", "the gradient of the output", OperandDomain::kLogUniform, 0x1p-24, 0x1p8},
      {"x", "the forward input", OperandDomain::kUniform, -10.0, 10.0},
  }};

  // PyTorch's constants (Activation.cpp), rounded to binary32:
  // kAlpha = RN(1/sqrt(2)), kBeta = RN(2/sqrt(pi) * 1/sqrt(2) * 1/2) = RN(1/sqrt(2 pi)).
  static constexpr float kAlpha = 0x1.6a09e6p-1f;
  static constexpr float kBeta = 0x1.988454p-2f;
  // The constants as the op_sequence texts below name them.
  static constexpr std::array<NamedConstant, 2> kConstants = {{{"kAlpha", kAlpha}, {"kBeta", kBeta}}};

  static constexpr std::array<ElementwiseVariantInfo, 2> kVariants = {{
      // PyTorch's CPU kernel: cdf = 0.5 (1 + erf(x kAlpha)),
      // pdf = kBeta exp(x x (-0.5)), dy (cdf + x pdf).
      {"torch", "cdf = 0.5*(1 + erf(x*kAlpha)); pdf = kBeta*exp(x*x*-0.5); out = grad*(cdf + x*pdf)", "torch_fma", "torch_nofma"},
      {"muladd", "cdf = 0.5*(1 + erf(x*kAlpha)); pdf = kBeta*exp(x*x*-0.5); out = grad*MulAdd(x, pdf, cdf)", "muladd_fma", "muladd_nofma"},
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

  // The zero of the derivative (x = -0.7517915...: the two binary32 values around it), the start of the
  // cancellation of 1 + erf (x < -4), where erf(x/sqrt(2)) rounds to -1 in
  // binary32 (x < -5.54) and where the result underflows.
  static constexpr std::array<double, 10> kLandmarks = {
      0.0, -0x1.80ead2p-1, -0x1.80ead4p-1, -4.0, -0x1.62p+2, -6.0, -10.0, -14.0, 1.0, 5.5};
  static constexpr bool kExactDefinition = false;
  // Eight roundings, exp's 1 ULP and erf's 1.42 (oracles/erf_polynomial.h),
  // counted as two and three more.
  static constexpr int kBoundRoundings = 13;
  // The factor Exact multiplies grad by, in double-words with a bound (gelu_bwd_factor.h).
  static constexpr auto kFastFactor = &GeluBwdFactor;
  static constexpr auto kFastFactors = &GeluBwdFactors;
  // TermMagnitude over |grad|, F(|x|), within kFastTermFactorError (gelu_bwd_factor.h).
  static constexpr auto kFastTermFactor = &GeluBwdTermFactor;
};

namespace gelu_bwd_spec {
#include "kernels/ops/gelu_bwd/gelu_bwd_spec-inl.h"  // IWYU pragma: export
}  // namespace gelu_bwd_spec

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_OPS_GELU_BWD_SPEC_H_
