#include "suites/reports/replay.h"
#include "suites/release/gate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string_view>

#include "suites/inputs/numpy_files.h"
#include "suites/release/external_golden.h"
#include "suites/release/golden.h"
#include "suites/inputs/inputs.h"
#include "suites/engine/measure.h"
#include "suites/engine/plugins.h"
#include "suites/reports/report.h"
#include "suites/reveal/reveal_golden.h"

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

}  // namespace

// The command that measures one record of `spec` again on its own: the same
// suite, seed and count give the same inputs and call plan, so the same
// numbers. A target this CPU cannot run was measured on its model, which
// `run --emulate-unsupported` reports too; drift has no such switch, so its
// replay needs a CPU that runs the target. A plugin's kernels are named by
// NAME@TARGET beside the --plugin or --iut that loads it (suites/reports/replay.h).
std::string ReplayCommand(const MeasureSpec& spec, const nlohmann::ordered_json& record) {
  const std::string target = record.at("target").get<std::string>();
  const std::string variant = record.at("variant").get<std::string>();
  if (spec.op == kDriftOp) {
    return fmt::format("ulpgate drift --scenario {} --dtype {} --epochs {} --variants {} --target {}",
                       ShellWord(spec.suite), spec.dtype, spec.n, ShellWord(variant), ShellWord(target));
  }
  ReplayKernel kernel = ReplayKernelOf(record);
  kernel.op = spec.op;
  kernel.dtype = spec.dtype;
  for (const TargetInfo* t : spec.targets) {
    if (const LoadedPlugin* plugin = t->name == target ? PluginOf(*t) : nullptr) kernel.source = plugin->Source();
  }
  return ReplayRunCommand(kernel, spec.suite, spec.seed, spec.n, spec.shape);
}

namespace {

// The `check` that measures an external golden's outputs again. Its files
// are named from the golden (ResolveExternalFile); the command names them
// from the current directory, as a person would type it.
std::string ExternalReplayCommand(const CheckSpec& spec, const std::string& golden_dir) {
  const fs::path here = fs::current_path();
  auto file = [&](const std::string& name) {
    const auto [path, array] = SplitArraySpec(ResolveExternalFile(name, golden_dir));
    const fs::path p = fs::absolute(path).lexically_normal();
    const fs::path relative = p.lexically_relative(here);
    const bool inside = !relative.empty() && relative.begin()->string() != "..";
    return ShellWord((inside ? relative : p).string() + (array.empty() ? "" : ":" + array));
  };
  std::string command = fmt::format("ulpgate check --op {} --dtype {} --inputs {} --outputs {} --label {}",
                                    spec.op, spec.dtype, file(spec.inputs), file(spec.outputs),
                                    ShellWord(spec.label));
  for (const std::string& model : spec.models) command += " --model " + ShellWord(model);
  if (!spec.expected_model.empty()) command += " --require-model " + ShellWord(spec.expected_model);
  return command;
}

size_t CountStatus(const GateReport& report, const char* status) {
  return CountRows(report, status);
}

// How bad a status is, for a rule's status (its worst row's).
int Severity(const std::string& status) {
  if (status == kFail || status == kExpired) return 3;
  if (status == kWaived) return 2;
  if (status == kPass) return 1;
  return 0;
}

// A rule's rows are consecutive; its status is its worst row's (the first
// of FAIL and EXPIRED when it has both).
std::vector<std::string> RuleStatuses(const GateReport& report) {
  std::vector<std::string> statuses;
  const std::string* rule = nullptr;
  for (const GateRow& row : report.rows) {
    if (rule == nullptr || *rule != row.rule) {
      statuses.push_back(row.status);
    } else if (Severity(row.status) > Severity(statuses.back())) {
      statuses.back() = row.status;
    }
    rule = &row.rule;
  }
  return statuses;
}

// Text in Markdown, shown as written: the characters that would start markup
// escaped (an underscore only at a word's edge, where it could open
// emphasis, so that names like max_ulp stay readable in the raw file), a
// cell's | too, line breaks as spaces.
std::string MarkdownText(const std::string& text) {
  auto word_char = [&](size_t i) {
    return i < text.size() && std::isalnum(static_cast<unsigned char>(text[i]));
  };
  std::string s;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n' || c == '\r') {
      s += ' ';
      continue;
    }
    const bool edge_underscore = c == '_' && !(i > 0 && word_char(i - 1) && word_char(i + 1));
    if (edge_underscore || std::string_view("\\`*[]<|").find(c) != std::string_view::npos) s += '\\';
    s += c;
  }
  return s;
}

// A code span that holds any text: fenced by one more backtick than the
// longest run inside it. In a table cell a | ends the cell even inside a
// code span, so there it is escaped.
std::string MarkdownCode(const std::string& text, bool in_table = false) {
  size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  const bool pad = !text.empty() && (text.front() == '`' || text.back() == '`');
  std::string code = text;
  for (char& c : code) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::string cell;
  for (char c : code) cell += in_table && c == '|' ? std::string("\\|") : std::string(1, c);
  return fence + (pad ? " " : "") + cell + (pad ? " " : "") + fence;
}

std::string RowName(const GateRow& row) { return row.rule + "." + row.limit; }

}  // namespace

const std::vector<const char*>& GateStatuses() {
  static const std::vector<const char*> statuses = {kPass, kFail, kWaived, kExpired, kSkipped};
  return statuses;
}

size_t CountRows(const GateReport& report, const std::string& status) {
  return static_cast<size_t>(std::count_if(report.rows.begin(), report.rows.end(),
                                           [&](const GateRow& r) { return r.status == status; }));
}

size_t CountRules(const GateReport& report, const std::string& status) {
  const std::vector<std::string> statuses = RuleStatuses(report);
  return static_cast<size_t>(std::count(statuses.begin(), statuses.end(), status));
}

size_t RuleCount(const GateReport& report) { return RuleStatuses(report).size(); }

std::vector<GateGroup> GroupGateRows(const GateReport& report) {
  std::vector<GateGroup> groups;
  std::vector<double> tightness;  // of each group's tightest row
  const std::string* rule = nullptr;
  for (const GateRow& row : report.rows) {
    // The casts' rows fold to one line over their sources and destinations,
    // the block quantizers' to one over their specs: dozens of formats that
    // would otherwise take a line each. A reduction's fold to one line over
    // its formats: with a dozen registered reductions, a line per op and
    // format would no longer fit a screen.
    const OpFamily family = row.dtype.empty() ? OpFamily::kElementwise : FamilyOf(row.op);
    const std::string name = row.op == kRevealGoldensRule         ? std::string(kRevealGoldensRule)
                             : row.dtype.empty()               ? std::string("sweeps")
                             : family == OpFamily::kCast       ? std::string("casts")
                             : family == OpFamily::kBlockQuant ? std::string("block quantizers")
                             : family == OpFamily::kReduction  ? row.op
                             : row.dtype == "f32"              ? row.op
                                                               : row.op + " " + row.dtype;
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const GateGroup& g) { return g.name == name; });
    if (it == groups.end()) {
      groups.push_back(GateGroup{name});
      tightness.push_back(-2);
      it = groups.end() - 1;
    }
    const size_t g = static_cast<size_t>(it - groups.begin());
    if (rule == nullptr || *rule != row.rule) ++it->rules;
    rule = &row.rule;
    ++it->rows;
    if (row.status == kSkipped) ++it->skipped;
    if (row.status != kPass) continue;
    ++it->passed;
    // Measured over limit: how much of its budget a row uses. A limit of 0
    // (exactness, conformance) has no fraction to use, and a limit set at
    // what was measured uses all of it: neither has headroom to show. The
    // sweeps' digests_match and the reveal goldens' probes_match are floors
    // (every sweep, every probe matches), not budgets.
    if (!(row.limit_number > 0) || !std::isfinite(row.measured_value) ||
        row.limit == "digests_match" || row.limit == "probes_match") {
      continue;
    }
    if (row.measured_value == row.limit_number) {
      ++it->held;
      continue;
    }
    const double t = row.measured_value / row.limit_number;
    // max_ulp, the number a reader asks first, is shown among equals.
    const bool preferred = row.limit == "max_ulp" && it->tightest != nullptr &&
                           it->tightest->limit != "max_ulp" && t == tightness[g];
    if (it->tightest == nullptr || t > tightness[g] || preferred) {
      it->tightest = &row;
      tightness[g] = t;
    }
  }
  return groups;
}

std::string GroupRowsText(const GateGroup& group) {
  const size_t measured = group.rows - group.skipped;
  if (measured == 0) return fmt::format("{} skipped", group.skipped);
  return fmt::format("{} of {}{}", group.passed, measured,
                     group.skipped ? fmt::format(", {} skipped", group.skipped) : std::string());
}

size_t HeldRows(const std::vector<GateGroup>& groups) {
  size_t held = 0;
  for (const GateGroup& g : groups) held += g.held;
  return held;
}

std::vector<std::pair<std::string, std::vector<std::string>>> SkippedByReason(const GateReport& report) {
  std::vector<std::pair<std::string, std::vector<std::string>>> reasons;
  for (const GateRow& row : report.rows) {
    if (row.status != kSkipped) continue;
    auto it = std::find_if(reasons.begin(), reasons.end(),
                           [&](const auto& r) { return r.first == row.message; });
    if (it == reasons.end()) {
      reasons.push_back({row.message, {}});
      it = reasons.end() - 1;
    }
    if (std::find(it->second.begin(), it->second.end(), row.rule) == it->second.end()) {
      it->second.push_back(row.rule);
    }
  }
  return reasons;
}

std::string EscapeAnnotationData(const std::string& text) {
  std::string s;
  for (char c : text) {
    if (c == '%') {
      s += "%25";
    } else if (c == '\r') {
      s += "%0D";
    } else if (c == '\n') {
      s += "%0A";
    } else {
      s += c;
    }
  }
  return s;
}

std::string EscapeAnnotationProperty(const std::string& text) {
  std::string s;
  for (char c : EscapeAnnotationData(text)) {
    if (c == ':') {
      s += "%3A";
    } else if (c == ',') {
      s += "%2C";
    } else {
      s += c;
    }
  }
  return s;
}

std::string GateAnnotations(const GateReport& report) {
  std::string out;
  for (const GateRow& row : report.rows) {
    if (!RowFails(row)) continue;
    std::string message = row.message.empty()
                              ? fmt::format("measured {}, limit {}, at {}", row.measured,
                                            row.limit_value, row.where)
                              : row.message;
    if (!row.replay.empty()) message += "\nreplay: " + row.replay;
    out += fmt::format("::error title={}::{}\n",
                       EscapeAnnotationProperty("ulpgate gate: " + row.status + " " + RowName(row)),
                       EscapeAnnotationData(message));
  }
  return out;
}

std::string GateMarkdown(const GateReport& report) {
  const bool failed = report.failed();
  std::string md = fmt::format("## ulpgate gate: {}\n\n", failed ? "FAIL" : "PASS");
  md += "| | total |";
  std::string rule_line = fmt::format("| rules | {} |", RuleCount(report));
  std::string row_line = fmt::format("| rows | {} |", report.rows.size());
  for (const char* status : GateStatuses()) {
    md += fmt::format(" {} |", status);
    rule_line += fmt::format(" {} |", CountRules(report, status));
    row_line += fmt::format(" {} |", CountRows(report, status));
  }
  md += "\n|---|--:|--:|--:|--:|--:|--:|\n" + row_line + "\n" + rule_line + "\n\n";
  md += fmt::format("**{}**{}. Budgets {}, waivers checked as of {}; a rule counts as its worst "
                    "row.\n\n",
                    failed ? "FAIL" : "PASS",
                    failed ? fmt::format(": {} of {} rows fail", report.failures(), report.rows.size())
                           : std::string(": no row fails"),
                    MarkdownCode(report.budgets_path), report.today);
  if (!report.model_targets.empty()) {
    std::string models;
    for (const auto& t : report.model_targets) models += (models.empty() ? "" : ", ") + t;
    md += "Evaluated on their models (MODEL ONLY; rows say \"(model)\"): " + MarkdownText(models) +
          ". A model checks the budgets hold for the target's rounding model, but cannot catch a "
          "bug in its kernels; only a CPU that runs the target can.\n\n";
  }
  bool header = false;
  for (const GateRow& row : report.rows) {
    const bool waiver_note = row.status == kPass && !row.message.empty();
    if (row.status == kPass && !waiver_note) continue;
    if (row.status == kSkipped) continue;
    if (!header) {
      md += "### Rows that fail, are waived or expired\n\n";
      header = true;
    }
    md += fmt::format("- **{}** {}: measured {}, limit {}{}\n", row.status, MarkdownCode(RowName(row)),
                      MarkdownText(row.measured.empty() ? "-" : row.measured),
                      MarkdownText(row.limit_value),
                      row.where.empty() ? "" : ", at " + MarkdownText(row.where));
    // A waived or expired row's message says its waiver's reason and expiry.
    if (!row.message.empty()) md += "  - " + MarkdownText(row.message) + "\n";
    if (!row.replay.empty()) md += "  - replay: " + MarkdownCode(row.replay) + "\n";
  }
  if (header) md += "\n";
  const size_t skipped = CountRows(report, kSkipped);
  if (skipped > 0) {
    md += fmt::format("### Skipped rows ({}, not a failure)\n\n", skipped);
    for (const auto& [reason, rules] : SkippedByReason(report)) {
      std::string names;
      for (size_t i = 0; i < rules.size() && i < 8; ++i) names += (i ? ", " : "") + MarkdownCode(rules[i]);
      if (rules.size() > 8) names += fmt::format(" and {} more", rules.size() - 8);
      md += fmt::format("- {}: {}\n", MarkdownText(reason), names);
    }
    md += "\n";
  }
  const std::vector<GateGroup> groups = GroupGateRows(report);
  md += fmt::format("<details><summary>{} PASS rows, folded by op and format; {} held at their value"
                    "</summary>\n\n",
                    CountRows(report, kPass), HeldRows(groups));
  md += "| op | rules | rows passed | held at their value | least headroom | measured | limit |\n"
        "|---|--:|--:|--:|---|--:|--:|\n";
  for (const GateGroup& g : groups) {
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", MarkdownText(g.name), g.rules,
                      GroupRowsText(g), g.held,
                      g.tightest ? MarkdownCode(RowName(*g.tightest), true) : "-",
                      g.tightest ? MarkdownText(g.tightest->measured) : "-",
                      g.tightest ? MarkdownText(g.tightest->limit_value) : "-");
  }
  md += "\n</details>\n\n";
  return md;
}

bool GateReport::failed() const { return failures() > 0 || !faults.empty(); }

size_t GateReport::failures() const {
  return static_cast<size_t>(std::count_if(rows.begin(), rows.end(), RowFails));
}

namespace {

// The reveal goldens beside the ledger (golden/reveal/*.json) re-run on the
// kernels this CPU runs: a kernel whose summation tree changed fails the row,
// which names the file and the first probe whose output changed.
GateRow RevealGoldensRow(const std::string& golden_dir, const GateOptions& options) {
  GateRow row;
  row.rule = row.op = kRevealGoldensRule;
  row.limit = "probes_match";
  row.limit_value = "all";
  row.limit_number = 1;
  if (options.progress) options.progress("probes of the reveal goldens in " + RevealGoldenDirectory(golden_dir));
  const std::vector<RevealGoldenFileCheck> files = CheckRevealGoldens(golden_dir, options.ops);
  size_t checked = 0, failing = 0;
  std::string not_checked;
  for (const RevealGoldenFileCheck& f : files) {
    if (!f.not_checked.empty()) {
      not_checked += (not_checked.empty() ? "" : ", ") + f.kernel;
      continue;
    }
    ++checked;
    if (f.check.passed()) continue;
    if (failing++ == 0) {
      row.where = f.kernel;
      row.message = fmt::format("{}: {}", f.path, RevealGoldenFailure(f));
      row.replay = "ulpgate reveal --check-golden " + f.path;
    }
  }
  if (checked == 0) {
    row.status = kSkipped;
    row.measured_value = std::nan("");
    row.message = files.empty() ? (options.ops.empty() ? "no reveal goldens in "
                                                        : "no reveal golden of the ops selected in ") +
                                      RevealGoldenDirectory(golden_dir)
                                : "no reveal golden's kernel runs on this CPU (" + not_checked + ")";
    return row;
  }
  row.status = failing == 0 ? kPass : kFail;
  row.measured = fmt::format("{} of {}", checked - failing, checked);
  row.measured_value = static_cast<double>(checked - failing) / checked;
  row.evaluated = "kernel";
  if (failing > 1) row.message = fmt::format("{} of {} reveal goldens fail; the first: {}", failing, checked, row.message);
  if (row.where.empty()) row.where = "every reveal golden whose kernel runs here";
  if (!not_checked.empty() && failing == 0) row.message = "not checked here (their targets do not run on this CPU): " + not_checked;
  return row;
}

}  // namespace

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
      for (MeasuredCase& c : m.cases) {
        c.record["replay"] = ReplayCommand(m.spec, c.record);
        if (c.record.contains("fault")) {
          c.record["fault"]["replay"] = c.record["replay"];
          const std::string& dtype = c.record["dtype"].get_ref<const std::string&>();
          report.faults.push_back(fmt::format(
              "{} {}@{}{} {}: {}", run.op, c.record["variant"].get<std::string>(),
              c.record["target"].get<std::string>(), dtype == "f32" ? "" : " (" + dtype + ")", suite,
              FaultText(c.record)));
        }
        records.push_back(std::move(c.record));
      }
    }
  }
  // Replayed now: their files may have changed since they were blessed.
  for (const ExternalGolden& g : externals) {
    if (options.progress) options.progress("replaying the external check " + g.spec.label);
    nlohmann::ordered_json record = ReplayExternal(g.spec, golden_dir, options.threads);
    record["target"] = kExternalTarget;
    record["replay"] = ExternalReplayCommand(g.spec, golden_dir);
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
    row.op = op;
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
      row.replay = d.replay;
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
  // A ledger without reveal goldens beside it has no such row.
  if (options.golden_sweeps && fs::is_directory(RevealGoldenDirectory(golden_dir))) {
    report.rows.push_back(RevealGoldensRow(golden_dir, options));
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
  for (const char* status : GateStatuses()) j["counts"][status] = CountStatus(report, status);
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
                         {"message", row.message},
                         {"op", row.op},
                         {"dtype", row.dtype},
                         {"waiver", row.waiver_reason.empty() && row.waiver_expires.empty()
                                        ? nlohmann::ordered_json()
                                        : nlohmann::ordered_json{{"reason", row.waiver_reason},
                                                                 {"expires", row.waiver_expires}}},
                         {"replay", row.replay}});
  }
  j["model_targets"] = report.model_targets;
  j["skipped_targets"] = report.skipped_targets;
  j["faults"] = report.faults;
  return j;
}

std::string GateJunitXml(const GateReport& report) {
  // A faulted case is a failing test of its own beside the rows.
  const size_t tests = report.rows.size() + report.faults.size();
  const size_t failures = report.failures() + report.faults.size();
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
  for (const std::string& fault : report.faults) {
    const std::string name = fault.substr(0, fault.find(':'));
    xml += fmt::format("    <testcase classname=\"ulpgate.gate.fault\" name=\"{}\">\n"
                       "      <failure type=\"FAULT\" message=\"{}\">the kernel faulted; the case was "
                       "not measured</failure>\n    </testcase>\n",
                       XmlEscaped(name), XmlEscaped(fault));
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
  const GateReport report = RunGate(options);
  for (const std::string& fault : report.faults) failing.push_back("FAULT " + fault);
  for (const GateRow& row : report.rows) {
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
