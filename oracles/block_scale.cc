#include "oracles/block_scale.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "oracles/format.h"

namespace ulpgate {
namespace {

constexpr const char* kRuleNames[] = {"ocp_floor", "ceil", "even", "rceil", "reciprocal"};

uint8_t ClampedByte(int x) { return static_cast<uint8_t>(std::clamp(x, -127, 127) + 127); }

// A positive binary32 value q (held in a double) rounded up to E8M0: the
// least 2^X >= q, 2^-127 for every q at or below it (zero included: E8M0 has
// no zero, and the rounding up of a tiny scale is its smallest), NaN past
// 2^127.
uint8_t RoundUpE8M0(double q) {
  if (std::isnan(q) || std::isinf(q)) return kE8M0Nan;
  if (q == 0) return 0;
  const int e = std::ilogb(q);
  const int x = q == std::ldexp(1.0, e) ? e : e + 1;
  if (x > 127) return kE8M0Nan;
  return static_cast<uint8_t>(std::max(x, -127) + 127);
}

// A double rounded once to binary32, to nearest even: the quotient or
// product of two binary32 values formed in double and rounded here is the
// binary32 operation's result (a product is exact in double; a quotient's
// double rounding is innocuous since 53 >= 2*24 + 2).
double Binary32(double x) { return static_cast<double>(static_cast<float>(x)); }

bool Binary32Subnormal(float x) { return x != 0 && std::fabs(x) < 0x1p-126f; }

}  // namespace

const char* ScaleRuleName(ScaleRule rule) { return kRuleNames[static_cast<int>(rule)]; }

std::optional<ScaleRule> ParseScaleRule(std::string_view name) {
  for (ScaleRule r : kScaleRules) {
    if (name == ScaleRuleName(r)) return r;
  }
  return std::nullopt;
}

uint8_t ScaleByte(ScaleRule rule, const FloatFormat& element, float amax_f) {
  const double amax = amax_f;
  if (std::isnan(amax) || std::isinf(amax)) return kE8M0Nan;
  const double largest = LargestFinite(element);
  switch (rule) {
    case ScaleRule::kOcpFloor:
    case ScaleRule::kCeil: {
      // Zero: the exponent field's -127 (torchao), clamped to byte 0 like
      // every amax below 2^(emax - 127).
      if (amax == 0) return 0;
      const int e = std::ilogb(amax);  // floor(log2 amax), exact for subnormals too
      const bool power = amax == std::ldexp(1.0, e);
      const int x = (rule == ScaleRule::kCeil && !power ? e + 1 : e) - element.emax;
      return ClampedByte(x);
    }
    case ScaleRule::kEven: {
      if (amax == 0) return 0;
      // Half away from zero to p significant bits: floor(a / u + 1/2) u with
      // u the quantum of p bits at amax's binade (exact: a power of two
      // scaling and an integer below 2^25).
      const int e = std::ilogb(amax);
      const double u = std::ldexp(1.0, e - (element.precision - 1));
      const double rounded = std::floor(amax / u + 0.5) * u;
      // A carry past binary32's largest binade is its infinity: NaN scale.
      if (rounded >= 0x1p128) return kE8M0Nan;
      return ClampedByte(std::ilogb(rounded) - element.emax);
    }
    case ScaleRule::kRceil:
      return RoundUpE8M0(Binary32(amax / largest));
    case ScaleRule::kReciprocal:
      return RoundUpE8M0(Binary32(amax * Binary32(1.0 / largest)));
  }
  return kE8M0Nan;
}

const std::vector<const BlockSpec*>& BlockSpecs() {
  static const std::vector<const BlockSpec*> specs = {&kMxfp8E4M3, &kMxfp8E5M2, &kMxfp6E2M3,
                                                      &kMxfp6E3M2, &kMxfp4,     &kNvfp4};
  return specs;
}

const BlockSpec* FindBlockSpec(std::string_view name) {
  for (const BlockSpec* s : BlockSpecs()) {
    if (name == s->name) return s;
  }
  return nullptr;
}

size_t BlockShape::ElementIndex(size_t block, int j) const {
  const size_t bs = static_cast<size_t>(block_size);
  if (axis == BlockAxis::kRows) {
    const size_t per_row = cols / bs;
    return (block / per_row) * cols + (block % per_row) * bs + static_cast<size_t>(j);
  }
  const size_t row_block = block / cols;
  return (row_block * bs + static_cast<size_t>(j)) * cols + block % cols;
}

std::string BlockShape::Problem() const {
  if (block_size <= 0) return "the block size must be positive";
  const size_t along = axis == BlockAxis::kRows ? cols : rows;
  if (along % static_cast<size_t>(block_size) != 0) {
    return fmt::format("{} {} are not a multiple of the block size {}",
                       axis == BlockAxis::kRows ? "the row's" : "the column's", along, block_size);
  }
  return "";
}

float BlockAmax(const float* values, const BlockShape& shape, size_t block) {
  float amax = 0;
  for (int j = 0; j < shape.block_size; ++j) {
    const float a = std::fabs(values[shape.ElementIndex(block, j)]);
    if (std::isnan(a)) return a;
    amax = std::max(amax, a);
  }
  return amax;
}

namespace {

void CheckShape(const BlockSpec& spec, const BlockShape& shape) {
  const std::string problem = shape.Problem();
  if (!problem.empty()) throw std::invalid_argument(problem);
  if (shape.block_size != spec.block_size) {
    throw std::invalid_argument(
        fmt::format("{} takes blocks of {}, not {}", spec.name, spec.block_size, shape.block_size));
  }
}

// One block quantized under a scale byte already chosen: the element codes
// of x / 2^X (exact in double: X in [-127, 127] keeps every binary32 x times
// 2^-X inside double's normal range).
void MxElements(const BlockSpec& spec, const CastPolicy& policy, const float* block, int n,
                uint8_t byte, uint8_t* codes) {
  CastPolicy cast = policy;
  cast.subnormals = policy.subnormals == CastSubnormals::kFlushInput ? CastSubnormals::kKept
                                                                     : policy.subnormals;
  for (int j = 0; j < n; ++j) {
    const double scaled = byte == kE8M0Nan ? std::nan("") : std::ldexp(block[j], 127 - byte);
    codes[j] = static_cast<uint8_t>(CastCode(kBinary32, *spec.element, scaled, cast));
  }
}

// A block's values as the model reads them: a flush_input policy flushes
// binary32 subnormals first.
void ReadBlock(const float* values, const BlockShape& shape, size_t block,
               const CastPolicy& policy, float* out) {
  for (int j = 0; j < shape.block_size; ++j) {
    float x = values[shape.ElementIndex(block, j)];
    if (policy.subnormals == CastSubnormals::kFlushInput && Binary32Subnormal(x)) {
      x = std::copysign(0.0f, x);
    }
    out[j] = x;
  }
}

float AmaxOf(const float* block, int n) {
  float amax = 0;
  for (int j = 0; j < n; ++j) {
    const float a = std::fabs(block[j]);
    if (std::isnan(a)) return a;
    amax = std::max(amax, a);
  }
  return amax;
}

}  // namespace

BlockQuantized MxQuantize(const BlockSpec& spec, ScaleRule rule, const CastPolicy& policy,
                          const float* values, const BlockShape& shape) {
  if (spec.tensor_scale) throw std::invalid_argument("MxQuantize: NVFP4 is Nvfp4Quantize's");
  CheckShape(spec, shape);
  BlockQuantized q;
  q.scales.resize(shape.blocks());
  q.codes.resize(shape.rows * shape.cols);
  std::vector<float> block(static_cast<size_t>(shape.block_size));
  std::vector<uint8_t> codes(block.size());
  for (size_t b = 0; b < shape.blocks(); ++b) {
    ReadBlock(values, shape, b, policy, block.data());
    const uint8_t byte = ScaleByte(rule, *spec.element, AmaxOf(block.data(), shape.block_size));
    q.scales[b] = byte;
    MxElements(spec, policy, block.data(), shape.block_size, byte, codes.data());
    for (int j = 0; j < shape.block_size; ++j) q.codes[shape.ElementIndex(b, j)] = codes[j];
  }
  return q;
}

float Nvfp4TensorScale(float tensor_amax) { return tensor_amax / 2688.0f; }

namespace {

// torch.clamp: a NaN stays NaN (std::clamp's comparisons would keep it too,
// but say so).
float ClampKeepingNan(float x, float lo, float hi) {
  if (std::isnan(x)) return x;
  return std::min(std::max(x, lo), hi);
}

}  // namespace

BlockQuantized Nvfp4Quantize(const CastPolicy& policy, const float* values,
                             const BlockShape& shape, std::optional<float> tensor_scale) {
  CheckShape(kNvfp4, shape);
  const size_t n = shape.rows * shape.cols;
  BlockQuantized q;
  if (tensor_scale.has_value()) {
    q.tensor_scale = *tensor_scale;
  } else {
    float amax = 0;
    for (size_t i = 0; i < n && !std::isnan(amax); ++i) {
      const float a = std::fabs(values[i]);
      amax = std::isnan(a) ? a : std::max(amax, a);
    }
    q.tensor_scale = Nvfp4TensorScale(amax);
  }
  const float ts = q.tensor_scale;
  q.scales.resize(shape.blocks());
  q.codes.resize(n);
  for (size_t b = 0; b < shape.blocks(); ++b) {
    const float block_scale = BlockAmax(values, shape, b) / 6.0f;
    const float scaled = ClampKeepingNan(block_scale / ts, 0x1p-6f, 448.0f);
    // In [2^-6, 448] or NaN: the E4M3 rounding neither underflows nor overflows.
    const double s = RoundToFormat(kFloat8E4M3FN, static_cast<double>(scaled));
    q.scales[b] = static_cast<uint8_t>(EncodeBits(kFloat8E4M3FN, s));
    const float r = (1.0f / ts) / static_cast<float>(s);
    for (int j = 0; j < shape.block_size; ++j) {
      const size_t i = shape.ElementIndex(b, j);
      const float y = ClampKeepingNan(values[i] * r, -6.0f, 6.0f);
      q.codes[i] = static_cast<uint8_t>(CastCode(kBinary32, kFloat4E2M1FN, y, policy));
    }
  }
  return q;
}

std::vector<double> BlockDequantize(const BlockSpec& spec, const BlockQuantized& q,
                                    const BlockShape& shape) {
  CheckShape(spec, shape);
  std::vector<double> out(shape.rows * shape.cols);
  for (size_t b = 0; b < shape.blocks(); ++b) {
    double scale;
    if (spec.tensor_scale) {
      // Exact: 2 + 4 + 24 significant bits.
      scale = DecodeBits(*spec.scale, q.scales[b]) * static_cast<double>(q.tensor_scale);
    } else {
      scale = q.scales[b] == kE8M0Nan ? std::nan("") : std::ldexp(1.0, q.scales[b] - 127);
    }
    for (int j = 0; j < shape.block_size; ++j) {
      const size_t i = shape.ElementIndex(b, j);
      out[i] = DecodeBits(*spec.element, q.codes[i]) * scale;
    }
  }
  return out;
}

std::string BlockModel::Name() const {
  return fmt::format("{}/{}", ScaleRuleName(rule), policy.Name());
}

BlockNaming NameScaleRules(const BlockSpec& spec, const float* values, const BlockShape& shape,
                           const std::vector<uint8_t>& scales,
                           const std::vector<uint8_t>& codes) {
  if (spec.tensor_scale) throw std::invalid_argument("NameScaleRules: MX specs only");
  CheckShape(spec, shape);
  const size_t blocks = shape.blocks();
  if (scales.size() != blocks || codes.size() != shape.rows * shape.cols) {
    throw std::invalid_argument("NameScaleRules: outputs of another shape");
  }
  const int bs = shape.block_size;
  BlockNaming naming;
  bool have_nearest = false;
  std::vector<float> block(static_cast<size_t>(bs));
  std::vector<uint8_t> model_codes(block.size());
  for (ScaleRule rule : kScaleRules) {
    for (const CastPolicy& policy : CastPolicies(kBinary32, *spec.element)) {
      BlockModelFit fit{{rule, policy}, 0, std::nullopt, ""};
      for (size_t b = 0; b < blocks; ++b) {
        ReadBlock(values, shape, b, policy, block.data());
        const uint8_t byte = ScaleByte(rule, *spec.element, AmaxOf(block.data(), bs));
        std::string why;
        if (byte != scales[b]) {
          why = fmt::format("block {}: scale 0x{:02x}, the rule gives 0x{:02x}", b, scales[b],
                            byte);
        } else {
          MxElements(spec, policy, block.data(), bs, byte, model_codes.data());
          for (int j = 0; j < bs && why.empty(); ++j) {
            const size_t i = shape.ElementIndex(b, j);
            if (codes[i] != model_codes[static_cast<size_t>(j)]) {
              why = fmt::format("block {} element {} (x = {:a}): code 0x{:02x}, the model gives "
                                "0x{:02x}",
                                b, i, values[i], codes[i], model_codes[static_cast<size_t>(j)]);
            }
          }
        }
        if (why.empty()) {
          ++fit.blocks_matched;
        } else if (!fit.first_broken_block.has_value()) {
          fit.first_broken_block = b;
          fit.why = why;
        }
      }
      if (!fit.first_broken_block.has_value()) naming.exact.push_back(fit.model);
      const bool better = !have_nearest || fit.blocks_matched > naming.nearest.blocks_matched;
      if (better) {
        naming.nearest = fit;
        have_nearest = true;
      }
    }
  }
  return naming;
}

}  // namespace ulpgate
