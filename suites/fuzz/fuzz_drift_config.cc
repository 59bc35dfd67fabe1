// libFuzzer target: what `ulpgate drift` reads from a user: run specs
// ("tanh_bwd=mac,sgd=fused", suites/drift/run.h ParseRunConfig, in a
// precision the first byte picks), scenario files (suites/drift/scenario.h
// ParseScenario, then the batch and the initial parameters a parsed scenario
// makes) and recorded loss curves (suites/drift/curves.h, JSON or CSV). The
// first byte picks which: 4k + 0 a spec, 4k + 1 a scenario, 4k + 2 a JSON
// curve, 4k + 3 a CSV curve. Malformed text must end in InputError; anything
// else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/registry.h"
#include "suites/drift/curves.h"
#include "suites/drift/run.h"
#include "suites/drift/scenario.h"
#include "suites/inputs/inputs.h"
#include "suites/reports/json_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    if (data[0] % 4 == 0) {
      const ulpgate::TargetInfo& target = ulpgate::CompiledTargets().front();
      const auto& precisions = ulpgate::DriftPrecisionNames();
      const auto precision = ulpgate::ParseDriftPrecision(precisions[data[0] / 4 % precisions.size()]);
      ulpgate::ParseRunConfig(text, &target, precision).Label();
    } else if (data[0] % 4 >= 2) {
      ulpgate::ParseLossCurve(text, data[0] % 4 == 2 ? "curve.json" : "curve.csv", "fuzz");
    } else {
      const nlohmann::json json = ulpgate::ParseJsonText(text, "scenario.json");
      const ulpgate::Scenario scenario = ulpgate::ParseScenario(json, "scenario.json");
      ulpgate::MakeBatch(scenario);
      ulpgate::InitialParameters(scenario);
      ulpgate::ScenarioJson(scenario);
    }
  } catch (const ulpgate::InputError&) {
  }
  return 0;
}
