// ulpgate invariance: batch invariance and determinism of matrix products,
// ulpgate's own linear_fwd kernels on every target or planted ones, one table
// row per kernel and the first change of each dimension that changed bits.
#include "tools/cmd_invariance.h"

#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <optional>

#include "suites/reports/report.h"
#include "suites/reveal/builtin_door.h"
#include "suites/reveal/iut_door.h"
#include "suites/reveal/plugin_door.h"
#include "suites/reveal/invariance.h"
#include "suites/reveal/planted_invariance.h"
#include "suites/reveal/planted_kernels.h"
#include "tools/cli.h"
#include "tools/progress.h"
#include "tools/text_table.h"

namespace ulpgate {
namespace {

struct InvarianceArgs {
  std::string kernel = "linear_fwd";
  std::string targets = "all";
  // Where the kernels come from when not ulpgate's own: a plugin's library or
  // an IUT's command line, --op then naming its linear_fwd variants.
  std::string plugin;
  std::string iut;
  InvarianceOptions options;
  std::string threads = "1,2,4";
  std::string require = "none";
  std::string json_path;
  bool no_trees = false;
};

std::string Joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

// Every planted kernel's name without the prefix: invariance's own (a tree
// that depends on the call) and reveal's (accelerator-like, one tree each).
std::vector<std::string> PlantedNames() {
  std::vector<std::string> names = InvariancePlantedNames();
  for (const PlantedKernelInfo& info : PlantedKernels()) names.push_back(info.name);
  return names;
}

std::unique_ptr<DotDoor> PlantedDoor(const std::string& name) {
  if (std::unique_ptr<DotDoor> door = MakeInvariancePlantedDoor(name)) return door;
  return MakePlantedDoor(name);
}

std::string KernelHelp() {
  std::string planted;
  for (const std::string& name : PlantedNames()) {
    planted += (planted.empty() ? "" : ", ") + std::string(kPlantedPrefix) + name;
  }
  return "Matrix products, comma-separated: linear_fwd (every variant on every --targets), "
         "linear_fwd/VARIANT (" +
         Joined(BuiltinDotVariants()) +
         "), planted (every planted "
         "kernel) or one of them (" +
         planted + ")";
}

// The variants --op names of --plugin's or --iut's linear_fwd
// (linear_fwd/VARIANT or VARIANT), each a door; a library that does not load,
// a command that does not start or an unknown variant is a DotDoorError.
std::vector<std::unique_ptr<DotDoor>> SourceDoors(const InvarianceArgs& args) {
  std::vector<std::unique_ptr<DotDoor>> doors;
  for (const std::string& item : SplitList(args.kernel)) {
    if (item == "linear_fwd") {
      throw UsageError(
          "--op: name the variants of --plugin's or --iut's linear_fwd (linear_fwd/VARIANT)");
    }
    const std::string v = item.rfind("linear_fwd/", 0) == 0 ? item.substr(11) : item;
    doors.push_back(!args.plugin.empty() ? MakePluginDotDoor(args.plugin, v)
                                         : MakeIutDotDoor(args.iut, v));
  }
  if (doors.empty()) throw UsageError("--op: no kernel given");
  return doors;
}

std::vector<std::unique_ptr<DotDoor>> Doors(const InvarianceArgs& args) {
  if (!args.plugin.empty() || !args.iut.empty()) return SourceDoors(args);
  std::vector<std::string> variants;
  std::vector<std::unique_ptr<DotDoor>> planted;
  const std::vector<std::string>& all_variants = BuiltinDotVariants();
  const std::string prefix = kPlantedPrefix;
  for (const std::string& item : SplitList(args.kernel)) {
    if (item == "linear_fwd") {
      variants.insert(variants.end(), all_variants.begin(), all_variants.end());
    } else if (item.rfind("linear_fwd/", 0) == 0) {
      const std::string v = item.substr(11);
      if (std::find(all_variants.begin(), all_variants.end(), v) == all_variants.end()) {
        throw UsageError("--op: linear_fwd has no variant '" + v + "' (" + Joined(all_variants) +
                         ")");
      }
      variants.push_back(v);
    } else if (item == "planted") {
      for (const std::string& name : PlantedNames()) planted.push_back(PlantedDoor(name));
    } else if (item.rfind(prefix, 0) == 0 && PlantedDoor(item.substr(prefix.size()))) {
      planted.push_back(PlantedDoor(item.substr(prefix.size())));
    } else {
      throw UsageError("--op: unknown kernel '" + item +
                       "' (linear_fwd, linear_fwd/VARIANT, planted, planted:NAME)");
    }
  }
  if (variants.empty() && planted.empty()) throw UsageError("--op: no kernel given");
  std::vector<std::unique_ptr<DotDoor>> doors;
  if (!variants.empty()) {
    std::vector<std::string> skipped;
    for (const TargetInfo* t : ResolveTargets(args.targets, &skipped)) {
      for (const std::string& v : variants) doors.push_back(MakeBuiltinDoor(v, *t));
    }
    if (!skipped.empty()) std::cout << "not run: " << DescribeSkipped(skipped) << "\n";
  }
  for (auto& door : planted) doors.push_back(std::move(door));
  return doors;
}

std::vector<unsigned> ThreadCounts(const std::string& spec) {
  std::vector<unsigned> counts;
  for (const std::string& item : SplitList(spec)) {
    char* end = nullptr;
    const unsigned long v = std::strtoul(item.c_str(), &end, 10);
    if (item.find_first_not_of("0123456789") != std::string::npos || v == 0 || v > kMaxThreads) {
      throw UsageError(fmt::format("--threads-list: expected thread counts from 1 to {}, got '{}'",
                                   kMaxThreads, item));
    }
    counts.push_back(static_cast<unsigned>(v));
  }
  if (counts.empty()) throw UsageError("--threads-list: no thread count given");
  return counts;
}

std::string UlpText(double ulp) {
  if (std::isinf(ulp)) return "NaN";
  return fmt::format("{:g} ULP", ulp);
}

// A table cell: "same" when no trial changed bits, "-" when not varied, else
// the first change ("m=8").
std::string Cell(const InvarianceDimensionResult& d) {
  if (!d.varied) return "-";
  const InvarianceTrial* t = d.FirstChange();
  return t == nullptr ? "same" : t->what;
}

// The verdict in a table's width; the full text heads the kernel's details.
std::string ShortVerdict(const InvarianceReport& r) {
  switch (r.Verdict()) {
    case InvarianceVerdict::kInvariant:
      return "batch-invariant";
    case InvarianceVerdict::kNondeterministic:
      return "NONDETERMINISTIC";
    case InvarianceVerdict::kNotBatchInvariant:
    case InvarianceVerdict::kVariesWithLayout:
      break;
  }
  for (const InvarianceDimensionResult& d : r.dimensions) {
    if (d.FirstChange()) return std::string("NOT: ") + InvarianceDimensionName(d.dimension);
  }
  return "?";
}

void PrintDetails(const InvarianceReport& r, const std::optional<BatchTrees>& trees) {
  std::cout << fmt::format("\n{}: {} ({} calls, {:.2f} s)\n", r.door, r.VerdictText(), r.calls,
                           r.seconds);
  for (const InvarianceDimensionResult& d : r.dimensions) {
    std::string line = fmt::format("{}: ", InvarianceDimensionName(d.dimension));
    if (!d.varied) {
      line += "not varied (" + d.not_varied + ")";
    } else if (const InvarianceTrial* t = d.FirstChange()) {
      line += fmt::format(
          "bits change in {} of {} trials ({}, against {}); first at {}: {} of {} "
          "outputs, max {}",
          d.Changes(), d.trials.size(), d.range, d.baseline, t->what, t->diff.changed,
          t->diff.compared, UlpText(t->diff.max_ulp));
      if (d.dimension == InvarianceDimension::kBatchSize) {
        line += fmt::format("; as alone up to m={}", r.LastInvariantBatch());
      }
    } else {
      line += fmt::format("same bits in all {} trials ({}, against {})", d.trials.size(), d.range,
                          d.baseline);
    }
    std::cout << "  ";
    PrintWrapped(std::cout, line, 4, 2);
  }
  if (trees) {
    std::string line = fmt::format("trees of C[0][0] (reveal, {} calls, {:.2f} s): ", trees->calls,
                                   trees->seconds);
    if (!trees->error.empty()) {
      line += "not revealed: " + trees->error;
    } else if (trees->before == trees->after) {
      line += fmt::format(
          "the same at m={} and m={} ({}); what changed is a node's arithmetic, "
          "not the order",
          trees->before_m, trees->after_m, ShortTreeText(trees->before));
    } else {
      line += fmt::format("m={}: {}; m={}: {}", trees->before_m, ShortTreeText(trees->before),
                          trees->after_m, ShortTreeText(trees->after));
    }
    std::cout << "  ";
    PrintWrapped(std::cout, line, 4, 2);
  }
}

void RunInvariance(InvarianceArgs args) {
  if (args.require != "none" && args.require != "invariant" && args.require != "deterministic") {
    throw UsageError("--require: expected none, invariant or deterministic, got '" + args.require +
                     "'");
  }
  args.options.threads = ThreadCounts(args.threads);
  std::vector<std::unique_ptr<DotDoor>> doors = Doors(args);
  const InvarianceOptions& o = args.options;
  PrintWrapped(std::cout,
               fmt::format("invariance: a probe row, k = {}, n = {}, seed {}, alone and in batches "
                           "up to m = {}; outputs compared by encoding (-0 is not +0, a NaN by its "
                           "bits)",
                           o.k, o.n, o.seed, o.max_batch),
               2);
  std::cout << "\n";
  std::vector<InvarianceReport> reports;
  std::vector<std::optional<BatchTrees>> trees;
  // A kernel that faults is reported and the others still run.
  std::vector<std::pair<std::string, std::string>> faults;  // kernel, what happened
  ProgressLine progress("invariance", "kernels");
  for (size_t i = 0; i < doors.size(); ++i) {
    progress(i, doors.size());
    try {
      InvarianceReport report = CheckInvariance(*doors[i], o);
      trees.push_back(!args.no_trees ? RevealBatchTrees(*doors[i], report) : std::nullopt);
      reports.push_back(std::move(report));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    } catch (const DotDoorError& e) {
      faults.emplace_back(doors[i]->Name(), e.what());
    }
  }
  progress.Clear();
  std::vector<std::string> header = {"kernel"};
  for (InvarianceDimension d : kInvarianceDimensions) header.push_back(InvarianceDimensionName(d));
  header.push_back("verdict");
  TextTable table(header);
  std::vector<size_t> left;
  for (size_t c = 0; c < header.size(); ++c) left.push_back(c);
  table.SetLeftAligned(left);
  for (const InvarianceReport& r : reports) {
    std::vector<std::string> row = {r.door};
    for (const InvarianceDimensionResult& d : r.dimensions) row.push_back(Cell(d));
    row.push_back(ShortVerdict(r));
    table.AddRow(row);
  }
  for (const auto& fault : faults) {
    std::vector<std::string> row(header.size(), "");
    row.front() = fault.first;
    row.back() = "FAULT";
    table.AddRow(row);
  }
  table.Print(std::cout, "  ");
  std::string against;
  for (size_t i = 0; i < std::size(kInvarianceDimensions); ++i) {
    // The thread counts' baseline where some kernel could set them.
    for (const InvarianceReport& r : reports) {
      const InvarianceDimensionResult& d = r.dimensions[i];
      if (!d.varied) continue;
      against += (against.empty() ? "" : "; ") + std::string(InvarianceDimensionName(d.dimension)) +
                 ": " + d.baseline;
      break;
    }
  }
  if (!against.empty()) {
    std::cout << "\n  against: ";
    PrintWrapped(std::cout, against, 11, 11);
  }
  for (size_t i = 0; i < reports.size(); ++i) {
    const InvarianceReport& r = reports[i];
    if (r.Verdict() != InvarianceVerdict::kInvariant || r.budget_cut) PrintDetails(r, trees[i]);
  }
  for (const auto& [door, what] : faults) {
    std::cout << "\n";
    PrintWrapped(std::cout, door + ": FAULT: " + what, 2);
  }
  size_t invariant = 0, deterministic = 0;
  for (const InvarianceReport& r : reports) {
    invariant += r.Verdict() == InvarianceVerdict::kInvariant;
    deterministic += r.Verdict() != InvarianceVerdict::kNondeterministic;
  }
  double seconds = 0;
  for (const InvarianceReport& r : reports) seconds += r.seconds;
  std::cout << fmt::format(
      "\n{} of {} kernels batch-invariant, {} of {} deterministic ({:.1f} s){}\n", invariant,
      reports.size() + faults.size(), deterministic, reports.size() + faults.size(), seconds,
      faults.empty() ? "" : fmt::format("; {} faulted", faults.size()));
  if (!args.json_path.empty()) {
    nlohmann::ordered_json j;
    j["format"] = kInvarianceFormat;
    j["tool"] = ToolVersion();
    j["kernels"] = nlohmann::ordered_json::array();
    for (size_t i = 0; i < reports.size(); ++i) {
      j["kernels"].push_back(InvarianceJson(reports[i], trees[i]));
    }
    for (const auto& [door, what] : faults) {
      j["kernels"].push_back(nlohmann::ordered_json{{"door", door}, {"fault", what}});
    }
    WriteJsonFile(args.json_path, j);
  }
  if ((args.require == "invariant" && invariant < reports.size()) ||
      (args.require == "deterministic" && deterministic < reports.size())) {
    ExitStatus() = 1;
  }
  if (!faults.empty()) ExitStatus() = kExitKernelFault;
}

}  // namespace

void AddInvarianceCommand(CLI::App& app) {
  auto args = std::make_shared<InvarianceArgs>();
  auto* cmd = app.add_subcommand(
      "invariance",
      "Batch invariance and determinism of matrix products: a probe row alone and in batches of "
      "other sizes, at other positions, alignments and thread counts, and run to run, its outputs "
      "compared bit for bit (exit 1 for a verdict --require refuses)");
  cmd->add_option("--op,--kernel", args->kernel, KernelHelp())->capture_default_str();
  cmd->add_option("--targets", args->targets, "Targets of linear_fwd, comma-separated, or all")
      ->capture_default_str();
  auto* plugin = cmd->add_option("--plugin", args->plugin,
                                 "A shared library (ulpgate/plugin.h, ABI version 4) whose linear_fwd "
                                 "variants --op names (linear_fwd/VARIANT; run in ulpgate-iut, where a "
                                 "crash or a hang is a fault)")
                     ->type_name("LIB");
  cmd->add_option("--iut", args->iut,
                  "The command line of an implementation-under-test process (docs/iut.md; run by "
                  "/bin/sh) whose linear_fwd variants --op names (linear_fwd/VARIANT or "
                  "linear_fwd/VARIANT@TARGET)")
      ->type_name("COMMAND")
      ->excludes(plugin);
  cmd->add_option("--k", args->options.k, "The reduced dimension")
      ->capture_default_str()
      ->check(CountValidator("the reduced dimension", 1, uint64_t{1} << 20));
  cmd->add_option("--n", args->options.n, "Outputs of the probe row (columns of C)")
      ->capture_default_str()
      ->check(CountValidator("the number of columns", 1, 4096));
  cmd->add_option("--max-batch", args->options.max_batch,
                  "The largest batch: every size to 17, then around each power of two")
      ->capture_default_str()
      ->check(CountValidator("the largest batch", 1, 65536));
  cmd->add_option("--seed", args->options.seed, "Seed of the operands")
      ->capture_default_str()
      ->check(CountValidator("a seed", 0, kMaxSeed));
  cmd->add_option("--repeats", args->options.repeats, "Calls of the same product, run to run")
      ->capture_default_str()
      ->check(CountValidator("the calls", 2, 1000));
  cmd->add_option("--threads-list", args->threads,
                  "Thread counts tried where the kernel can set them, comma-separated; the first "
                  "is the baseline")
      ->capture_default_str();
  cmd->add_option("--time-budget", args->options.time_budget_seconds,
                  "Seconds per kernel after which batch sizes stop growing (0: none)")
      ->capture_default_str()
      ->check(NonNegativeValidator("seconds"));
  cmd->add_option("--require", args->require,
                  "Exit 1 unless every kernel is: invariant (no dimension changes bits), "
                  "deterministic (run to run), or none")
      ->capture_default_str();
  cmd->add_flag("--no-trees", args->no_trees,
                "Do not reveal the probe's summation trees where the batch size changes its bits "
                "(at the last size that keeps them and the first that changes them)");
  cmd->add_option("--json", args->json_path,
                  "Write the report (" + std::string(kInvarianceFormat) + ") here");
  cmd->callback([args] {
    try {
      RunInvariance(*args);
    } catch (const DotDoorError& e) {
      // A plugin or an IUT that cannot give its kernel: one line, no report.
      std::cerr << "ulpgate invariance: " << e.what() << "\n";
      ExitStatus() = kExitKernelFault;
    }
  });
}

}  // namespace ulpgate
