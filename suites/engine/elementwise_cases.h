// Any elementwise op for the engine (suites/engine/engine.h): its cases
// (variants x targets in a format), its kernels called over a call plan, its
// models, exact value and error bound (suites/engine/elementwise_oracle.h).
#ifndef ULPGATE_SUITES_ELEMENTWISE_CASES_H_
#define ULPGATE_SUITES_ELEMENTWISE_CASES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/elementwise_ops.h"
#include "kernels/registry.h"
#include "oracles/format.h"
#include "suites/engine/engine.h"
#include "suites/inputs/inputs.h"
#include "suites/engine/plugins.h"
#include "kernels/plugins/ulpgate/plugin.h"

namespace ulpgate {

struct RunOptions {
  // The format of operands and outputs: f32, bf16 or f16 (each has its own
  // variants, VariantNames). Inputs must be values of it.
  const FloatFormat* format = &kBinary32;
  // Empty: every variant of every target. Else each name is a built-in
  // variant or a kernel of a plugin among the targets, or NAME@TARGET
  // (suites/engine/kernel_names.h), and a target runs the named kernels it has.
  std::vector<std::string> variants;
  // Empty: all runnable compiled targets. A target this CPU cannot run
  // becomes a "model" case: its expected model stands in for its kernel.
  // A plugin's target (suites/engine/plugins.h; f32 only) runs the plugin's kernels,
  // after the built-in cases, each expected to follow the model it claims (a
  // model given as an expression joins the models compared).
  std::vector<const TargetInfo*> targets;
  bool models_only = false;                // every case is its target's model
  unsigned threads = 0;                    // 0: hardware concurrency
  bool keep_outputs = false;
  // When set: every element's measurement per case (ElementDetail), which
  // makes the engine compute every exact value and model in MPFR.
  std::vector<ElementDetail>* details = nullptr;
  // Every exact value, error and model from MPFR (EngineOptions::mpfr_only).
  bool mpfr_only = false;
  // The engine's units started from the last (EngineOptions::units_last_first).
  bool units_last_first = false;
  // When set: how many inputs' exact values MPFR computed (the fast tier the rest).
  uint64_t* mpfr_inputs = nullptr;
  // >= 0: also break every case's statistics down by the binade and sign of
  // this operand (index into InputSet::columns) into CaseResult::error_map.
  int map_operand = -1;
  // Called now and then with (inputs done, inputs total), from the caller's thread.
  std::function<void(uint64_t, uint64_t)> progress;
  // A kernel that faults (a plugin's in its own process: crashed, hung, wrote
  // outside its output) is its case's CaseResult::fault when set; otherwise
  // RunElementwise throws KernelFaultError naming the case and the input.
  bool faults_are_results = false;
};

// The cases of a run, in the order RunElementwise reports them (variants in
// table order, each on every target, then the plugins' kernels), and what
// computes each one's outputs. Throws InputError for an unknown variant or a
// plugin without kernels of the op in the format.
struct ElementwiseCasePlan {
  // Every model compared: the format's built-in ones (ModelNames), then the
  // plugins' models given as expressions (extra_models, in order).
  std::vector<std::string> model_names;
  std::vector<ModelProgram> extra_models;
  struct Case {
    std::string variant;
    const TargetInfo* target = nullptr;
    CaseKind kind = CaseKind::kKernel;
    int expected = -1;  // index into model_names
    // The built-in kernel (storage lanes of the format), or a plugin's; all
    // null for a "model" case.
    ElementwiseKernel kernel = nullptr;
    const PluginKernel* plugin = nullptr;
    std::string name;  // for messages: "OP VARIANT (DTYPE) on TARGET"
  };
  std::vector<Case> cases;
};
ElementwiseCasePlan PlanElementwiseCases(const ElementwiseOpInfo& op, const FloatFormat& format,
                                         const std::vector<std::string>& variants,
                                         const std::vector<const TargetInfo*>& targets,
                                         bool models_only);

// One result per (variant, target), variants in registry order, targets from
// narrowest to widest.
//
// Kernels are not called once over all inputs but over a call plan
// (ElementwiseCallPlan): calls of many lengths, so that every lane count leaves
// tails of every size, whose operands and outputs start at varied offsets
// from a 64-byte boundary, in guarded buffers. The plan depends on the input
// count only, so results are reproducible from the seed alone.
// Every output is also measured against the op's error bound (bound_fraction:
// ElementwiseBound). Throws InputError for inputs that are not values of the
// format or do not match the op's operands.
std::vector<CaseResult> RunElementwise(const ElementwiseOpInfo& op, const InputSet& inputs,
                                       const RunOptions& options);

// Outputs are digested in chunks of this many inputs: the digest is FNV-1a
// over the per-chunk FNV-1a digests of the output bits, so it does not depend
// on thread count (and can be recomputed from a dump).
inline constexpr size_t kEngineChunk = 4096;
// Units of an elementwise problem of n inputs: chunks of kEngineChunk, each
// its own digest group.
std::vector<EngineUnit> ChunkUnits(uint64_t n);

// One kernel call of the plan: inputs [begin, begin + count) of a chunk, the
// operands starting `operand_misalign` and the output `output_misalign`
// floats past a 64-byte boundary.
struct KernelCall {
  size_t begin = 0;
  size_t count = 0;
  size_t operand_misalign = 0;
  size_t output_misalign = 0;
};
// The calls that cover `count` inputs (a chunk): lengths cycle through short
// ones (every tail of 1..16 lanes) and long ones (many full vectors), and the
// offsets through 0..15 floats, aligned calls included.
std::vector<KernelCall> ElementwiseCallPlan(size_t count);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_ELEMENTWISE_CASES_H_
