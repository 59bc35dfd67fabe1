// Problem instances of the reduction ops (linear layer, MSE loss) and the
// terms of one output element, the unit every oracle and model works on.
#ifndef ULPGATE_SUITES_REDUCTION_PROBLEM_H_
#define ULPGATE_SUITES_REDUCTION_PROBLEM_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/reduction_spec.h"
#include "oracles/format.h"

namespace ulpgate {

// One instance: the op's operand tensors, row-major, in the order of
// ReductionOpInfo::operands (mse_bwd's grad_out is a one-element tensor).
struct ReductionInstance {
  uint64_t index = 0;  // instance number within its suite: regenerates it
  std::vector<std::vector<float>> operands;
};

struct ReductionInputSet {
  ReductionOp op = ReductionOp::kLinearFwd;
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

  size_t outputs_per_instance() const { return ReductionOutputCount(op, shape); }
};

// What one output element reduces, gathered into contiguous arrays:
//   linear_fwd y[b,o]:        p = x[b,:], q = w[o,:], bias = b[o]
//   linear_bwd_input dx[b,i]: p = dy[b,:], q = w[:,i]
//   linear_bwd_weight dw[o,i]: p = dy[:,o], q = x[:,i]
//   linear_bwd_bias db[o]:    p = dy[:,o], q empty
//   mse_fwd:                  p = y, q = target, count = N
//   mse_bwd dy[i]:            p = {y[i]}, q = {target[i]}, count = N, grad_out
struct ElementTerms {
  std::vector<float> p, q;
  bool has_bias = false;
  float bias = 0;
  uint64_t count = 0;
  float grad_out = 0;
};

ElementTerms GatherElementTerms(ReductionOp op, const ReductionShape& shape,
                                const ReductionInstance& instance, size_t element);

// The element's indices in the output tensor, e.g. {b, o}; {} for mse_fwd.
std::vector<size_t> ElementIndices(ReductionOp op, const ReductionShape& shape, size_t element);

// "y[3,1]", "loss", "dy[7]": for messages.
std::string ElementName(ReductionOp op, const ReductionShape& shape, size_t element);

// "B,IN,OUT" for the linear ops, "N" for the MSE ops.
std::string ShapeText(ReductionOp op, const ReductionShape& shape);

// Parses --shape; throws InputError naming the problem.
ReductionShape ParseShape(ReductionOp op, const std::string& text);

// The shape a run uses: `text` parsed, or the op's default when it is empty
// ("32,32,32" for the linear ops, "1000" for the MSE ops). Throws InputError
// also when an operand would hold more than 2^26 floats (256 MiB), so that a
// typo does not ask for terabytes.
ReductionShape RunShape(ReductionOp op, const std::string& text);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REDUCTION_PROBLEM_H_
