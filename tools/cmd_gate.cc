// ulpgate gate: the release gate. Measures what golden/budgets.json names,
// prints one row per (rule, limit) with the measured value, the limit and the
// worst case, and exits 1 if any row is FAIL or EXPIRED (2 on bad input).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>

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
  bool quiet = false;
};

void PrintReport(const GateReport& report, std::ostream& out) {
  // Each rule's id on a line of its own above its rows: the ids are long, and
  // as a column they squeezed the table past 120 columns.
  TextTable table({"limit", "measured", "limit value", "where", "status"});
  table.SetLeftAligned({0, 3, 4});
  const std::string* rule = nullptr;
  for (const GateRow& row : report.rows) {
    if (rule == nullptr || *rule != row.rule) table.AddSection(row.rule);
    rule = &row.rule;
    table.AddRow({"  " + row.limit, row.measured.empty() ? "-" : row.measured, row.limit_value,
                  row.where.empty() ? "-" : row.where, row.status});
  }
  table.Print(out);
  bool header = false;
  for (const GateRow& row : report.rows) {
    if (row.message.empty() || row.status == kPass) continue;
    if (!header) out << '\n';
    header = true;
    PrintWrapped(out, row.status + " " + row.rule + "." + row.limit + ": " + row.message, 2);
  }
  std::string counts;
  for (const char* status : {kPass, kFail, kWaived, kExpired, kSkipped}) {
    const auto n = std::count_if(report.rows.begin(), report.rows.end(),
                                 [&](const GateRow& r) { return r.status == status; });
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, status);
  }
  out << '\n' << report.rows.size() << " rows: " << counts << '\n';
  if (!report.model_targets.empty()) {
    std::string models;
    for (const auto& t : report.model_targets) models += (models.empty() ? "" : ", ") + t;
    PrintWrapped(out, "evaluated on their models (MODEL ONLY; rows say \"(model)\"): " + models, 2);
    out << "  a model stands for what the kernel must compute: it checks the budgets hold for\n"
        << "  the target's rounding model, but it cannot catch a bug in that target's kernels;\n"
        << "  only a CPU that runs the target can.\n";
  }
  if (!report.skipped_targets.empty()) {
    std::string skipped;
    for (const auto& t : report.skipped_targets) skipped += (skipped.empty() ? "" : ", ") + t;
    PrintWrapped(out, "skipped targets: " + skipped, 2);
  }
  out << "budgets: " << report.budgets_path << ", today: " << report.today << '\n';
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
  PrintReport(report, std::cout);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  std::cerr << fmt::format("gate: took {:.1f} s\n", elapsed.count());
  if (report.failed()) {
    std::cout << fmt::format("gate: FAIL ({} row{})\n", report.failures(),
                             report.failures() == 1 ? "" : "s");
    ExitStatus() = 1;
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
  cmd->add_flag("--quiet", args->quiet, "No progress lines on stderr");
  cmd->callback([args] { Gate(*args); });
}

}  // namespace ulpgate
