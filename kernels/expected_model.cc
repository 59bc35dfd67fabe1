#include "kernels/expected_model.h"

#include "kernels/narrow_formats.h"

namespace ulpgate {

namespace {

std::string F32Model(const ElementwiseVariantInfo& v, const TargetInfo& target) {
  return std::string(target.fused_negmuladd ? v.model_fused_target : v.model_unfused_target);
}

}  // namespace

std::string ExpectedModelName(const ElementwiseOpInfo& op, std::string_view format,
                              std::string_view variant, const TargetInfo& target) {
  if (format == "f32") {
    const int v = op.VariantIndex(variant);
    return v < 0 ? std::string() : F32Model(op.variants[v], target);
  }
  const int f = NarrowFormatIndex(format);
  const int v = op.NarrowVariantIndex(variant);
  if (f < 0 || v < 0) return "";
  const NarrowFormat& narrow = kNarrowFormats[f];
  const NarrowVariantInfo& info = op.narrow_variants[v];
  const ElementwiseVariantInfo& f32 = op.variants[op.VariantIndex(info.sequence)];
  const std::string f32_model = F32Model(f32, target);
  switch (info.rounding) {
    case NarrowRounding::kOpmath:
      return f32_model + "_opmath";
    case NarrowRounding::kPerOp:
      if (f32.model_fused_target == f32.model_unfused_target) return std::string(info.name);
      return std::string(info.name) + (target.fused_negmuladd ? "_fma" : "_nofma");
    case NarrowRounding::kHighwayConvert:
      switch (narrow.highway) {
        case HighwayConversion::kTruncatingDemotion:
          return f32_model + "_opmath_truncating";
        case HighwayConversion::kF16cOrSoftware:
          return f32_model + (target.f16c_conversions ? "_opmath" : "_opmath_hwy_soft");
      }
      break;
  }
  return "";
}

}  // namespace ulpgate
