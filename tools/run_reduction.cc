// ulpgate run for the linear-layer and MSE ops: a table per (variant, target)
// with ULP error and bound fraction, their histograms, the worst elements, the
// JSON report and the dump.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <map>

#include "kernels/reductions/reduction_spec.h"
#include "kernels/registry.h"
#include "oracles/float_text.h"
#include "suites/reports/dump.h"
#include "suites/engine/eigen_peer.h"
#include "suites/engine/kernel_names.h"
#include "suites/engine/plugins.h"
#include "suites/engine/op_table.h"
#include "suites/engine/reduction_cases.h"
#include "suites/engine/reduction_oracle.h"
#include "suites/inputs/block_operands.h"
#include "suites/inputs/reduction_suites.h"
#include "suites/reports/number_text.h"
#include "suites/reports/report.h"
#include "tools/cli.h"
#include "tools/run_args.h"
#include "tools/text_table.h"

namespace ulpgate {
namespace {

std::string Number(double e) { return FormatUlp(e); }  // never below its value

std::string PowerOfTwo(double x) {
  if (x == 0.5) return "0.5";
  if (x == 0) return "0";
  if (x >= 1024 || x < 0.5) return fmt::format("2^{}", static_cast<int>(std::log2(x)));
  return fmt::format("{}", x);
}

std::string BinLabel(const std::vector<double>& bounds, size_t i, const char* name) {
  if (i == 0) return fmt::format("{} = 0", name);
  if (i == bounds.size()) return fmt::format("{} > {}", name, PowerOfTwo(bounds.back()));
  return fmt::format("({}, {}]", PowerOfTwo(bounds[i - 1]), PowerOfTwo(bounds[i]));
}

// One histogram table, targets as columns, rows up to the last non-empty bin.
template <class GetCounts>
void PrintHistogram(const std::vector<const CaseResult*>& cases,
                    const std::vector<double>& bounds, const char* name, GetCounts counts,
                    const std::string& extra_label,
                    const std::function<uint64_t(const CaseResult&)>& extra) {
  std::vector<std::string> header = {"bin"};
  for (const auto* r : cases) {
    header.push_back(r->kind == CaseKind::kModel ? r->target + "(model)" : r->target);
  }
  TextTable table(header);
  table.SetLeftAligned({0});
  const size_t bins = bounds.size() + 1;
  size_t last = 0;
  for (const auto* r : cases) {
    for (size_t i = 0; i < bins; ++i) {
      if (counts(*r)[i] != 0) last = std::max(last, i);
    }
  }
  for (size_t i = 0; i <= last; ++i) {
    std::vector<std::string> row = {BinLabel(bounds, i, name)};
    for (const auto* r : cases) row.push_back(std::to_string(counts(*r)[i]));
    table.AddRow(row);
  }
  std::vector<std::string> row = {extra_label};
  for (const auto* r : cases) row.push_back(std::to_string(extra(*r)));
  table.AddRow(row);
  table.Print(std::cout, "  ");
}

std::string ReproduceCommand(const ReductionInputSet& inputs, const CaseResult& r,
                             uint64_t instance) {
  const std::string dtype = r.dtype == "f32" ? "" : " --dtype " + r.dtype;
  // A plugin's or an IUT's kernel: named NAME@TARGET, with the --plugin or
  // --iut that loads it.
  if (const LoadedPlugin* plugin = FindPlugin(r.target)) {
    return fmt::format(
        "ulpgate run --op {}{} --variant {}@{} {} --suite {} --seed {} --shape {} --instance {}{} --dump -",
        r.op, dtype, r.variant, r.target, plugin->Argument(), inputs.source, inputs.seed,
        ShapeText(*inputs.op, inputs.shape), instance,
        inputs.operands.empty() ? "" : " --operands " + inputs.operands);
  }
  return fmt::format(
      "ulpgate run --op {}{} --variant {} --target {} --suite {} --seed {} --shape {} "
      "--instance {}{}{} --dump -",
      r.op, dtype, r.variant, r.kind == CaseKind::kPeer ? std::string("all") : r.target,
      inputs.source, inputs.seed, ShapeText(*inputs.op, inputs.shape), instance,
      inputs.operands.empty() ? "" : " --operands " + inputs.operands,
      r.kind == CaseKind::kModel ? " --emulate-unsupported" : "");
}

// The element behind a statistic: where it is, what the case gave, the exact
// value and both error measures.
void PrintElement(const char* what, const ReductionInputSet& inputs,
                  const ReductionRun& run, size_t case_index, uint64_t global) {
  const CaseResult& r = run.cases[case_index];
  const size_t per_instance = inputs.outputs_per_instance();
  const size_t i = global / per_instance, e = global % per_instance;
  const ReductionInstance& instance = inputs.instances[i];
  const ElementExact exact =
      ReductionExact(*inputs.op, GatherElementTerms(*inputs.op, inputs.shape, instance, e));
  const float y = run.outputs[i][case_index][e];
  const FloatFormat& format = *inputs.format;
  const UlpError ulp =
      MeasureUlpErrorOfQuotient(exact.numerator.get(), exact.denominator, y, format);
  const BoundFraction bound =
      MeasureBoundFraction(exact.numerator.get(), exact.denominator, y, exact.bound, format);
  std::cout << "  ";
  PrintWrapped(std::cout,
               fmt::format("{}: {}{} on {}, instance {} {}: output {} ({}), exact {}", what,
                           r.variant, r.kind == CaseKind::kPeer ? " (Eigen peer)" : "", r.target,
                           instance.index, ElementName(*inputs.op, inputs.shape, e), HexFloat(y),
                           format.bits == 32 ? BitsHex(y)
                                             : BitsText(format, EncodeBits(format, y)),
                           ExactValue(exact).ToDecimal(17)),
               9, 2);
  std::cout << fmt::format(
      "         ULP error {}{}, bound fraction {}{} (gamma_{} = {:.3e})\n"
      "  reproduce: {}\n",
      Number(ulp.ulp),
      ulp.special_mismatch ? " (special mismatch)" : "", Number(bound.fraction),
      bound.overflow_exempt ? " (overflow: bound does not apply)" : "", exact.bound.roundings,
      Gamma(exact.bound.roundings),
      WrappedCommand(ReproduceCommand(inputs, r, instance.index), 13, 6));
}

void PrintText(const RunArgs& args, const ReductionRun& run, const ReductionInputSet& inputs,
               const std::vector<std::string>& skipped, bool quiet) {
  const ReductionOpInfo& op = *inputs.op;
  PrintWrapped(
      std::cout,
      fmt::format("{}{} on {} (seed {}, shape {}, {} instance{}, {} outputs each)", op.name,
                  inputs.format->bits == 32 ? "" : std::string(" in ") + inputs.format->name,
                  inputs.source, inputs.seed, ShapeText(*inputs.op, inputs.shape),
                  inputs.instances.size(), inputs.instances.size() == 1 ? "" : "s",
                  inputs.outputs_per_instance()),
      2);
  std::cout << "  ";
  PrintWrapped(std::cout, std::string(op.definition), 4, 2);
  if (!skipped.empty()) {
    PrintWrapped(std::cout,
                 (args.emulate_unsupported
                      ? std::string("not runnable here, their expected models reported as kind "
                                    "'model': ")
                      : std::string("skipped (compiled, not runnable here): ")) +
                     DescribeSkipped(skipped),
                 2);
  }
  std::cout << '\n';
  // Two tables, so that each fits the width: the errors, then the models. The
  // kind of a case that is not a kernel follows its target: "AVX3 (model)".
  auto target_of = [](const CaseResult& r) {
    return r.kind == CaseKind::kKernel ? r.target
                                       : r.target + " (" + CaseKindName(r.kind) + ")";
  };
  TextTable summary({"variant", "target", "max_ulp", "mean_ulp", "p99", "max_bound", "bound>1",
                     "ovf_exempt", "special", "signed_zero"});
  summary.SetLeftAligned({0, 1});
  TextTable models({"variant", "target", "model", "expected", "mismatches"});
  models.SetLeftAligned({0, 1, 2, 3});
  for (const CaseResult& r : run.cases) {
    const ErrorStatistics& s = r.stats;
    const bool peer = r.kind == CaseKind::kPeer;
    const std::string model = r.conformance.model();
    if (r.fault) {
      // A faulted case measured nothing: its row names the fault only.
      summary.AddRow({r.variant, target_of(r), KernelFaultName(r.fault->kind), "-", "-", "-", "-", "-",
                      "-", "-"});
      models.AddRow({r.variant, target_of(r), r.fault->detail, "-", "-"});
      continue;
    }
    if (!peer && r.conformance.expected_model.empty()) {
      // A plugin's or an IUT's kernel that claims no model: measured only.
      summary.AddRow({r.variant, target_of(r), Number(s.max_ulp()), Number(s.mean_ulp()),
                      Number(s.Percentile(99)), Number(r.bound.max_fraction()),
                      std::to_string(r.bound.above_one()), std::to_string(r.bound.overflow_exempt()),
                      std::to_string(s.special_mismatch()), std::to_string(s.signed_zero_mismatch())});
      models.AddRow({r.variant, target_of(r), model.empty() ? "none" : model, "(none claimed)", "-"});
      continue;
    }
    summary.AddRow({r.variant, target_of(r), Number(s.max_ulp()), Number(s.mean_ulp()),
                    Number(s.Percentile(99)), Number(r.bound.max_fraction()),
                    std::to_string(r.bound.above_one()), std::to_string(r.bound.overflow_exempt()),
                    std::to_string(s.special_mismatch()),
                    std::to_string(s.signed_zero_mismatch())});
    models.AddRow({r.variant, target_of(r), peer ? "-" : (model.empty() ? "none" : model),
                   peer ? "-" : r.conformance.expected_model,
                   peer ? "-" : std::to_string(r.conformance.mismatches)});
  }
  summary.Print(std::cout);
  std::cout << '\n';
  models.Print(std::cout);
  if (run.cases.size() > 0 && run.cases.back().kind == CaseKind::kPeer) {
    std::cout << "peer: " << EigenPeerDescription()
              << ", no bit-exact model: statistics only, not gated\n";
  }
  // Bugs are said as such, whatever --quiet says.
  for (size_t c = 0; c < run.cases.size(); ++c) {
    const CaseResult& r = run.cases[c];
    if (r.fault) {
      const uint64_t per_instance = inputs.outputs_per_instance();
      const size_t instance = static_cast<size_t>(r.fault->first) / per_instance;
      std::cout << '\n';
      PrintWrapped(std::cout,
                   fmt::format("{}: {} {} ({}) on {}: {} on instance {}; the case was not measured",
                               KernelFaultName(r.fault->kind), r.op, r.variant, r.dtype, r.target,
                               r.fault->detail, inputs.instances[instance].index),
                   2, 0);
      std::cout << "  reproduce: "
                << WrappedCommand(ReproduceCommand(inputs, r, inputs.instances[instance].index), 13, 6)
                << '\n';
      continue;
    }
    if (r.bound.above_one() > 0) {
      std::cout << fmt::format("\n{}: {} {} output(s) of {} on {} break the classical error bound "
                               "(bound fraction > 1)\n",
                               r.kind == CaseKind::kPeer ? "PEER BREAKS THE BOUND" : "BUG",
                               r.bound.above_one(), r.variant, r.op, r.target);
      PrintElement("first", inputs, run, c, r.bound.first_above_one_index());
    }
    if (r.kind == CaseKind::kKernel && r.conformance.mismatches > 0) {
      std::cout << fmt::format("\nNOT CONFORMING: {} on {}: {} output(s) differ from model {}\n",
                               r.variant, r.target, r.conformance.mismatches,
                               r.conformance.expected_model);
      PrintElement("first", inputs, run, c, r.conformance.first_mismatch_index);
    }
  }
  if (quiet) return;

  std::map<std::string, std::vector<size_t>> by_variant;
  std::vector<std::string> order;
  for (size_t c = 0; c < run.cases.size(); ++c) {
    if (run.cases[c].fault) continue;  // nothing measured to draw
    if (by_variant[run.cases[c].variant].empty()) order.push_back(run.cases[c].variant);
    by_variant[run.cases[c].variant].push_back(c);
  }
  for (const std::string& variant : order) {
    std::vector<const CaseResult*> cases;
    for (size_t c : by_variant[variant]) cases.push_back(&run.cases[c]);
    std::cout << "\nhistogram of ULP error e, " << variant << " (outputs per bin)\n";
    PrintHistogram(
        cases, cases.front()->stats.bounds(), "e",
        [](const CaseResult& r) { return r.stats.counts(); }, "special mismatch",
        [](const CaseResult& r) { return r.stats.special_mismatch(); });
    std::cout << "histogram of bound fraction f = |y - x| / (gamma_m A + U), " << variant << '\n';
    PrintHistogram(
        cases, cases.front()->bound.bounds(), "f",
        [](const CaseResult& r) { return r.bound.counts(); }, "overflow (exempt)",
        [](const CaseResult& r) { return r.bound.overflow_exempt(); });
    size_t worst = by_variant[variant].front();
    for (size_t c : by_variant[variant]) {
      if (run.cases[c].stats.max_ulp() > run.cases[worst].stats.max_ulp()) worst = c;
    }
    if (run.cases[worst].stats.max_index() >= 0) {
      PrintElement("worst ULP", inputs, run, worst, run.cases[worst].stats.max_index());
    }
    size_t widest = by_variant[variant].front();
    for (size_t c : by_variant[variant]) {
      if (run.cases[c].bound.max_fraction() > run.cases[widest].bound.max_fraction()) widest = c;
    }
    if (run.cases[widest].bound.max_index() >= 0 &&
        run.cases[widest].bound.max_index() != run.cases[worst].stats.max_index()) {
      PrintElement("largest bound fraction", inputs, run, widest,
                   run.cases[widest].bound.max_index());
    }
  }
}

}  // namespace

void RunReductionCommand(const RunArgs& args) {
  const ReductionOpInfo& op = *FindReductionOp(args.kernel);
  if (!args.inputs_path.empty()) {
    throw UsageError("--inputs is for the elementwise ops; " + std::string(op.name) +
                     " takes --suite and --shape");
  }
  const std::string suite = args.suite.empty() ? "cancellation" : args.suite;
  const SuiteInfo* info = nullptr;
  for (const auto& s : ReductionSuites()) {
    if (s.name == suite) info = &s;
  }
  if (!info) {
    throw UsageError("unknown suite '" + suite + "' for " + std::string(op.name) +
                     " (well_conditioned, cancellation, training, adversarial, exact)");
  }
  const ReductionShape shape = RunShape(op, args.shape);
  const FloatFormat& format = *FindFormat(args.dtype);  // checked by the caller
  ReductionInputSet inputs;
  if (args.instance >= 0) {
    inputs.op = &op;
    inputs.format = &format;
    inputs.shape = shape;
    inputs.source = suite;
    inputs.seed = args.seed;
    inputs.instances.push_back(GenerateReductionInstance(
        op, shape, suite, args.seed, static_cast<uint64_t>(args.instance), format));
  } else {
    const uint64_t instances = args.n ? args.n : info->default_n;
    if (instances > kMaxInstances) {
      throw UsageError(fmt::format("--n: expected the number of instances of {}: a whole number "
                                   "from 1 to {} = 2^20, got {}",
                                   op.name, kMaxInstances, instances));
    }
    // Every instance holds its operands: keep them within 2^28 floats (1 GiB).
    size_t floats_per_instance = 0;
    const ReductionInstance one = GenerateReductionInstance(op, shape, suite, args.seed, 0);
    for (const auto& operand : one.operands) floats_per_instance += operand.size();
    if (instances * floats_per_instance > (uint64_t{1} << 28)) {
      throw UsageError(fmt::format(
          "--n {} with shape {}: {} instances of {} floats exceed 2^28 floats (1 GiB); use fewer "
          "instances or a smaller shape",
          instances, ShapeText(op, shape), instances, floats_per_instance));
    }
    inputs = GenerateReductionSuite(op, shape, suite, args.seed, instances, format);
  }
  if (!args.operands.empty()) {
    const BlockOperands block = ParseBlockOperands(args.operands);
    QuantizeOperands(block, &inputs);
    std::cout << fmt::format(
        "operands block-quantized as {} (elements {}) along the reduced dimension, then "
        "dequantized: the products are those of the block-scaled operands\n",
        block.Name(), block.elements.Name());
  }

  ReductionRunOptions options;
  // Plugins' and IUTs' kernels of the op (plugin ABI version 4, protocol
  // version 3): named as every command names kernels (kernel_names.h).
  const std::vector<const TargetInfo*> plugin_targets = LoadPlugins(args.plugins);
  RequirePluginOp(plugin_targets, op.name);
  std::vector<std::string> names;
  if (!plugin_targets.empty()) {
    bool builtin = true;
    names = ResolveKernelNames(op.name, format, args.variant, plugin_targets, &builtin);
    bool names_builtin = names.empty();
    std::vector<std::string> builtin_names;
    for (const std::string& name : names) {
      const KernelName k = ParseKernelName(name);
      if (FindPlugin(k.target) != nullptr) continue;
      if (FindPlugin(k.variant) == nullptr && (ReductionVariantIndex(op, k.variant) >= 0 || k.variant == kEigenPeerVariant)) {
        builtin_names.push_back(k.variant);
        names_builtin = true;
      }
    }
    options.builtin = builtin && names_builtin;
    options.variants = builtin_names;
    for (const TargetInfo* t : plugin_targets) {
      const LoadedPlugin* p = PluginOf(*t);
      for (const PluginKernel& k : p->kernels) {
        if (k.op != op.name || k.format != &format || !k.reduce) continue;
        if (!names.empty() && !KernelSelected(names, k.variant, p->target.name)) continue;
        options.external.push_back({k.variant, &p->target, k.reduction_model, k.reduce});
      }
    }
  } else if (args.variant == "none") {
    throw UsageError("--variant none runs only plugins: give --plugin or --iut");
  } else {
    options.variants = SplitList(args.variant);
  }
  for (const auto& v : plugin_targets.empty() ? options.variants : std::vector<std::string>{}) {
    const bool has_peer = !PeerVariants(op.name, format.name).empty();
    const bool peer = has_peer && v == kEigenPeerVariant;
    if (!peer && ReductionVariantIndex(op, v) < 0) {
      std::string known;
      for (const auto& variant : op.variants) known += std::string(variant.name) + ", ";
      if (has_peer) known += std::string(kEigenPeerVariant) + ", ";
      throw UsageError("unknown variant '" + v + "' for " + std::string(op.name) + " (" + known +
                       "all)");
    }
  }
  std::vector<std::string> skipped;
  if (options.builtin) options.targets = ResolveTargets(args.target, &skipped);
  if (!options.builtin) options.variants.clear();
  options.emulate_unsupported = args.emulate_unsupported;
  options.threads = args.threads;
  options.keep_details = !args.dump_path.empty();
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  if (tty) {
    options.progress = [](uint64_t done, uint64_t total) {
      std::cerr << fmt::format("\r  {} / {} outputs ({:.0f}%)", done, total, 100.0 * done / total)
                << std::flush;
    };
  }
  const auto start = std::chrono::steady_clock::now();
  const ReductionRun run = RunReduction(inputs, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (tty) std::cerr << '\r' << std::string(60, ' ') << '\r';

  std::vector<nlohmann::ordered_json> records;
  for (const CaseResult& r : run.cases) {
    records.push_back(CaseJson(r, inputs));
    if (r.fault) {
      const size_t instance = static_cast<size_t>(r.fault->first) / inputs.outputs_per_instance();
      records.back()["fault"]["replay"] = ReproduceCommand(inputs, r, inputs.instances[instance].index);
    }
  }
  FinishRun(
      args, records,
      [&] {
        PrintText(args, run, inputs, skipped, args.quiet);
        std::cerr << fmt::format(
            "ran {} instance(s) x {} outputs x {} (variant, target) cases in {:.2f} s\n",
            inputs.instances.size(), inputs.outputs_per_instance(), run.cases.size(), seconds);
      },
      [&](std::ostream& out) { WriteReductionDump(out, inputs, run); });
}

}  // namespace ulpgate
