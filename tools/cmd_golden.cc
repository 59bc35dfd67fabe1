// ulpgate golden bless | check: writes the golden snapshots of every op on
// every compiled target, from the targets' models, and compares fresh runs
// with them bit for bit: the kernels of the targets this CPU runs, the models
// of the others.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>

#include "oracles/float_text.h"
#include "suites/release/gate.h"
#include "suites/release/external_golden.h"
#include "suites/release/golden.h"
#include "suites/inputs/inputs.h"
#include "suites/engine/plugins.h"
#include "suites/reports/report.h"
#include "suites/reveal/reveal_golden.h"
#include "tools/cli.h"
#include "tools/text_table.h"

namespace ulpgate {
namespace {

namespace fs = std::filesystem;

struct GoldenArgs {
  std::string dir = "golden";
  std::string target;  // empty: all, or none with --plugin
  std::vector<std::string> plugins;
  std::string op = "all";
  unsigned threads = 0;
  std::string force;
  std::string budgets;  // empty: <dir>/budgets.json
  std::string check_report;    // bless: a `check --json` report to bless as an external golden
  std::string expected_model;  // with it: the model the outputs must follow
};

void Progress(const std::string& what);
void EndProgress();
std::vector<std::string> SelectedOps(const std::string& spec);

// The top-level fields of two records that differ: "max_ulp 6.4 -> 7, histogram".
std::string RecordChanges(const nlohmann::ordered_json& old_record,
                          const nlohmann::ordered_json& new_record) {
  std::string s;
  for (const auto& [key, value] : new_record.items()) {
    const bool had = old_record.contains(key);
    if (had && old_record.at(key) == value) continue;
    std::string change = key;
    if (had && value.is_primitive() && old_record.at(key).is_primitive()) {
      change += " " + old_record.at(key).dump() + " -> " + value.dump();
    } else if (!had) {
      change += " (new)";
    }
    s += (s.empty() ? "" : ", ") + change;
  }
  for (const auto& [key, value] : old_record.items()) {
    if (!new_record.contains(key)) s += (s.empty() ? "" : ", ") + key + " (gone)";
  }
  return s;
}

// Replays every external golden; counts into matched and differing.
void CheckExternals(const GoldenArgs& args, size_t& matched, size_t& differing) {
  const std::vector<std::string> ops = SelectedOps(args.op);
  for (const ExternalGolden& g : ReadExternalGoldens(args.dir)) {
    if (std::find(ops.begin(), ops.end(), g.spec.op) == ops.end()) continue;
    Progress("replaying the check " + g.spec.label);
    const nlohmann::ordered_json record = ReplayExternal(g.spec, args.dir, args.threads);
    EndProgress();
    if (record == g.record) {
      PrintWrapped(std::cout,
                   fmt::format("ok      EXTERNAL   {} ({} {})", g.path, g.spec.dtype, g.spec.op),
                   8);
      ++matched;
    } else {
      std::cout << fmt::format("DIFFERS EXTERNAL   {}:\n", g.path);
      std::cout << "  ";
      PrintWrapped(std::cout, RecordChanges(g.record, record), 4, 2);
      ++differing;
    }
  }
}

// Blesses the check a report describes, or re-blesses the external goldens
// of `ops` (empty: every one).
void BlessExternals(const GoldenArgs& args, const std::vector<std::string>& ops = {}) {
  std::vector<ExternalGolden> goldens;
  if (!args.check_report.empty()) {
    goldens.push_back({"", SpecFromCheckReport(args.check_report, args.dir, args.expected_model), {}, {}});
  } else {
    for (ExternalGolden& g : ReadExternalGoldens(args.dir)) {
      if (ops.empty() || std::find(ops.begin(), ops.end(), g.spec.op) != ops.end()) {
        goldens.push_back(std::move(g));
      }
    }
  }
  for (const ExternalGolden& given : goldens) {
    // The data is copied beside the golden (again: the copy is the data).
    ExternalGolden g = StoreExternalData(args.dir, given.spec);
    if (!given.source.is_null()) g.source = given.source;
    const CheckSpec& spec = g.spec;
    Progress("checking " + spec.label);
    const nlohmann::ordered_json record = ReplayExternal(spec, args.dir, args.threads);
    EndProgress();
    const std::string path = WriteExternalGolden(args.dir, spec, g.source, record);
    PrintWrapped(std::cout, fmt::format("wrote   EXTERNAL   {} ({} {})", path, spec.dtype, spec.op),
                 8);
    std::cout << "  ";
    PrintWrapped(std::cout, "follows " + record.at("conformance").at("matching").dump(), 4, 2);
  }
}

bool Tty() { return ::isatty(STDERR_FILENO) != 0; }

void Progress(const std::string& what) {
  if (Tty()) std::cerr << "\r\033[K  " << what << std::flush;
}

void EndProgress() {
  if (Tty()) std::cerr << "\r\033[K" << std::flush;
}

std::vector<std::string> SelectedOps(const std::string& spec) {
  const std::vector<std::string> all = MeasurableOps();
  std::vector<std::string> ops = SplitList(spec);
  if (ops.empty()) return all;
  for (const std::string& op : ops) {
    if (std::find(all.begin(), all.end(), op) == all.end()) {
      std::string known;
      for (const auto& o : all) known += (known.empty() ? "" : ", ") + o;
      throw UsageError(fmt::format("--op: unknown op '{}' ({})", op, known));
    }
  }
  return ops;
}

std::string FileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// "grad=0x1.8p-1 t=-0x1p-3", "instance 1 y[2,5]", "epoch 40".
std::string InputText(const nlohmann::ordered_json& input) {
  if (!input.is_object()) return "?";
  if (input.contains("epoch")) return fmt::format("epoch {}", input["epoch"].dump());
  if (input.contains("name")) {
    return fmt::format("instance {} {}", input["instance"].dump(),
                       input["name"].get<std::string>());
  }
  std::string text;
  for (const auto& [key, value] : input.items()) {
    if (key == "index" || key == "bits" || !value.is_string()) continue;
    text += fmt::format("{}{}={}", text.empty() ? "" : " ", key, value.get<std::string>());
  }
  return text;
}

std::string FloatText(uint32_t bits) {
  return fmt::format("{} ({:#010x})", HexFloat(FloatFromBits(bits)), bits);
}

// "1 output differs", "3 sampled losses differ".
std::string OutputsDiffer(const CaseDifference& d) {
  const bool drift = d.label.rfind(kDriftOp, 0) == 0;
  const uint64_t n = d.outputs_differing;
  return fmt::format("{} {} {}", n, drift ? (n == 1 ? "sampled loss" : "sampled losses")
                                          : (n == 1 ? "output" : "outputs"),
                     n == 1 ? "differs" : "differ");
}

// Per case: the differing outputs (index, input, old, new) and a side-by-side
// table of the statistics that changed.
void PrintDifferences(const std::vector<CaseDifference>& differences, std::ostream& out) {
  for (const CaseDifference& d : differences) {
    if (!d.note.empty()) {
      out << "  ";
      PrintWrapped(out, fmt::format("{}: {}", d.label, d.note), 4, 2);
      if (!d.replay.empty()) out << "    replay: " << WrappedCommand(d.replay, 12, 6) << '\n';
      continue;
    }
    out << fmt::format("  {}:", d.label);
    if (d.outputs_differing > 0) out << ' ' << OutputsDiffer(d);
    out << '\n';
    if (d.outputs_differing == 0 && !d.outputs.empty()) {
      out << "    the first input where the kernel leaves its model (old: the model's output, "
             "new: the kernel's):\n";
    }
    if (!d.outputs.empty()) {
      TextTable outputs({"index", "input", "old output", "new output"});
      outputs.SetLeftAligned({1, 2, 3});
      for (const OutputChange& o : d.outputs) {
        outputs.AddRow({std::to_string(o.index), InputText(o.input),
                        o.old_text.empty() ? FloatText(o.old_bits) : o.old_text,
                        o.new_text.empty() ? FloatText(o.new_bits) : o.new_text});
      }
      outputs.Print(out, "    ");
    }
    if (!d.fields.empty()) {
      TextTable fields({"field", "old", "new"});
      fields.SetLeftAligned({0, 1, 2});
      for (const FieldChange& f : d.fields) fields.AddRow({f.field, f.old_value, f.new_value});
      fields.Print(out, "    ");
    }
    if (!d.replay.empty()) out << "    replay: " << WrappedCommand(d.replay, 12, 6) << '\n';
  }
}

// The ops a target has goldens of: a plugin's (or an IUT's), only the
// elementwise, linear and MSE ops it gives. Its casts are measured by run and
// check, but their goldens find kernels by the compiled target's bits, so a
// plugin's casts have none yet.
std::vector<std::string> OpsOf(const TargetInfo& target, const std::vector<std::string>& ops) {
  const LoadedPlugin* plugin = PluginOf(target);
  if (plugin == nullptr) return ops;
  std::vector<std::string> only;
  for (const std::string& op : ops) {
    const OpInfo* info = FindOp(op);
    const bool measured = info != nullptr && info->family != OpFamily::kCast &&
                          info->family != OpFamily::kBlockQuant;
    if (measured && plugin->GivesOp(op)) only.push_back(op);
  }
  return only;
}

// The command that writes a target's goldens of an op.
std::string BlessCommand(const TargetInfo& target, const std::string& op) {
  if (const LoadedPlugin* p = PluginOf(target)) {
    return fmt::format("ulpgate golden bless {} --op {}", p->Argument(), op);
  }
  return fmt::format("ulpgate golden bless --target {} --op {}", target.name, op);
}

// Only plugins selected: the compiled targets' goldens and the external ones
// are not checked or blessed.
bool PluginsOnly(const GoldenArgs& args) { return args.target.empty() && !args.plugins.empty(); }

// ---- check ----

// Re-runs the probes of every reveal golden whose kernel this CPU runs;
// counts into matched and differing, and the files not checked here.
void CheckRevealGoldenFiles(const GoldenArgs& args, size_t& matched, size_t& differing,
                            size_t& not_checked) {
  Progress("re-running the probes of " + RevealGoldenDirectory(args.dir));
  const std::vector<RevealGoldenFileCheck> files =
      CheckRevealGoldens(args.dir, args.op == "all" ? std::vector<std::string>{} : SelectedOps(args.op));
  EndProgress();
  for (const RevealGoldenFileCheck& f : files) {
    if (!f.not_checked.empty()) {
      PrintWrapped(std::cout,
                   fmt::format("NOT CHECKED REVEAL {}: {} (its kernel does not run here: {})",
                               f.path, f.kernel, f.not_checked),
                   8);
      ++not_checked;
    } else if (f.check.passed()) {
      PrintWrapped(std::cout,
                   fmt::format("ok      REVEAL     {} ({}: {} probes, {:.3f} s)", f.path, f.kernel,
                               f.check.probes, f.seconds),
                   8);
      ++matched;
    } else {
      PrintWrapped(std::cout,
                   fmt::format("FAIL    REVEAL     {} ({}): {}", f.path, f.kernel,
                               RevealGoldenFailure(f)),
                   8);
      ++differing;
    }
  }
}

struct GoldenDirectory {
  const TargetInfo* target;
  std::vector<GoldenFile> files;  // validated, in op order
};

void Check(const GoldenArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> ops = SelectedOps(args.op);
  // Every selected compiled target is checked: by running its kernels where
  // this CPU runs it (RAN), else by evaluating its models (MODEL ONLY).
  const std::vector<const TargetInfo*> targets = TargetsAndPlugins(args.target, args.plugins);
  if (!fs::is_directory(args.dir)) throw UsageError(args.dir + ": no such golden directory");
  // Every selected file is validated before anything runs.
  std::vector<GoldenDirectory> directories;
  std::vector<const TargetInfo*> uncovered;
  for (const fs::directory_entry& entry : fs::directory_iterator(args.dir)) {
    if (!entry.is_directory()) continue;  // budgets.json, worst-case lists
    const std::string name = entry.path().filename().string();
    if (name == "external") continue;  // outputs made elsewhere (external_golden.h)
    if (name == "reveal") continue;    // summation models and probes (reveal_golden.h)
    // The ARM targets' and the CUDA targets', golden directories of their
    // own checked through their IUTs (--dir golden/arm64 --iut ... under
    // qemu, docs/iut.md; --dir golden/cuda --iut ulpgate-iut-cuda on a GPU,
    // docs/gpu.md).
    if (name == "arm64" || name == "cuda") continue;
    if (FindAnyTarget(name) == nullptr) {
      // A plugin's goldens say so: reading one names the plugin to give.
      for (const ElementwiseOpInfo& op : ElementwiseOps()) {
        const std::string plugin_golden = GoldenPath(args.dir, name, std::string(op.name));
        if (fs::exists(plugin_golden)) ReadGoldenFile(plugin_golden);
      }
      throw InputError(entry.path().string() + ": not a golden directory (the name of a compiled "
                       "target, e.g. " + CompiledTargets().front().name + ", of a plugin given "
                       "with --plugin or an IUT's target given with --iut, external, arm64 or cuda)");
    }
  }
  for (const TargetInfo* t : targets) {
    const fs::path target_dir = fs::path(args.dir) / t->name;
    if (!fs::is_directory(target_dir)) {
      uncovered.push_back(t);
      continue;
    }
    GoldenDirectory d{t, {}};
    for (const std::string& op : OpsOf(*t, ops)) {
      const std::string path = GoldenPath(args.dir, t->name, op);
      if (fs::exists(path)) d.files.push_back(ReadGoldenFile(path));
    }
    if (args.op == "all") {
      for (const fs::directory_entry& file : fs::directory_iterator(target_dir)) {
        const std::string name = file.path().filename().string();
        // Leftovers of an interrupted bless (<op>.json.tmp.<pid>) are not goldens.
        if (name.find(".tmp.") != std::string::npos || file.path().extension() != ".json") continue;
        const std::string op = file.path().stem().string();
        // Not an op's file: reading it fails naming what is wrong.
        const auto own = OpsOf(*t, ops);
        if (std::find(own.begin(), own.end(), op) == own.end()) ReadGoldenFile(file.path().string());
      }
    }
    directories.push_back(std::move(d));
  }

  size_t matched = 0, differing = 0, faulted = 0;
  std::vector<std::string> ran, model_only;
  for (const GoldenDirectory& d : directories) {
    const bool runs = d.target->supported;
    const char* how = runs ? "RAN       " : "MODEL ONLY";
    (runs ? ran : model_only).push_back(d.target->name);
    for (const std::string& op : OpsOf(*d.target, ops)) {
      const auto file = std::find_if(d.files.begin(), d.files.end(),
                                     [&](const GoldenFile& f) { return f.op == op; });
      const std::string path = GoldenPath(args.dir, d.target->name, op);
      if (file == d.files.end()) {
        PrintWrapped(
            std::cout,
            fmt::format("DIFFERS {} {}: missing (run {})", how, path, BlessCommand(*d.target, op)),
            8);
        ++differing;
        continue;
      }
      Progress(fmt::format("checking {} ({})", path, runs ? "running its kernels" : "on its models"));
      const GoldenFile now = MeasureGolden(RecordedRuns(*file), *d.target, op, args.threads,
                                           GoldenSource::kKernels, nullptr, &*file);
      std::vector<CaseDifference> differences = CompareGolden(*file, now);
      for (const std::string& label : PlannedCaseLabels(op, d.target->name)) {
        const bool recorded = std::any_of(
            file->json["cases"].begin(), file->json["cases"].end(),
            [&](const nlohmann::ordered_json& c) { return GoldenCaseLabel(c) == label; });
        if (!recorded) {
          differences.push_back({label, fmt::format("missing from the golden file (run {})",
                                                    BlessCommand(*d.target, op)),
                                 {}, {}, 0, {}});
        }
      }
      EndProgress();
      const size_t sweeps = file->json.contains("sweeps") ? file->json["sweeps"].size() : 0;
      const size_t cases = file->json["cases"].size() + sweeps;
      const std::string what =
          sweeps == 0 ? fmt::format("{} cases", cases)
                      : fmt::format("{} cases, {} of them sweeps{}", cases, sweeps,
                                    now.sweeps_run == 0 ? " (recorded digests: not run)" : "");
      faulted += now.faults.size();
      if (differences.empty()) {
        PrintWrapped(std::cout, fmt::format("ok      {} {} ({})", how, path, what), 8);
        ++matched;
      } else {
        PrintWrapped(std::cout,
                     fmt::format("DIFFERS {} {}: {} of {}", how, path, differences.size(), what),
                     8);
        PrintDifferences(differences, std::cout);
        ++differing;
      }
    }
  }
  for (const TargetInfo* t : uncovered) {
    PrintWrapped(std::cout,
                 fmt::format("NOT COVERED {}: no golden files for this target in {} (run {})",
                             t->name, args.dir, BlessCommand(*t, "all")),
                 8);
  }
  auto list = [](const std::vector<std::string>& names) {
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
    return s.empty() ? std::string("none") : s;
  };
  size_t reveal_not_checked = 0;
  if (!PluginsOnly(args)) {
    CheckExternals(args, matched, differing);
    CheckRevealGoldenFiles(args, matched, differing, reveal_not_checked);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << fmt::format("golden check: {} files match, {} differ, {} targets not covered{} "
                           "({:.1f} s)\n",
                           matched, differing, uncovered.size(),
                           reveal_not_checked == 0
                               ? std::string()
                               : fmt::format(", {} reveal goldens not checked here",
                                             reveal_not_checked),
                           seconds);
  std::cout << "  ";
  PrintWrapped(std::cout, fmt::format("RAN (kernels run on this CPU): {}", list(ran)), 4, 2);
  if (!model_only.empty()) {
    std::string why;
    for (const std::string& name : model_only) {
      why += fmt::format("{}{} ({})", why.empty() ? "" : ", ", name,
                         NotRunnableReason(*FindTarget(name)));
    }
    std::cout << "  ";
    PrintWrapped(std::cout, fmt::format("MODEL ONLY (models evaluated, kernels not run): {}", why),
                 4, 2);
    std::cout << "  A MODEL ONLY check catches a change of a model or of the oracle, never a bug in\n"
                 "  that target's kernels: only a CPU that runs the target can.\n";
  }
  if (faulted > 0) {
    std::cout << fmt::format("  {} case{} faulted (crashed, hung or wrote outside its output): "
                             "not measured, named above with their replays\n",
                             faulted, faulted == 1 ? "" : "s");
  }
  if (differing > 0 || !uncovered.empty()) ExitStatus() = 1;
  if (faulted > 0) ExitStatus() = kExitKernelFault;
}

// ---- bless ----

// Removes <op>.json.tmp.<pid> files left by a bless that died before its
// rename (the pid no longer runs).
void RemoveStaleTemporaries(const fs::path& dir) {
  if (!fs::is_directory(dir)) return;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const size_t at = name.find(".json.tmp.");
    if (at == std::string::npos) continue;
    const std::string pid = name.substr(at + 10);
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH) {
      fs::remove(entry.path());
      std::cout << fmt::format("removed {} (left by an interrupted bless)\n", entry.path().string());
    }
  }
}

// "output_digest 0123.. -> 4567.. (3 outputs differ), max_ulp 0.5 -> 0.75".
std::string ChangeSummary(const CaseDifference& d) {
  if (!d.note.empty()) return d.note;
  std::string s;
  bool digest = false;
  for (const FieldChange& f : d.fields) {
    s += fmt::format("{}{} {} -> {}", s.empty() ? "" : ", ", f.field, f.old_value, f.new_value);
    if ((f.field == "output_digest" || f.field == "loss_digest") && d.outputs_differing > 0) {
      s += " (" + OutputsDiffer(d) + ")";
      digest = true;
    }
  }
  if (!digest && d.outputs_differing > 0) s += (s.empty() ? "" : ", ") + OutputsDiffer(d);
  return s;
}

void Bless(const GoldenArgs& args) {
  if (!args.check_report.empty()) {
    BlessExternals(args);
    return;
  }
  if (!args.expected_model.empty()) throw UsageError("--expect-model goes with --check REPORT");
  const std::vector<std::string> ops = SelectedOps(args.op);
  // Goldens are the targets' models, so every compiled target is blessed
  // whatever this CPU runs.
  const std::vector<const TargetInfo*> targets = TargetsAndPlugins(args.target, args.plugins);
  // Existing goldens are read first: a malformed one stops the bless before
  // anything runs or is written.
  std::vector<std::optional<GoldenFile>> old_files;
  for (const TargetInfo* t : targets) {
    for (const std::string& op : OpsOf(*t, ops)) {
      const std::string path = GoldenPath(args.dir, t->name, op);
      old_files.push_back(fs::exists(path) ? std::optional<GoldenFile>(ReadGoldenFile(path))
                                           : std::nullopt);
    }
  }
  const std::string budgets = args.budgets.empty() ? args.dir + "/budgets.json" : args.budgets;
  std::vector<std::string> failing;
  if (args.budgets.empty() && !fs::exists(budgets)) {
    std::cout << fmt::format("no budget ledger at {}: no budgets to check\n", budgets);
  } else {
    Progress("checking the budgets of " + budgets);
    failing = FailingBudgets(budgets, targets, ops, args.threads);
  }
  std::optional<ForcedBless> forced;
  if (!failing.empty()) {
    std::cout << fmt::format("budgets failing on the targets being blessed ({}):\n", budgets);
    for (const std::string& row : failing) std::cout << "  " << row << '\n';
    const bool faulted = failing.front().rfind("FAULT ", 0) == 0;
    if (faulted) {
      std::cout << "golden bless: refused, nothing written: a kernel faulted (crashed, hung or "
                   "wrote outside its output), which no --force blesses; fix the kernel\n";
      ExitStatus() = kExitKernelFault;
      return;
    }
    if (args.force.empty()) {
      std::cout << "golden bless: refused, nothing written (fix the kernels or the budgets, or "
                   "bless anyway with --force REASON, which is recorded)\n";
      ExitStatus() = 1;
      return;
    }
    forced = ForcedBless{args.force, failing};
    std::cout << "blessing anyway (--force): the reason and these rows are recorded in each file\n";
  }
  // Everything is measured before anything is written.
  std::vector<GoldenFile> new_files;
  for (const TargetInfo* t : targets) {
    for (const std::string& op : OpsOf(*t, ops)) {
      Progress(fmt::format("measuring {} on {}", op, t->name));
      GoldenFile f = MeasureGolden(GoldenPlan(op), *t, op, args.threads, GoldenSource::kModels,
                                   forced ? &*forced : nullptr);
      f.path = GoldenPath(args.dir, t->name, op);
      new_files.push_back(std::move(f));
    }
  }
  EndProgress();
  // A faulted kernel measured nothing to bless: every fault is named, and
  // nothing is written.
  size_t faults = 0;
  for (const GoldenFile& f : new_files) {
    for (const auto& [label, fault] : f.faults) {
      std::cout << "FAULT     ";
      PrintWrapped(std::cout, fmt::format("{}: {}: {}", f.path, label, fault.text), 10, 10);
      std::cout << "  replay: " << WrappedCommand(fault.replay, 10, 6) << '\n';
      ++faults;
    }
  }
  if (faults > 0) {
    std::cout << fmt::format("golden bless: refused, nothing written: {} case{} faulted (a kernel "
                             "that crashes, hangs or writes outside its output has no goldens; "
                             "fix it, or bless the other targets and ops alone)\n",
                             faults, faults == 1 ? "" : "s");
    ExitStatus() = kExitKernelFault;
    return;
  }
  size_t created = 0, changed = 0, unchanged = 0;
  for (size_t i = 0; i < new_files.size(); ++i) {
    const GoldenFile& f = new_files[i];
    const fs::path dir = fs::path(f.path).parent_path();
    fs::create_directories(dir);
    RemoveStaleTemporaries(dir);
    const std::string text = GoldenText(f);
    if (!old_files[i]) {
      WriteJsonFile(f.path, f.json, "bless_before_rename");
      PrintWrapped(std::cout,
                   fmt::format("new       {} ({} cases)", f.path, f.json["cases"].size()), 10);
      ++created;
      continue;
    }
    if (FileText(f.path) == text) {
      std::cout << fmt::format("unchanged {}\n", f.path);
      ++unchanged;
      continue;
    }
    const std::vector<CaseDifference> differences = CompareGolden(*old_files[i], f);
    WriteJsonFile(f.path, f.json, "bless_before_rename");
    ++changed;
    PrintWrapped(std::cout,
                 fmt::format("changed   {}: {} of {} cases{}", f.path, differences.size(),
                             f.json["cases"].size(),
                             differences.empty() ? " (header only: format or --force record)" : ""),
                 10);
    for (const CaseDifference& d : differences) {
      PrintWrapped(std::cout, fmt::format("  {}: {}", d.label, ChangeSummary(d)), 4);
    }
  }
  std::cout << fmt::format("golden bless: {} new, {} changed, {} unchanged\n", created, changed,
                           unchanged);
  // Outputs made elsewhere, replayed: those of the ops blessed.
  if (!PluginsOnly(args)) BlessExternals(args, ops);
}

void AddCommonOptions(CLI::App* cmd, GoldenArgs& args) {
  cmd->add_option("--dir", args.dir, "Golden directory: <dir>/<TARGET>/<op>.json")
      ->capture_default_str();
  cmd->add_option("--target", args.target,
                  "Targets: all (the default: every compiled target; with --plugin, none) or a "
                  "comma-separated list");
  AddPluginOption(cmd, &args.plugins,
                  ": its goldens are <dir>/<plugin name>/<op>.json, blessed from the models "
                  "its kernels claim");
  cmd->add_option("--op", args.op, "Ops: all (default) or a comma-separated list (see 'ulpgate list')")
      ->capture_default_str();
  AddThreadsOption(cmd, &args.threads);
}

}  // namespace

void AddGoldenCommand(CLI::App& app) {
  auto args = std::make_shared<GoldenArgs>();
  auto* golden = app.add_subcommand(
      "golden", "Golden snapshots: write them (bless) or compare fresh runs with them (check)");
  golden->require_subcommand(1);
  auto* check = golden->add_subcommand(
      "check",
      "Re-run what every golden file records and compare bit for bit: the kernels of the targets "
      "this CPU runs (RAN), the models of the others (MODEL ONLY); exit 1 on any difference or "
      "a target without goldens, 2 on a malformed file");
  AddCommonOptions(check, *args);
  check->callback([args] { Check(*args); });
  auto* bless = golden->add_subcommand(
      "bless", "Evaluate the golden plan on every selected target's models (what its kernels "
               "must give) and write the golden files atomically, saying what changed");
  AddCommonOptions(bless, *args);
  bless->add_option("--force", args->force,
                    "Bless although budgets fail; the reason and the failing rows are recorded "
                    "in each file written");
  bless->add_option("--budgets", args->budgets,
                    "The budget ledger bless checks first (default: DIR/budgets.json); bless "
                    "refuses while a budget fails on the targets being blessed");
  bless->add_option("--check", args->check_report,
                    "Bless the outputs a `check --json` report measured (made elsewhere) as "
                    "DIR/external/<label>.json, its data copied beside it (<label>.npz), so that "
                    "the directory can be copied anywhere. `golden check` replays it, the gate's "
                    "rules match it by label");
  bless->add_option("--expect-model", args->expected_model,
                    "With --check: the model the outputs must follow (the gate's "
                    "conformance_required checks it)");
  bless->callback([args] { Bless(*args); });
}

}  // namespace ulpgate
