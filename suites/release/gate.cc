#include "suites/release/gate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

#include "suites/release/external_golden.h"
#include "suites/release/golden.h"
#include "suites/inputs/inputs.h"
#include "suites/engine/measure.h"
#include "suites/engine/plugins.h"

namespace ulpgate {

namespace fs = std::filesystem;
namespace {

std::string XmlEscaped(const std::string& text) {
  std::string s;
  for (char c : text) {
    switch (c) {
      case '&':
        s += "&amp;";
        break;
      case '<':
        s += "&lt;";
        break;
      case '>':
        s += "&gt;";
        break;
      case '"':
        s += "&quot;";
        break;
      case '\'':
        s += "&apos;";
        break;
      default:
        s += c;
    }
  }
  return s;
}

size_t CountStatus(const GateReport& report, const char* status) {
  return static_cast<size_t>(std::count_if(report.rows.begin(), report.rows.end(),
                                           [&](const GateRow& r) { return r.status == status; }));
}

}  // namespace

bool GateReport::failed() const { return failures() > 0; }

size_t GateReport::failures() const {
  return static_cast<size_t>(std::count_if(rows.begin(), rows.end(), RowFails));
}

GateReport RunGate(const GateOptions& options) {
  GateReport report;
  report.budgets_path = options.budgets_path;
  report.today = options.today.empty() ? LocalDate() : options.today;
  if (!IsValidDate(report.today)) {
    throw InputError("--today " + report.today + ": not a date YYYY-MM-DD");
  }
  const BudgetLedger ledger = ReadBudgetLedger(options.budgets_path);

  std::vector<const TargetInfo*> selected = options.targets;
  if (selected.empty()) {
    for (const TargetInfo& t : CompiledTargets()) selected.push_back(&t);
  }
  std::vector<const TargetInfo*> measured;
  std::vector<std::string> ran;
  for (const TargetInfo& t : CompiledTargets()) {
    const bool chosen = std::find(selected.begin(), selected.end(), &t) != selected.end();
    if (!chosen) {
      report.skipped_targets.push_back(t.name + " (not selected)");
      continue;
    }
    measured.push_back(&t);
    ran.push_back(t.name);
    if (!t.supported) report.model_targets.push_back(t.name + " (" + NotRunnableReason(t) + ")");
  }
  std::vector<const TargetInfo*> plugins;  // measured on the runs of their op and format
  for (const TargetInfo* t : selected) {
    if (IsPluginTarget(*t)) {
      plugins.push_back(t);
      ran.push_back(t->name);
    }
  }
  auto op_selected = [&](const std::string& op) {
    return options.ops.empty() ||
           std::find(options.ops.begin(), options.ops.end(), op) != options.ops.end();
  };
  BudgetLedger selected_ledger = ledger;
  selected_ledger.runs.clear();
  selected_ledger.rules.clear();
  for (const BudgetRun& run : ledger.runs) {
    if (op_selected(run.op)) selected_ledger.runs.push_back(run);
  }
  for (const BudgetRule& rule : ledger.rules) {
    if (op_selected(rule.op)) selected_ledger.rules.push_back(rule);
  }

  // Outputs made elsewhere: the external goldens beside the ledger, for the
  // rules that match a label; a label rule that matches none is a bad ledger,
  // found before anything is measured.
  bool any_external = false;
  for (const BudgetRule& rule : selected_ledger.rules) any_external = any_external || rule.external;
  const std::string golden_dir = [&] {
    const std::string dir = fs::path(options.budgets_path).parent_path().string();
    return dir.empty() ? std::string(".") : dir;
  }();
  std::vector<ExternalGolden> externals;
  if (any_external) externals = ReadExternalGoldens(golden_dir);
  for (const BudgetRule& rule : selected_ledger.rules) {
    if (!rule.external) continue;
    const bool found = std::any_of(externals.begin(), externals.end(), [&](const ExternalGolden& g) {
      return g.spec.op == rule.op && g.spec.dtype == rule.dtype && GlobMatch(rule.variant, g.spec.label);
    });
    if (!found) {
      throw InputError(fmt::format("{}: {}: label '{}' matches no external golden of {} in {} "
                                   "(golden bless --check REPORT writes one)",
                                   ledger.path, rule.pointer, rule.variant, rule.op,
                                   golden_dir + "/external"));
    }
  }

  std::vector<nlohmann::ordered_json> records;
  size_t done = 0, total = 0;
  for (const BudgetRun& run : selected_ledger.runs) total += run.suites.size();
  for (size_t r = 0; r < selected_ledger.runs.size(); ++r) {
    const BudgetRun& run = selected_ledger.runs[r];
    std::vector<const TargetInfo*> targets = measured;
    std::vector<std::string> variants = run.variants;
    // The plugins with kernels of the run's op in its format.
    for (const TargetInfo* t : plugins) {
      if (PluginOf(*t)->Gives(run.op, run.dtype)) targets.push_back(t);
    }
    if (!variants.empty()) {
      for (const std::string& v : PluginVariants(plugins, run.op, run.dtype)) variants.push_back(v);
    }
    if (targets.empty()) continue;
    for (const std::string& suite : run.suites) {
      if (options.progress) {
        options.progress(fmt::format("[{}/{}] {}{} {}", ++done, total, run.op,
                                     run.dtype == "f32" ? "" : " (" + run.dtype + ")", suite));
      }
      MeasureSpec spec;
      spec.op = run.op;
      spec.suite = suite;
      spec.dtype = run.dtype;
      spec.seed = run.seed;
      spec.n = run.n;
      spec.shape = run.shape;
      spec.variants = variants;
      spec.targets = targets;
      spec.threads = options.threads;
      Measurement m;
      try {
        m = Measure(spec);
      } catch (const InputError& e) {
        throw InputError(fmt::format("{}: {}: {}", ledger.path, run.pointer, e.what()));
      }
      for (MeasuredCase& c : m.cases) records.push_back(std::move(c.record));
    }
  }
  // Replayed now: their files may have changed since they were blessed.
  for (const ExternalGolden& g : externals) {
    if (options.progress) options.progress("replaying the external check " + g.spec.label);
    nlohmann::ordered_json record = ReplayExternal(g.spec, golden_dir, options.threads);
    record["target"] = kExternalTarget;
    records.push_back(std::move(record));
  }
  if (any_external) ran.push_back(kExternalTarget);
  report.rows = EvaluateBudgets(selected_ledger, records, ran, report.today);

  // The goldens' sweeps (2^24 inputs per kernel) on the targets this CPU
  // runs: a kernel wrong on one input in 2^20 escapes the sampled suites.
  std::vector<std::string> swept_ops;
  for (const BudgetRun& run : options.golden_sweeps ? selected_ledger.runs
                                                    : std::vector<BudgetRun>()) {
    if (GoldenSweepPlan(run.op).empty()) continue;
    if (std::find(swept_ops.begin(), swept_ops.end(), run.op) == swept_ops.end()) {
      swept_ops.push_back(run.op);
    }
  }
  for (const std::string& op : swept_ops) {
    GateRow row;
    row.rule = op + ".sweeps";
    row.limit = "digests_match";
    row.limit_value = "all";
    row.limit_number = 1;
    size_t run_count = 0, differing = 0;
    std::optional<CaseDifference> first;
    for (const TargetInfo* t : measured) {
      const std::string path = GoldenPath(golden_dir, t->name, op);
      if (!t->supported || !fs::exists(path)) continue;
      if (options.progress) options.progress(fmt::format("sweeps of {} on {} ({})", op, t->name, path));
      size_t run = 0;
      const std::vector<CaseDifference> differences =
          CheckGoldenSweeps(ReadGoldenFile(path), *t, options.threads, &run);
      run_count += run;
      differing += differences.size();
      if (!differences.empty() && !first) first = differences.front();
    }
    if (first) {
      const CaseDifference& d = *first;
      // "op variant TARGET [dtype] sweep ...": variant@TARGET [dtype].
      std::vector<std::string> words;
      for (size_t at = 0; at < d.label.size();) {
        const size_t end = std::min(d.label.find(' ', at), d.label.size());
        words.push_back(d.label.substr(at, end - at));
        at = end + 1;
      }
      row.where = words.size() > 3 ? words[1] + "@" + words[2] +
                                         (words[3] == "sweep" ? "" : " " + words[3])
                                   : d.label;
      row.message = fmt::format("{} of {} sweeps differ from the goldens, the first at {}: {}: {}",
                                differing, run_count, row.where, d.label,
                                d.note.empty() ? "its digest differs" : d.note);
      if (!d.outputs.empty()) {
        const OutputChange& o = d.outputs.front();
        row.message += fmt::format("; the kernel leaves its model first at {} (model {:#010x}, "
                                   "kernel {:#010x})",
                                   o.input.dump(), o.old_bits, o.new_bits);
      }
      if (!d.replay.empty()) row.message += "; replay: " + d.replay;
    }
    if (run_count == 0) {
      row.status = kSkipped;
      row.measured_value = std::nan("");
      row.message = "no golden sweeps of " + op + " in " + golden_dir +
                    " on a target this CPU runs (golden bless writes them)";
    } else {
      row.status = differing == 0 ? kPass : kFail;
      row.measured = fmt::format("{} of {}", run_count - std::min(run_count, differing), run_count);
      row.measured_value =
          static_cast<double>(run_count - std::min(run_count, differing)) / run_count;
      row.evaluated = "kernel";
      if (row.where.empty()) row.where = "every kernel run here";
    }
    report.rows.push_back(std::move(row));
  }
  return report;
}

nlohmann::ordered_json GateJson(const GateReport& report) {
  nlohmann::ordered_json j;
  j["format"] = "ulpgate-gate-2";
  j["budgets"] = report.budgets_path;
  j["today"] = report.today;
  j["status"] = report.failed() ? kFail : kPass;
  j["counts"] = nlohmann::ordered_json::object();
  for (const char* status : {kPass, kFail, kWaived, kExpired, kSkipped}) {
    j["counts"][status] = CountStatus(report, status);
  }
  j["rows"] = nlohmann::ordered_json::array();
  for (const GateRow& row : report.rows) {
    nlohmann::ordered_json measured;  // null when nothing was measured
    if (!std::isnan(row.measured_value)) measured = row.measured_value;
    j["rows"].push_back({{"rule", row.rule},
                         {"limit", row.limit},
                         {"status", row.status},
                         {"measured", measured},
                         {"measured_text", row.measured},
                         {"limit_value", row.limit_number},
                         {"where", row.where},
                         {"evaluated", row.evaluated},
                         {"message", row.message}});
  }
  j["model_targets"] = report.model_targets;
  j["skipped_targets"] = report.skipped_targets;
  return j;
}

std::string GateJunitXml(const GateReport& report) {
  const size_t tests = report.rows.size();
  const size_t failures = report.failures();
  const size_t skipped = CountStatus(report, kSkipped);
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += fmt::format(
      "<testsuites name=\"ulpgate gate\" tests=\"{}\" failures=\"{}\" errors=\"0\" "
      "skipped=\"{}\">\n",
      tests, failures, skipped);
  xml += fmt::format(
      "  <testsuite name=\"ulpgate gate\" tests=\"{}\" failures=\"{}\" "
      "errors=\"0\" skipped=\"{}\">\n",
      tests, failures, skipped);
  xml += "    <properties>\n";
  xml += fmt::format("      <property name=\"budgets\" value=\"{}\"/>\n",
                     XmlEscaped(report.budgets_path));
  xml += fmt::format("      <property name=\"today\" value=\"{}\"/>\n", report.today);
  for (const std::string& t : report.model_targets) {
    xml += fmt::format("      <property name=\"model_target\" value=\"{}\"/>\n", XmlEscaped(t));
  }
  for (const std::string& t : report.skipped_targets) {
    xml += fmt::format("      <property name=\"skipped_target\" value=\"{}\"/>\n", XmlEscaped(t));
  }
  xml += "    </properties>\n";
  for (const GateRow& row : report.rows) {
    const std::string summary =
        fmt::format("measured {} (limit {}) at {}", row.measured, row.limit_value, row.where);
    xml += fmt::format("    <testcase classname=\"ulpgate.gate\" name=\"{}.{}\">\n",
                       XmlEscaped(row.rule), XmlEscaped(row.limit));
    if (RowFails(row)) {
      xml += fmt::format("      <failure type=\"{}\" message=\"{}\">{}</failure>\n", row.status,
                         XmlEscaped(row.message), XmlEscaped(summary));
    } else if (row.status == kSkipped) {
      xml += fmt::format("      <skipped message=\"{}\"/>\n", XmlEscaped(row.message));
    } else {
      xml +=
          fmt::format("      <system-out>{}: {}{}</system-out>\n", row.status, XmlEscaped(summary),
                      row.message.empty() ? "" : "; " + XmlEscaped(row.message));
    }
    xml += "    </testcase>\n";
  }
  xml += "  </testsuite>\n</testsuites>\n";
  return xml;
}

std::vector<std::string> FailingBudgets(const std::string& budgets_path,
                                        const std::vector<const TargetInfo*>& targets,
                                        const std::vector<std::string>& ops, unsigned threads) {
  GateOptions options;
  options.budgets_path = budgets_path;
  options.targets = targets;
  options.ops = ops;
  options.threads = threads;
  options.golden_sweeps = false;  // budgets only: the goldens are what bless rewrites
  std::vector<std::string> failing;
  for (const GateRow& row : RunGate(options).rows) {
    if (row.status != kFail && row.status != kExpired) continue;
    failing.push_back(fmt::format("{} {}.{}: {}", row.status, row.rule, row.limit,
                                  row.message.empty()
                                      ? fmt::format("measured {}, limit {}, at {}", row.measured,
                                                    row.limit_value, row.where)
                                      : row.message));
  }
  return failing;
}

}  // namespace ulpgate
