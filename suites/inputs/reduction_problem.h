// Problem instances of the registered reductions and the terms of one output
// element (ElementTerms, gathered by the op), the unit every oracle and model
// works on.
#ifndef ULPGATE_SUITES_REDUCTION_PROBLEM_H_
#define ULPGATE_SUITES_REDUCTION_PROBLEM_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/reductions/reduction_spec.h"
#include "oracles/format.h"

namespace ulpgate {

// One instance: the op's operand tensors, row-major, in the order of
// ReductionOpInfo::operands (a scalar, such as mse_bwd's grad_out, is a
// one-element tensor).
struct ReductionInstance {
  uint64_t index = 0;  // instance number within its suite: regenerates it
  std::vector<std::vector<float>> operands;
};

struct ReductionInputSet {
  const ReductionOpInfo* op = nullptr;  // one of ReductionOps()
  // The format of operands and outputs (binary32 accumulation in every one):
  // every operand value is a value of it.
  const FloatFormat* format = &kBinary32;
  ReductionShape shape;
  std::string source;  // suite name
  uint64_t seed = 0;
  // How the suite's operands were transformed after drawing: a block format
  // ("mxfp8_e4m3/ocp_floor", suites/inputs/block_operands.h), or empty.
  std::string operands;
  std::vector<ReductionInstance> instances;

  size_t outputs_per_instance() const { return ReductionOutputCount(*op, shape); }
};

// What one output element depends on (its op's Gather, ElementTerms in
// kernels/reductions/reduction_spec.h).
ElementTerms GatherElementTerms(const ReductionOpInfo& op, const ReductionShape& shape,
                                const ReductionInstance& instance, size_t element);

// The element's indices in the output tensor, e.g. {b, o}; {} for mse_fwd.
std::vector<size_t> ElementIndices(const ReductionOpInfo& op, const ReductionShape& shape, size_t element);

// "y[3,1]", "loss", "dy[7]": the op's output name and the indices, for
// messages.
std::string ElementName(const ReductionOpInfo& op, const ReductionShape& shape, size_t element);

// The extents joined by commas: "32,16,8" for the linear ops, "1000" for the
// MSE ops.
std::string ShapeText(const ReductionOpInfo& op, const ReductionShape& shape);

// Parses --shape, one positive integer per extent of the op; throws
// InputError naming the problem.
ReductionShape ParseShape(const ReductionOpInfo& op, const std::string& text);

// The shape a run uses: `text` parsed, or the op's default when it is empty
// (its extents' default sizes: "32,32,32" for the linear ops, "1000" for the
// MSE ops). Throws InputError
// also when an operand would hold more than 2^26 floats (256 MiB), so that a
// typo does not ask for terabytes.
ReductionShape RunShape(const ReductionOpInfo& op, const std::string& text);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REDUCTION_PROBLEM_H_
