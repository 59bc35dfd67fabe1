// ulpgate blockquant: MX and NVFP4 block quantization. Without --check, the
// kernels of every runnable target quantize a seeded tensor and are held to
// the model bit for bit (--out saves the best target's outputs); with
// --check FILE.npz (arrays x, scales, codes, and tensor_scale for NVFP4),
// outputs made elsewhere are named by the (scale rule, element policy) pairs
// that reproduce them, and their element errors measured in the element
// format's ULPs and as a fraction of the block's bound.
#include "tools/cmd_blockquant.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/block_quant.h"
#include "kernels/registry.h"
#include "oracles/block_scale.h"
#include "oracles/float_text.h"
#include "oracles/format.h"
#include "suites/inputs/inputs.h"
#include "suites/inputs/numpy_files.h"
#include "tools/cli.h"
#include "tools/text_table.h"

namespace ulpgate {
namespace {

struct BlockQuantArgs {
  std::string spec = "mxfp8_e4m3";
  std::string rule = "ocp_floor";
  std::string axis = "rows";
  uint64_t rows = 64;
  uint64_t cols = 256;
  uint64_t seed = 1;
  std::string targets = "all";
  std::string out;
  std::string check;
};

const BlockSpec& SpecArgument(const std::string& name) {
  const BlockSpec* spec = FindBlockSpec(name);
  if (spec == nullptr) {
    std::string names;
    for (const BlockSpec* s : BlockSpecs())
      names += (names.empty() ? "" : ", ") + std::string(s->name);
    throw UsageError(fmt::format("unknown --spec '{}' (one of {})", name, names));
  }
  return *spec;
}

BlockAxis AxisArgument(const std::string& name) {
  if (name == "rows") return BlockAxis::kRows;
  if (name == "columns") return BlockAxis::kColumns;
  throw UsageError(fmt::format("unknown --axis '{}' (rows or columns)", name));
}

// A seeded tensor whose blocks have amaxes across binary32's range, every
// third one at or next to M 2^k, where the rules part.
std::vector<float> SeededTensor(const BlockSpec& spec, const BlockShape& shape, uint64_t seed) {
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

NumpyArray Array(const std::string& name, const std::string& dtype, std::vector<size_t> shape,
                 const void* data, size_t bytes) {
  NumpyArray a;
  a.name = name;
  a.dtype = dtype;
  a.shape = std::move(shape);
  a.data.resize(bytes);
  std::memcpy(a.data.data(), data, bytes);
  return a;
}

std::vector<size_t> ScaleShape(const BlockShape& s) {
  const size_t bs = static_cast<size_t>(s.block_size);
  return s.axis == BlockAxis::kRows ? std::vector<size_t>{s.rows, s.cols / bs}
                                    : std::vector<size_t>{s.rows / bs, s.cols};
}

// The first block where a kernel's outputs leave the model's, or "".
std::string FirstDifference(const BlockShape& shape, const std::vector<float>& t,
                            const BlockQuantized& want, const std::vector<uint8_t>& scales,
                            const std::vector<uint8_t>& codes) {
  for (size_t b = 0; b < shape.blocks(); ++b) {
    if (scales[b] != want.scales[b]) {
      return fmt::format("block {} (amax {}): scale 0x{:02x}, the model's 0x{:02x}", b,
                         HexFloat(BlockAmax(t.data(), shape, b)), scales[b], want.scales[b]);
    }
    for (int j = 0; j < shape.block_size; ++j) {
      const size_t i = shape.ElementIndex(b, j);
      if (codes[i] != want.codes[i]) {
        return fmt::format("block {} element {} (x = {}): code 0x{:02x}, the model's 0x{:02x}", b,
                           i, HexFloat(t[i]), codes[i], want.codes[i]);
      }
    }
  }
  return "";
}

void RunKernels(const BlockQuantArgs& args, const BlockSpec& spec, const BlockShape& shape) {
  const std::optional<ScaleRule> rule = ParseScaleRule(args.rule);
  if (!spec.tensor_scale && !rule) {
    throw UsageError(
        fmt::format("unknown --rule '{}' (ocp_floor, ceil, even, rceil, reciprocal)", args.rule));
  }
  const std::vector<float> t = SeededTensor(spec, shape, args.seed);
  const BlockQuantized want = spec.tensor_scale
                                  ? Nvfp4Quantize(CastPolicy{}, t.data(), shape)
                                  : MxQuantize(spec, *rule, CastPolicy{}, t.data(), shape);
  const std::string model = spec.tensor_scale ? "torchao's nvfp4_quantize, nearest_even.saturate"
                                              : BlockModel{*rule, CastPolicy{}}.Name();
  PrintWrapped(std::cout,
               fmt::format("{}: {} x {} blocked along {} ({} blocks of {}), seed {}; model {}",
                           spec.name, shape.rows, shape.cols, args.axis, shape.blocks(),
                           shape.block_size, args.seed, model),
               2);
  std::vector<std::string> skipped;
  const std::vector<const TargetInfo*> targets = ResolveTargets(args.targets, &skipped);
  BlockQuantized last;
  for (const TargetInfo* target : targets) {
    const BlockQuantKernels* k = FindBlockQuantKernels(target->bits);
    if (k == nullptr) continue;
    std::vector<uint8_t> scales(shape.blocks()), codes(t.size());
    if (spec.tensor_scale) {
      k->nvfp4_quantize(t.data(), shape.rows, shape.cols, shape.axis, want.tensor_scale,
                        scales.data(), codes.data());
    } else {
      k->mx_quantize(*rule, spec, t.data(), shape.rows, shape.cols, shape.axis, scales.data(),
                     codes.data());
    }
    const std::string difference = FirstDifference(shape, t, want, scales, codes);
    std::cout << fmt::format(
        "  {:<8} {}\n", target->name,
        difference.empty() ? "follows the model bit for bit" : "leaves the model: " + difference);
    if (!difference.empty()) ExitStatus() = 1;
    last = {scales, codes, want.tensor_scale};
  }
  if (!skipped.empty()) std::cout << "  skipped: " << DescribeSkipped(skipped) << '\n';
  if (!args.out.empty() && !targets.empty()) {
    std::vector<NumpyArray> arrays = {
        Array("x", "<f4", {shape.rows, shape.cols}, t.data(), t.size() * sizeof(float)),
        Array("scales", "|u1", ScaleShape(shape), last.scales.data(), last.scales.size()),
        Array("codes", "|u1", {shape.rows, shape.cols}, last.codes.data(), last.codes.size())};
    if (spec.tensor_scale) {
      arrays.push_back(Array("tensor_scale", "<f4", {1}, &last.tensor_scale, sizeof(float)));
    }
    WriteNumpyArrays(args.out, arrays);
    std::cout << fmt::format("wrote {}'s outputs (x, scales, codes{}) to {}\n",
                             targets.back()->name, spec.tensor_scale ? ", tensor_scale" : "",
                             args.out);
  }
}

const NumpyArray& Member(const std::vector<NumpyArray>& arrays, const std::string& name,
                         const std::string& dtype, const std::string& path) {
  for (const NumpyArray& a : arrays) {
    if (a.name != name) continue;
    if (a.dtype != dtype) {
      throw InputError(
          fmt::format("{}: array '{}' is {}, expected {}", path, name, a.dtype, dtype));
    }
    return a;
  }
  throw InputError(fmt::format("{}: no array '{}'", path, name));
}

// Element errors of MX outputs against their inputs: in ULPs of the element
// format at the scaled input, and as a fraction of the block's bound (half
// the element quantum of the top binade, or the clipping amax 2^-X - M where
// that is larger), both in the scaled domain.
void PrintElementErrors(const BlockSpec& spec, const BlockShape& shape, const std::vector<float>& x,
                        const std::vector<uint8_t>& scales, const std::vector<uint8_t>& codes) {
  const FloatFormat& e = *spec.element;
  const double largest = LargestFinite(e);
  const double top_half_quantum = std::ldexp(1.0, e.emax - e.precision);
  double worst_ulp = 0, worst_fraction = 0;
  size_t worst_ulp_at = 0, worst_fraction_at = 0;
  size_t nan_blocks = 0;
  for (size_t b = 0; b < shape.blocks(); ++b) {
    if (scales[b] == kE8M0Nan) {
      ++nan_blocks;
      continue;
    }
    const int scale_exponent = scales[b] - 127;
    const double amax =
        std::ldexp(static_cast<double>(BlockAmax(x.data(), shape, b)), -scale_exponent);
    const double bound = std::max(top_half_quantum, amax - largest);
    for (int j = 0; j < shape.block_size; ++j) {
      const size_t i = shape.ElementIndex(b, j);
      const double scaled = std::ldexp(static_cast<double>(x[i]), -scale_exponent);
      const double decoded = DecodeBits(e, codes[i]);
      if (std::isnan(decoded)) continue;
      const double error = std::fabs(scaled - decoded);
      const double ulp =
          std::ldexp(1.0, scaled == 0 ? e.emin - e.precision + 1 : QuantumExponent(e, scaled));
      if (error / ulp > worst_ulp) {
        worst_ulp = error / ulp;
        worst_ulp_at = i;
      }
      if (error / bound > worst_fraction) {
        worst_fraction = error / bound;
        worst_fraction_at = i;
      }
    }
  }
  PrintWrapped(
      std::cout,
      fmt::format("element error: max {:.4g} ULP of {} (element {}, x = {}); max {:.4g} of the "
                  "block's bound (element {}, x = {}){}",
                  worst_ulp, e.name, worst_ulp_at, HexFloat(x[worst_ulp_at]), worst_fraction,
                  worst_fraction_at, HexFloat(x[worst_fraction_at]),
                  nan_blocks == 0 ? "" : fmt::format("; {} NaN-scale blocks", nan_blocks)),
      2);
}

void CheckOutputs(const BlockQuantArgs& args, const BlockSpec& spec, BlockShape shape) {
  const std::vector<NumpyArray> arrays = ReadNumpyFile(args.check);
  const NumpyArray& xa = Member(arrays, "x", "<f4", args.check);
  const NumpyArray& sa = Member(arrays, "scales", "|u1", args.check);
  const NumpyArray& ca = Member(arrays, "codes", "|u1", args.check);
  if (xa.shape.size() != 2 || ca.size() != xa.size()) {
    throw InputError(fmt::format("{}: x must be [rows, cols] and codes as many", args.check));
  }
  shape.rows = xa.shape[0];
  shape.cols = xa.shape[1];
  const std::string problem = shape.Problem();
  if (!problem.empty()) throw InputError(fmt::format("{}: {}", args.check, problem));
  if (sa.size() != shape.blocks()) {
    throw InputError(
        fmt::format("{}: {} scales for {} blocks", args.check, sa.size(), shape.blocks()));
  }
  std::vector<float> x(xa.size());
  std::memcpy(x.data(), xa.data.data(), xa.data.size());
  const std::vector<uint8_t> scales(sa.data.begin(), sa.data.end());
  const std::vector<uint8_t> codes(ca.data.begin(), ca.data.end());
  std::cout << fmt::format("{}: {} x {} blocked along {} ({} blocks of {})\n", spec.name,
                           shape.rows, shape.cols, args.axis, shape.blocks(), shape.block_size);
  if (spec.tensor_scale) {
    const NumpyArray& ta = Member(arrays, "tensor_scale", "<f4", args.check);
    float ts;
    std::memcpy(&ts, ta.data.data(), sizeof ts);
    const BlockQuantized want = Nvfp4Quantize(CastPolicy{}, x.data(), shape, ts);
    const std::string difference = FirstDifference(shape, x, want, scales, codes);
    std::cout << (difference.empty()
                      ? "follows torchao's nvfp4_quantize (nearest_even.saturate) bit for bit\n"
                      : "leaves torchao's nvfp4_quantize: " + difference + "\n");
    if (!difference.empty()) ExitStatus() = 1;
    return;
  }
  const BlockNaming naming = NameScaleRules(spec, x.data(), shape, scales, codes);
  if (naming.exact.empty()) {
    PrintWrapped(std::cout,
                 fmt::format("follows no model bit for bit; nearest: {} ({} of {} blocks), first "
                             "broken: {}",
                             naming.nearest.model.Name(), naming.nearest.blocks_matched,
                             shape.blocks(), naming.nearest.why),
                 2);
    ExitStatus() = 1;
  } else {
    std::map<std::string, std::vector<std::string>> by_rule;
    for (const BlockModel& m : naming.exact) {
      by_rule[ScaleRuleName(m.rule)].push_back(m.policy.Name());
    }
    std::string rules;
    for (const auto& [rule, policies] : by_rule) rules += (rules.empty() ? "" : ", ") + rule;
    std::cout << fmt::format("scale rules: {}\n", rules);
    for (const auto& [rule, policies] : by_rule) {
      std::string list;
      for (const std::string& p : policies) list += (list.empty() ? "" : ", ") + p;
      PrintWrapped(std::cout,
                   fmt::format("  {}: {} element policies: {}", rule, policies.size(), list), 4);
    }
  }
  PrintElementErrors(spec, shape, x, scales, codes);
}

}  // namespace

void AddBlockQuantCommand(CLI::App& app) {
  auto args = std::make_shared<BlockQuantArgs>();
  auto* cmd = app.add_subcommand(
      "blockquant",
      "Block quantization (OCP MX, NVFP4): run the kernels against their model, or name the scale "
      "rule and element policy of outputs made elsewhere (--check)");
  cmd->add_option("--spec", args->spec,
                  "mxfp8_e4m3, mxfp8_e5m2, mxfp6_e2m3, mxfp6_e3m2, mxfp4 or nvfp4")
      ->capture_default_str();
  cmd->add_option("--rule", args->rule,
                  "The MX scale rule the kernels run: ocp_floor, ceil, even, rceil, reciprocal")
      ->capture_default_str();
  cmd->add_option("--axis", args->axis, "Blocks along rows or columns")->capture_default_str();
  cmd->add_option("--rows", args->rows, "Rows of the seeded tensor")
      ->check(CountValidator("rows", 1, 1 << 16))
      ->capture_default_str();
  cmd->add_option("--cols", args->cols, "Columns of the seeded tensor")
      ->check(CountValidator("columns", 1, 1 << 16))
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the tensor")->capture_default_str();
  cmd->add_option("--target", args->targets, "Targets: all, or a comma-separated list")
      ->capture_default_str();
  cmd->add_option("--out", args->out,
                  "Write the tensor and the last target's outputs to this .npz (x, scales, codes)");
  cmd->add_option("--check", args->check,
                  "Name the scale rule and element policy of the outputs in this .npz (arrays x "
                  "[rows, cols] float32, scales and codes uint8, tensor_scale for nvfp4)");
  cmd->callback([args] {
    const BlockSpec& spec = SpecArgument(args->spec);
    BlockShape shape{args->rows, args->cols, AxisArgument(args->axis), spec.block_size};
    if (!args->check.empty()) {
      CheckOutputs(*args, spec, shape);
      return;
    }
    const std::string problem = shape.Problem();
    if (!problem.empty()) throw UsageError(problem);
    RunKernels(*args, spec, shape);
  });
}

}  // namespace ulpgate
