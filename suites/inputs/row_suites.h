// Input suites of the row reductions (kernels/reductions/row_ops.h): a
// [rows, n] problem per (op, format, suite, seed), every value one of the
// format's, each row a pure function of (seed, suite, op, row index).
//   random       values of a few binades around 1; softmax_bwd's y a softmax
//                row, log_softmax_bwd's y a log-softmax row (of random x)
//   wide         magnitudes over 60 binades (20 in f16); softmax's x over
//                +-100, where exponentials underflow
//   adversarial  a family per row (row index mod 5): RMSNorm: x far below
//                sqrt(eps), all x equal, dy = x with g = 1 (the backward
//                pass cancels to n eps / W), x near 2^40, one dominant x;
//                softmax: a dominant maximum (log-softmax near 0), all equal,
//                x over +-2^100 (in f16 +-2^15), increasing (the online pass
//                rescales at every step), zeros of both signs with ties;
//                backward: dy constant (softmax cancels to y c (1 - sum y)),
//                dy = softmax of the row times a constant (log_softmax
//                cancels), one-hot rows.
#ifndef ULPGATE_SUITES_INPUTS_ROW_SUITES_H_
#define ULPGATE_SUITES_INPUTS_ROW_SUITES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/reductions/row_ops.h"
#include "oracles/float_format.h"

namespace ulpgate {

struct RowProblem {
  const RowOpInfo* op = nullptr;
  const FloatFormat* format = nullptr;
  std::string suite;
  uint64_t seed = 0;
  size_t rows = 0, n = 0;
  float eps = kDefaultRmsNormEps;
  // operands[k]: operand k of the op in RowOpInfo::operands order, values of
  // the format held as binary32 (g: n values, the others rows * n).
  std::vector<std::vector<float>> operands;
};

std::vector<std::string> RowSuiteNames();

// Throws std::invalid_argument for an unknown suite, n = 0 or n > kMaxRowLength.
RowProblem MakeRowProblem(const RowOpInfo& op, const FloatFormat& format, std::string_view suite,
                          uint64_t seed, size_t rows, size_t n, float eps = kDefaultRmsNormEps);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_INPUTS_ROW_SUITES_H_
