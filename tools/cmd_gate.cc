// ulpgate gate: the release gate. Measures what golden/budgets.json names,
// one row per (rule, limit) with the measured value, the limit and the worst
// case; prints a summary, the rows that fail or are waived in full and the
// passing ones folded by op (all with --verbose); writes JSON, JUnit XML and
// Markdown (a CI job's summary page) on request, GitHub Actions annotations
// there; exits 1 if any row is FAIL or EXPIRED (2 on bad input).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "suites/release/gate.h"
#include "suites/engine/measure.h"
#include "suites/reports/report.h"
#include "tools/cli.h"
#include "tools/text_table.h"

namespace ulpgate {
namespace {

struct GateArgs {
  std::string budgets_path = "golden/budgets.json";
  std::string target;  // empty: all, or none with --plugin
  std::vector<std::string> plugins;
  std::string op = "all";
  unsigned threads = 0;
  std::string today;
  std::string json_path;
  std::string junit_path;
  std::string markdown_path;
  bool quiet = false;
  bool verbose = false;
  bool annotations = false;
};

std::string Joined(const std::vector<std::string>& items) {
  std::string joined;
  for (const std::string& item : items) joined += (joined.empty() ? "" : ", ") + item;
  return joined;
}

std::string Counts(const GateReport& report, size_t (*count)(const GateReport&, const std::string&)) {
  std::string counts;
  for (const char* status : GateStatuses()) {
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", count(report, status), status);
  }
  return counts;
}

// Every row, each rule's id on a line of its own above its rows (the ids are
// long; as a column they pushed the table past the width).
void PrintTable(const GateReport& report, std::ostream& out) {
  TextTable table({"status", "limit", "measured", "limit value", "where"});
  table.SetLeftAligned({0, 1, 2, 4});
  const std::string* rule = nullptr;
  for (const GateRow& row : report.rows) {
    if (rule == nullptr || *rule != row.rule) table.AddSection(row.rule);
    rule = &row.rule;
    table.AddRow({"  " + row.status, row.limit, row.measured.empty() ? "-" : row.measured,
                  row.limit_value, row.where.empty() ? "-" : row.where});
  }
  table.Print(out);
}

// A passing gate in a screenful: one line per op and format, saying how many
// of its rows passed (skipped rows apart: they are not failures), how many
// are held at exactly their value (limits blessed from a measurement sit
// there), and which passing row has the least headroom among those that
// have any (its measured value without the words after it: "0.007", not
// "0.007 (21 of 3000)"; --verbose and the messages have them).
void PrintGroups(const std::vector<GateGroup>& groups, std::ostream& out) {
  TextTable table({"op", "rules", "passed", "held", "least headroom", "measured", "limit"});
  table.SetLeftAligned({0, 4, 5, 6});
  for (const GateGroup& g : groups) {
    const GateRow* t = g.tightest;
    table.AddRow({g.name, std::to_string(g.rules), GroupRowsText(g), std::to_string(g.held),
                  t ? t->rule + "." + t->limit : "-", t ? t->measured.substr(0, t->measured.find(" (")) : "-",
                  t ? t->limit_value : "-"});
  }
  table.Print(out);
}

// The rows a person must read: FAIL, EXPIRED, WAIVED, and PASS rows with a
// note (a waiver no longer needed), each with its message and replay command.
void PrintRowsInFull(const GateReport& report, std::ostream& out) {
  for (const GateRow& row : report.rows) {
    if (row.status == kSkipped || (row.status == kPass && row.message.empty())) continue;
    std::string text = row.status + " " + row.rule + "." + row.limit + ": ";
    text += row.message.empty() ? fmt::format("measured {}, limit {}, at {}", row.measured,
                                              row.limit_value, row.where)
                                : row.message;
    PrintWrapped(out, text, 4);
    // The measured text says more than the number where it names models or
    // counts ("3604 (expected mulsub_opmath, follows mulsub_per_op)").
    if (row.status != kPass && row.measured.find(" (") != std::string::npos) {
      out << "  ";
      PrintWrapped(out, "measured: " + row.measured, 4, 2);
    }
    if (row.status != kPass && !row.replay.empty()) {
      out << "  replay: " << WrappedCommand(row.replay, 10, 6) << '\n';
    }
  }
}

// SKIPPED rows by reason, their rules named (a few of them).
void PrintSkipped(const GateReport& report, std::ostream& out) {
  const size_t rows = CountRows(report, kSkipped);
  if (rows == 0) return;
  out << fmt::format("SKIPPED ({} row{}, not a failure), by reason:\n", rows, rows == 1 ? "" : "s");
  for (auto [reason, rules] : SkippedByReason(report)) {
    const size_t more = rules.size() > 6 ? rules.size() - 6 : 0;
    rules.resize(rules.size() - more);
    out << "  ";
    PrintWrapped(out,
                 fmt::format("{}: {}{}", reason, Joined(rules),
                             more ? fmt::format(" and {} more", more) : std::string()),
                 4, 2);
  }
}

// Summary first (the verdict, counts of rows and of rules by status, what was
// measured how), then the rows that need a reader, then the passing rows
// folded (every row with --verbose), then the verdict again as the last line.
void PrintReport(const GateReport& report, bool verbose, std::ostream& out) {
  out << fmt::format("ulpgate gate: {} ({} of {} rows fail)\n", report.failed() ? kFail : kPass,
                     report.failures(), report.rows.size());
  out << "  rows:  " << Counts(report, CountRows) << '\n';
  out << fmt::format("  rules: {} (of {}; a rule counts as its worst row)\n", Counts(report, CountRules),
                     RuleCount(report));
  const std::vector<GateGroup> groups = GroupGateRows(report);
  out << fmt::format("  held at their value: {} of {} PASS rows (a limit set at what was measured, "
                     "no headroom to show)\n",
                     HeldRows(groups), CountRows(report, kPass));
  out << "  budgets: " << report.budgets_path << ", waivers checked as of " << report.today << '\n';
  if (!report.model_targets.empty()) {
    out << "  ";
    PrintWrapped(out,
                 "evaluated on their models (MODEL ONLY; rows say \"(model)\"): " +
                     Joined(report.model_targets),
                 4, 2);
    out << "    a model stands for what the kernel must compute: it checks the budgets hold for\n"
        << "    the target's rounding model, but it cannot catch a bug in that target's kernels;\n"
        << "    only a CPU that runs the target can.\n";
  }
  if (!report.skipped_targets.empty()) {
    out << "  ";
    PrintWrapped(out, "skipped targets: " + Joined(report.skipped_targets), 4, 2);
  }
  if (!report.faults.empty()) {
    out << fmt::format("\nKernels that faulted (not measured; every rule over them fails):\n");
    for (const std::string& fault : report.faults) {
      out << "  ";
      PrintWrapped(out, fault, 4, 2);
    }
  }
  std::ostringstream full;
  PrintRowsInFull(report, full);
  if (!full.str().empty()) out << "\nRows that fail, are waived or expired, and how to replay each:\n" << full.str();
  out << '\n';
  if (verbose) {
    PrintTable(report, out);
  } else {
    out << "By op and format (--verbose lists every row):\n";
    PrintGroups(groups, out);
  }
  std::ostringstream skipped;
  PrintSkipped(report, skipped);
  if (!skipped.str().empty()) out << '\n' << skipped.str();
  out << '\n';
}

// $GITHUB_STEP_SUMMARY names the job's summary page, to which each step
// appends; empty or unset outside GitHub Actions.
std::string StepSummaryPath() {
  const char* path = std::getenv("GITHUB_STEP_SUMMARY");
  return path == nullptr ? std::string() : std::string(path);
}

bool InGitHubActions() {
  const char* actions = std::getenv("GITHUB_ACTIONS");
  return actions != nullptr && std::string(actions) == "true";
}

void AppendToFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::app | std::ios::binary);
  out << text;
  out.flush();
  if (!out) throw std::runtime_error(path + ": cannot append the gate's summary");
}

void Gate(const GateArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  GateOptions options;
  options.budgets_path = args.budgets_path;
  options.targets = TargetsAndPlugins(args.target, args.plugins);
  if (args.op != "all") {
    const std::vector<std::string> known = MeasurableOps();
    for (const std::string& op : SplitList(args.op)) {
      if (std::find(known.begin(), known.end(), op) == known.end()) {
        throw UsageError("--op: unknown op '" + op + "' (see 'ulpgate list')");
      }
      options.ops.push_back(op);
    }
  }
  options.threads = args.threads;
  options.today = args.today;
  if (!args.quiet) {
    options.progress = [](const std::string& line) { std::cerr << "gate: " << line << '\n'; };
  }
  const GateReport report = RunGate(options);
  // Both reports are built before either is written, and each is written
  // atomically, so a failure leaves earlier files as they were.
  if (!args.json_path.empty()) WriteJsonFile(args.json_path, GateJson(report));
  if (!args.junit_path.empty()) WriteTextFile(args.junit_path, GateJunitXml(report));
  const std::string summary_path = StepSummaryPath();
  if (!args.markdown_path.empty() || !summary_path.empty()) {
    const std::string markdown = GateMarkdown(report);
    if (!args.markdown_path.empty()) WriteTextFile(args.markdown_path, markdown);
    if (!summary_path.empty()) AppendToFile(summary_path, markdown);
  }
  PrintReport(report, args.verbose, std::cout);
  if (args.annotations || InGitHubActions()) std::cout << GateAnnotations(report);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  std::cerr << fmt::format("gate: took {:.1f} s\n", elapsed.count());
  if (report.failed()) {
    std::cout << fmt::format("gate: FAIL ({} row{})\n", report.failures(),
                             report.failures() == 1 ? "" : "s");
    ExitStatus() = report.faults.empty() ? 1 : kExitKernelFault;
  } else {
    std::cout << "gate: PASS\n";
  }
}

}  // namespace

void AddGateCommand(CLI::App& app) {
  auto args = std::make_shared<GateArgs>();
  auto* cmd = app.add_subcommand(
      "gate",
      "Check the budget ledger: measure what it names, one row per rule and limit; "
      "exit 1 if any row fails");
  cmd->add_option("--budgets", args->budgets_path, "The budget ledger")->capture_default_str();
  cmd->add_option("--target", args->target,
                  "Target(s): all (the default: every compiled target; those this CPU cannot run "
                  "are evaluated on their models; with --plugin, none) or a comma-separated list");
  AddPluginOption(cmd, &args->plugins,
                  ": measured on the ledger's runs of its op in its formats, its rules matching "
                  "the plugin's name as a target");
  cmd->add_option("--op", args->op,
                  "Ops: all (default) or a comma-separated list: only their runs and rules")
      ->capture_default_str();
  AddThreadsOption(cmd, &args->threads);
  cmd->add_option("--today", args->today,
                  "The date waivers are checked against, YYYY-MM-DD (default: the local date)");
  cmd->add_option("--json", args->json_path, "Write the gate report as JSON here");
  cmd->add_option("--junit", args->junit_path, "Write the gate report as JUnit XML here");
  cmd->add_option("--markdown", args->markdown_path,
                  "Write a Markdown summary here (also appended to $GITHUB_STEP_SUMMARY when set)");
  cmd->add_flag("--annotations", args->annotations,
                "Print a GitHub Actions error annotation per FAIL or EXPIRED row (the default "
                "when $GITHUB_ACTIONS is true)");
  cmd->add_flag("--verbose", args->verbose, "List every row, not only those that fail or are waived");
  cmd->add_flag("--quiet", args->quiet, "No progress lines on stderr");
  cmd->callback([args] { Gate(*args); });
}

}  // namespace ulpgate
