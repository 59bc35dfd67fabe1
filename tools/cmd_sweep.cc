// ulpgate sweep | merge: every input of a domain (suites/sweep/sweep.h), whole or
// one shard of it, and the exact join of the shards' reports.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <utility>
#include <vector>

#include "kernels/narrow_formats.h"
#include "oracles/float_text.h"
#include "suites/investigate/explain.h"
#include "suites/inputs/inputs.h"
#include "suites/reports/json_file.h"
#include "suites/engine/kernel_names.h"
#include "suites/engine/plugins.h"
#include "suites/reports/report.h"
#include "suites/sweep/sweep.h"
#include "suites/sweep/sweep_tier.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/engine/op_table.h"
#include "tools/cast_commands.h"
#include "tools/cmd_blockquant.h"
#include "tools/cli.h"
#include "tools/progress.h"
#include "tools/special_causes_text.h"
#include "tools/text_table.h"

namespace ulpgate {
namespace {

struct SweepArgs {
  std::string kernel = std::string(DefaultElementwiseOp().name);
  std::string dtype = "bf16";
  std::string grads;  // f32: the fixed first operand's values
  // f32: the fixed second operand's values, one option per name the ops of
  // two operands give it (--t, --s, --x), in the order ElementwiseOps() first
  // gives each: (name, values).
  std::vector<std::pair<std::string, std::string>> seconds;
  std::string variant = "all";
  std::string target = "all";
  std::vector<std::string> plugins;
  std::string range;  // BEGIN:END
  std::string shard;  // K/N
  unsigned threads = 0;
  std::string json_path;
  std::optional<double> max_ulp;
  bool quiet = false;
  bool reference = false;
};

struct MergeArgs {
  std::vector<std::string> inputs;
  std::string json_path;
  std::optional<double> max_ulp;
};

std::vector<float> ParseValues(const std::string& list, const char* flag) {
  std::vector<float> values;
  for (const std::string& item : SplitList(list)) {
    std::string error;
    const auto v = ParseFloat(item, &error);
    if (!v) throw UsageError(fmt::format("{} {}: {}", flag, item, error));
    values.push_back(*v);
  }
  return values;
}

std::string ReplayCommand(const SweepResult& r, const SweepCase& c, uint64_t index) {
  return SweepReplayCommand(r.op, r.domain, c.variant, c.target, index);
}

bool AnyFault(const SweepResult& r) {
  return std::any_of(r.cases.begin(), r.cases.end(), [](const SweepCase& c) { return c.fault.has_value(); });
}

// SweepJson with each fault's replay command.
nlohmann::ordered_json SweepReportJson(const SweepResult& r) {
  nlohmann::ordered_json j = SweepJson(r);
  for (size_t i = 0; i < r.cases.size(); ++i) {
    if (!r.cases[i].fault) continue;
    const KernelFault& f = *r.cases[i].fault;
    j["cases"][i]["fault"]["replay"] =
        ReplayCommand(r, r.cases[i], static_cast<uint64_t>(f.index >= 0 ? f.index : f.first));
  }
  return j;
}

std::string InputText(const SweepResult& r, uint64_t index) {
  const nlohmann::ordered_json j = SweepInputJson(r.domain, index);
  const std::string& a = r.domain.operands[0];
  const std::string& b = r.domain.operands[1];
  return fmt::format("{} = {} ({}), {} = {} ({}) [index {:#x}]", a, j[a].get<std::string>(),
                     j[a + "_bits"].get<std::string>(), b, j[b].get<std::string>(),
                     j[b + "_bits"].get<std::string>(), index);
}

// Prints the report; returns whether every case followed its model and
// stayed within --max-ulp.
bool PrintSweep(const SweepResult& r, const std::optional<double>& max_ulp) {
  const uint64_t n = r.end - r.begin;
  PrintWrapped(std::cout,
               fmt::format("sweep {}: {}; inputs {:#x} to {:#x} ({}{}), {} cases", r.op,
                           r.domain.Description(), r.begin, r.end, n,
                           n == r.domain.size() ? ", all" : fmt::format(" of {}", r.domain.size()),
                           r.cases.size()),
               2);
  std::cout << '\n';
  TextTable table({"variant", "target", "max_ulp", "mean_ulp", "p99", "correctly_rounded", "special",
                   "model", "mismatches"});
  table.SetLeftAligned({0, 1, 7});
  bool ok = true;
  for (const SweepCase& c : r.cases) {
    if (c.fault) {
      ok = false;
      table.AddRow({c.variant, c.target, KernelFaultName(c.fault->kind), "-", "-", "-", "-",
                    c.fault->detail, "-"});
      continue;
    }
    const Conformance& k = c.conformance;
    const bool conforms = k.mismatches == 0;
    const bool within = !max_ulp || (c.stats.max_ulp() <= *max_ulp && c.stats.special_mismatch() == 0);
    ok = ok && conforms && within;
    std::string model = k.model().empty() ? "NONE" : k.model();
    if (!conforms) model += " (expected " + k.expected_model + ")";
    if (k.expected_model.empty()) model += " (none claimed)";
    table.AddRow({c.variant, c.target, FormatUlp(c.stats.max_ulp()), FormatUlp(c.mean_ulp()),
                  FormatUlp(c.stats.Percentile(99)),
                  fmt::format("{:.2f}%", c.stats.n() ? 100.0 * c.stats.correctly_rounded() / c.stats.n() : 0),
                  std::to_string(c.stats.special_mismatch()), model, std::to_string(k.mismatches)});
  }
  table.Print(std::cout);
  // The histograms, bins as rows and cases as columns, a few cases at a time.
  const std::vector<double>& bounds = r.cases.empty() ? std::vector<double>() : r.cases[0].stats.bounds();
  // (a faulted case's statistics are empty, with the format's bounds)
  const auto bin_name = [&](size_t i) {
    if (i == 0) return std::string("e = 0");
    auto b = [](double x) { return x == 0.5 ? std::string("0.5") : fmt::format("{}", x); };
    if (i == bounds.size()) return "e > " + b(bounds.back());
    return fmt::format("({}, {}]", i == 1 ? "0" : b(bounds[i - 1]), b(bounds[i]));
  };
  // The faults: the kernel, the fault, its input (or call) and its replay.
  for (const SweepCase& c : r.cases) {
    if (!c.fault) continue;
    const KernelFault& f = *c.fault;
    const uint64_t at = static_cast<uint64_t>(f.index >= 0 ? f.index : f.first);
    const std::string where =
        f.index >= 0 ? "at " + InputText(r, at)
                     : fmt::format("on a call of inputs {:#x} to {:#x} (no one of them alone), the first {}",
                                   f.first, f.first + std::max<int64_t>(f.count, 1) - 1, InputText(r, at));
    std::cout << '\n';
    PrintWrapped(std::cout,
                 fmt::format("{}: {} {} ({}) on {}: {} {}; the case was not measured",
                             KernelFaultName(f.kind), r.op, c.variant, r.domain.format->name, c.target,
                             f.detail, where),
                 2, 0);
    std::cout << "  reproduce: " << WrappedCommand(ReplayCommand(r, c, at), 13, 6) << '\n';
  }
  std::vector<const SweepCase*> measured;
  for (const SweepCase& c : r.cases) {
    if (!c.fault) measured.push_back(&c);
  }
  for (size_t first = 0; first < measured.size(); first += 6) {
    const size_t last = std::min(measured.size(), first + 6);
    std::vector<std::string> header = {"bin"};
    for (size_t c = first; c < last; ++c) header.push_back(measured[c]->variant + "@" + measured[c]->target);
    TextTable histogram(header);
    histogram.SetLeftAligned({0});
    for (size_t i = 0; i < bounds.size() + 1; ++i) {
      bool any = false;
      std::vector<std::string> row = {bin_name(i)};
      for (size_t c = first; c < last; ++c) {
        const uint64_t count = measured[c]->stats.counts()[i];
        any = any || count != 0;
        row.push_back(std::to_string(count));
      }
      if (any) histogram.AddRow(row);
    }
    std::cout << "\nhistogram of ULP error (inputs per bin; empty bins left out)\n";
    histogram.Print(std::cout, "  ");
  }
  std::cout << '\n';
  for (const SweepCase& c : r.cases) {
    if (c.fault) continue;
    if (c.stats.max_index() >= 0) {
      PrintWrapped(std::cout,
                   fmt::format("{}@{} worst: {} ULP at {}", c.variant, c.target,
                               FormatUlp(c.stats.max_ulp()),
                               InputText(r, static_cast<uint64_t>(c.stats.max_index()))),
                   4);
    }
    if (c.conformance.first_mismatch_index >= 0) {
      const uint64_t at = static_cast<uint64_t>(c.conformance.first_mismatch_index);
      PrintWrapped(std::cout,
                   fmt::format("{}@{} does not follow {} on {} inputs; the first: {}", c.variant,
                               c.target, c.conformance.expected_model, c.conformance.mismatches,
                               InputText(r, at)),
                   4);
      std::cout << "  replay: " << WrappedCommand(ReplayCommand(r, c, at), 10, 4) << '\n';
    }
  }
  std::vector<CaseCauses> causes;
  for (const SweepCase& c : r.cases) {
    causes.push_back({c.variant + "@" + c.target, &c.stats,
                      [&](uint64_t at) { return InputText(r, at); },
                      [&](uint64_t at) { return ReplayCommand(r, c, at); }});
  }
  PrintSpecialCauses(std::cout, causes, 0);
  return ok;
}

// "K/N".
// What MPFR computed of the sweep: the share of exact values (per input, or
// per entry of the factor tables) and of errors it decided.
std::string DescribeMpfrShare(const SweepResult& r) {
  const uint64_t inputs = r.end - r.begin;
  const uint64_t outputs = inputs * r.cases.size();
  const auto share = [](uint64_t part, uint64_t whole) {
    if (part == 0) return std::string("none");
    if (part == whole) return std::string("all");
    return fmt::format("{} ({:.3g}%)", part, 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  };
  std::string exact = "exact values from MPFR: " + share(r.mpfr_exact_values, inputs);
  if (r.mpfr_tables > 0) exact += fmt::format(" and a table of {} factors", r.mpfr_tables);
  std::string text = exact + ", errors from MPFR: " + share(r.mpfr_errors, outputs);
  if (r.scaled_tiles > 0) {
    const uint64_t tiles = (inputs + kSweepTile - 1) / kSweepTile;
    text += fmt::format("; tiles scaled from another grad's: {} ({:.3g}%)", r.scaled_tiles,
                        100.0 * static_cast<double>(r.scaled_tiles) / static_cast<double>(tiles));
  }
  return text;
}

void RunSweepCommand(const SweepArgs& args) {
  if (const OpInfo* block = FindOp(args.kernel);
      block != nullptr && block->family == OpFamily::kBlockQuant) {
    SweepBlockQuantOp(args.kernel, args.dtype, args.variant, args.target, args.threads);
    return;
  }
  if (const OpInfo* cast = FindOp(args.kernel); cast != nullptr && cast->family == OpFamily::kCast) {
    SweepCastCommand(args.kernel, args.dtype, args.variant, args.target, args.threads);
    return;
  }
  const ElementwiseOpInfo& op = ElementwiseOpArgument(args.kernel);
  if (op.arity() != 2) throw UsageError("sweeps take ops of two operands; " + args.kernel + " has " + std::to_string(op.arity()));
  const std::array<std::string, 2> operands = {std::string(op.operands[0].name),
                                               std::string(op.operands[1].name)};
  const FloatFormat* format = FindFormat(args.dtype);
  if (format == nullptr || format->bits > 32) throw UsageError("unknown --dtype '" + args.dtype + "' (" + KernelFormatNames() + ")");
  const std::vector<float> grads = ParseValues(args.grads, "--grad");
  // The options of the second operand are named after it: the op's is the one
  // its second operand's name gives.
  const std::string second_flag = "--" + operands[1];
  std::string second_values;
  for (const auto& [name, values] : args.seconds) {
    if (values.empty()) continue;
    if (name != operands[1]) {
      throw UsageError("--" + name + ": " + args.kernel + "'s operands are " + operands[0] + " and " +
                       operands[1] + " (give " + second_flag + ")");
    }
    second_values = values;
  }
  const std::vector<float> ts = ParseValues(second_values, second_flag.c_str());
  SweepDomain::Kind kind = SweepDomain::Kind::kPairs;
  if (!grads.empty() && !ts.empty()) throw UsageError("--grad and " + second_flag + " exclude each other: one operand is swept");
  if (!grads.empty()) kind = SweepDomain::Kind::kOverT;
  if (!ts.empty()) kind = SweepDomain::Kind::kOverGrad;
  if (format->bits == 32 && kind == SweepDomain::Kind::kPairs) {
    throw UsageError(fmt::format("f32 has 2^64 pairs: sweep every {1} at given grads (--grad 1.3,0.7) or every grad at given {1} ({0} 0.5)", second_flag, operands[1]));
  }
  SweepOptions options;
  options.op = &op;
  try {
    options.domain = MakeSweepDomain(*format, kind, kind == SweepDomain::Kind::kOverT ? grads : ts, operands);
  } catch (const InputError& e) {
    throw UsageError(e.what());
  }
  options.begin = 0;
  options.end = options.domain.size();
  if (!args.range.empty()) {
    const size_t colon = args.range.find(':');
    if (colon == std::string::npos) throw UsageError("--range: expected BEGIN:END, got '" + args.range + "'");
    options.begin = ParseIndex(args.range.substr(0, colon), "--range BEGIN");
    options.end = ParseIndex(args.range.substr(colon + 1), "--range END");
    if (options.begin >= options.end || options.end > options.domain.size()) {
      throw UsageError(fmt::format("--range {}: expected BEGIN < END <= {} (the domain's size)", args.range,
                                   options.domain.size()));
    }
  }
  if (!args.shard.empty()) {
    const auto [k, n] = ParseShard(args.shard);
    std::tie(options.begin, options.end) = SweepShard(options.begin, options.end, k, n);
  }
  const std::vector<const TargetInfo*> plugins = LoadPlugins(args.plugins);
  RequirePluginOp(plugins, op.name);
  bool builtin = true;
  options.variants = ResolveKernelNames(op.name, *format, args.variant, plugins, &builtin);
  if (builtin) {
    std::vector<std::string> skipped;
    options.targets = ResolveTargets(args.target, &skipped);
  } else if (plugins.empty()) {
    throw UsageError("--variant none sweeps only plugins and IUTs: give --plugin or --iut");
  }
  options.targets.insert(options.targets.end(), plugins.begin(), plugins.end());
  options.threads = args.threads;
  options.reference = args.reference;
  ProgressLine progress("sweep", "inputs", args.quiet);
  options.progress = [&progress](uint64_t done, uint64_t total) { progress(done, total); };
  const SweepResult result = RunSweep(options);
  const double seconds = progress.Seconds();
  progress.Clear();
  if (!args.json_path.empty()) WriteJsonFile(args.json_path, SweepReportJson(result));
  const bool ok = PrintSweep(result, args.max_ulp);
  const uint64_t evaluations = (result.end - result.begin) * result.cases.size();
  PrintWrapped(std::cerr,
               fmt::format("swept {} inputs x {} cases in {:.2f} s ({:.3g} inputs/s); {}",
                           result.end - result.begin, result.cases.size(), seconds,
                           evaluations / std::max(seconds, 1e-9), DescribeMpfrShare(result)),
               2);
  if (!ok) ExitStatus() = 1;
  if (AnyFault(result)) ExitStatus() = kExitKernelFault;
}

void RunMergeCommand(const MergeArgs& args) {
  std::vector<std::pair<std::string, SweepResult>> parts;
  for (const std::string& path : args.inputs) parts.emplace_back(path, SweepFromJson(path, ReadJsonFile(path)));
  const SweepResult merged = MergeSweeps(parts);
  if (!args.json_path.empty()) WriteJsonFile(args.json_path, SweepReportJson(merged));
  if (!PrintSweep(merged, args.max_ulp)) ExitStatus() = 1;
  if (AnyFault(merged)) ExitStatus() = kExitKernelFault;
}

}  // namespace

void AddSweepCommand(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand(
      "sweep",
      "Every input of a domain: all pairs of an op's two operands in bf16 or f16, or in f32 every "
      "value of the second operand (tanh_bwd's t) at given grads, or every grad at given values of "
      "it; --shard K/N runs one part, merge joins them (exit 1 if a kernel leaves its model)");
  cmd->add_option("--op,--kernel", args->kernel, "Elementwise op of two operands (" + ElementwiseOpNames() + ")")
      ->capture_default_str();
  cmd->add_option("--dtype", args->dtype, "bf16 or f16 (all pairs), f32 (with --grad or --t)")
      ->capture_default_str();
  cmd->add_option("--grad", args->grads, "f32: sweep every value of the second operand (t, s, x) at these grads (comma-separated)");
  // One option per name of a second operand, its help naming the ops that
  // call it so.
  std::vector<std::string> ops_of_second;
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    if (op.arity() != 2) continue;
    const std::string name(op.operands[1].name);
    size_t k = 0;
    while (k < args->seconds.size() && args->seconds[k].first != name) ++k;
    if (k == args->seconds.size()) {
      args->seconds.emplace_back(name, "");
      ops_of_second.emplace_back();
    }
    ops_of_second[k] += (ops_of_second[k].empty() ? "" : ", ") + std::string(op.name);
  }
  for (size_t k = 0; k < args->seconds.size(); ++k) {
    const std::string& name = args->seconds[k].first;
    cmd->add_option("--" + name, args->seconds[k].second,
                    k == 0 ? fmt::format("f32: sweep every grad at these {} (comma-separated; {})",
                                         name, ops_of_second[k])
                           : fmt::format("f32: the same at these {} ({})", name, ops_of_second[k]));
  }
  cmd->add_option("--variant", args->variant, VariantHelp("only the plugins' kernels"))
      ->capture_default_str();
  cmd->add_option("--target", args->target, "Target, comma-separated list, best, or all (those this CPU runs)")
      ->capture_default_str();
  AddPluginOption(cmd, &args->plugins, "; --variant none sweeps only these");
  cmd->add_option("--range", args->range,
                  "Only the inputs of indices BEGIN:END (decimal or 0x hex; pairs: the first operand's bits "
                  "<< 16 | the second's; over one operand: k * 2^32 + its bits for the k-th fixed value)");
  cmd->add_option("--shard", args->shard,
                  "K/N: only the K-th (0-based) of N parts of the range, cut at 65536-input blocks "
                  "(a Slurm array or Kubernetes index job: --shard $INDEX/N); merge joins the reports");
  AddThreadsOption(cmd, &args->threads);
  cmd->add_option("--json", args->json_path, "Write the report (" + std::string(kSweepFormat) + ") here: what merge reads");
  cmd->add_option("--max-ulp", args->max_ulp, "Exit 1 if a case's max ULP error is above this or it has a special mismatch")
      ->check(NonNegativeValidator("a ULP limit"));
  cmd->add_flag("--quiet", args->quiet, "No progress on stderr");
  cmd->add_flag("--reference", args->reference,
                "Measure every input through the engine, MPFR and the emulated models instead of "
                "the fast exact tier (much slower; the same report: to cross-check the tier)");
  cmd->callback([args] { RunSweepCommand(*args); });

  auto margs = std::make_shared<MergeArgs>();
  auto* merge = app.add_subcommand(
      "merge", "Join the reports of a sweep's shards (sweep --shard K/N --json) into the report of "
               "the whole, exactly as one sweep would have written it");
  merge->add_option("reports", margs->inputs, "The shards' reports (any order)")->required();
  merge->add_option("--json", margs->json_path, "Write the merged report here");
  merge->add_option("--max-ulp", margs->max_ulp, "As sweep's")->check(NonNegativeValidator("a ULP limit"));
  merge->callback([margs] { RunMergeCommand(*margs); });
}

}  // namespace ulpgate
