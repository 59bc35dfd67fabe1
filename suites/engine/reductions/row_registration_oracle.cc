// RowExactParts for MPFR's numbers (kernels/reductions/row_registration.h):
// the row oracle's exact value of one element and the bound of every variant
// of its op. The row's exact values are kept per thread for the next element
// of the same row, since the registered reductions ask element by element.
#include <cstring>
#include <vector>

#include "kernels/reductions/row_registration.h"
#include "oracles/mpfr_number.h"
#include "suites/engine/reductions/row_oracle.h"

namespace ulpgate {

template <>
ReductionExactParts<MpfrNumber> RowExactParts<MpfrNumber>(RowOp op_id, const ElementTerms& t) {
  const RowOpInfo& op = GetRowOp(op_id);
  const size_t n = t.vectors.at(0).size();
  const float eps = t.scalars.at(0);
  struct Cached {
    RowOp op;
    float eps;
    std::vector<std::vector<float>> vectors;
    RowExact exact;
  };
  thread_local std::vector<Cached> cache;  // at most one row
  const bool hit = !cache.empty() && cache[0].op == op_id &&
                   std::memcmp(&cache[0].eps, &eps, sizeof eps) == 0 &&
                   cache[0].vectors == t.vectors;
  if (!hit) {
    RowOperands row;
    for (size_t k = 0; k < op.operands.size(); ++k) {
      const float* p = t.vectors[k].data();
      if (op.operands[k] == "x") row.x = p;
      if (op.operands[k] == "g") row.g = p;
      if (op.operands[k] == "dy") row.dy = p;
      if (op.operands[k] == "y") row.y = p;
    }
    cache.clear();
    cache.push_back({op_id, eps, t.vectors, ExactRow(op, row, n, eps)});
  }
  const RowExact& exact = cache[0].exact;
  const size_t i = t.position;
  const ReductionBound bound = RowBoundOfEveryVariant(op, exact, i, n);
  return {exact.values.at(i), 1, bound.abs_sum, bound.roundings, bound.underflow, bound.peak};
}

}  // namespace ulpgate
