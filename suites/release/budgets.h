// The budget ledger (golden/budgets.json, format "ulpgate-budgets-1"): what the
// release gate measures ("runs") and the limits the measurements must meet
// ("rules"), each rule with the reason for its numbers and, while a known
// failure is being fixed, a waiver that expires.
//
// Budgets live only here: kernels' documented error bounds point to the
// ledger, never restate it. Parsing validates everything a person can get
// wrong when editing the file by hand (typos in keys, patterns that match
// nothing, limits that do not apply to the op, impossible dates) and fails
// with one InputError naming the file and the JSON pointer of the field.
//
// Evaluation is a pure function of the ledger, the measured report records
// (the same records `ulpgate run --json` and `ulpgate drift --json` write) and
// the date, so it is unit-testable with synthetic records.
#ifndef ULPGATE_SUITES_BUDGETS_H_
#define ULPGATE_SUITES_BUDGETS_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ulpgate {

inline constexpr const char* kBudgetsFormat = "ulpgate-budgets-1";

// One entry of "runs": the fields of a MeasureSpec, one Measure per suite.
struct BudgetRun {
  std::string op;
  std::vector<std::string> suites;
  uint64_t seed = 1;
  uint64_t n = 0;                     // 0: the suite's default
  std::string shape;                  // reductions only; empty: the default
  std::string dtype = "f32";          // the format the op runs in
  std::vector<std::string> variants;  // empty: every variant of the op in dtype
  std::string pointer;                // "/runs/2", for messages
};

// A limit a rule sets. `value` is the limit; for max_fraction_above_k_ulp,
// `k` is the ULP bound (one of the histogram bounds).
struct BudgetLimit {
  std::string name;
  double value = 0;
  double k = 0;
  std::string pointer;  // "/rules/3/limits/max_ulp"
};

struct BudgetRule {
  std::string id;
  std::string op;                                        // exact
  std::string variant = "*", target = "*", suite = "*";  // glob patterns
  std::string dtype = "f32";
  // Matched by "label": outputs made elsewhere, blessed as external goldens
  // (suites/release/external_golden.h); `variant` is then the label pattern and
  // `target` "external".
  bool external = false;
  std::vector<BudgetLimit> limits;  // in the ledger's order
  std::string why;
  bool has_waiver = false;
  std::string waiver_reason;
  std::string waiver_expires;  // YYYY-MM-DD
  std::string pointer;         // "/rules/3"
};

struct BudgetLedger {
  std::string path;
  std::string about;
  std::vector<BudgetRun> runs;
  std::vector<BudgetRule> rules;
};

// The names of the limits, in the order rows are printed within a rule.
const std::vector<std::string>& BudgetLimitNames();

// Glob match: `*` any run of characters, `?` one character, and alternatives
// separated by `|` ("AVX2|AVX3*"). Case-sensitive, whole string.
bool GlobMatch(const std::string& pattern, const std::string& text);

// Strict "YYYY-MM-DD" with a real month and day (leap years per the Gregorian
// calendar); false otherwise.
bool IsValidDate(const std::string& date);
// Today's local date as "YYYY-MM-DD".
std::string LocalDate();

// Reads and validates a ledger against the ops, variants, suites and targets
// this binary knows (kernels/registry.h, suites/engine/measure.h). Throws InputError
// "PATH: POINTER: what" on the first problem.
BudgetLedger ReadBudgetLedger(const std::string& path);
// The same from already parsed JSON (`path` names it in messages).
BudgetLedger ParseBudgetLedger(const std::string& path, const nlohmann::ordered_json& json);

// One row of the gate: one limit of one rule.
struct GateRow {
  std::string rule, limit;
  std::string op, dtype;  // the rule's (what the gate folds passing rows by)
  std::string status;  // PASS, FAIL, WAIVED, EXPIRED, SKIPPED
  std::string measured, limit_value;  // as text: "0.003 (3 of 1000)", "0.5"
  double measured_value = 0;           // the same as numbers (NaN when nothing measured)
  double limit_number = 0;
  // The worst case: "mulsub@AVX2 domain", "+ (model)" when it was its target's
  // model evaluated in emulation (a target this CPU cannot run).
  std::string where;
  std::string evaluated;  // the worst case's kind: "kernel", "model", "peer"; empty if none
  std::string message;  // why it failed, the waiver, or why it was skipped
  // The rule's waiver, empty when it has none.
  std::string waiver_reason, waiver_expires;
  // A command that measures the worst case again (the worst record's
  // "replay", which the gate writes beside each record); empty if none.
  std::string replay;
};

inline constexpr const char* kPass = "PASS";
inline constexpr const char* kFail = "FAIL";
inline constexpr const char* kWaived = "WAIVED";
inline constexpr const char* kExpired = "EXPIRED";
inline constexpr const char* kSkipped = "SKIPPED";

// A row fails the gate when it is FAIL or EXPIRED.
bool RowFails(const GateRow& row);

// One row per (rule, limit), rules in ledger order. `records` are report
// records (op, variant, target, dtype, suite and the measured fields, and
// optionally "replay": the command that measures that record again);
// `ran_targets` the targets whose records are present: a rule none of whose
// matched targets ran is SKIPPED. `today` is "YYYY-MM-DD".
std::vector<GateRow> EvaluateBudgets(const BudgetLedger& ledger,
                                     const std::vector<nlohmann::ordered_json>& records,
                                     const std::vector<std::string>& ran_targets,
                                     const std::string& today);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_BUDGETS_H_
