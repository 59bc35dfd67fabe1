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

#include "kernels/elementwise_ops.h"
#include "oracles/format.h"
#include "oracles/model_expr.h"
#include "ulpgate/plugin.h"
#include "suites/engine/engine.h"
#include "suites/inputs/inputs.h"
#include "suites/inputs/reduction_problem.h"

namespace ulpgate {

struct CheckRequest {
  const ElementwiseOpInfo* op = nullptr;  // the elementwise op the outputs are of
  const FloatFormat* format = &kBinary32;
  InputSet inputs;                   // the op's operands, values of the format
  std::vector<float> outputs;        // one per input, values of the format
  std::string label = "outputs";     // what the outputs are called in reports
  std::vector<ModelProgram> models;  // compared with, in report order
  std::vector<bool> user_models;     // per model: given by the user
  // Per model: its index in ModelNames(*op, *format) where it is a built-in
  // model the model language cannot write (evaluated by the oracle), else -1
  // (its program is evaluated). Empty: every model is a program.
  std::vector<int> builtin_models;
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

// A reduction's outputs (one vector per instance) measured by the reduction
// engine as one "outputs" case named `label`.
CaseResult RunReductionCheck(const ReductionInputSet& inputs,
                             const std::vector<std::vector<float>>& outputs,
                             const std::string& label, unsigned threads);
// Its record: CaseJson's, conformance = {matching}, exceeds_bound.
nlohmann::ordered_json ReductionCheckJson(const CaseResult& result, const ReductionInputSet& inputs);

// A whole check as data, for what replays one (golden files, the gate).
struct CheckSpec {
  std::string op = std::string(DefaultElementwiseOp().name);
  std::string dtype = "f32";
  std::string inputs, outputs;  // paths as `check --inputs/--outputs` take them
  // Instead of an outputs file: a kernel called on the inputs (a plugin's),
  // operands[k] the op's operand k, in the format's storage lanes (float for
  // f32, the bit patterns of bf16 or f16), as PluginKernel::call takes them.
  std::function<void(const void* const* operands, void* out, size_t n)> outputs_from;
  std::string label;            // empty: the outputs array's name
  // The user's models, "NAME: statements" (elementwise ops).
  std::vector<std::string> models;
  // A model the outputs must follow: the record's conformance then says
  // expected, model and mismatches as a kernel's does (what the gate's
  // conformance_required reads).
  std::string expected_model;
  unsigned threads = 0;
};
// A kernel over the format's storage lanes (float for f32, the bit patterns
// of bf16 or f16), as PluginKernel::call and the registry's kernels take them.
using StorageKernel = std::function<void(const void* const* operands, void* out, size_t n)>;
// Its outputs on `inputs` (values of the format), decoded to values.
std::vector<float> KernelOutputs(const FloatFormat& format, const InputSet& inputs, const StorageKernel& kernel);

// A request of outputs in memory: the op's operands (values of the format,
// columns in the op's order) and one output per input; the built-in models,
// then `models` ("NAME: statements"). Throws InputError when the shapes
// differ, a value is not one of the format, or a model is malformed.
CheckRequest MakeCheckRequest(const ElementwiseOpInfo& op, const FloatFormat& format, InputSet inputs,
                              std::vector<float> outputs, std::string label,
                              const std::vector<std::string>& models);

// The elementwise op's request a spec describes: the files read as values of the
// format, the built-in models, then the spec's and a models file's (may be
// empty). Throws InputError for bad files or models, or no inputs.
CheckRequest ReadCheckRequest(const CheckSpec& spec, const std::string& models_path = "");

// Reads the files, runs the check and returns its record (`check --json`'s
// results[0]). Throws InputError for bad files, models or an unknown
// expected model.
nlohmann::ordered_json CheckRecord(const CheckSpec& spec);

// A warning when the request is in f32 but every input and output is a
// value of a 16-bit format the op runs in (bf16 read as f32, say: its errors
// are then counted in f32 ULPs, 2^16 times too many): one line naming the
// dtype to pass. Empty otherwise, and for fewer than 16 outputs, which say
// too little.
std::string NarrowerDtypeHint(const CheckRequest& request);

// The distance of two values of a format in its ULPs at the larger one
// (infinite for a NaN against a number, 0 for two NaNs).
double UlpsApart(const FloatFormat& format, double a, double b);

// The report: CaseJson's record (op, dtype, histogram, max with its input,
// ...) with conformance = {matching, models: [{name, expression, mismatches,
// nearest: [...], by_position}]} and the period.
nlohmann::ordered_json CheckJson(const CheckRequest& request, const CheckResult& result);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_CHECK_H_
