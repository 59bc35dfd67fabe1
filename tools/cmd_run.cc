// ulpgate run: one op, chosen variants and targets, over a suite or an input
// file; prints a table per (variant, target), the histograms and the worst
// inputs, and writes the JSON report.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <sstream>

#include "kernels/narrow_formats.h"
#include "kernels/registry.h"
#include "oracles/float_text.h"
#include "oracles/format.h"
#include "kernels/reductions/reduction_spec.h"
#include "suites/reports/number_text.h"
#include "suites/reports/dump.h"
#include "suites/engine/kernel_names.h"
#include "suites/engine/plugins.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/op_table.h"
#include "suites/reports/replay.h"
#include "suites/reports/report.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/inputs/check_files.h"
#include "suites/inputs/elementwise_suites.h"
#include "tools/cast_commands.h"
#include "tools/cmd_blockquant.h"
#include "tools/cli.h"
#include "tools/faults.h"
#include "tools/progress.h"
#include "tools/run_args.h"
#include "tools/run_limits.h"
#include "tools/special_causes_text.h"
#include "tools/text_table.h"

namespace ulpgate {
namespace {

// Never printed below its value: 0.5000091 reads "0.5001", not "0.5".
std::string Ulp(double e) { return FormatUlp(e); }

std::string BinLabel(const ErrorStatistics& s, size_t i) {
  const auto& b = s.bounds();
  auto bound = [](double x) {
    if (x == 0.5) return std::string("0.5");
    if (x >= 1024) return fmt::format("2^{}", static_cast<int>(std::log2(x)));
    return fmt::format("{}", x);
  };
  if (i == 0) return "e = 0";
  if (i == b.size()) return "e > " + bound(b.back());
  return fmt::format("({}, {}]", bound(b[i - 1]), bound(b[i]));
}

// A case's target as tables show it: the kind of a case that is not a
// kernel follows it, "AVX3 (model)", so that an emulated row never reads as
// a run of the kernel.
std::string TargetText(const CaseResult& r) {
  return r.kind == CaseKind::kKernel ? r.target : r.target + " (" + CaseKindName(r.kind) + ")";
}

// The command that computes one case's output on one input again
// (suites/reports/replay.h).
std::string ReproduceCommand(const CaseResult& r, const InputSet& inputs, uint64_t index) {
  std::vector<float> operands;
  for (const auto& column : inputs.columns) operands.push_back(column[index]);
  return ReplayInputCommand(ReplayKernelOf(r), inputs.operand_names, operands);
}

// Per variant: one row per binade of the mapped operand; per group of targets
// with bit-identical outputs (hence identical errors), max and mean ULP and the
// share above 1 ULP. The bucket with the largest error is marked.
void PrintErrorMaps(const std::vector<CaseResult>& results, const InputSet& inputs) {
  std::vector<std::string> order;
  for (const CaseResult& r : results) {
    if (std::find(order.begin(), order.end(), r.variant) == order.end()) order.push_back(r.variant);
  }
  for (const std::string& variant : order) {
    std::vector<std::vector<const CaseResult*>> groups;
    for (const CaseResult& r : results) {
      if (r.variant != variant) continue;
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
        return g.front()->output_digest == r.output_digest;
      });
      if (it == groups.end()) {
        groups.push_back({&r});
      } else {
        it->push_back(&r);
      }
    }
    const std::string& operand = groups.front().front()->map_operand;
    std::cout << fmt::format("\nerror map of {} by the binade and sign of {}\n", variant, operand);
    std::vector<std::string> header = {operand + " in", "n"};
    for (const auto& g : groups) {
      std::string targets;
      for (const CaseResult* r : g) targets += (targets.empty() ? "" : ",") + TargetText(*r);
      header.push_back("max " + targets);
      header.push_back("mean");
      header.push_back("> 1 ULP");
    }
    header.push_back("");
    TextTable table(header);
    table.SetLeftAligned({0, header.size() - 1});
    double worst = -1;
    int worst_bucket = 0;
    const CaseResult* worst_case = nullptr;
    for (const auto& g : groups) {
      for (const auto& [bucket, stats] : g.front()->error_map) {
        if (stats.max_index >= 0 && stats.max_ulp > worst) {
          worst = stats.max_ulp;
          worst_bucket = bucket;
          worst_case = g.front();
        }
      }
    }
    for (const auto& [bucket, first] : groups.front().front()->error_map) {
      std::vector<std::string> row = {BinadeLabel(bucket), std::to_string(first.n)};
      for (const auto& g : groups) {
        const BucketStatistics& s = g.front()->error_map.at(bucket);
        row.push_back(Ulp(s.max_ulp));
        row.push_back(Ulp(s.mean_ulp()));
        row.push_back(fmt::format("{:.1f}%", 100.0 * s.above_one_ulp / std::max<uint64_t>(s.n, 1)));
      }
      row.push_back(bucket == worst_bucket && worst > 0 ? "<- max" : "");
      table.AddRow(row);
    }
    table.Print(std::cout, "  ");
    if (worst > 0) {
      const uint64_t i = worst_case->error_map.at(worst_bucket).max_index;
      std::cout << "  ";
      PrintWrapped(std::cout,
                   fmt::format("largest error in {} {}: {} ULP at input #{}; reproduce: {}", operand,
                               BinadeLabel(worst_bucket), Ulp(worst), i,
                               ReproduceCommand(*worst_case, inputs, i)),
                   4, 2);
    }
  }
}

// One input's output from a case's built-in kernel, computed again.
float OneOutput(const CaseResult& r, const FloatFormat& format, const std::vector<float>& x) {
  const ElementwiseKernel kernel =
      FindElementwiseKernel(r.op, format.name, r.variant, FindTarget(r.target)->bits);
  if (std::string_view(format.name) == "f32") {
    std::vector<const void*> in;
    for (const float& v : x) in.push_back(&v);
    float y;
    kernel(in.data(), &y, 1);
    return y;
  }
  std::vector<uint16_t> bits;
  for (const float v : x) bits.push_back(static_cast<uint16_t>(EncodeBits(format, v)));
  std::vector<const void*> in;
  for (const uint16_t& b : bits) in.push_back(&b);
  uint16_t yb;
  kernel(in.data(), &yb, 1);
  return static_cast<float>(DecodeBits(format, yb));
}

// "grad = 0x1p+0 (0x3f80), t = ..." for input i.
std::string OperandsText(const InputSet& inputs, const FloatFormat& format, uint64_t i,
                         bool with_bits) {
  std::string text;
  for (size_t k = 0; k < inputs.columns.size(); ++k) {
    const float v = inputs.columns[k][i];
    text += fmt::format("{}{} = {}", k ? ", " : "", inputs.operand_names[k],
                        with_bits ? HexFloat(v) + " (" + BitsText(format, EncodeBits(format, v)) + ")"
                                  : HexFloat(v));
  }
  return text;
}

// A value and its bit pattern in the run's format: "-0x1.8p+0 (0xbfc0)".
std::string ValueText(const FloatFormat& format, float x) {
  return HexFloat(x) + " (" + BitsText(format, EncodeBits(format, x)) + ")";
}

// One entry per case that does not follow its expected model: how many
// outputs leave it, the first input that does and the command that shows it,
// "off on flaky: 3 of 100000 outputs off fms_unfused; first at input #4242:
// grad = ..., s = ...; reproduce: ulpgate explain ...", within the width.
void PrintOffModel(const std::vector<CaseResult>& results, const InputSet& inputs, const FloatFormat& format) {
  bool first = true;
  for (const CaseResult& r : results) {
    const Conformance& c = r.conformance;
    if (r.fault || c.expected_model.empty() || c.mismatches == 0 || c.first_mismatch_index < 0) continue;
    const uint64_t i = static_cast<uint64_t>(c.first_mismatch_index);
    if (first) std::cout << '\n';
    first = false;
    // "grad = 0x..." stays on one line: its spaces are held (as \x1f) while
    // the text wraps.
    std::string operands = OperandsText(inputs, format, i, false);
    for (size_t at = operands.find(" = "); at != std::string::npos; at = operands.find(" = ", at)) {
      operands.replace(at, 3, "\x1f=\x1f");
    }
    std::ostringstream prose;
    prose << "  ";
    PrintWrapped(prose,
                 fmt::format("{} on {}: {} of {} outputs off {}; first at input #{}: {}; reproduce:", r.variant,
                             TargetText(r), c.mismatches, r.n, c.expected_model, i, operands),
                 4, 2);
    std::string text = prose.str();
    text.pop_back();
    std::replace(text.begin(), text.end(), '\x1f', ' ');
    const size_t newline = text.rfind('\n');
    const size_t column = text.size() - (newline == std::string::npos ? 0 : newline + 1);
    const std::string command = ReproduceCommand(r, inputs, i);
    // The command goes on after "reproduce:" where a good part of it fits.
    if (column + 1 + 40 <= kTextWidth) {
      std::cout << text << ' ' << WrappedCommand(command, column + 1, 6) << '\n';
    } else {
      std::cout << text << "\n    " << WrappedCommand(command, 4, 6) << '\n';
    }
  }
}

void PrintText(const ElementwiseOpInfo& op, const std::vector<CaseResult>& results,
               const InputSet& inputs, const std::vector<std::string>& skipped, bool quiet,
               const FloatFormat& format) {
  PrintWrapped(std::cout,
               fmt::format("{} in {} on {} (seed {}, n {})", op.name, format.name, inputs.source,
                           inputs.seed, inputs.size()),
               2);
  if (!skipped.empty()) {
    PrintWrapped(std::cout, "skipped (compiled, not runnable here): " + DescribeSkipped(skipped), 2);
  }
  std::cout << '\n';
  // The model column names the expected model when the case follows it, and
  // otherwise what it follows instead, so that the table fits 120 columns
  // with the long names of the 16-bit models.
  TextTable summary({"variant", "target", "max_ulp", "mean_ulp", "p99", "correctly_rounded",
                     "special", "signed_zero", "model", "mismatches"});
  summary.SetLeftAligned({0, 1, 8});
  for (const CaseResult& r : results) {
    if (r.fault) {
      summary.AddRow({r.variant, TargetText(r), KernelFaultName(r.fault->kind), "-", "-", "-", "-", "-",
                      r.fault->detail, "-"});
      continue;
    }
    const ErrorStatistics& s = r.stats;
    const std::string model = r.conformance.model();
    const std::string& expected = r.conformance.expected_model;
    const std::string follows =
        model == expected ? model
        : expected.empty()  // a kernel that claims no model (an IUT's may not)
            ? (model.empty() ? std::string("none") : model) + " (none claimed)"
            : (model.empty() ? std::string("none") : model) + " (expected " + expected + ")";
    summary.AddRow({r.variant, TargetText(r), Ulp(s.max_ulp()), Ulp(s.mean_ulp()),
                    Ulp(s.Percentile(99)),
                    fmt::format("{:.2f}%", 100.0 * s.correctly_rounded() / std::max<uint64_t>(s.n(), 1)),
                    std::to_string(s.special_mismatch()), std::to_string(s.signed_zero_mismatch()),
                    follows, std::to_string(r.conformance.mismatches)});
  }
  summary.Print(std::cout);
  if (std::any_of(results.begin(), results.end(),
                  [](const CaseResult& r) { return r.kind == CaseKind::kModel; })) {
    PrintWrapped(std::cout,
                 "(model): this CPU cannot run the target; the row is the variant's expected model, "
                 "computed in the kernel's place (--emulate-unsupported), not a run of the kernel",
                 2, 0);
  }
  for (const CaseResult& r : results) {
    if (!r.fault) continue;
    std::cout << '\n';
    PrintKernelFault(std::cout, r, inputs);
  }
  PrintOffModel(results, inputs, format);
  if (quiet) return;

  // One histogram table per variant, targets as columns.
  std::map<std::string, std::vector<const CaseResult*>> by_variant;
  std::vector<std::string> order;
  for (const CaseResult& r : results) {
    if (by_variant[r.variant].empty()) order.push_back(r.variant);
    by_variant[r.variant].push_back(&r);
  }
  for (const std::string& variant : order) {
    std::vector<const CaseResult*> cases;
    for (const CaseResult* r : by_variant[variant]) {
      if (!r->fault) cases.push_back(r);
    }
    if (cases.empty()) continue;
    std::cout << "\nhistogram of ULP error e, " << variant << " (inputs per bin)\n";
    std::vector<std::string> header = {"bin"};
    for (const CaseResult* r : cases) header.push_back(TargetText(*r));
    TextTable table(header);
    table.SetLeftAligned({0});
    const size_t bins = cases.front()->stats.counts().size();
    size_t last = 0;
    for (const CaseResult* r : cases) {
      for (size_t i = 0; i < bins; ++i) {
        if (r->stats.counts()[i] != 0) last = std::max(last, i);
      }
    }
    for (size_t i = 0; i <= last; ++i) {
      std::vector<std::string> row = {BinLabel(cases.front()->stats, i)};
      for (const CaseResult* r : cases) row.push_back(std::to_string(r->stats.counts()[i]));
      table.AddRow(row);
    }
    std::vector<std::string> special = {"special mismatch"};
    for (const CaseResult* r : cases) special.push_back(std::to_string(r->stats.special_mismatch()));
    table.AddRow(special);
    table.Print(std::cout, "  ");
    // The worst input over the variant's targets.
    const CaseResult* worst = nullptr;
    for (const CaseResult* r : cases) {
      if (r->stats.max_index() >= 0 && (!worst || r->stats.max_ulp() > worst->stats.max_ulp())) {
        worst = r;
      }
    }
    if (worst) {
      const uint64_t i = worst->stats.max_index();
      std::vector<float> x;
      for (const auto& column : inputs.columns) x.push_back(column[i]);
      const float y = !worst->outputs.empty()            ? worst->outputs[i]
                      : worst->kind == CaseKind::kKernel ? OneOutput(*worst, format, x)
                                                         : std::nanf("");
      std::cout << "  ";
      PrintWrapped(std::cout,
                   fmt::format("worst: {} ULP on {} at input #{}: {}; output {}, exact {}",
                               Ulp(worst->stats.max_ulp()), TargetText(*worst), i,
                               OperandsText(inputs, format, i, true), ValueText(format, y),
                               OracleOf(op).Exact(x.data()).ToDecimal(17)),
                   9, 2);
      std::cout << "  reproduce: " << WrappedCommand(ReproduceCommand(*worst, inputs, i), 13, 6)
                << "\n";
    }
    std::vector<CaseCauses> causes;
    for (const CaseResult* r : cases) {
      causes.push_back({variant + " on " + TargetText(*r), &r->stats,
                        [&](uint64_t i) {
                          return fmt::format("input #{}: {}", i, OperandsText(inputs, format, i, false));
                        },
                        [&, r](uint64_t i) { return ReproduceCommand(*r, inputs, i); }});
    }
    PrintSpecialCauses(std::cout, causes);
  }
}

// Which ops run in which formats, for --dtype's help: "f32, bf16 or f16: every
// op runs in each", or the ops of each where some run only in f32.
std::string DtypesText() {
  std::string narrow, only_f32;
  for (const OpInfo& op : OpTable()) {
    if (op.family == OpFamily::kDrift || op.family == OpFamily::kCast ||
        op.family == OpFamily::kBlockQuant) {
      continue;
    }
    const bool has_narrow = op.dtypes.size() > 1;
    (has_narrow ? narrow : only_f32) += ((has_narrow ? narrow : only_f32).empty() ? "" : ", ") + op.name;
  }
  std::string all = kBinary32.name, narrow_names;
  for (size_t i = 0; i < kNarrowFormats.size(); ++i) {
    const std::string name = kNarrowFormats[i].format->name;
    all += (i + 1 == kNarrowFormats.size() ? " or " : ", ") + name;
    narrow_names += (i == 0 ? "" : i + 1 == kNarrowFormats.size() ? " and " : ", ") + name;
  }
  // The casts take their destination instead (cast_f32 --dtype float8_e4m3fn).
  const std::string casts = "; a cast op (cast_f32, cast_bf16, cast_f16): its destination format; "
                            "mx_quantize, nvfp4_quantize: the block spec";
  return (only_f32.empty() ? all + ": every op runs in each"
                           : all + " (" + narrow_names + ": " + narrow + "; only f32: " + only_f32 + ")") +
         casts;
}

// The ops `run` takes: every op of the table but the training runs.
std::string KernelNames() {
  std::string names;
  for (const OpInfo& op : OpTable()) {
    if (op.family != OpFamily::kDrift) names += (names.empty() ? "" : ", ") + op.name;
  }
  return names;
}

void Run(const RunArgs& args) {
  if (args.dump_path == "-" && args.json_path == "-") {
    throw UsageError("--dump - and --json - cannot both have stdout: give one a file");
  }
  if (const OpInfo* block = FindOp(args.kernel);
      block != nullptr && block->family == OpFamily::kBlockQuant) {
    RunBlockQuantOp(args);
    return;
  }
  const FloatFormat* format = FindFormat(args.dtype);
  if (format == nullptr || format->bits > 32) {
    throw UsageError("unknown --dtype '" + args.dtype + "' (" + KernelFormatNames() + ")");
  }
  const OpInfo* op = FindOp(args.kernel);
  if (op == nullptr || op->family == OpFamily::kDrift) {
    throw UsageError("unknown kernel '" + args.kernel + "' (available: " + KernelNames() + ")");
  }
  if (std::find(op->dtypes.begin(), op->dtypes.end(), args.dtype) == op->dtypes.end()) {
    std::string dtypes;
    for (const auto& d : op->dtypes) dtypes += (dtypes.empty() ? "" : ", ") + d;
    throw UsageError("--dtype " + args.dtype + ": " + op->name + " runs in " + dtypes);
  }
  if (op->family == OpFamily::kCast) {
    RunCastCommand(args);
    return;
  }
  if (op->family == OpFamily::kReduction) {
    RunReductionCommand(args);  // with the plugins' and IUTs' reductions of the op
    return;
  }
  if (!args.shape.empty() || args.instance >= 0) {
    throw UsageError("--shape and --instance are for the linear and MSE ops, not " + op->name);
  }
  if (!args.operands.empty()) {
    throw UsageError("--operands is for the linear ops, not " + op->name);
  }
  if (!args.suite.empty() && !args.inputs_path.empty()) {
    throw UsageError("--suite and --inputs exclude each other");
  }
  const ElementwiseOpInfo& elementwise = *FindElementwiseOp(op->name);
  InputSet inputs;
  if (!args.inputs_path.empty()) {
    inputs = IsNumpyPath(args.inputs_path)
                 ? ReadCheckInputs(elementwise, args.inputs_path, *format)
                 : ReadInputFile(args.inputs_path, elementwise.operand_names());
    if (args.n != 0 && args.n < inputs.size()) {
      for (auto& column : inputs.columns) column.resize(args.n);
    }
  } else {
    const std::string suite = args.suite.empty() ? "domain" : args.suite;
    const SuiteInfo* info = nullptr;
    std::string names;
    for (const auto& s : ElementwiseSuites(elementwise)) {
      if (s.name == suite) info = &s;
      names += (names.empty() ? "" : ", ") + s.name;
    }
    if (!info) throw UsageError("unknown suite '" + suite + "' of " + op->name + " (" + names + ")");
    inputs = GenerateElementwiseSuite(elementwise, *format, suite, args.seed,
                                      args.n ? args.n : info->default_n);
  }
  if (!args.save_inputs_path.empty()) {
    const std::string source = args.inputs_path.empty()
                                   ? fmt::format("--dtype {} --suite {} --seed {} --n {}",
                                                 format->name, inputs.source, inputs.seed,
                                                 inputs.size())
                                   : "--inputs " + args.inputs_path;
    WriteInputFile(args.save_inputs_path, inputs,
                   {fmt::format("ulpgate inputs of {}: {} ({} tuples)", op->name, inputs.source,
                                inputs.size()),
                    "regenerate: ulpgate run --op " + op->name + " " + source +
                        " --save-inputs " + args.save_inputs_path});
  }
  RunOptions options;
  options.format = format;
  // --variant none: only the plugins' kernels.
  if (args.variant == "none" && args.plugins.empty()) {
    throw UsageError("--variant none runs only plugins: give --plugin");
  }
  const std::vector<const TargetInfo*> plugin_targets = LoadPlugins(args.plugins);
  RequirePluginOp(plugin_targets, op->name);
  bool builtin = true;
  options.variants = ResolveKernelNames(op->name, *format, args.variant, plugin_targets, &builtin);
  const bool no_builtin = !builtin;
  std::vector<std::string> skipped;
  // With --emulate-unsupported a target this CPU cannot run is a "model" case.
  if (!no_builtin) {
    options.targets = args.emulate_unsupported ? ResolveCompiledTargets(args.target)
                                               : ResolveTargets(args.target, &skipped);
  }
  options.targets.insert(options.targets.end(), plugin_targets.begin(), plugin_targets.end());
  options.threads = args.threads;
  options.mpfr_only = args.oracle == "mpfr";
  uint64_t mpfr_inputs = 0;
  options.mpfr_inputs = &mpfr_inputs;
  // A model case's worst output is read back from its outputs.
  options.keep_outputs = !args.dump_path.empty() || args.emulate_unsupported || !args.plugins.empty();
  if (!args.by.empty()) {
    const auto it = std::find(inputs.operand_names.begin(), inputs.operand_names.end(), args.by);
    if (it == inputs.operand_names.end()) {
      std::string names;
      for (const auto& o : inputs.operand_names) names += (names.empty() ? "" : ", ") + o;
      throw UsageError("--by " + args.by + ": " + op->name + " has no operand '" + args.by +
                       "' (" + names + ")");
    }
    options.map_operand = static_cast<int>(it - inputs.operand_names.begin());
  }
  ProgressLine progress("run", "inputs");
  options.progress = [&progress](uint64_t done, uint64_t total) { progress(done, total); };
  options.faults_are_results = true;
  const std::vector<CaseResult> results = RunElementwise(elementwise, inputs, options);
  const double seconds = progress.Seconds();
  progress.Clear();

  std::vector<nlohmann::ordered_json> records;
  for (const CaseResult& r : results) {
    records.push_back(CaseJson(r, inputs));
    if (r.fault) AddFaultReplay(&records.back(), r, inputs);
  }
  FinishRun(
      args, records,
      [&] {
        PrintText(elementwise, results, inputs, skipped, args.quiet, *format);
        if (options.map_operand >= 0) PrintErrorMaps(results, inputs);
        const std::string exact =
            mpfr_inputs == 0 ? "all from the fast tier"
            : mpfr_inputs == inputs.size()
                ? "all from MPFR"
                : fmt::format("{:.3g}% from MPFR, the rest from the fast tier",
                              100.0 * static_cast<double>(mpfr_inputs) / inputs.size());
        PrintWrapped(std::cerr,
                     fmt::format("ran {} inputs x {} (variant, target) cases in {:.2f} s ({:.0f} "
                                 "inputs/s); exact values: {}",
                                 inputs.size(), results.size(), seconds, inputs.size() / seconds,
                                 exact),
                     2);
      },
      [&](std::ostream& out) { WriteElementwiseDump(out, elementwise, inputs, results); });
}

}  // namespace

std::string FaultReplayCommand(const CaseResult& r, const InputSet& inputs) {
  const KernelFault& f = *r.fault;
  return ReproduceCommand(r, inputs, static_cast<uint64_t>(f.index >= 0 ? f.index : f.first));
}

void PrintKernelFault(std::ostream& out, const CaseResult& r, const InputSet& inputs) {
  const KernelFault& f = *r.fault;
  const FloatFormat& format = *FindFormat(r.dtype);
  const std::string where =
      f.index >= 0 ? fmt::format("at input #{}: {}", f.index,
                                 OperandsText(inputs, format, static_cast<uint64_t>(f.index), false))
                   : fmt::format("on a call of inputs #{} to #{} (no one of them alone)", f.first,
                                 f.first + f.count - 1);
  PrintWrapped(out,
               fmt::format("{}: {} {} ({}) on {}: {} {}; the case was not measured",
                           KernelFaultName(f.kind), r.op, r.variant, r.dtype, r.target, f.detail,
                           where),
               2, 0);
  out << "  reproduce: " << WrappedCommand(FaultReplayCommand(r, inputs), 13, 6) << "\n";
}

void AddFaultReplay(nlohmann::ordered_json* record, const CaseResult& r, const InputSet& inputs) {
  (*record)["fault"]["replay"] = FaultReplayCommand(r, inputs);
}

void FinishRun(const RunArgs& args, const std::vector<nlohmann::ordered_json>& records,
               const std::function<void()>& print_text,
               const std::function<void(std::ostream&)>& write_dump) {
  RunLimits limits;
  limits.max_ulp = args.max_ulp;
  limits.require_conformance = args.require_conformance;
  size_t failed = 0;
  {
    StdoutToStderr guard(args.dump_path == "-" || args.json_path == "-");
    print_text();
    if (limits.max_ulp || limits.require_conformance) {
      std::cout << '\n';
      failed = CheckRunLimits(records, limits, std::cout);
      std::cout << (failed == 0 ? std::string("run: PASS (every case within the limits)\n")
                                : fmt::format("run: FAIL ({} case{} over the limits)\n", failed,
                                              failed == 1 ? "" : "s"));
    }
  }
  if (!args.json_path.empty()) {
    nlohmann::ordered_json report;
    report["format"] = kRunReportFormat;
    report["tool"] = ToolVersion();
    report["results"] = records;
    WriteRunReport(args.json_path, report);
  }
  if (!args.dump_path.empty()) WriteDumpFile(args.dump_path, write_dump);
  if (failed > 0) ExitStatus() = 1;
  // A kernel that crashed, hung or broke a rule outranks a limit.
  for (const nlohmann::ordered_json& r : records) {
    if (r.contains("fault")) ExitStatus() = kExitKernelFault;
  }
}

void AddRunCommand(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Run an op's variants on targets over a suite or input file");
  std::string ops;
  for (const OpInfo& op : OpTable()) {
    if (op.family != OpFamily::kDrift) ops += (ops.empty() ? "" : ", ") + op.name;
  }
  cmd->add_option("--op,--kernel", args->kernel, "Op to run: " + ops)->required();
  cmd->add_option("--variant", args->variant,
                  VariantHelp("only the plugins' kernels") +
                      " (the variants of each --dtype: ulpgate list)")
      ->capture_default_str();
  cmd->add_option("--dtype", args->dtype,
                  "Format of the operands and outputs: " + DtypesText() +
                      " (ulpgate list; suites drawn in that format, errors in its ULPs)")
      ->capture_default_str();
  cmd->add_option("--target", args->target,
                  "Target (SCALAR, SSSE3, SSE4, AVX2, ...), comma-separated list, best, or all "
                  "(every target this CPU supports)")
      ->capture_default_str();
  cmd->add_option("--suite", args->suite,
                  "Input suite. Elementwise ops: random, domain (default), training, adversarial. "
                  "Linear and MSE ops: well_conditioned, cancellation (default), training, "
                  "adversarial, exact");
  const ElementwiseOpInfo& example = DefaultElementwiseOp();
  std::string example_operands;
  for (const std::string& o : example.operand_names()) {
    example_operands += (example_operands.empty() ? "" : " ") + o;
  }
  cmd->add_option("--inputs", args->inputs_path,
                  fmt::format("Inputs (elementwise ops): an .npz of one array per operand, an .npy "
                              "[operands, n], or a text file of one tuple of operands per line ('{}' "
                              "for {}; ulpgate list names each op's), hex floats or decimals, # "
                              "comments; - for stdin",
                              example_operands, example.name));
  cmd->add_option("--n", args->n,
                  "Number of inputs (default: the suite's; with --inputs: at most this many); "
                  "for the linear and MSE ops, the number of problem instances")
      ->check(CountValidator("the number of inputs or instances", 1, kMaxElementwiseInputs));
  cmd->add_option("--shape", args->shape,
                  "Linear ops: B,IN,OUT (default 32,32,32); MSE ops: N (default 1000)");
  cmd->add_option("--operands", args->operands,
                  "Linear ops: block-quantize the multiplied operands along the reduced dimension "
                  "and run on their dequantized values: an MX format (mxfp8_e4m3, mxfp8_e5m2, "
                  "mxfp6_e2m3, mxfp6_e3m2, mxfp4), optionally /RULE (ocp_floor, the default; "
                  "ceil, even, rceil, reciprocal), or nvfp4");
  cmd->add_option("--instance", args->instance,
                  "Linear and MSE ops: run only this instance of the suite (to reproduce one)")
      ->check(CountValidator("an instance index", 0, kMaxInstances - 1));
  cmd->add_flag("--emulate-unsupported", args->emulate_unsupported,
                "For compiled targets this CPU cannot run (AVX3 on an AVX2 machine), report the "
                "variant's expected model in place of the kernel (kind \"model\")");
  cmd->add_option("--dump", args->dump_path,
                  "Write every evaluated case as JSON Lines here (- for stdout): inputs, outputs, "
                  "exact values, errors; see docs/dump-format.md");
  cmd->add_option("--seed", args->seed, "Suite seed")
      ->capture_default_str()
      ->check(CountValidator("a seed", 0, kMaxSeed));
  cmd->add_option("--json", args->json_path, "Write the JSON report here (- for stdout)");
  cmd->add_option("--max-ulp", args->max_ulp,
                  "Exit 1 (listing the cases) if a case's max ULP error is above this, or it has "
                  "a special mismatch")
      ->check(NonNegativeValidator("a ULP limit"));
  cmd->add_flag("--require-conformance", args->require_conformance,
                "Exit 1 (listing the cases) if a kernel does not follow its expected model bit "
                "for bit");
  cmd->add_option("--save-inputs", args->save_inputs_path,
                  "Also write the inputs as an input file (hex floats), for replay elsewhere");
  AddThreadsOption(cmd, &args->threads);
  cmd->add_option("--oracle", args->oracle,
                  "Elementwise ops: where exact values come from: fast (double-word arithmetic "
                  "where it proves each decision, MPFR elsewhere) or mpfr (every output through "
                  "MPFR: slower, the same report byte for byte)")
      ->check(CLI::IsMember({"fast", "mpfr"}))
      ->capture_default_str();
  cmd->add_flag("--quiet", args->quiet, "Only the summary table");
  AddPluginOption(cmd, &args->plugins, "; --variant none runs only these");
  cmd->add_option("--by", args->by,
                  "Break the statistics down by the binary exponent and sign of this operand "
                  "(one of the op's: tanh_bwd's grad or t, sigmoid_bwd's grad or s; ulpgate list "
                  "names each op's): an error map");
  cmd->callback([args] { Run(*args); });
}

}  // namespace ulpgate
