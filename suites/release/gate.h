// The release gate: measures what the budget ledger's "runs" name on every
// selected target and checks every rule's limits (suites/release/budgets.h). Called by
// `ulpgate gate` and by anything else that must not release over budget.
#ifndef ULPGATE_SUITES_GATE_H_
#define ULPGATE_SUITES_GATE_H_

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "kernels/registry.h"
#include "suites/engine/measure.h"
#include "suites/release/budgets.h"

namespace ulpgate {

// The gate's row of the reveal goldens beside the ledger (<dir>/reveal/),
// its rule and op.
inline constexpr const char* kRevealGoldensRule = "reveal_goldens";

struct GateOptions {
  std::string budgets_path = "golden/budgets.json";
  // Empty: every compiled target. A target this CPU cannot run is measured
  // on its model (what its kernel must compute), and its rows say so.
  std::vector<const TargetInfo*> targets;
  // Empty: every op. Else only the ledger's runs and rules of these ops
  // (`golden bless --op X` checks the budgets of the ops it writes).
  std::vector<std::string> ops;
  // Also hold the kernels of the targets this CPU runs to the sweeps of the
  // golden files beside the ledger (one row per op, "<op>.sweeps").
  bool golden_sweeps = true;
  unsigned threads = 0;                              // 0: every core; results do not depend on it
  std::string today;                                 // "YYYY-MM-DD"; empty: the local date
  std::function<void(const std::string&)> progress;  // one line per measurement
};

struct GateReport {
  std::string budgets_path, today;
  std::vector<GateRow> rows;
  // Selected targets measured on their models, with why: "AVX3 (not on this CPU)".
  // A model cannot catch a kernel bug: only a CPU that runs the target can.
  std::vector<std::string> model_targets;
  // Compiled targets not selected.
  std::vector<std::string> skipped_targets;
  // The cases whose kernel faulted (crashed, hung, wrote outside its
  // output), "sigmoid_bwd segv@flaky (f32) random: CRASHED (SIGSEGV) at input
  // #12", each failing every rule it falls under: the gate exits 3.
  std::vector<std::string> faults;
  bool failed() const;
  size_t failures() const;  // rows that are FAIL or EXPIRED
};

// The command that measures one record of `spec` again on its own (the same
// suite, seed and count: the same inputs, the same numbers), with the
// plugin that gives its kernel.
std::string ReplayCommand(const MeasureSpec& spec, const nlohmann::ordered_json& record);

// Throws InputError "PATH: POINTER: ..." for a bad ledger (before measuring
// anything) or a bad --today.
GateReport RunGate(const GateOptions& options);

// The report as JSON ("ulpgate-gate-2": numbers as JSON numbers, the text
// beside them) and as JUnit XML: nothing in either
// varies between runs or with the thread count.
nlohmann::ordered_json GateJson(const GateReport& report);
std::string GateJunitXml(const GateReport& report);

// The rows by op and format (the rules' "op" and "dtype"; the golden sweeps'
// rows make one group, "sweeps"), in ledger order: what a person reads of a
// gate that passes, where one line per group says how many rows passed, how
// many are held at exactly their value, and the passing row with the least
// headroom among those that have any.
struct GateGroup {
  std::string name;  // "OP", "OP bf16" (a run of an op in a format), "sweeps"
  size_t rules = 0, rows = 0, passed = 0, skipped = 0;
  // PASS rows measured at exactly their limit, a limit above 0: limits
  // blessed from a measurement sit there, so they say nothing of headroom.
  size_t held = 0;
  // The PASS row with the largest measured / limit below 1 (max_ulp among
  // equals); null if no passing row has headroom.
  const GateRow* tightest = nullptr;
};
// "12 of 12", "3 of 3, 1 skipped", "1 skipped": a group's rows passed of
// those measured, a skipped row never counted as one that did not pass.
std::string GroupRowsText(const GateGroup& group);
// PASS rows held at exactly their value (GateGroup::held), in every group.
size_t HeldRows(const std::vector<GateGroup>& groups);
std::vector<GateGroup> GroupGateRows(const GateReport& report);

// The SKIPPED rows by their message (why they were skipped), in ledger
// order, each with the ids of its rules.
std::vector<std::pair<std::string, std::vector<std::string>>> SkippedByReason(const GateReport& report);

// The statuses in the order reports list them, and how many rows, or rules
// (a rule counted by its worst row: FAIL or EXPIRED, then WAIVED, PASS,
// SKIPPED), have each.
const std::vector<const char*>& GateStatuses();
size_t CountRows(const GateReport& report, const std::string& status);
size_t CountRules(const GateReport& report, const std::string& status);
size_t RuleCount(const GateReport& report);

// The report in GitHub-flavoured Markdown, for a CI job's summary page
// ($GITHUB_STEP_SUMMARY): the verdict and counts as a table, every row that
// fails, is waived or expired with its message, waiver and replay command,
// and the passing rows folded by op and format.
std::string GateMarkdown(const GateReport& report);

// GitHub Actions workflow commands, one "::error title=...::message" line
// per FAIL or EXPIRED row (the message with its replay command), escaped as
// the runner expects: %, CR and LF in the message, and also : and , in the
// title. Empty when nothing fails.
std::string GateAnnotations(const GateReport& report);
std::string EscapeAnnotationData(const std::string& text);
std::string EscapeAnnotationProperty(const std::string& text);

// The budget rows (as the gate prints them) of `ops` that fail on `targets`;
// empty when all hold; first "FAULT <case>: <fault>" for each case whose
// kernel faulted. Bless refuses to write while this is not empty, unless
// forced (never over a fault).
std::vector<std::string> FailingBudgets(const std::string& budgets_path,
                                        const std::vector<const TargetInfo*>& targets,
                                        const std::vector<std::string>& ops, unsigned threads);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_GATE_H_
