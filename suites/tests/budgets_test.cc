// The budget ledger: every way a hand-edited ledger goes wrong is one error
// naming the file and the JSON pointer; glob matching; evaluation of rules
// over synthetic report records (PASS at equality, FAIL just above, the worst
// case named, waivers through their expiry day, EXPIRED after it, SKIPPED).
#include "suites/release/budgets.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "kernels/registry.h"
#include "suites/inputs/inputs.h"
#include "suites/engine/statistics.h"

namespace ulpgate {
namespace {

using Json = nlohmann::ordered_json;

// A target this binary compiled and this CPU runs, and one it compiled that
// the rules below can name (the widest).
const std::string& Narrowest() { return CompiledTargets().front().name; }
const std::string& Widest() { return CompiledTargets().back().name; }

std::string WriteLedger(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::trunc) << text;
  return path;
}

Json MinimalLedger() {
  return Json::parse(R"({
    "format": "ulpgate-budgets-1",
    "runs": [
      {"op": "tanh_bwd", "suites": ["domain", "adversarial"], "n": 1000},
      {"op": "linear_fwd", "suites": ["exact"], "shape": "4,8,4", "n": 1},
      {"op": "drift", "suites": ["seed"], "n": 20, "variants": ["tanh_bwd=mulsub_fma,sgd=fused"]}
    ],
    "rules": [
      {"id": "mac", "match": {"op": "tanh_bwd", "variant": "mac", "suite": "domain"},
       "limits": {"max_ulp": 2, "k": 4, "max_fraction_above_k_ulp": 0.25,
                  "max_special_mismatches": 0, "conformance_required": true},
       "why": "test"},
      {"id": "bound", "match": {"op": "linear_fwd"}, "limits": {"max_bound_fraction": 1},
       "why": "test"},
      {"id": "drift", "match": {"op": "drift", "variant": "tanh_bwd=mulsub_fma*"},
       "limits": {"max_relative_loss_deviation": 1e-6, "max_lag_epochs": 2}, "why": "test"}
    ]
  })");
}

// Expects ParseBudgetLedger to fail with "ledger.json: POINTER: ..." and the
// message to contain `what`.
void ExpectLedgerError(const Json& ledger, const std::string& pointer, const std::string& what) {
  try {
    ParseBudgetLedger("ledger.json", ledger);
    ADD_FAILURE() << "no error for " << pointer << " (" << what << ")";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("ledger.json: " + pointer + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
  }
}

// The same for the minimal ledger with the field at `pointer` set to `value`.
void ExpectEditError(const std::string& pointer, const Json& value, const std::string& where,
                     const std::string& what) {
  Json j = MinimalLedger();
  j[Json::json_pointer(pointer)] = value;
  ExpectLedgerError(j, where, what);
}

TEST(BudgetLedger, TheMinimalLedgerParses) {
  const BudgetLedger ledger = ParseBudgetLedger("ledger.json", MinimalLedger());
  ASSERT_EQ(ledger.rules.size(), 3u);
  EXPECT_EQ(ledger.rules[0].limits.size(), 4u);  // k is part of the fraction limit
  EXPECT_EQ(ledger.rules[0].limits[1].name, "max_fraction_above_k_ulp");
  EXPECT_EQ(ledger.rules[0].limits[1].k, 4);
  EXPECT_EQ(ledger.runs[2].variants[0], "tanh_bwd=mulsub_fma,sgd=fused");
}

TEST(BudgetLedger, TruncatedFileNamesFileLineAndColumn) {
  const std::string text = MinimalLedger().dump(2);
  const std::string path = WriteLedger("truncated.json", text.substr(0, text.size() / 2));
  try {
    ReadBudgetLedger(path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path + ":", 0), 0u) << message;
    EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  }
}

TEST(BudgetLedger, NotJsonNamesTheFile) {
  const std::string path = WriteLedger("not_json.json", "max_ulp = 1\n");
  try {
    ReadBudgetLedger(path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ":1:1: malformed JSON", 0), 0u) << e.what();
  }
}

// Found by fuzzing: a number no double holds is nlohmann's out_of_range, not a
// parse error; it must still be one InputError naming the file.
TEST(BudgetLedger, ANumberBeyondDoubleIsMalformedJson) {
  for (const char* number : {"1e3081", "-1e400", "18446744073709551616E1616"}) {
    const std::string path =
        WriteLedger("huge.json", std::string("{\"format\": \"ulpgate-budgets-1\", \"runs\": [], "
                                             "\"rules\": [], \"about\": ") + number + "}");
    try {
      ReadBudgetLedger(path);
      FAIL() << "no error for " << number;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(path + ": malformed JSON: number overflow", 0), 0u)
          << e.what();
    }
  }
}

TEST(BudgetLedger, WrongTypeNamesThePointer) {
  ExpectEditError("/rules/0/limits/max_ulp", "2", "/rules/0/limits/max_ulp",
                  "expected a number, found a string");
  ExpectEditError("/runs/0/n", -5, "/runs/0/n", "expected a non-negative integer");
  ExpectEditError("/rules", Json::object(), "/rules", "expected an array");
}

TEST(BudgetLedger, UnknownKeysAreTypos) {
  ExpectEditError("/rules/0/limits/max_ulps", 1, "/rules/0/limits", "unknown field \"max_ulps\"");
  ExpectEditError("/rules/1/match/varaint", "*", "/rules/1/match", "unknown field \"varaint\"");
  ExpectEditError("/runs/0/sizes", 1, "/runs/0", "unknown field \"sizes\"");
}

TEST(BudgetLedger, UnknownOpsVariantsSuitesAndTargets) {
  ExpectEditError("/rules/0/match/op", "tanh_fwd", "/rules/0/match/op", "unknown op 'tanh_fwd'");
  ExpectEditError("/runs/0/op", "tanh_fwd", "/runs/0/op", "unknown op 'tanh_fwd'");
  ExpectEditError("/rules/0/match/variant", "mac_fused|fma*", "/rules/0/match/variant",
                  "'mac_fused|fma*' matches no variant of tanh_bwd");
  ExpectEditError("/rules/0/match/suite", "exhaustive", "/rules/0/match/suite",
                  "matches no suite of tanh_bwd");
  ExpectEditError("/rules/0/match/target", "NEON*", "/rules/0/match/target",
                  "'NEON*' matches no compiled target");
  ExpectEditError("/runs/0/variants", Json{"mac", "fma"}, "/runs/0/variants/1",
                  "unknown variant 'fma'");
  ExpectEditError("/runs/0/suites/1", "adverse", "/runs/0/suites/1", "unknown suite 'adverse'");
  ExpectEditError("/runs/2/variants/0", "tanh_bwd=fma", "/runs/2/variants/0",
                  "unknown tanh_bwd variant 'fma'");
  ExpectEditError("/runs/1/shape", "4,8", "/runs/1/shape", "");
}

TEST(BudgetLedger, ARuleMustMatchSomethingTheRunsMeasure) {
  // A tanh_bwd suite, but no run measures it.
  ExpectEditError("/rules/0/match/suite", "random", "/rules/0/match",
                  "matches nothing the runs measure");
  // A drift default no run names.
  ExpectEditError("/rules/2/match/variant", "tanh_bwd=mac", "/rules/2/match",
                  "matches nothing the runs measure");
}

TEST(BudgetLedger, KMustBeAHistogramBound) {
  ExpectEditError("/rules/0/limits/k", 3, "/rules/0/limits/k", "k = 3 is not a histogram bound");
  Json j = MinimalLedger();
  j["rules"][0]["limits"].erase("k");
  ExpectLedgerError(j, "/rules/0/limits", "go together");
  ExpectEditError("/rules/0/limits/max_fraction_above_k_ulp", 1.5,
                  "/rules/0/limits/max_fraction_above_k_ulp", "at most 1");
}

// Elementwise ops carry a bound fraction too (the error against the bound of a
// backward-stable evaluation): the limit applies to them as to the reductions.
TEST(BudgetLedger, TheBoundFractionLimitAppliesToElementwiseOps) {
  ExpectEditError("/rules/2/limits/max_bound_fraction", 1, "/rules/2/limits/max_bound_fraction",
                  "max_bound_fraction does not apply to drift");
  Json j = MinimalLedger();
  j["rules"][0]["limits"]["max_bound_fraction"] = 0.5;
  const BudgetLedger ledger = ParseBudgetLedger("ledger.json", j);
  ASSERT_EQ(ledger.rules[0].limits.size(), 5u);
  EXPECT_EQ(ledger.rules[0].limits.back().name, "max_bound_fraction");
}

TEST(BudgetLedger, LimitsThatDoNotApplyToTheOp) {
  ExpectEditError("/rules/0/limits/max_lag_epochs", 1, "/rules/0/limits/max_lag_epochs",
                  "max_lag_epochs does not apply to tanh_bwd");
  ExpectEditError("/rules/1/limits/max_lag_epochs", 1, "/rules/1/limits/max_lag_epochs",
                  "does not apply to linear_fwd");
  ExpectEditError("/rules/2/limits/max_ulp", 1, "/rules/2/limits/max_ulp",
                  "does not apply to drift");
  ExpectEditError("/rules/0/limits/max_ulp", -1, "/rules/0/limits/max_ulp",
                  "expected a limit >= 0");
}

TEST(BudgetLedger, BadDatesAndDuplicateIds) {
  for (const char* date : {"2025-02-29", "2025-13-01", "2025-04-31", "2025-1-01", "tomorrow",
                           "2025-00-10", "2025-01-00", "2025-01-01x"}) {
    ExpectEditError("/rules/0/waiver", Json{{"reason", "r"}, {"expires", date}},
                    "/rules/0/waiver/expires", "is not a date YYYY-MM-DD");
  }
  EXPECT_TRUE(IsValidDate("2024-02-29"));
  EXPECT_TRUE(IsValidDate("2000-02-29"));
  EXPECT_FALSE(IsValidDate("1900-02-29"));
  EXPECT_TRUE(IsValidDate("2025-12-31"));
  ExpectEditError("/rules/0/waiver", Json{{"reason", "r"}, {"until", "2025-01-01"}},
                  "/rules/0/waiver", "unknown field \"until\"");
  ExpectEditError("/rules/1/id", "mac", "/rules/1/id", "duplicate rule id 'mac'");
  ExpectEditError("/format", "ulpgate-budgets-2", "/format", "unknown format");
}

TEST(GlobMatch, StarQuestionAndAlternatives) {
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("AVX3*", "AVX3"));
  EXPECT_TRUE(GlobMatch("AVX3*", "AVX3_DL"));
  EXPECT_FALSE(GlobMatch("AVX3*", "AVX2"));
  EXPECT_TRUE(GlobMatch("AVX2|AVX3*", "AVX2"));
  EXPECT_TRUE(GlobMatch("AVX2|AVX3*", "AVX3_DL"));
  EXPECT_FALSE(GlobMatch("AVX2|AVX3*", "SSE4"));
  EXPECT_TRUE(GlobMatch("SSE?", "SSE4"));
  EXPECT_FALSE(GlobMatch("SSE?", "SSSE3"));
  EXPECT_FALSE(GlobMatch("mac", "mac_unfused"));  // whole string
  EXPECT_TRUE(GlobMatch("mac*", "mac_unfused"));
  EXPECT_TRUE(GlobMatch("*_fma*", "tanh_bwd=mulsub_fma,sgd=fused"));
  EXPECT_TRUE(GlobMatch("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(GlobMatch("a*b*c", "aXbYbZ"));
}

// A tanh_bwd record as the engine writes it, with `above` results in the
// histogram bin (k/2, k] ... the highest bin holding max_ulp.
Json TanhRecord(const std::string& variant, const std::string& target, const std::string& suite,
                double max_ulp, uint64_t n = 1000) {
  const auto bounds = ErrorStatistics().bounds();
  std::vector<uint64_t> counts(bounds.size() + 1, 0);
  counts[0] = n;
  return {{"op", "tanh_bwd"},
          {"variant", variant},
          {"target", target},
          {"dtype", "f32"},
          {"suite", suite},
          {"seed", 1},
          {"n", n},
          {"histogram", {{"bounds", bounds}, {"counts", counts}}},
          {"special_mismatch", 0},
          {"max_ulp", max_ulp},
          {"conformance", {{"model", "mac_fused"}, {"expected", "mac_fused"}, {"mismatches", 0}}}};
}

// Moves `count` results from e == 0 to the bin just above `e` (e a bound).
void AddErrors(Json& record, double e, uint64_t count) {
  const auto& bounds = record["histogram"]["bounds"];
  size_t i = 0;
  while (bounds[i].get<double>() != e) ++i;
  record["histogram"]["counts"][0] = record["histogram"]["counts"][0].get<uint64_t>() - count;
  record["histogram"]["counts"][i + 1] =
      record["histogram"]["counts"][i + 1].get<uint64_t>() + count;
}

BudgetLedger OneRule(const std::string& limits_json, const std::string& waiver_json = "") {
  Json j = MinimalLedger();
  j["rules"] = Json::array();
  Json rule = {{"id", "r"},
               {"match", {{"op", "tanh_bwd"}, {"variant", "mac"}}},
               {"limits", Json::parse(limits_json)},
               {"why", "test"}};
  if (!waiver_json.empty()) rule["waiver"] = Json::parse(waiver_json);
  j["rules"].push_back(rule);
  return ParseBudgetLedger("ledger.json", j);
}

std::vector<GateRow> Evaluate(const BudgetLedger& ledger, const std::vector<Json>& records,
                              const std::string& today = "2025-06-15") {
  return EvaluateBudgets(ledger, records, {Narrowest()}, today);
}

TEST(EvaluateBudgets, PassAtEqualityFailJustAboveAndTheWorstCaseNamed) {
  const BudgetLedger ledger = OneRule(R"({"max_ulp": 1.5})");
  const std::vector<Json> records = {TanhRecord("mac", Narrowest(), "domain", 1.25),
                                     TanhRecord("mac", Narrowest(), "adversarial", 1.5),
                                     TanhRecord("mulsub", Narrowest(), "domain", 100)};
  auto rows = Evaluate(ledger, records);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, kPass);
  EXPECT_EQ(rows[0].measured, "1.5");
  EXPECT_EQ(rows[0].where, "mac@" + Narrowest() + " adversarial");  // mulsub is not matched

  std::vector<Json> above = records;
  above[0]["max_ulp"] = std::nextafter(1.5, 2.0);
  rows = Evaluate(ledger, above);
  EXPECT_EQ(rows[0].status, kFail);
  EXPECT_EQ(rows[0].where, "mac@" + Narrowest() + " domain");
  EXPECT_EQ(rows[0].measured, "1.5000000000000002");  // enough digits to see why it failed
  EXPECT_TRUE(RowFails(rows[0]));
}

TEST(EvaluateBudgets, FractionAboveKIsReadFromTheHistogram) {
  const BudgetLedger ledger =
      OneRule(R"({"max_fraction_above_1_ulp": 0.003, "k": 4, "max_fraction_above_k_ulp": 0.001})");
  Json record = TanhRecord("mac", Narrowest(), "domain", 10);
  AddErrors(record, 0.5, 500);  // in (0.5, 1]: above neither
  AddErrors(record, 1, 2);      // in (1, 2]: above 1 only
  AddErrors(record, 4, 1);      // in (4, 8]: above 1 and above 4
  auto rows = Evaluate(ledger, {record});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].limit, "max_fraction_above_1_ulp");
  EXPECT_EQ(rows[0].measured, "0.003 (3 of 1000)");
  EXPECT_EQ(rows[0].status, kPass);
  EXPECT_EQ(rows[1].limit, "max_fraction_above_4_ulp");
  EXPECT_EQ(rows[1].measured, "0.001 (1 of 1000)");
  EXPECT_EQ(rows[1].status, kPass);
  AddErrors(record, 2, 1);  // in (2, 4]: above 1, not above 4
  rows = Evaluate(ledger, {record});
  EXPECT_EQ(rows[0].status, kFail);
  EXPECT_EQ(rows[1].status, kPass);
}

TEST(EvaluateBudgets, SpecialsAndConformance) {
  const BudgetLedger ledger =
      OneRule(R"({"max_special_mismatches": 2, "conformance_required": true})");
  Json record = TanhRecord("mac", Narrowest(), "domain", 0.5);
  record["special_mismatch"] = 2;
  auto rows = Evaluate(ledger, {record});
  EXPECT_EQ(rows[0].status, kPass);
  EXPECT_EQ(rows[1].status, kPass);
  record["special_mismatch"] = 3;
  record["conformance"]["mismatches"] = 1;
  record["conformance"]["model"] = nullptr;
  rows = Evaluate(ledger, {record});
  EXPECT_EQ(rows[0].status, kFail);
  EXPECT_EQ(rows[1].status, kFail);
  EXPECT_EQ(rows[1].measured, "1 (expected mac_fused, follows none)");
}

TEST(EvaluateBudgets, WaivedThroughTheExpiryDayExpiredAfterEvenWhenPassing) {
  const std::string waiver = R"({"reason": "fix in progress", "expires": "2025-06-15"})";
  const BudgetLedger ledger = OneRule(R"({"max_ulp": 1})", waiver);
  const std::vector<Json> failing = {TanhRecord("mac", Narrowest(), "domain", 3)};
  const std::vector<Json> passing = {TanhRecord("mac", Narrowest(), "domain", 0.5)};

  auto rows = Evaluate(ledger, failing, "2025-06-14");
  EXPECT_EQ(rows[0].status, kWaived);
  EXPECT_FALSE(RowFails(rows[0]));
  EXPECT_NE(rows[0].message.find("fix in progress"), std::string::npos) << rows[0].message;
  rows = Evaluate(ledger, failing, "2025-06-15");
  EXPECT_EQ(rows[0].status, kWaived);

  rows = Evaluate(ledger, failing, "2025-06-16");
  EXPECT_EQ(rows[0].status, kExpired);
  EXPECT_TRUE(RowFails(rows[0]));
  EXPECT_NE(rows[0].message.find("expired on 2025-06-15"), std::string::npos) << rows[0].message;
  rows = Evaluate(ledger, passing, "2025-06-16");
  EXPECT_EQ(rows[0].status, kExpired);
  EXPECT_TRUE(RowFails(rows[0]));

  rows = Evaluate(ledger, passing, "2025-06-15");
  EXPECT_EQ(rows[0].status, kPass);
  EXPECT_NE(rows[0].message.find("remove it"), std::string::npos) << rows[0].message;
}

TEST(EvaluateBudgets, SkippedWhenNoMatchedTargetRan) {
  Json j = MinimalLedger();
  j["rules"][0]["match"]["target"] = Widest();
  const BudgetLedger ledger = ParseBudgetLedger("ledger.json", j);
  const auto rows = EvaluateBudgets(ledger, {TanhRecord("mac", Narrowest(), "domain", 0.5)},
                                    {Narrowest()}, "2025-06-15");
  ASSERT_EQ(rows.size(), 4u + 1u + 2u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(rows[i].status, kSkipped) << rows[i].limit;
    EXPECT_FALSE(RowFails(rows[i]));
    EXPECT_NE(rows[i].message.find("no target matching '" + Widest() + "' ran"), std::string::npos)
        << rows[i].message;
  }
}

Json DriftRecord(double max_deviation, Json lags, uint64_t epochs = 100) {
  return {{"op", "drift"},
          {"variant", "tanh_bwd=mulsub_fma,sgd=fused"},
          {"target", Narrowest()},
          {"dtype", "f32"},
          {"suite", "seed"},
          {"epochs", epochs},
          {"summary",
           {{"final_relative_loss_deviation", 0},
            {"max_relative_loss_deviation", max_deviation},
            {"max_deviation_epoch", 7},
            {"final_parameter_max_relative_error", 0},
            {"final_parameter_max_ulp", 0},
            {"lag", lags}}}};
}

TEST(EvaluateBudgets, DriftLimitsAndLag) {
  const BudgetLedger ledger = ParseBudgetLedger("ledger.json", MinimalLedger());
  auto lag = [](int epoch, Json value) {
    return Json{{"epoch", epoch}, {"reference_loss", 1}, {"lag", value}};
  };
  // Lags -2 and 1: |lag| 2 meets 2; the last point never reached counts as
  // the 1 epoch left.
  Json record = DriftRecord(1e-6, {lag(10, -2), lag(50, 1), lag(99, nullptr)});
  // The drift rule's two rows come after the other rules' (skipped) rows.
  auto drift_rows = [&](const Json& r) {
    auto rows = EvaluateBudgets(ledger, {r}, {Narrowest()}, "2025-06-15");
    return std::vector<GateRow>(rows.end() - 2, rows.end());
  };
  auto rows = drift_rows(record);
  EXPECT_EQ(rows[0].rule, "drift");
  EXPECT_EQ(rows[0].status, kPass);
  EXPECT_EQ(rows[1].status, kPass);
  EXPECT_EQ(rows[1].measured, "2 (reference epoch 10)");
  // A reference loss at epoch 50 never reached: the lag is more than the 50
  // epochs left, far over the limit.
  record = DriftRecord(1.5e-6, {lag(10, 0), lag(50, nullptr)});
  rows = drift_rows(record);
  EXPECT_EQ(rows[0].status, kFail);
  EXPECT_EQ(rows[1].status, kFail);
  EXPECT_EQ(rows[1].measured, ">= 50 (reference epoch 50 never reached)");
}

}  // namespace
}  // namespace ulpgate
