// The registered reductions for the engine (suites/engine/engine.h):
// instances -> kernel(variant, target) -> outputs, measured against the exact
// value and its classical error bound (bound fraction) and the variant's
// candidate models.
//
// One result per (variant, target). Besides the kernels on the targets this
// CPU runs, a run can hold two other kinds of case:
//   - "model": a target compiled but not runnable here (AVX3 on an AVX2
//     machine); its variant's expected model stands in for the kernel, so the
//     report shows what that target would give if it conforms;
//   - "peer": Eigen's float product for an op whose spec says kEigenPeer
//     (linear_fwd; suites/engine/eigen_peer.h), no model, statistics only.
#ifndef ULPGATE_SUITES_REDUCTION_CASES_H_
#define ULPGATE_SUITES_REDUCTION_CASES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/plugins/plugin_library.h"
#include "kernels/reductions/reduction_spec.h"
#include "kernels/registry.h"
#include "suites/engine/engine.h"
#include "suites/inputs/reduction_problem.h"
#include "suites/engine/statistics.h"

namespace ulpgate {

// Everything a dump record of one instance needs.
struct InstanceDetail {
  std::vector<std::string> exact;  // per element: exact hex, "/N" appended when N > 1
  std::vector<std::vector<ElementMeasure>> cases;  // [case][element]
};

// A reduction kernel from elsewhere (a plugin's, ABI version 4, or an IUT's):
// a case of kind kernel under its own target, measured as the built-in ones
// are, compared with every model of the op, held to the model it claims.
struct ExternalReductionKernel {
  std::string variant;
  const TargetInfo* target = nullptr;
  std::string model;   // the model it claims (ReductionModel::Name); empty: none
  ReductionCall call;  // operands in the op's order and storage, extents as ReductionExtents
};

struct ReductionRunOptions {
  std::vector<std::string> variants;       // empty: all, plus the peer where there is one
  std::vector<const TargetInfo*> targets;  // empty: all supported
  // Targets this CPU cannot run may be named: they become "model" cases.
  bool emulate_unsupported = false;        // add "model" cases for compiled, unsupported targets
  bool models_only = false;                // every target's case is its model, none is run
  unsigned threads = 0;                    // 0: hardware concurrency
  bool keep_details = false;               // fill ReductionRun::details
  // Compare every output with every candidate model (the report's "matching"
  // list); false: with the expected model only, about a third of the work.
  bool all_candidate_models = true;
  // Operands and outputs of instance i start (misalign + i's index) % 16
  // floats past a 64-byte boundary: runs of several instances call every
  // kernel aligned and misaligned, reproducibly.
  size_t misalign = 0;
  std::function<void(uint64_t, uint64_t)> progress;  // (elements done, total)
  // Outputs made elsewhere, per instance (check): the run is one "outputs"
  // case named outputs_label, compared with the candidate models of every
  // variant; no kernel runs.
  const std::vector<std::vector<float>>* outputs = nullptr;
  std::string outputs_label;
  // Kernels from plugins and IUTs, cases after the built-in ones; with
  // builtin false, the only kernels (--variant none).
  std::vector<ExternalReductionKernel> external;
  bool builtin = true;
};

struct ReductionRun {
  std::vector<CaseResult> cases;
  std::vector<std::vector<std::vector<float>>> outputs;  // [instance][case][element]
  std::vector<InstanceDetail> details;  // per instance, when keep_details
};

// Cases: variants in table order x targets narrowest first, then "model"
// cases, then the peer. Throws InputError for an unknown variant.
ReductionRun RunReduction(const ReductionInputSet& inputs, const ReductionRunOptions& options);

// One kernel on one instance: copies the operands to buffers that start
// `misalign` elements past a 64-byte boundary and returns the outputs. In a
// 16-bit format the operands (values of it) are passed as its bit patterns
// and the outputs decoded.
std::vector<float> RunReductionKernel(const ReductionOpInfo& op, std::string_view variant,
                                      const TargetInfo& target, const ReductionShape& shape,
                                      const ReductionInstance& instance, size_t misalign = 0,
                                      const FloatFormat& format = kBinary32);

// The Eigen peer on one instance of an op whose spec says kEigenPeer.
std::vector<float> RunEigenPeer(const ReductionShape& shape, const ReductionInstance& instance);

inline constexpr const char* kEigenPeerVariant = "eigen";
inline constexpr const char* kEigenPeerTarget = "host";

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REDUCTION_CASES_H_
