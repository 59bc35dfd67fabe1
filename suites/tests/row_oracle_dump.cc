// Writes sample rows of every row reduction with the MPFR oracle's exact
// values, one JSON object per line, for tools/python/row_exact_recheck.py,
// which recomputes them from its own definitions in mpmath (ctest
// row_exact_recheck). Operands and eps as C99 hex floats, exact values as 100
// significant decimal digits (332 bits, within the oracle's 320-bit values'
// own error of the real one's first 300 bits).

#include <cstdio>
#include <string>
#include <vector>

#include "oracles/float_format.h"
#include "oracles/float_text.h"
#include "suites/engine/reductions/row_models.h"
#include "suites/engine/reductions/row_oracle.h"
#include "suites/inputs/row_suites.h"

int main() {
  using namespace ulpgate;
  for (const RowOpInfo& op : RowOps()) {
    for (const std::string& suite : RowSuiteNames()) {
      for (const size_t n : {size_t{1}, size_t{6}, size_t{19}}) {
        const RowProblem p = MakeRowProblem(op, kBinary32, suite, 7, 5, n);
        std::vector<const float*> tensors;
        for (const auto& v : p.operands) tensors.push_back(v.data());
        for (size_t r = 0; r < p.rows; ++r) {
          const RowOperands row = RowOperandsOf(op, tensors, r, n);
          const RowExact exact = ExactRow(op, row, n, p.eps);
          std::string line = "{\"op\": \"" + std::string(op.name) + "\", \"suite\": \"" + suite +
                             "\", \"eps\": \"" + HexFloat(p.eps) + "\", \"operands\": {";
          for (size_t k = 0; k < op.operands.size(); ++k) {
            const float* v = tensors[k] + (IsRowWeight(op, k) ? 0 : r * n);
            line += std::string(k ? ", " : "") + "\"" + std::string(op.operands[k]) + "\": [";
            for (size_t j = 0; j < n; ++j) line += std::string(j ? ", " : "") + "\"" + HexFloat(v[j]) + "\"";
            line += "]";
          }
          line += "}, \"exact\": [";
          for (size_t i = 0; i < n; ++i) {
            line += std::string(i ? ", " : "") + "\"" + exact.values[i].ToDecimal(100) + "\"";
          }
          std::printf("%s]}\n", line.c_str());
        }
      }
    }
  }
  return 0;
}
