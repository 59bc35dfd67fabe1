#include "suites/release/budgets.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <set>

#include "kernels/reductions/reduction_spec.h"
#include "kernels/registry.h"
#include "suites/drift/run.h"
#include "suites/inputs/inputs.h"
#include "suites/engine/op_table.h"
#include "suites/reports/json_file.h"
#include "suites/engine/measure.h"
#include "suites/engine/plugins.h"
#include "suites/engine/reduction_cases.h"
#include "suites/inputs/reduction_problem.h"
#include "suites/engine/statistics.h"
#include "suites/reports/report.h"

namespace ulpgate {
namespace {

// Which ops a limit applies to.
enum OpKind : unsigned { kElementwise = 1, kReduction = 2, kDrift = 4, kCast = 8, kBlockQuant = 16 };

struct LimitKind {
  const char* name;
  unsigned applies;
  bool integer;  // read as a non-negative integer (counts, epochs)
};

// Row order within a rule. conformance_required is a boolean in the ledger
// and becomes the limit "0 mismatches against the expected model".
const LimitKind kLimitKinds[] = {
    {"max_ulp", kElementwise | kReduction | kCast, false},
    {"max_fraction_above_1_ulp", kElementwise | kReduction, false},
    {"max_fraction_above_k_ulp", kElementwise | kReduction, false},
    {"max_special_mismatches", kElementwise | kReduction | kCast, true},
    {"conformance_required", kElementwise | kReduction | kCast | kBlockQuant, false},
    {"max_bound_fraction", kElementwise | kReduction, false},
    {"max_relative_loss_deviation", kDrift, false},
    {"max_final_parameter_relative_error", kDrift, false},
    {"max_lag_epochs", kDrift, true},
};

// The op table's family, as a bit of the limits' masks.
static_assert(static_cast<unsigned>(OpFamily::kElementwise) == kElementwise &&
              static_cast<unsigned>(OpFamily::kReduction) == kReduction &&
              static_cast<unsigned>(OpFamily::kDrift) == kDrift &&
              static_cast<unsigned>(OpFamily::kCast) == kCast &&
              static_cast<unsigned>(OpFamily::kBlockQuant) == kBlockQuant);
OpKind KindOf(const std::string& op) { return static_cast<OpKind>(FamilyOf(op)); }

std::string Joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Wildcard match of one alternative: '*' any run, '?' one character.
bool WildcardMatch(const char* p, const char* p_end, const char* t, const char* t_end) {
  const char* star = nullptr;
  const char* star_text = nullptr;
  while (t != t_end) {
    if (p != p_end && (*p == '?' || *p == *t)) {
      ++p;
      ++t;
    } else if (p != p_end && *p == '*') {
      star = p++;
      star_text = t;
    } else if (star != nullptr) {
      p = star + 1;
      t = ++star_text;
    } else {
      return false;
    }
  }
  while (p != p_end && *p == '*') ++p;
  return p == p_end;
}

// Runs a parser of ours that throws InputError, and reports its message at
// the field that was parsed.
template <class F>
auto At(const JsonField& field, F&& parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const InputError& e) {
    field.Fail(e.what());
  }
}

std::vector<std::string> CompiledTargetNames() {
  std::vector<std::string> names;
  for (const TargetInfo& t : CompiledTargets()) names.push_back(t.name);
  for (const std::string& plugin : LoadedPluginNames()) names.push_back(plugin);
  return names;
}

// The variants of an op in a format: built-in, and those of the plugins
// loaded (which the gate measures beside them).
std::vector<std::string> KnownVariants(const std::string& op, const std::string& dtype) {
  std::vector<std::string> variants = MeasurableVariants(op, dtype);
  for (const std::string& v : LoadedPluginVariants(op, dtype)) variants.push_back(v);
  return variants;
}

// The variants a run measures (its list, or every variant of the op); the
// plugins' kernels always run.
std::vector<std::string> RunVariants(const BudgetRun& run) {
  if (run.variants.empty()) return KnownVariants(run.op, run.dtype);
  std::vector<std::string> variants = run.variants;
  for (const std::string& v : LoadedPluginVariants(run.op, run.dtype)) {
    if (!Contains(variants, v)) variants.push_back(v);
  }
  return variants;
}

BudgetRun ParseRun(const JsonField& f) {
  f.OnlyKeys({"op", "dtype", "suites", "seed", "n", "shape", "variants"});
  BudgetRun run;
  run.pointer = f.pointer();
  run.op = f["op"].String();
  const auto suites = At(f["op"], [&] { return MeasurableSuites(run.op); });
  if (f.Has("dtype")) {
    run.dtype = f["dtype"].String();
    At(f["dtype"], [&] { return MeasurableVariants(run.op, run.dtype); });
  }
  const OpKind kind = KindOf(run.op);
  if (kind == kCast && !f.Has("dtype")) f["op"].Fail("a cast run names its destination in dtype");
  if (kind == kBlockQuant && !f.Has("dtype")) f["op"].Fail("a block quantizer's run names its spec in dtype");
  const JsonField suite_list = f["suites"];
  if (suite_list.Size() == 0) suite_list.Fail("expected at least one suite");
  for (size_t i = 0; i < suite_list.Size(); ++i) {
    const std::string suite = suite_list[i].String();
    if (!Contains(suites, suite)) {
      suite_list[i].Fail(fmt::format("unknown {} '{}' for {} ({})",
                                     kind == kDrift ? "scenario" : "suite", suite, run.op,
                                     Joined(suites)));
    }
    if (Contains(run.suites, suite)) suite_list[i].Fail("suite '" + suite + "' named twice");
    run.suites.push_back(suite);
  }
  if (f.Has("seed")) {
    if (kind == kDrift) f["seed"].Fail("drift takes no seed (each scenario carries its own)");
    run.seed = f["seed"].Unsigned();
  }
  if (f.Has("n")) run.n = f["n"].Unsigned();
  if (f.Has("shape")) {
    if (kind != kReduction) f["shape"].Fail("only the linear and MSE ops take a shape");
    run.shape = f["shape"].String();
    At(f["shape"], [&] { return ParseShape(*FindReductionOp(run.op), run.shape); });
  }
  if (f.Has("variants")) {
    const JsonField list = f["variants"];
    if (list.Size() == 0) list.Fail("expected at least one variant (leave it out for every one)");
    const auto known = KnownVariants(run.op, run.dtype);
    for (size_t i = 0; i < list.Size(); ++i) {
      const std::string v = list[i].String();
      if (kind == kDrift) {
        At(list[i], [&] { return ParseRunConfig(v, &BestTarget(), ParseDriftPrecision(run.dtype)); });
      } else if (!Contains(known, v) && !IsPeerVariant(run.op, run.dtype, v)) {
        list[i].Fail(fmt::format("unknown variant '{}' for {} ({})", v, run.op, Joined(known)));
      }
      if (Contains(run.variants, v)) list[i].Fail("variant '" + v + "' named twice");
      run.variants.push_back(v);
    }
  }
  return run;
}

void ParseLimits(const JsonField& f, const std::string& op, BudgetRule& rule) {
  std::vector<std::string> keys = BudgetLimitNames();
  keys.push_back("k");
  f.OnlyKeys(keys);
  if (f.json().empty()) f.Fail("expected at least one limit");
  const OpKind kind = KindOf(op);
  const bool has_k = f.Has("k"), has_k_limit = f.Has("max_fraction_above_k_ulp");
  if (has_k != has_k_limit) {
    f.Fail("\"k\" and \"max_fraction_above_k_ulp\" go together (the fraction above k ULP)");
  }
  for (const LimitKind& kind_of_limit : kLimitKinds) {
    if (!f.Has(kind_of_limit.name)) continue;
    const JsonField field = f[kind_of_limit.name];
    if (!(kind_of_limit.applies & kind)) {
      field.Fail(fmt::format("{} does not apply to {}", kind_of_limit.name, op));
    }
    BudgetLimit limit;
    limit.name = kind_of_limit.name;
    limit.pointer = field.pointer();
    if (limit.name == "conformance_required") {
      if (!field.Bool()) continue;  // false: no requirement, no row
      limit.value = 0;              // mismatches against the expected model
    } else if (kind_of_limit.integer) {
      limit.value = static_cast<double>(field.Unsigned());
    } else {
      limit.value = field.Number();
      if (!(limit.value >= 0)) field.Fail("expected a limit >= 0");
    }
    if (limit.name == "max_fraction_above_k_ulp") {
      if (limit.value > 1) field.Fail("a fraction is at most 1");
      const JsonField k = f["k"];
      limit.k = k.Number();
      if (limit.k == 1 && f.Has("max_fraction_above_1_ulp")) {
        k.Fail("k = 1 repeats max_fraction_above_1_ulp; choose another bound");
      }
      const auto bounds = ErrorStatistics().bounds();
      if (std::find(bounds.begin(), bounds.end(), limit.k) == bounds.end() || limit.k == 0) {
        k.Fail(fmt::format(
            "k = {} is not a histogram bound (0.5, 1, 2, 4, ..., 2^24), so the fraction above it "
            "cannot be read from the histogram",
            limit.k));
      }
    }
    if (limit.name == "max_fraction_above_1_ulp" && limit.value > 1) {
      field.Fail("a fraction is at most 1");
    }
    rule.limits.push_back(limit);
  }
  if (rule.limits.empty())
    f.Fail("expected at least one limit (conformance_required false sets none)");
}

BudgetRule ParseRule(const JsonField& f, const std::vector<BudgetRun>& runs) {
  f.OnlyKeys({"id", "match", "limits", "why", "waiver"});
  BudgetRule rule;
  rule.pointer = f.pointer();
  rule.id = f["id"].String();
  if (rule.id.empty()) f["id"].Fail("expected a non-empty id");
  const JsonField match = f["match"];
  match.OnlyKeys({"op", "variant", "target", "suite", "dtype", "label"});
  rule.op = match["op"].String();
  const auto suites = At(match["op"], [&] { return MeasurableSuites(rule.op); });
  if (match.Has("dtype")) {
    rule.dtype = match["dtype"].String();
    At(match["dtype"], [&] { return MeasurableVariants(rule.op, rule.dtype); });
  } else if (KindOf(rule.op) == kCast) {
    match["op"].Fail("a cast rule names its destination in dtype");
  } else if (KindOf(rule.op) == kBlockQuant) {
    match["op"].Fail("a block quantizer's rule names its spec in dtype");
  }
  if (match.Has("label")) {
    // Outputs made elsewhere: the gate replays the external goldens whose
    // label matches (and fails a label that matches none).
    if (match.Has("variant") || match.Has("target") || match.Has("suite")) {
      match["label"].Fail("a label rule matches external outputs: no variant, target or suite");
    }
    rule.external = true;
    rule.variant = match["label"].String();
    if (rule.variant.empty()) match["label"].Fail("expected a label (a glob pattern)");
    rule.target = "external";
  }
  // A rule of the ledger's own runs must match something they measure.
  if (!rule.external) {
    // The variants the runs give this op in this dtype (drift: run specs as
    // written there).
    std::vector<std::string> variants = KnownVariants(rule.op, rule.dtype);
    for (const std::string& p : PeerVariants(rule.op, rule.dtype)) variants.push_back(p);
    for (const BudgetRun& run : runs) {
      if (run.op != rule.op || run.dtype != rule.dtype) continue;
      for (const auto& v : RunVariants(run)) {
        if (!Contains(variants, v)) variants.push_back(v);
      }
    }
    if (match.Has("variant")) {
      rule.variant = match["variant"].String();
      if (std::none_of(variants.begin(), variants.end(),
                       [&](const std::string& v) { return GlobMatch(rule.variant, v); })) {
        match["variant"].Fail(fmt::format("'{}' matches no variant of {} ({})", rule.variant,
                                          rule.op, Joined(variants)));
      }
    }
    if (match.Has("target")) {
      rule.target = match["target"].String();
      const auto targets = CompiledTargetNames();
      if (std::none_of(targets.begin(), targets.end(),
                       [&](const std::string& t) { return GlobMatch(rule.target, t); })) {
        match["target"].Fail(
            fmt::format("'{}' matches no compiled target or loaded plugin ({})", rule.target,
                        Joined(targets)));
      }
    }
    if (match.Has("suite")) {
      rule.suite = match["suite"].String();
      if (std::none_of(suites.begin(), suites.end(),
                       [&](const std::string& s) { return GlobMatch(rule.suite, s); })) {
        match["suite"].Fail(fmt::format("'{}' matches no {} of {} ({})", rule.suite,
                                        GetOp(rule.op).suite_word(), rule.op,
                                        Joined(suites)));
      }
    }
    bool measured = false;
    for (const BudgetRun& run : runs) {
      if (run.op != rule.op || run.dtype != rule.dtype) continue;
      const auto run_variants = RunVariants(run);
      measured = measured ||
                 (std::any_of(run_variants.begin(), run_variants.end(),
                              [&](const std::string& v) { return GlobMatch(rule.variant, v); }) &&
                  std::any_of(run.suites.begin(), run.suites.end(),
                              [&](const std::string& s) { return GlobMatch(rule.suite, s); }));
    }
    if (!measured) {
      match.Fail(
          fmt::format("matches nothing the runs measure (no run of {} in {} has a variant "
                      "matching '{}' on a suite matching '{}')",
                      rule.op, rule.dtype, rule.variant, rule.suite));
    }
  }
  ParseLimits(f["limits"], rule.op, rule);
  rule.why = f["why"].String();
  if (rule.why.empty()) f["why"].Fail("say where the numbers come from");
  if (f.Has("waiver")) {
    const JsonField waiver = f["waiver"];
    waiver.OnlyKeys({"reason", "expires"});
    rule.has_waiver = true;
    rule.waiver_reason = waiver["reason"].String();
    if (rule.waiver_reason.empty()) waiver["reason"].Fail("a waiver needs a reason");
    rule.waiver_expires = waiver["expires"].String();
    if (!IsValidDate(rule.waiver_expires)) {
      waiver["expires"].Fail("'" + rule.waiver_expires + "' is not a date YYYY-MM-DD");
    }
  }
  return rule;
}

// One measured value of one record for one limit; larger is worse.
struct Measured {
  double value = 0;
  std::string text;
};

// Every digit (round trip), for messages and limits.
std::string Number(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{}", v);
}

// For the table's measured column: six significant digits, or as many more
// as it takes to tell the value from a limit it differs from (1.5000000000000002
// against 1.5), so a FAIL is never shown as equal to its limit.
std::string Shown(double v, double limit) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  for (int digits = 6; digits < 17; ++digits) {
    const std::string text = fmt::format("{:.{}g}", v, digits);
    if (v == limit || text != fmt::format("{:.{}g}", limit, digits)) return text;
  }
  return Number(v);
}

uint64_t Count(const nlohmann::ordered_json& record, const char* key) {
  return record.at(key).get<uint64_t>();
}

Measured FractionAbove(const nlohmann::ordered_json& record, double k, double limit) {
  const auto& bounds = record.at("histogram").at("bounds");
  const auto& counts = record.at("histogram").at("counts");
  // counts[i + 1] holds bounds[i] < e <= bounds[i + 1]: above k = bounds[j]
  // are counts[j + 1 ..].
  size_t j = 0;
  while (j < bounds.size() && bounds[j].get<double>() != k) ++j;
  if (j == bounds.size()) {
    throw InputError(fmt::format("k = {} is not a bound of the measured histogram", k));
  }
  uint64_t above = 0;
  for (size_t i = j + 1; i < counts.size(); ++i) above += counts[i].get<uint64_t>();
  const uint64_t n = Count(record, "n");
  const double fraction = n == 0 ? 0 : static_cast<double>(above) / static_cast<double>(n);
  return {fraction, fmt::format("{} ({} of {})", Shown(fraction, limit), above, n)};
}

Measured Measure(const nlohmann::ordered_json& record, const BudgetLimit& limit) {
  const std::string& name = limit.name;
  // A faulted case measured nothing: worse than any value (a NaN fails every limit).
  if (record.contains("fault")) return {std::numeric_limits<double>::quiet_NaN(), FaultText(record)};
  if (name == "max_ulp") {
    const double v = record.at("max_ulp").get<double>();
    return {v, Shown(v, limit.value)};
  }
  if (name == "max_fraction_above_1_ulp") return FractionAbove(record, 1, limit.value);
  if (name == "max_fraction_above_k_ulp") return FractionAbove(record, limit.k, limit.value);
  if (name == "max_special_mismatches") {
    const uint64_t v = Count(record, "special_mismatch");
    return {static_cast<double>(v), std::to_string(v)};
  }
  if (name == "conformance_required") {
    const auto& c = record.at("conformance");
    if (c.is_null()) return {std::numeric_limits<double>::infinity(), "no model"};
    const uint64_t v = c.at("mismatches").get<uint64_t>();
    const std::string model = c.at("model").is_null() ? "none" : c.at("model").get<std::string>();
    const std::string expected = c.at("expected").get<std::string>();
    std::string text = model == expected ? fmt::format("{} (follows {})", v, model)
                                         : fmt::format("{} (expected {}, follows {})", v, expected, model);
    // A cast names the first input off its policy.
    if (record.contains("first_mismatches") && !record.at("first_mismatches").empty()) {
      const std::string first = record.at("first_mismatches").at(0).get<std::string>();
      text += FamilyOf(record.at("op").get<std::string>()) == OpFamily::kCast
                  ? fmt::format(", first at x = {}", first)
                  : fmt::format(", first at {}", first);
    }
    return {static_cast<double>(v), text};
  }
  if (name == "max_bound_fraction") {
    const auto& max = record.at("bound_fraction").at("max");
    const double v = max.is_string() ? std::numeric_limits<double>::infinity() : max.get<double>();
    return {v, Shown(v, limit.value)};
  }
  const auto& summary = record.at("summary");
  if (name == "max_relative_loss_deviation") {
    const double v = summary.at("max_relative_loss_deviation").get<double>();
    return {v, fmt::format("{} (epoch {})", Shown(v, limit.value), summary.at("max_deviation_epoch").dump())};
  }
  if (name == "max_final_parameter_relative_error") {
    const double v = summary.at("final_parameter_max_relative_error").get<double>();
    return {v, Shown(v, limit.value)};
  }
  // max_lag_epochs: the largest |lag| over the lag points. A reference loss
  // the run never reaches only says that the lag is more than the epochs left
  // after that point, so it counts as that lower bound (epochs - E): it fails
  // any limit the run had room to show, and the last point (0 epochs left),
  // which a run that ends a rounding above the reference never reaches, does
  // not fail on noise.
  const double epochs = record.at("epochs").get<double>();
  double worst = 0;
  std::string text = "0";
  for (const auto& point : summary.at("lag")) {
    const auto& lag = point.at("lag");
    const double epoch = point.at("epoch").get<double>();
    const double v = lag.is_null() ? epochs - epoch : std::fabs(lag.get<double>());
    if (v > worst) {
      worst = v;
      text = lag.is_null()
                 ? fmt::format(">= {} (reference epoch {} never reached)", Number(v), Number(epoch))
                 : fmt::format("{} (reference epoch {})", Number(v), Number(epoch));
    }
  }
  return {worst, text};
}

bool Matches(const BudgetRule& rule, const nlohmann::ordered_json& record) {
  return record.at("op").get<std::string>() == rule.op &&
         record.at("dtype").get<std::string>() == rule.dtype &&
         GlobMatch(rule.variant, record.at("variant").get<std::string>()) &&
         GlobMatch(rule.target, record.at("target").get<std::string>()) &&
         GlobMatch(rule.suite, record.at("suite").get<std::string>());
}

std::string CaseKindOf(const nlohmann::ordered_json& record) {
  return record.contains("kind") ? record.at("kind").get<std::string>() : "kernel";
}

std::string CaseName(const nlohmann::ordered_json& record) {
  return fmt::format("{}@{} {}{}", record.at("variant").get<std::string>(),
                     record.at("target").get<std::string>(), record.at("suite").get<std::string>(),
                     CaseKindOf(record) == "model" ? " (model)" : "");
}

}  // namespace

const std::vector<std::string>& BudgetLimitNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const LimitKind& k : kLimitKinds) n.emplace_back(k.name);
    return n;
  }();
  return names;
}

bool GlobMatch(const std::string& pattern, const std::string& text) {
  size_t start = 0;
  while (true) {
    const size_t bar = pattern.find('|', start);
    const size_t end = bar == std::string::npos ? pattern.size() : bar;
    if (WildcardMatch(pattern.data() + start, pattern.data() + end, text.data(),
                      text.data() + text.size())) {
      return true;
    }
    if (bar == std::string::npos) return false;
    start = bar + 1;
  }
}

bool IsValidDate(const std::string& date) {
  if (date.size() != 10 || date[4] != '-' || date[7] != '-') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (date[i] < '0' || date[i] > '9') return false;
  }
  const int year = std::atoi(date.substr(0, 4).c_str());
  const int month = std::atoi(date.substr(5, 2).c_str());
  const int day = std::atoi(date.substr(8, 2).c_str());
  if (month < 1 || month > 12 || day < 1) return false;
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return day <= kDays[month - 1] + (month == 2 && leap ? 1 : 0);
}

std::string LocalDate() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[16];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d", &local);
  return buffer;
}

BudgetLedger ReadBudgetLedger(const std::string& path) {
  return ParseBudgetLedger(path, ReadJsonFile(path));
}

BudgetLedger ParseBudgetLedger(const std::string& path, const nlohmann::ordered_json& json) {
  const JsonField root(path, "", json);
  root.OnlyKeys({"format", "about", "runs", "rules"});
  const std::string format = root["format"].String();
  if (format != kBudgetsFormat) {
    root["format"].Fail(fmt::format("unknown format '{}' (expected {})", format, kBudgetsFormat));
  }
  BudgetLedger ledger;
  ledger.path = path;
  if (root.Has("about")) ledger.about = root["about"].String();
  const JsonField runs = root["runs"];
  for (size_t i = 0; i < runs.Size(); ++i) ledger.runs.push_back(ParseRun(runs[i]));
  const JsonField rules = root["rules"];
  std::set<std::string> ids;
  for (size_t i = 0; i < rules.Size(); ++i) {
    BudgetRule rule = ParseRule(rules[i], ledger.runs);
    if (!ids.insert(rule.id).second) rules[i]["id"].Fail("duplicate rule id '" + rule.id + "'");
    ledger.rules.push_back(std::move(rule));
  }
  return ledger;
}

bool RowFails(const GateRow& row) { return row.status == kFail || row.status == kExpired; }

std::vector<GateRow> EvaluateBudgets(const BudgetLedger& ledger,
                                     const std::vector<nlohmann::ordered_json>& records,
                                     const std::vector<std::string>& ran_targets,
                                     const std::string& today) {
  std::vector<GateRow> rows;
  for (const BudgetRule& rule : ledger.rules) {
    std::vector<const nlohmann::ordered_json*> matched;
    for (const auto& record : records) {
      if (Matches(rule, record)) matched.push_back(&record);
    }
    // A waiver is valid through its expiry day; after it, the rule fails
    // whatever it measures, so a waiver is removed rather than forgotten.
    const bool expired = rule.has_waiver && today > rule.waiver_expires;
    for (const BudgetLimit& limit : rule.limits) {
      GateRow row;
      row.rule = rule.id;
      row.op = rule.op;
      row.dtype = rule.dtype;
      if (rule.has_waiver) {
        row.waiver_reason = rule.waiver_reason;
        row.waiver_expires = rule.waiver_expires;
      }
      row.limit = limit.name == "max_fraction_above_k_ulp"
                      ? fmt::format("max_fraction_above_{}_ulp", Number(limit.k))
                      : limit.name;
      row.limit_value = limit.name == "conformance_required" ? "0" : Number(limit.value);
      row.limit_number = limit.name == "conformance_required" ? 0 : limit.value;
      row.measured_value = std::numeric_limits<double>::quiet_NaN();
      bool pass = true;
      if (matched.empty()) {
        row.status = kSkipped;
        std::vector<std::string> ran;
        for (const auto& t : ran_targets) {
          if (GlobMatch(rule.target, t)) ran.push_back(t);
        }
        row.message = ran.empty() ? fmt::format("no target matching '{}' ran here", rule.target)
                                  : fmt::format("nothing measured matches (targets that ran: {})",
                                                Joined(ran));
      } else {
        std::vector<Measured> values;
        for (const auto* record : matched) values.push_back(Measure(*record, limit));
        // The first largest value; a NaN is the worst of all (it fails any limit).
        size_t worst_index = 0;
        for (size_t i = 1; i < values.size(); ++i) {
          const double v = values[i].value, w = values[worst_index].value;
          if (!std::isnan(w) && (std::isnan(v) || v > w)) worst_index = i;
        }
        const Measured* worst = &values[worst_index];
        row.measured = worst->text;
        row.measured_value = worst->value;
        row.where = CaseName(*matched[worst_index]);
        row.evaluated = CaseKindOf(*matched[worst_index]);
        if (const auto it = matched[worst_index]->find("replay");
            it != matched[worst_index]->end() && it->is_string()) {
          row.replay = it->get<std::string>();
        }
        pass = worst->value <= limit.value;
        if (matched[worst_index]->contains("fault")) {
          // No waiver covers a crash, a hang or an overrun: it is not an error
          // to budget for.
          row.status = kFail;
          row.message = fmt::format("the kernel faulted at {}: {}; the case was not measured",
                                    row.where, worst->text);
        } else if (pass) {
          row.status = kPass;
        } else {
          row.status = rule.has_waiver ? kWaived : kFail;
          row.message = fmt::format("{} = {} > {} at {}", row.limit, Number(worst->value),
                                    row.limit_value, row.where);
        }
      }
      if (expired) {
        row.status = kExpired;
        row.message = fmt::format("the waiver expired on {} (\"{}\"): remove it{}",
                                  rule.waiver_expires, rule.waiver_reason,
                                  pass ? "" : " and fix the kernel or the limit; " + row.message);
      } else if (row.status == kWaived) {
        row.message = fmt::format("waived until {}: {}; {}", rule.waiver_expires,
                                  rule.waiver_reason, row.message);
      } else if (row.status == kPass && rule.has_waiver) {
        row.message =
            fmt::format("passes without its waiver (until {}): remove it", rule.waiver_expires);
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace ulpgate
