// Two implementations of one op on the same inputs (`ulpgate compare`): how
// many outputs differ in their bits, how far apart they are in ULPs, which
// models each follows bit for bit (over every input, and over the inputs
// where they differ: `check`'s measurement of each side, RunCheck), and the
// cause of the difference: the first place where the two sides' models part
// (suites/investigate/model_structure.h), named in a fixed vocabulary.
//
// A side is outputs in memory: a kernel's (built-in, a plugin's, an IUT's,
// a Python callable's) computed on the inputs, or outputs saved elsewhere and
// read as `check` reads them. Where both sides are kernels that ulpgate can
// call again, each differing input comes with a command that replays it.
#ifndef ULPGATE_SUITES_INVESTIGATE_COMPARE_H_
#define ULPGATE_SUITES_INVESTIGATE_COMPARE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/elementwise_ops.h"
#include "kernels/reductions/row_ops.h"
#include "oracles/format.h"
#include "suites/inputs/inputs.h"
#include "suites/engine/reductions/row_model_fit.h"
#include "suites/engine/reductions/row_statistics.h"
#include "suites/inputs/reduction_problem.h"
#include "suites/investigate/check.h"

namespace ulpgate {

// The report's format name, versioned as the other reports are.
inline constexpr const char* kCompareReportFormat = "ulpgate-compare-1";

// The words of a cause (docs/compare.md says what each means).
inline constexpr const char* kCauseNone = "none";
inline constexpr const char* kCauseFusion = "fusion";
inline constexpr const char* kCauseRoundingFormat = "rounding format";
inline constexpr const char* kCauseFormula = "formula";
inline constexpr const char* kCauseFunction = "function implementation";
inline constexpr const char* kCauseFlushToZero = "flush to zero";
inline constexpr const char* kCauseTree = "tree";
inline constexpr const char* kCauseUnknown = "unknown";
// Two causes at once ("fusion + function implementation") are joined so.
inline constexpr const char* kCauseJoin = " + ";

// Two sides at most this many ULPs apart, following no model, differ by
// "function implementation": a transcendental from other code moves a result
// by an ULP or two, a different formula or rounding format by more where it
// cancels.
inline constexpr double kFunctionImplementationUlps = 4;

struct CompareSide {
  std::string label;           // "mulsub@AVX2", "peer.npz:eager"
  std::string door;            // "builtin", "plugin", "iut", "outputs", "python"
  std::vector<float> outputs;  // one per input, values of the format
  // How a command line names it again (`--a SPEC`): a kernel's name, or the
  // outputs' FILE[:ARRAY]; `replayable`: a kernel ulpgate can call on a
  // new input.
  std::string spec;
  bool replayable = false;
};

struct CompareRequest {
  const ElementwiseOpInfo* op = nullptr;
  const FloatFormat* format = &kBinary32;
  InputSet inputs;
  CompareSide a, b;
  std::vector<std::string> models;  // the user's, "NAME: statements"
  std::string models_path;
  size_t examples = 5;              // differing inputs reported
  unsigned threads = 0;
  // The arguments of the replay commands beside --op, --dtype, --a, --b and
  // --input (the --plugin/--iut flags the sides need).
  std::string replay_arguments;
};

struct CompareExample {
  uint64_t index = 0;
  float a = 0, b = 0;
  double apart_ulp = 0;
  std::string replay;  // a command that shows this input again
};

struct CompareSideResult {
  CheckResult all;                          // check's measurement of the side
  std::vector<std::string> matching;        // models followed on every input
  std::vector<std::string> matching_differing;  // on the inputs where the sides differ
  // Where those leave the cause unknown: the op's sequences with their
  // functions free (FreeFunctionModels) that the side follows, on every
  // input, else on the differing inputs.
  std::vector<std::string> matching_free;
};

struct CompareCause {
  std::string cause = kCauseNone;
  std::string detail;
  // What it rests on: "all inputs" or "differing inputs" (the models' sets
  // compared), "outputs" (flush to zero, from the values), "" for none.
  std::string basis;
  std::string model_a, model_b;  // the pair of models whose parting names it
  // Their statements, where they are programs of the model language (a
  // user's, or the op's sequences with their functions free); empty else.
  std::string expression_a, expression_b;
  // Where both call free functions and a structural cause names them: the
  // differing inputs at which no one value of each function (at an argument
  // both sides share) serves both, which makes the cause "... + function
  // implementation"; `functions_compared`: the differing inputs at which the
  // two call a function at the same argument.
  std::vector<uint64_t> functions_apart;
  uint64_t functions_compared = 0;
  // A row reduction's cause from its row statistics (basis "row statistics
  // set free"): per row, the nearest values of the statistics with which
  // model_a's epilogue gives a's outputs and model_b's b's, and whether no
  // value serves both (the report's evidence, for a recheck).
  struct RowValues {
    size_t row = 0;
    std::array<float, 2> a{}, b{};
    bool apart = false;
  };
  std::vector<RowValues> rows;
  // A row reduction's cause from its sides fitted to models (basis "row
  // models", row_model_fit.h): each side's term function (its name and
  // program; empty for RMSNorm's squares), order, epilogue and, per
  // row, the statistic and the value of its function that serve (NaN where
  // the epilogue takes none). Empty otherwise; a's then b's.
  struct RowModelSide {
    std::string function, program, order, epilogue;
    std::vector<float> statistic, statistic_function;
  };
  std::vector<RowModelSide> row_models;
};

struct CompareResult {
  uint64_t n = 0;
  uint64_t differing = 0;     // outputs whose encodings differ
  uint64_t special = 0;       // of them: a NaN or infinity against something else
  uint64_t signed_zero = 0;   // of them: +0 against -0
  uint64_t nan_payload = 0;   // of them: NaN against NaN (payload or sign)
  double max_apart = 0;       // ULPs of the format at the larger (UlpsApart), specials aside
  int64_t max_index = -1;
  // Differing outputs by ULPs apart: bins kCompareBins (upper bounds), the
  // last for specials.
  std::vector<uint64_t> histogram;
  std::vector<CompareExample> nearest;  // the nearest differing outputs, then by index
  std::vector<CompareExample> worst;    // the farthest apart (at most one)
  CompareSideResult a, b;
  CompareCause cause;
};

// Upper bounds (ULPs) of the histogram's bins; past the last, "more"; then
// one bin of specials.
inline constexpr double kCompareBins[] = {0, 1, 2, 4, 16, 256, 65536};

// The most outputs whose encodings (and the inputs') the JSON report lists.
inline constexpr uint64_t kCompareValuesLimit = uint64_t{1} << 20;

// Throws InputError for outputs that are not values of the format, lengths
// that differ from the inputs', or no inputs.
CompareResult RunCompare(const CompareRequest& request);

// The report: format, op, dtype, n, the sides, differing, the ULP histogram,
// each side's models, the cause, the examples (docs/compare.md).
nlohmann::ordered_json CompareJson(const CompareRequest& request, const CompareResult& result);

// A reduction's two sides (the linear and MSE ops, the row reductions):
// outputs per instance, flattened in instance order. Each side's models are
// those `check --op` names (RunReductionCheck, every variant's candidate
// models); the cause compares the models' schedules (ReductionModel): a
// different summation order is "tree", the same order with MulAdd fused on
// one side only "fusion", a different form "formula". Models over the
// differing outputs alone are not measured (a reduction's models are checked
// per whole output tensor).
struct ReductionCompareRequest {
  const ReductionInputSet* inputs = nullptr;
  CompareSide a, b;  // outputs: every instance's, in order
  size_t examples = 5;
  unsigned threads = 0;
  // The command that runs this comparison again (its inputs: the same suite,
  // shape, seed and instances, or the same file): each difference's replay.
  std::string replay;
  // Implementations of a row reduction's term function (the user's
  // --model, row_model_fit.h), tried on both sides where the row
  // statistics set free name no cause (RMSNorm's take none: its squares).
  std::vector<RowFunctionModel> row_functions;
};
CompareResult RunReductionCompare(const ReductionCompareRequest& request);
nlohmann::ordered_json ReductionCompareJson(const ReductionCompareRequest& request, const CompareResult& result);
// The cause from the two sides' reduction models (names of ReductionModel).
CompareCause CauseFromReductionModels(const ReductionOpInfo& op, const std::vector<std::string>& a,
                                      const std::vector<std::string>& b);
// A row reduction's cause from its outputs where the models cannot say
// (suites/engine/reductions/row_statistics.h): both sides reproduced by one
// epilogue with statistics that differ on some rows, "tree"; only by
// different epilogues, the cause those epilogues part on ("formula",
// "fusion"), with " + " after "tree" where the statistics differ too;
// "unknown" where a side follows no epilogue, with what was searched.
CompareCause CauseFromRowStatistics(const RowOpInfo& op, const RowStatisticSearch& a, const RowStatisticSearch& b);
// Where a side follows no epilogue and the op's elements call a function of
// their own (RowOpInfo::element_function): the cause from the pairs of
// epilogues that give both sides with that function's values shared.
CompareCause CauseFromSharedFunctionValues(const RowOpInfo& op, const SharedFunctionSearch& search);

// A row reduction's cause from each side's fits to models whose parts are
// data (row_model_fit.h): the pair of fits, one per side, that differ in the
// fewest parts names the cause, each part its word: the order "tree" (the
// binary64 sum rounded once against an order, "rounding format"), the
// epilogue "formula" (a declared form's own word; MulAdd fused on one side
// only, "fusion"), the term function "function implementation"; two such
// pairs with other words, or a side with no fit, "unknown".
CompareCause CauseFromRowModels(const ReductionInputSet& inputs, const RowModelSearch& a, const RowModelSearch& b);

// A plain sum's two sides (its outputs the sums of the terms themselves:
// linear_bwd_bias) where neither the schedules' models nor a revealed tree
// name a cause: which binary32 orders of the terms (SumOrderNames, sum_orders.h) give every
// output of each side. Each side given by an order and neither by the
// binary64 sum rounded once (a wider accumulator, which the outputs would not
// tell from an order): "tree", basis "summation orders"; else "unknown".
CompareCause CauseFromSumOrders(const ReductionInputSet& inputs, const std::vector<float>& a,
                                const std::vector<float>& b);

// A product and its bias in a 16-bit format (an op whose terms carry one
// scalar added after the sum: linear_fwd) where one side follows schedules'
// models and the other none: whether every output of the other is
// RN16(RN16(D) + bias), D the binary32 sum a model of the first gives (that
// model with the bias zero), the product rounded to the format before the
// bias where the model rounds once after it. Then "rounding format", basis
// "bias after the product's rounding"; else "unknown".
CompareCause CauseFromBiasRounding(const ReductionInputSet& inputs, const std::vector<std::string>& a_models,
                                   const std::vector<std::string>& b_models, const std::vector<float>& a,
                                   const std::vector<float>& b);

// The exit status of a comparison: 0 identical in every bit, 1 different.
inline int CompareExitStatus(const CompareResult& r) { return r.differing == 0 ? 0 : 1; }

// The cause from the two sides' model sets alone (suites/investigate/
// model_structure.h); exposed for tests. `calls_function` and `max_apart`
// decide "function implementation" where neither side follows a model.
CompareCause CauseFromModels(const ElementwiseOpInfo& op, const FloatFormat& format,
                             const CheckRequest& models, const std::vector<std::string>& a,
                             const std::vector<std::string>& b, double max_apart);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_INVESTIGATE_COMPARE_H_
