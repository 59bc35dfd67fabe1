// libFuzzer target: budget ledgers (suites/release/budgets.h), from the bytes of the
// file through JSON parsing to the validated ledger and its evaluation. Malformed text must end in
// InputError; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "suites/release/budgets.h"
#include "suites/inputs/inputs.h"
#include "suites/reports/json_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const ulpgate::BudgetLedger ledger =
        ulpgate::ParseBudgetLedger("budgets.json", ulpgate::ParseJsonText(text, "budgets.json"));
    // A ledger that parsed must evaluate (every rule SKIPPED: nothing measured).
    try {
      ulpgate::EvaluateBudgets(ledger, {}, {"SCALAR"}, "2026-01-01");
    } catch (const ulpgate::InputError&) {
    }
  } catch (const ulpgate::InputError&) {
  }
  return 0;
}
