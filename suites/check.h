// Outputs made elsewhere (PyTorch on a GPU, an accelerator, a vendor
// library), measured like a kernel's: the engine's statistics against the
// exact value, and which models the outputs follow bit for bit. For every
// model they do not follow: how often they differ, the nearest differing
// inputs, and (with a period) where in a block of K elements they differ.
#ifndef ULPGATE_SUITES_CHECK_H_
#define ULPGATE_SUITES_CHECK_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oracles/format.h"
#include "oracles/model_expr.h"
#include "suites/engine.h"
#include "suites/inputs.h"

namespace ulpgate {

struct CheckRequest {
  const FloatFormat* format = &kBinary32;
  InputSet inputs;                   // tanh_bwd's grad and t, values of the format
  std::vector<float> outputs;        // one per input, values of the format
  std::string label = "outputs";     // what the outputs are called in reports
  std::vector<ModelProgram> models;  // compared with, in report order
  std::vector<bool> user_models;     // per model: given by the user
  size_t period = 0;                 // > 0: mismatches by index mod period
  size_t examples = 5;               // differing inputs kept per model
  unsigned threads = 0;
  std::function<void(uint64_t, uint64_t)> progress;
};

struct ModelComparison {
  std::string name, expression;
  bool user = false;
  uint64_t mismatches = 0;
  // Differing inputs, nearest first: by the distance between the output and
  // the model's in ULPs of the format (then by index).
  struct Example {
    uint64_t index = 0;
    float output = 0, model = 0;
    double apart_ulp = 0;
  };
  std::vector<Example> nearest;
  std::vector<uint64_t> by_position;  // with a period: mismatches at index mod period
};

struct CheckResult {
  CaseResult result;  // statistics; conformance.matching: every model followed bit for bit
  std::vector<ModelComparison> models;
};

CheckResult RunCheck(const CheckRequest& request);

// The distance of two values of a format in its ULPs at the larger one
// (infinite for a NaN against a number, 0 for two NaNs).
double UlpsApart(const FloatFormat& format, double a, double b);

// The report: CaseJson's record (op, dtype, histogram, max with its input,
// ...) with conformance = {matching, models: [{name, expression, mismatches,
// nearest: [...], by_position}]} and the period.
nlohmann::ordered_json CheckJson(const CheckRequest& request, const CheckResult& result);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_CHECK_H_
