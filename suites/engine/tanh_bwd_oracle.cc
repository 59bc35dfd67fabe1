#include "suites/engine/tanh_bwd_oracle.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/elementwise_ops.h"
#include "kernels/expected_model.h"
#include "kernels/narrow_formats.h"
#include "oracles/highway_f16.h"

namespace ulpgate {

MpfrNumber TanhBwdExact(float grad, float t) {
  ExactArith exact(kExactDefinitionPrecision);
  return tanh_bwd_spec::Canonical(exact, exact.FromFloat(grad), exact.FromFloat(t));
}

MpfrNumber TanhBwdVariantExact(std::string_view variant, float grad, float t) {
  ExactArith exact(kExactDefinitionPrecision);
  return TanhBwdSequence(variant, exact, exact.FromFloat(grad), exact.FromFloat(t));
}

int TanhBwdVariantIndex(std::string_view variant) { return RowIndex(kTanhBwdVariants, variant); }

int TanhBwdModelIndex(std::string_view model) {
  for (size_t i = 0; i < kTanhBwdModels.size(); ++i) {
    if (kTanhBwdModels[i].name == model) return static_cast<int>(i);
  }
  return -1;
}

namespace {

// Binary32 model m of kTanhBwdModels.
float ModelAt(size_t m, float grad, float t) {
  Binary32Arith arith(kTanhBwdModels[m].fused);
  return TanhBwdSequence(kTanhBwdModels[m].sequence_of, arith, grad, t);
}

}  // namespace

float TanhBwdModel(std::string_view model, float grad, float t) {
  const int index = TanhBwdModelIndex(model);
  if (index < 0) {
    throw std::invalid_argument("unknown tanh_bwd model '" + std::string(model) + "'");
  }
  return ModelAt(static_cast<size_t>(index), grad, t);
}

std::array<float, kTanhBwdModels.size()> TanhBwdModelsNative(float grad, float t) {
  std::array<float, kTanhBwdModels.size()> out;
  for (size_t m = 0; m < kTanhBwdModels.size(); ++m) {
    NativeBinary32Arith arith(kTanhBwdModels[m].fused);
    out[m] = TanhBwdSequence(kTanhBwdModels[m].sequence_of, arith, grad, t);
  }
  return out;
}

std::array<float, kTanhBwdModels.size()> TanhBwdModels(float grad, float t) {
  std::array<float, kTanhBwdModels.size()> out;
  for (size_t m = 0; m < kTanhBwdModels.size(); ++m) out[m] = ModelAt(m, grad, t);
  return out;
}

namespace {

// The format's row of kNarrowFormats; throws for a format without one.
const NarrowFormat& RequireNarrow(const FloatFormat& format) {
  const int f = NarrowFormatIndex(format.name);
  if (f < 0) {
    throw std::invalid_argument(std::string("no 16-bit tanh_bwd variants in ") + format.name);
  }
  return kNarrowFormats[f];
}

float ToFloat(double v) { return static_cast<float>(v); }  // exact for 16-bit values

using NarrowModel = TanhBwdNarrowModelInfo;

// From the tables: every binary32 model rounded once; every per-op variant;
// for each Highway-converting variant, the binary32 models of its sequence
// between the format's Highway conversions (F16C's are the IEEE ones).
std::vector<NarrowModel> BuildNarrowModels(const NarrowFormat& format) {
  std::vector<NarrowModel> models;
  for (size_t m = 0; m < kTanhBwdModels.size(); ++m) {
    models.push_back({std::string(kTanhBwdModels[m].name) + "_opmath", NarrowModel::kOpmath,
                      m, {}});
  }
  for (const auto& v : kTanhBwdNarrowVariants) {
    if (v.rounding == NarrowRounding::kPerOp) {
      models.push_back({std::string(v.name), NarrowModel::kPerOp, 0, v.sequence});
    }
  }
  for (const auto& v : kTanhBwdNarrowVariants) {
    if (v.rounding != NarrowRounding::kHighwayConvert) continue;
    for (size_t m = 0; m < kTanhBwdModels.size(); ++m) {
      if (kTanhBwdModels[m].sequence_of != v.sequence) continue;
      const bool truncating = format.highway == HighwayConversion::kTruncatingDemotion;
      NarrowModel model{std::string(kTanhBwdModels[m].name) +
                            (truncating ? "_opmath_truncating" : "_opmath_hwy_soft"),
                        truncating ? NarrowModel::kTruncating : NarrowModel::kHighwaySoft,
                        m, {}};
      const bool known = std::any_of(models.begin(), models.end(),
                                     [&](const NarrowModel& o) { return o.name == model.name; });
      if (!known) models.push_back(model);
    }
  }
  return models;
}

}  // namespace

const std::vector<TanhBwdNarrowModelInfo>& TanhBwdNarrowModelInfos(const FloatFormat& format) {
  static const auto models = [] {
    std::array<std::vector<NarrowModel>, kNarrowFormats.size()> all;
    for (size_t f = 0; f < kNarrowFormats.size(); ++f) all[f] = BuildNarrowModels(kNarrowFormats[f]);
    return all;
  }();
  return models[&RequireNarrow(format) - kNarrowFormats.data()];
}

const std::vector<std::string>& TanhBwdNarrowModelNames(const FloatFormat& format) {
  static const auto names = [] {
    std::array<std::vector<std::string>, kNarrowFormats.size()> all;
    for (size_t f = 0; f < kNarrowFormats.size(); ++f) {
      for (const auto& m : TanhBwdNarrowModelInfos(*kNarrowFormats[f].format)) all[f].push_back(m.name);
    }
    return all;
  }();
  return names[&RequireNarrow(format) - kNarrowFormats.data()];
}

namespace {

// FormatArith's unfused operations from double arithmetic: a product of two
// values of a format of p <= 11 bits is exact in a double, and a sum or
// difference rounded to 53 bits and then to p bits is rounded once correctly
// (53 >= 2p + 2: the double rounding is innocuous, subnormal and overflowing
// results included, as RoundDouble rounds exactly).
class NativeFormatArith {
 public:
  using Value = double;
  explicit NativeFormatArith(const FloatFormat& format) : format_(&format) {}
  bool fused() const { return false; }
  double Const(double c) const { return c; }
  double Zero() const { return 0.0; }
  double Add(double a, double b) const { return RoundDouble(*format_, a + b); }
  double Sub(double a, double b) const { return RoundDouble(*format_, a - b); }
  double Mul(double a, double b) const { return RoundDouble(*format_, a * b); }
  double MulAdd(double a, double b, double c) const { return Add(Mul(a, b), c); }
  double NegMulAdd(double a, double b, double c) const { return Sub(c, Mul(a, b)); }

 private:
  const FloatFormat* format_;
};

std::vector<float> NarrowModelOutputs(const FloatFormat& format, uint16_t grad_bits,
                                      uint16_t t_bits, bool native) {
  const std::vector<NarrowModel>& models = TanhBwdNarrowModelInfos(format);
  const auto f32_model = [native](size_t m, float g, float x) {
    return native ? TanhBwdModelsNative(g, x)[m] : ModelAt(m, g, x);
  };
  const float grad = ToFloat(DecodeBits(format, grad_bits));
  const float t = ToFloat(DecodeBits(format, t_bits));
  std::vector<float> out;
  out.reserve(models.size());
  for (const NarrowModel& m : models) {
    switch (m.kind) {
      case NarrowModel::kOpmath: {
        const float y = f32_model(m.f32_model, grad, t);
        out.push_back(ToFloat(native ? RoundDouble(format, y) : RoundToFormat(format, y)));
        break;
      }
      case NarrowModel::kPerOp: {
        if (native) {
          NativeFormatArith per_op(format);
          out.push_back(ToFloat(TanhBwdSequence(m.sequence, per_op, double{grad}, double{t})));
        } else {
          FormatArith per_op(format, false);
          out.push_back(ToFloat(TanhBwdSequence(m.sequence, per_op, double{grad}, double{t})));
        }
        break;
      }
      case NarrowModel::kTruncating: {
        const float y = f32_model(m.f32_model, grad, t);
        if (std::isnan(y)) {
          out.push_back(y);
        } else if (native) {
          out.push_back(ToFloat(RoundDouble(format, y, /*toward_zero=*/true)));
        } else {
          MpfrNumber x(kBinary32.precision, y);
          out.push_back(ToFloat(TruncateToFormat(format, x.get())));
        }
        break;
      }
      case NarrowModel::kHighwaySoft: {
        const float g = HighwaySoftF16ToF32(grad_bits);
        const float x = HighwaySoftF16ToF32(t_bits);
        out.push_back(
            ToFloat(DecodeBits(format, HighwaySoftF32ToF16(f32_model(m.f32_model, g, x)))));
        break;
      }
    }
  }
  return out;
}

}  // namespace

std::vector<float> TanhBwdNarrowModels(const FloatFormat& format, uint16_t grad_bits,
                                       uint16_t t_bits) {
  return NarrowModelOutputs(format, grad_bits, t_bits, false);
}

std::vector<float> TanhBwdNarrowModelsNative(const FloatFormat& format, uint16_t grad_bits,
                                             uint16_t t_bits) {
  return NarrowModelOutputs(format, grad_bits, t_bits, true);
}

int TanhBwdNarrowVariantIndex(std::string_view variant) {
  for (size_t i = 0; i < kTanhBwdNarrowVariants.size(); ++i) {
    if (kTanhBwdNarrowVariants[i].name == variant) return static_cast<int>(i);
  }
  return -1;
}

std::vector<ModelProgram> TanhBwdModelPrograms(const FloatFormat& format) {
  static const std::vector<std::string> operands = {"grad", "t"};
  std::vector<ModelProgram> programs;
  if (std::string_view(format.name) == kBinary32.name) {
    for (const TanhBwdModelInfo& m : kTanhBwdModels) {
      programs.push_back(ParseModel(m.name, m.expression, operands, format));
    }
    return programs;
  }
  const NarrowFormat& narrow = RequireNarrow(format);
  for (const TanhBwdModelInfo& m : kTanhBwdModels) {
    const std::string expression(m.expression);
    programs.push_back(
        ParseModel(std::string(m.name) + "_opmath", "working f32; " + expression, operands, format));
    std::string per_op = std::string(m.name) + "_per_op";
    for (const TanhBwdNarrowVariantInfo& v : kTanhBwdNarrowVariants) {
      if (v.rounding == NarrowRounding::kPerOp && v.sequence == m.sequence_of) per_op = v.name;
    }
    programs.push_back(ParseModel(per_op, std::string("working ") + format.name + "; " + expression,
                                  operands, format));
  }
  if (narrow.highway == HighwayConversion::kTruncatingDemotion) {
    for (const TanhBwdModelInfo& m : kTanhBwdModels) {
      // The last statement is "out = ...": truncate its value.
      std::string expression(m.expression);
      const size_t out = expression.rfind("out = ");
      expression = expression.substr(0, out) + "out = " + format.name + "_rz(" +
                   expression.substr(out + 6) + ")";
      programs.push_back(ParseModel(std::string(m.name) + "_opmath_truncating",
                                    "working f32; " + expression, operands, format));
    }
  }
  return programs;
}

std::string ExpectedNarrowModel(const FloatFormat& format, std::string_view variant,
                                const TargetInfo& target) {
  RequireNarrow(format);
  if (TanhBwdNarrowVariantIndex(variant) < 0) {
    throw std::invalid_argument("unknown tanh_bwd variant '" + std::string(variant) + "'");
  }
  // The rule every op's kernels follow (kernels/expected_model.h), for tanh_bwd.
  return ExpectedModelName(*FindElementwiseOp(TanhBwdSpec::kName), format.name, variant, target);
}

}  // namespace ulpgate
