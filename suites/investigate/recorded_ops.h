// What a framework's ops computed during a training run, beside its loss
// curve (tools/python/torch_drift.py --record-ops): per op of the step, its
// operands and outputs as the framework computed them, in the files `check`
// reads. `drift --compare` matches each op's outputs against the op's models
// (through check, not a second matcher) and, between two implementations of
// the same run (eager and compiled, say), names each op whose models differ
// and the first place the models part: the cause, in the words `compare`
// uses too (ModelCauseName).
#ifndef ULPGATE_SUITES_INVESTIGATE_RECORDED_OPS_H_
#define ULPGATE_SUITES_INVESTIGATE_RECORDED_OPS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oracles/format.h"

namespace ulpgate {

// One op of the step as a curve's "ops" list names it.
struct RecordedOp {
  std::string op;      // a registered op check knows (tanh_bwd, linear_fwd, ...)
  int layer = -1;      // the layer of the network it belongs to (the loss: one past the last)
  std::string dtype;   // the format of its values (f32, bf16, f16)
  std::string file;    // the .npz of its operands and output (relative to the curve's folder)
  std::string output;  // the output array's name in it
  size_t calls = 0;    // the calls of the step function it holds
};

// The "ops" list of a curve's JSON; `curve_path` resolves the files. Throws
// InputError naming the curve and the entry for a malformed one.
std::vector<RecordedOp> ParseRecordedOps(const nlohmann::ordered_json& ops,
                                         const std::string& curve_path);

// An op's recorded outputs against its models.
struct RecordedOpModels {
  RecordedOp op;
  uint64_t outputs = 0;
  std::vector<std::string> matching;  // every model followed bit for bit
  // Where none is followed and the op's models say how far (elementwise ops):
  // the model with the fewest mismatches, and how many.
  std::string nearest;
  uint64_t nearest_mismatches = 0;
  // Outputs above the error bound of a backward-stable evaluation on the
  // recorded operands: no evaluation of the op from those operands gives
  // them, so the op read something else (an operand before its rounding).
  uint64_t above_bound = 0;
};

// Runs check on the op's file (check's model matching: CheckRecord). Throws
// InputError for a bad file.
RecordedOpModels MatchRecordedOp(const RecordedOp& op, unsigned threads = 0);

// Why two models of one op differ: the first place they part.
enum class ModelCause {
  kNone,                    // the same model
  kFusion,                  // the same operations, a multiply-add rounded once in one and twice in the other
  kRoundingFormat,          // binary32 opmath rounded once to the format against every operation rounded to it
  kFormula,                 // another sequence of operations (grad*(1 - t*t) against grad - grad*t*t)
  kFunctionImplementation,  // the same formula through another implementation of a function or conversion
  kFlushToZero,             // subnormals flushed to zero in one
  kTree,                    // a reduction's terms added in another order (its summation tree)
};
// "none", "fusion", "rounding format", "formula", "function implementation",
// "flush to zero", "tree".
const char* ModelCauseName(ModelCause cause);

// The cause a name names (ModelCauseName's words); nullopt for another word.
std::optional<ModelCause> ParseModelCause(const std::string& name);

// The causes that part two models of `op` in `format` (by their names in
// check's reports), the deepest first: formula or tree before rounding format
// before fusion. Empty for the same model; nullopt when a name is not one of
// the op's models.
std::optional<std::vector<ModelCause>> ModelDifference(const std::string& op,
                                                       const FloatFormat& format,
                                                       const std::string& a, const std::string& b);

// Two implementations' models of one op. When both follow models: `none`
// when they follow one in common, else the cause of the pair of models (one
// each side) that differ in the fewest places (evidence "models"). When one
// follows none of the op's models on the operands recorded for it and the
// other follows one, the recorded operands are not what it computed from,
// which is what fusing it with the op before it into one loop does (the
// operand kept in binary32 registers, rounded only where it is stored):
// `fusion`, when either its outputs exceed the binary32 error bound on those
// operands (evidence "exceeds bound"; only in binary32, where no rounding to a
// narrower format can explain it) or its nearest model is one the other
// follows (evidence "nearest model": the same arithmetic, other operands).
// Otherwise `cause` is nullopt: the models do not settle it (an experiment
// may: drift --compare's curves with an "experiment").
struct OpModelDifference {
  std::optional<ModelCause> cause;
  std::vector<ModelCause> causes;  // every place the chosen pair parts
  std::string evidence;            // "models", "exceeds bound", "nearest model", "experiment", ""
  std::string model_a, model_b;    // the pair compared (a side's nearest where it follows none)
};
OpModelDifference CompareOpModels(const RecordedOpModels& a, const RecordedOpModels& b);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_INVESTIGATE_RECORDED_OPS_H_
