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
#include "suites/engine/block_quant_cases.h"
#include "suites/engine/op_table.h"
#include "suites/inputs/inputs.h"
#include "suites/sweep/block_scale_sweep.h"
#include "suites/inputs/numpy_files.h"
#include "tools/cli.h"
#include "tools/text_table.h"

namespace ulpgate {
namespace {

struct BlockQuantArgs {
  std::string require;  // --check: a scale rule the outputs must follow
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
  return CompareBlockOutputs(shape, t.data(), want, scales, codes).first;
}

void RunKernels(const BlockQuantArgs& args, const BlockSpec& spec, const BlockShape& shape) {
  const std::optional<ScaleRule> rule = ParseScaleRule(args.rule);
  if (!spec.tensor_scale && !rule) {
    throw UsageError(
        fmt::format("unknown --rule '{}' (ocp_floor, ceil, even, rceil, reciprocal)", args.rule));
  }
  const std::vector<float> t = SeededBlockTensor(spec, shape, args.seed);
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
  if (!args.require.empty() && !ParseScaleRule(args.require)) {
    throw UsageError(fmt::format("--require-model {}: no scale rule (ocp_floor, ceil, even, rceil, "
                                 "reciprocal)", args.require));
  }
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
    if (!args.require.empty() && by_rule.count(args.require) == 0) {
      // Where the required rule's model first breaks.
      const BlockQuantized want = MxQuantize(spec, *ParseScaleRule(args.require), CastPolicy{},
                                             x.data(), shape);
      const BlockDifference d = CompareBlockOutputs(shape, x.data(), want, scales, codes);
      PrintWrapped(std::cout,
                   fmt::format("LEAVES {} (required) in {} of {} blocks, first: {}", args.require,
                               d.blocks, shape.blocks(), d.first),
                   2);
      ExitStatus() = 1;
    }
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

void RunBlockQuantOp(const RunArgs& run) {
  if (!run.inputs_path.empty() || !run.shape.empty() || !run.plugins.empty() ||
      !run.json_path.empty() || !run.save_inputs_path.empty()) {
    throw UsageError(run.kernel + " takes --dtype (the block spec), --variant, --target, --n (rows "
                     "of a [n, 64] tensor), --seed, --suite seeded and --dump F.npz");
  }
  if (!run.suite.empty() && run.suite != kBlockQuantSuite && run.suite != "all") {
    throw UsageError("unknown suite '" + run.suite + "' of " + run.kernel + " (seeded)");
  }
  const BlockSpec& spec = SpecArgument(run.dtype);
  const std::vector<std::string> known = BlockQuantVariants(spec);
  std::vector<std::string> variants = run.variant == "all" ? known : SplitList(run.variant);
  for (const std::string& v : variants) {
    if (std::find(known.begin(), known.end(), v) == known.end()) {
      std::string names;
      for (const std::string& k : known) names += (names.empty() ? "" : ", ") + k;
      throw UsageError(fmt::format("unknown variant '{}' of {} {} ({})", v, run.kernel, spec.name, names));
    }
  }
  if (!run.dump_path.empty() && variants.size() != 1) {
    throw UsageError("--dump writes one variant's outputs: give one --variant");
  }
  BlockShape shape{run.n != 0 ? run.n : 64, kBlockQuantCols, BlockAxis::kRows, spec.block_size};
  const std::string problem = shape.Problem();
  if (!problem.empty()) throw UsageError(problem);
  for (const std::string& v : variants) {
    BlockQuantArgs args;
    args.spec = spec.name;
    args.rule = v;
    args.rows = shape.rows;
    args.cols = shape.cols;
    args.seed = run.seed;
    args.targets = run.target;
    args.out = run.dump_path;
    RunKernels(args, spec, shape);
  }
}

void CheckBlockQuantOp(const std::string& op, const std::string& dtype, const std::string& path,
                       const std::string& require) {
  const BlockSpec& spec = SpecArgument(dtype);
  if (spec.tensor_scale != (op == kNvfp4QuantizeOp)) {
    throw UsageError(fmt::format("--dtype {}: {} quantizes to {}", dtype, op,
                                 BlockQuantSpecNames(op).front()));
  }
  BlockQuantArgs args;
  args.spec = spec.name;
  args.check = path;
  args.require = require;
  CheckOutputs(args, spec, BlockShape{0, 0, BlockAxis::kRows, spec.block_size});
}

void SweepBlockQuantOp(const std::string& op, const std::string& dtype, const std::string& variant,
                       const std::string& target, unsigned threads) {
  if (op == kNvfp4QuantizeOp) {
    throw UsageError("nvfp4_quantize has no scale rule to sweep (its scale is E4M3 of a "
                     "quotient): run it");
  }
  std::vector<std::string> specs = BlockQuantSpecNames(op);
  // f32, bf16, f16 (sweep's default): every MX spec.
  if (FindBlockSpec(dtype) != nullptr) {
    SpecArgument(dtype);
    specs = {dtype};
  } else if (FindFormat(dtype) == nullptr || FindFormat(dtype)->bits < 16) {
    SpecArgument(dtype);  // the error naming the specs
  }
  std::vector<std::string> rules = BlockQuantVariants(kMxfp8E4M3);
  if (variant != "all") {
    rules = SplitList(variant);
    for (const std::string& r : rules) {
      if (!ParseScaleRule(r)) {
        throw UsageError(fmt::format("unknown variant '{}' of {} (ocp_floor, ceil, even, rceil, "
                                     "reciprocal)", r, op));
      }
    }
  }
  std::vector<std::string> skipped;
  const std::vector<const TargetInfo*> targets = ResolveTargets(target, &skipped);
  PrintWrapped(std::cout,
               fmt::format("sweep {}: every non-negative binary32 amax (2^31) through each "
                           "target's scale byte kernel, against the steps derived from each "
                           "rule's definition", op),
               2);
  if (!skipped.empty()) std::cout << "  not run: " << DescribeSkipped(skipped) << "\n";
  double total = 0;
  for (const TargetInfo* t : targets) {
    const BlockQuantKernels* k = FindBlockQuantKernels(t->bits);
    if (k == nullptr || !t->supported) continue;
    for (const std::string& s : specs) {
      const BlockSpec& spec = *FindBlockSpec(s);
      for (const std::string& r : rules) {
        const ScaleByteSweep sweep = SweepScaleBytes(*k, *ParseScaleRule(r), *spec.element, threads);
        total += sweep.seconds;
        std::string verdict = "follows its steps on every amax";
        if (sweep.first) {
          verdict = fmt::format("LEAVES its steps at {} amax, first {} (0x{:08x}): byte 0x{:02x}, "
                                "{} gives 0x{:02x}",
                                sweep.mismatches, HexFloat(FloatFromBits(sweep.first->pattern)),
                                sweep.first->pattern, sweep.first->kernel, r, sweep.first->steps);
          ExitStatus() = 1;
        }
        std::cout << "  ";
        PrintWrapped(std::cout,
                     fmt::format("{} {} on {}: {} steps, {:.2f} s: {}", s, r, t->name, sweep.steps,
                                 sweep.seconds, verdict),
                     4, 2);
      }
    }
  }
  std::cout << fmt::format("  {:.1f} s in all\n", total);
}

void PrintBlockQuantOps(std::ostream& out) {
  out << "\n  block quantizers (run/check/sweep mx_quantize --dtype SPEC --variant RULE; "
         "nvfp4_quantize --dtype nvfp4)\n";
  std::string specs;
  for (const std::string& s : BlockQuantSpecNames(kMxQuantizeOp)) specs += (specs.empty() ? "" : ", ") + s;
  out << "    ";
  PrintWrapped(out, "mx_quantize: OCP MX, blocks of 32 and an E8M0 scale: " + specs, 6, 4);
  out << "      ";
  PrintWrapped(out,
               "rules: ocp_floor (OCP MX v1.0), ceil, even (torchao), rceil (cuBLAS, Blackwell), "
               "reciprocal (torchao's RCEIL fallback)",
               8, 6);
  out << "    ";
  PrintWrapped(out,
               "nvfp4_quantize: NVIDIA's NVFP4, blocks of 16 FP4 and an E4M3 scale, a binary32 "
               "tensor scale; variant torchao (its nvfp4_quantize sequence)",
               6, 4);
}

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
