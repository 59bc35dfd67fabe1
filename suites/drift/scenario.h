// Training-run scenarios for the drift suite: a small MLP, its loss, optimizer,
// constants, data and initial parameters, as data (JSON) or built in.
//
// Every constant is a binary32 value (the exact shadow run uses the same
// binary32 constants), and the data and initial parameters are a pure function
// of the scenario's seed.
#ifndef ULPGATE_SUITES_DRIFT_SCENARIO_H_
#define ULPGATE_SUITES_DRIFT_SCENARIO_H_

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "suites/drift/precision.h"

namespace ulpgate {

struct LayerSpec {
  std::string type;  // "linear", "relu" or "tanh"
  size_t in = 0, out = 0;  // linear only
};

struct Scenario {
  std::string name;
  std::string description;
  std::vector<LayerSpec> layers;
  std::string loss = "mse";
  std::string optimizer = "sam";  // "sam" (over SGD) or "sgd"
  float lr = 0.01f;
  float rho = 0.05f;
  float eps = 1e-12f;
  size_t epochs = 1000;
  size_t batch = 8;
  // Inputs uniform in [data_low, data_high) (binary32 grid), one batch reused
  // every epoch; every sample has the same target vector.
  float data_low = 0.0f, data_high = 1.0f;
  std::vector<float> targets;
  uint64_t seed = 1;
  // The precision the float runs train in (suites/drift/precision.h):
  // `dtype` f32, bf16 or f16, and `master` empty (everything in dtype) or f32
  // (mixed precision). The exact run and the constants are the same in all.
  std::string dtype = "f32";
  std::string master;
  // Optional overrides of the seeded draws (a report's recorded batch and
  // initial parameters, or a hand-made case): x [batch, in] row-major, and
  // per linear layer W [out, in] then b [out], named W0, b0, W1, ...
  std::vector<float> x;
  std::vector<std::vector<float>> initial;

  size_t input_size() const { return layers.front().in; }
  size_t output_size() const;
  DriftPrecision precision() const { return DriftPrecisionOf(dtype, master); }
};

// The parameters of a network: per linear layer, W [out, in] then b [out].
struct Parameters {
  std::vector<std::vector<float>> tensors;  // W0, b0, W1, b1, ...
  std::vector<std::string> names;           // "W0", "b0", ...
};

// The batch: x [batch, in] row-major and the targets [batch, out].
struct Batch {
  std::vector<float> x;
  std::vector<float> target;
};

// "seed" and "saturating" (see drift_scenario.cc).
std::vector<std::string> BuiltinScenarioNames();
Scenario BuiltinScenario(const std::string& name);

// Parses and validates a scenario; throws InputError naming `where` and the
// field on anything malformed.
Scenario ParseScenario(const nlohmann::json& json, const std::string& where);
Scenario ReadScenarioFile(const std::string& path);
nlohmann::ordered_json ScenarioJson(const Scenario& scenario);

Batch MakeBatch(const Scenario& scenario);
// W uniform in +-RN(1/sqrt(fan_in)), b likewise, from the scenario's seed.
Parameters InitialParameters(const Scenario& scenario);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_DRIFT_SCENARIO_H_
