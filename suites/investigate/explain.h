// `ulpgate explain`: for one input, every variant on every target, op by op.
//
// For each (variant, target) the kernel is called on the input, its output is
// compared with every model, and the model it matched (else the one its target
// should follow) is traced through oracles/tracing_arith.h: each step's exact
// value on its rounded operands, the rounded value, the rounding's error in ULPs
// of the step, the step's error against its ideal (no-rounding-anywhere) value,
// and the step's contribution to the final error. With the op's exact value,
// its correctly rounded value, the ULP error, the condition number at the input
// and a one-line verdict naming the step that caused most of the error.
//
// Contribution of step k, the definition used throughout:
//   E_j = the output when steps 1..j are rounded as the model rounds them and
//         steps j+1..n are evaluated exactly (on the values they receive);
//   E_0 = the sequence's exact real value, E_n = the model's output;
//   contribution_k = (E_k - E_{k-1}) / ulp(exact value of the op).
// E_k and E_{k-1} differ only in whether step k is rounded: the earlier steps
// are rounded in both, the later ones exact in both. So contribution_k is step
// k's rounding error propagated exactly (not linearised) through the rest of
// the sequence, cancellations included, and the contributions sum exactly to
// the signed total error (E_n - E_0) / ulp (telescoping). Where roundings
// interact non-linearly (the product of two errors), the cross term goes to the
// later step. For finite inputs E_0 is the op's exact value where every variant is an
// exact rewriting of the op (suites/tests check it); a sequence with constants
// rounded to binary32 (gelu's sqrt(2/pi), 0.044715) stands for a slightly
// different value, and (E_0 - exact) / ulp is the constants' share of the error.
//
// The op is described by an ExplainableOp: its operands, variants, models, the
// template that runs a variant's sequence through any arithmetic, its oracle,
// condition numbers and kernels. Every registered elementwise op has one,
// made from its spec and oracle; a function step (exp, tanh, erf) is traced
// as one step whose rounded value is the model's implementation of the
// function (oracles/tracing_arith.h). Linear and mse would plug in with one
// ExplainableOp each, explaining one output element at a time.
#ifndef ULPGATE_SUITES_EXPLAIN_H_
#define ULPGATE_SUITES_EXPLAIN_H_

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/registry.h"
#include "oracles/mpfr_number.h"
#include "oracles/tracing_arith.h"
#include "oracles/ulp_metric.h"
#include "suites/reports/number_text.h"

namespace ulpgate {

struct ExplainableOp {
  struct Variant {
    std::string name;
    std::string model_on_fused_target;    // the model a target with fused NegMulAdd follows
    std::string model_on_unfused_target;  // ... and one where NegMulAdd is two roundings
  };
  struct Model {
    std::string name;
    std::string sequence_of;  // the variant or model sequence it rounds
    bool fused;               // NegMulAdd rounds once
  };
  std::string name;        // ElementwiseOpInfo's
  std::string definition;  // ElementwiseOpInfo's, as `list` prints it
  std::vector<std::string> operand_names;
  std::vector<Variant> variants;
  std::vector<Model> models;
  // A sequence by name (a variant's or a model sequence, kernels/ops/<op>/)
  // run through a tracing arithmetic.
  std::function<TracingArith::Value(std::string_view variant, TracingArith& arith,
                                    const std::vector<TracingArith::Value>& operands)>
      sequence;
  // The op's exact value (its oracle).
  std::function<MpfrNumber(const std::vector<float>& operands)> exact;
  // The relative condition number with respect to each operand,
  // |x_i * (d op / d x_i) / op|; NaN where undefined (non-finite operands).
  std::function<std::vector<double>(const std::vector<float>& operands)> condition;
  // The kernel of a variant compiled for a target, applied to the one input.
  std::function<float(std::string_view variant, const TargetInfo& target,
                      const std::vector<float>& operands)>
      kernel;
};

// Every registered elementwise op, in ElementwiseOps() order.
const std::vector<ExplainableOp>& ExplainableOps();
// nullptr for an op that explain does not know.
const ExplainableOp* FindExplainableOp(std::string_view name);

struct ExplainedStep {
  int index = 0;  // 0-based; printed 1-based
  TracingArith::Step step;  // operation, expression, operands, exact, value (rounded), ...
  MpfrNumber ideal{24};     // the step's value with no rounding anywhere
  double local_error_ulp = 0;     // (rounded - exact) / ulp(exact): this step's own rounding
  double error_vs_ideal_ulp = 0;  // (rounded - ideal) / ulp(ideal): everything so far
  double contribution_ulp = 0;    // see the header comment; ULPs of the op's exact value
};

struct ExplainedCase {
  std::string variant;
  const TargetInfo* target = nullptr;
  float kernel_output = 0;
  std::string expected_model;                // what the target's NegMulAdd implies
  std::vector<std::string> matching_models;  // every model equal to the kernel's output
  std::string traced_model;                  // expected if matched, else the first match, else expected
  float model_output = 0;                    // the traced model's output
  MpfrNumber sequence_exact{24};             // E_0
  std::vector<ExplainedStep> steps;
  UlpError error;                  // of the kernel's output against the op's exact value
  double signed_error_ulp = 0;     // (model output - exact) / ulp(exact)
  bool contributions_defined = false;  // false when a value is NaN or infinite
  int dominant_step = -1;          // largest |contribution|, -1 if undefined
  int amplifier_step = -1;         // later step with the largest cancellation, -1 if none
  double amplification = 0;        // |contribution| / |local error| of the dominant step
  std::string verdict;
};

struct Explanation {
  const ExplainableOp* op = nullptr;
  std::vector<float> operands;
  MpfrNumber exact{24};
  float correctly_rounded = 0;
  std::vector<double> condition;  // per operand
  double condition_total = 0;     // their sum: the relative error a relative
                                  // perturbation of u in every operand can cause, / u
  std::vector<ExplainedCase> cases;  // variants in op order, targets in the given order
};

// Explains one input on the given variants (empty: all) and targets (each must
// be supported by this CPU; a plugin's target explains the plugin's kernels,
// suites/engine/plugins.h). Throws std::invalid_argument for a wrong operand
// count or an unknown variant.
Explanation Explain(const ExplainableOp& op, const std::vector<float>& operands,
                    const std::vector<std::string>& variants,
                    const std::vector<const TargetInfo*>& targets);

// The explanation as JSON: every value as an exact hex float (and bits for
// binary32 values), so tools/recheck_explain.py can recompute everything.
nlohmann::ordered_json ExplanationJson(const Explanation& explanation);

// Factors as "6391", "7.29e+05 (2^19.5)"; ULP errors by FormatUlp
// (suites/reports/number_text.h).
std::string FormatFactor(double factor);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_EXPLAIN_H_
