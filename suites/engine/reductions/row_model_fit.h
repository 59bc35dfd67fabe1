// A row reduction's sides fitted to models whose parts are data: the
// function each element's term goes through (softmax's and log-softmax's
// exp(RN(x - max)), a kernel's written out in the model language,
// `--model`; RMSNorm's squares), the order the row's terms are summed in
// (sum_orders.h), and the epilogue (row_statistics.h's candidates); the
// function the elements take of the row's statistic, which a kernel computes
// its own way (log-softmax's log of the sum, RMSNorm's reciprocal square
// root), set free per row within kRowFunctionWindow ULPs of its correctly
// rounded value. Where the row statistics set free cannot part two sides
// (each side's exps its own absorb any tree), the sides' functions written
// out pin the terms, and the orders and epilogues that give each side bit
// for bit are what they are.
//
// For the forward ops whose statistic is a sum of per-element terms
// (rmsnorm_fwd: RN(x^2), the mean RN(S/n); softmax_fwd and log_softmax_fwd:
// the exponentials, S itself), in binary32.
#ifndef ULPGATE_SUITES_ENGINE_REDUCTIONS_ROW_MODEL_FIT_H_
#define ULPGATE_SUITES_ENGINE_REDUCTIONS_ROW_MODEL_FIT_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kernels/reductions/row_ops.h"
#include "oracles/model_expr.h"
#include "suites/engine/reductions/row_statistics.h"
#include "suites/inputs/reduction_problem.h"

namespace ulpgate {

// Whether the op's rows can be fitted so (and the format is binary32).
bool RowModelsApply(const RowOpInfo& op, const FloatFormat& format);

// The term function's name for the op ("exp(z)"), empty where the terms call
// none (RMSNorm's squares).
std::string RowTermFunction(const RowOpInfo& op);

// One implementation of the term function: a model-language program of the
// operand `z` (ParseRowFunctionModel); RMSNorm's squares (program null)
// where the terms call none.
struct RowFunctionModel {
  std::string name;  // "numpy_exp"; "" for RMSNorm's squares
  std::string text;  // the statements; empty for RMSNorm's squares
  std::shared_ptr<const ModelProgram> program;
};

// "NAME: statements" over the operand z (the term function's argument, in
// binary32). Throws ModelSyntaxError, and std::invalid_argument where the
// program calls a free function (it must write its function out) or the op
// has no term function.
RowFunctionModel ParseRowFunctionModel(const RowOpInfo& op, const std::string& spec);

struct RowModelFit {
  size_t function = 0;  // index into RowModelSearch::functions
  std::string order;    // a SumOrderNames name
  RowEpilogueCandidate epilogue;
  // Per row: the statistic the order gives (S, or RMSNorm's mean), and the
  // value of the function of it that serves (nearest its correctly rounded
  // value; NaN where the epilogue takes none: softmax's, RMSNorm's x / s).
  std::vector<float> statistic;
  std::vector<float> statistic_function;
  // Rows whose statistic function is not the correctly rounded value.
  size_t rows_own_function = 0;
};

struct RowModelSearch {
  size_t rows = 0, n = 0;
  std::vector<RowFunctionModel> functions;  // as given; one without a program for RMSNorm
  // Per function, row and element: the term (RN(x^2), or the program's value
  // at RN(x - max)).
  std::vector<std::vector<std::vector<float>>> terms;
  std::vector<std::string> orders;          // the orders tried
  std::string statistic_function;           // "log(S)", "rsqrt(v)", "" (in words)
  std::vector<RowModelFit> fits;            // every combination that gives every row
};

// Every combination of a function, an order and an epilogue (unfused and
// fused) that gives `outputs` (every instance's, in order) bit for bit on
// every row. Throws std::invalid_argument where the op's terms call a
// function and `functions` is empty: a function of ulpgate's own would
// stand for the sides' and name orders it does not pin.
RowModelSearch SearchRowModels(const ReductionInputSet& inputs, const std::vector<float>& outputs,
                               const std::vector<RowFunctionModel>& functions);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_ENGINE_REDUCTIONS_ROW_MODEL_FIT_H_
