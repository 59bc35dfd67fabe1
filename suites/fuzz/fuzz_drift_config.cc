// libFuzzer target: what `ulpgate drift` reads from a user: run specs
// ("tanh_bwd=mac,sgd=fused", suites/drift/run.h ParseRunConfig) and scenario
// files (suites/drift/scenario.h ParseScenario, then the batch and the
// initial parameters a parsed scenario makes). The first byte picks which.
// Malformed text must end in InputError; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/registry.h"
#include "suites/drift/run.h"
#include "suites/drift/scenario.h"
#include "suites/inputs.h"
#include "suites/json_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    if (data[0] % 2 == 0) {
      const ulpgate::TargetInfo& target = ulpgate::CompiledTargets().front();
      ulpgate::ParseRunConfig(text, &target).Label();
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
