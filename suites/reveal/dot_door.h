// A matrix product under test, whatever door it comes through: ulpgate's own
// linear kernels on a target, a planted kernel, a plugin, an IUT process or a
// Python callable. `reveal` (the accumulation fingerprint) and `invariance`
// (batch invariance and determinism) see a kernel only through this interface:
// they choose the operands, call it, and read the outputs' bits.
//
// Layout: C[m][n] = sum_k A[m][k] * B[n][k], both operands row-major with the
// reduced dimension contiguous (the linear layer's x [batch, in] and
// w [out, in]; a BLAS GEMM with B transposed). Operand values are given as
// floats that the operand format holds exactly (f32, bf16, f16, FP8): a door
// whose kernel takes encodings encodes them itself. Outputs come back as the
// values of the output format, widened to float.
#ifndef ULPGATE_SUITES_REVEAL_DOT_DOOR_H_
#define ULPGATE_SUITES_REVEAL_DOT_DOOR_H_

#include <cstddef>
#include <stdexcept>
#include <string>

#include "oracles/float_format.h"

namespace ulpgate {

struct DotShape {
  size_t m = 1;  // rows of A and of C (the batch)
  size_t n = 1;  // rows of B, columns of C (output features)
  size_t k = 1;  // the reduced dimension
};

// A kernel that faulted, refused a shape or returned the wrong count: never a
// measurement. The message says what happened, in the door's words.
class DotDoorError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class DotDoor {
 public:
  virtual ~DotDoor() = default;

  // How reports name it: "linear_fwd/pairwise@AVX2", "plugin:libmy.so:gemm",
  // "iut:./my_iut:gemm", "python:my_matmul".
  virtual std::string Name() const = 0;
  // The format the operands must be values of, and the output's format.
  virtual const FloatFormat& OperandFormat() const = 0;
  virtual const FloatFormat& OutputFormat() const = 0;
  // The largest k (and m, n) the kernel accepts; 0: no limit.
  virtual size_t MaxK() const { return 0; }
  virtual size_t MaxRows() const { return 0; }
  // Worker threads the kernel may use, where the door can set them (invariance
  // runs the same call with several); false when it cannot.
  virtual bool SetThreads(unsigned /*threads*/) { return false; }

  // a: shape.m * shape.k values, b: shape.n * shape.k, c: shape.m * shape.n.
  // Throws DotDoorError on a fault or refusal.
  virtual void Multiply(const DotShape& shape, const float* a, const float* b, float* c) = 0;

  // The same product with rows of A, B and C lda, ldb and ldc elements apart
  // (at least k, k and n; a BLAS leading dimension, rows padded), for
  // invariance to vary. Returns false, computing nothing, where the door takes
  // dense operands only (the default); throws DotDoorError as Multiply does.
  virtual bool MultiplyStrided(const DotShape& /*shape*/, const float* /*a*/, size_t /*lda*/,
                               const float* /*b*/, size_t /*ldb*/, float* /*c*/, size_t /*ldc*/) {
    return false;
  }
};

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REVEAL_DOT_DOOR_H_
