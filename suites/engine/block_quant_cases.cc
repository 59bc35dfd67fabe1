#include "suites/engine/block_quant_cases.h"

#include <fmt/format.h>

#include <cmath>
#include <random>

#include "kernels/block_quant.h"
#include "oracles/float_text.h"
#include "oracles/format.h"
#include "suites/inputs/inputs.h"

namespace ulpgate {

std::vector<std::string> BlockQuantSpecNames(const std::string& op) {
  std::vector<std::string> names;
  for (const BlockSpec* s : BlockSpecs()) {
    if (s->tensor_scale == (op == kNvfp4QuantizeOp)) names.emplace_back(s->name);
  }
  return names;
}

std::vector<std::string> BlockQuantVariants(const BlockSpec& spec) {
  if (spec.tensor_scale) return {kNvfp4Variant};
  std::vector<std::string> rules;
  for (ScaleRule r : kScaleRules) rules.emplace_back(ScaleRuleName(r));
  return rules;
}

std::vector<float> SeededBlockTensor(const BlockSpec& spec, const BlockShape& shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-40, 40);
  const float m = static_cast<float>(LargestFinite(*spec.element));
  std::vector<float> t(shape.rows * shape.cols);
  for (size_t b = 0; b < shape.blocks(); ++b) {
    float amax = std::ldexp(1.0f + std::fabs(unit(rng)), exponent(rng));
    if (b % 3 == 0) {
      amax = std::ldexp(m, exponent(rng));
      if (b % 2 == 0) amax = std::nextafter(amax, HUGE_VALF);
    }
    const int at = static_cast<int>(rng() % static_cast<uint64_t>(shape.block_size));
    for (int j = 0; j < shape.block_size; ++j) {
      // Every fifth element k/16 of the amax: halfway cases of the element
      // grid once scaled, which tell the roundings to nearest apart.
      const float v = j % 5 == 1 ? amax * static_cast<float>(rng() % 16) / 16.0f : amax * unit(rng);
      t[shape.ElementIndex(b, j)] = j == at ? amax : v;
    }
  }
  return t;
}

BlockQuantized BlockQuantModel(const BlockSpec& spec, const std::string& variant, const float* t,
                               const BlockShape& shape) {
  if (spec.tensor_scale) return Nvfp4Quantize(CastPolicy{}, t, shape);
  const std::optional<ScaleRule> rule = ParseScaleRule(variant);
  if (!rule) throw InputError(fmt::format("unknown scale rule '{}' of {}", variant, spec.name));
  return MxQuantize(spec, *rule, CastPolicy{}, t, shape);
}

std::optional<BlockQuantized> RunBlockQuantKernel(const BlockSpec& spec, const std::string& variant,
                                                  const float* t, const BlockShape& shape,
                                                  const TargetInfo& target, float tensor_scale) {
  const BlockQuantKernels* k = FindBlockQuantKernels(target.bits);
  if (k == nullptr) return std::nullopt;
  BlockQuantized q;
  q.scales.resize(shape.blocks());
  q.codes.resize(shape.rows * shape.cols);
  q.tensor_scale = tensor_scale;
  if (spec.tensor_scale) {
    k->nvfp4_quantize(t, shape.rows, shape.cols, shape.axis, tensor_scale, q.scales.data(),
                      q.codes.data());
  } else {
    k->mx_quantize(*ParseScaleRule(variant), spec, t, shape.rows, shape.cols, shape.axis,
                   q.scales.data(), q.codes.data());
  }
  return q;
}

BlockDifference CompareBlockOutputs(const BlockShape& shape, const float* t,
                                    const BlockQuantized& want, const std::vector<uint8_t>& scales,
                                    const std::vector<uint8_t>& codes) {
  BlockDifference d;
  for (size_t b = 0; b < shape.blocks(); ++b) {
    std::string why;
    uint64_t output = 0;
    if (scales[b] != want.scales[b]) {
      why = fmt::format("block {} (amax {}): scale 0x{:02x}, the model's 0x{:02x}", b,
                        HexFloat(BlockAmax(t, shape, b)), scales[b], want.scales[b]);
      output = b;
    } else {
      for (int j = 0; j < shape.block_size && why.empty(); ++j) {
        const size_t i = shape.ElementIndex(b, j);
        if (codes[i] != want.codes[i]) {
          why = fmt::format("block {} element {} (x = {}): code 0x{:02x}, the model's 0x{:02x}", b,
                            i, HexFloat(t[i]), codes[i], want.codes[i]);
          output = shape.blocks() + i;
        }
      }
    }
    if (why.empty()) continue;
    if (d.blocks++ == 0) {
      d.first = why;
      d.first_output = output;
    }
  }
  return d;
}

}  // namespace ulpgate
