// Arrays between ulpgate's float values and a Python callable's arguments and
// results, for the extension module (tools/python/ulpgate/_ulpgate.cc): a
// matrix product behind suites/reveal/dot_door.h (PythonDotDoor) and a
// reduction's outputs computed in Python. Operands cross as NumPy arrays of
// the format's own dtype (float32, float16; bfloat16 and the float8 types as
// ml_dtypes names them) or as torch tensors of it; results come back checked
// for dtype and shape before any value is read, so a callable that returns
// float64, or m x k where m x n was due, is an error, never a measurement.
//
// Every function here calls into Python: the caller holds the GIL.
#ifndef ULPGATE_TOOLS_PYTHON_ULPGATE_PYTHON_ARRAYS_H_
#define ULPGATE_TOOLS_PYTHON_ULPGATE_PYTHON_ARRAYS_H_

#include <pybind11/pybind11.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "oracles/float_format.h"
#include "suites/reveal/dot_door.h"

namespace ulpgate {

// What a callable takes and returns.
enum class ArrayKind { kNumpy, kTorch };
// "numpy" or "torch"; std::invalid_argument for another.
ArrayKind ParseArrayKind(const std::string& name);

// The name NumPy (with ml_dtypes) and PyTorch give a format's dtype:
// "float32", "bfloat16", "float16", "float8_e4m3fn", ...
std::string PythonDtypeName(const FloatFormat& format);

// A callable's argument or result that is not what it must be; the message
// says what came and what was due.
class PythonArrayError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// values (dims' product of them, each a value of `format`) as an array or
// tensor of the format's dtype with shape `dims` ({}: a 0-d array). Throws
// PythonArrayError where the dtype needs ml_dtypes or a PyTorch that is not
// installed (the float8 types before PyTorch 2.1).
pybind11::object MakePythonArray(const float* values, const std::vector<size_t>& dims,
                                 const FloatFormat& format, ArrayKind kind);

// The values of a callable's result, widened to float, after checking that
// it is a NumPy array (or scalar) or a torch tensor (any device) of the
// format's dtype with shape `dims` (for dims {}: shape () or (1,)). Throws
// PythonArrayError naming `what` otherwise.
std::vector<float> PythonArrayValues(pybind11::handle result, const std::vector<size_t>& dims,
                                     const FloatFormat& format, const std::string& what);

// A matrix product computed by a Python callable fn(a, b) -> c with a [m, k],
// b [n, k] and c [m, n] (C = A B^T), arrays or tensors of the operand format
// in and of the output format out. Multiply takes the GIL itself, so callers
// (reveal, invariance) run with it released; whatever goes wrong in Python (an
// exception, a result of the wrong type, dtype or shape) is a DotDoorError
// carrying Python's message. The door holds a reference to the callable:
// construct and destroy it with the GIL held.
class PythonDotDoor final : public DotDoor {
 public:
  struct Options {
    std::string name;  // "python:" + this in reports
    const FloatFormat* operands = &kBinary32;
    const FloatFormat* outputs = &kBinary32;
    ArrayKind kind = ArrayKind::kNumpy;
    size_t max_k = 0, max_rows = 0;  // 0: no limit
  };
  PythonDotDoor(pybind11::object fn, Options options);
  ~PythonDotDoor() override;
  PythonDotDoor(const PythonDotDoor&) = delete;
  PythonDotDoor& operator=(const PythonDotDoor&) = delete;

  std::string Name() const override { return "python:" + options_.name; }
  const FloatFormat& OperandFormat() const override { return *options_.operands; }
  const FloatFormat& OutputFormat() const override { return *options_.outputs; }
  size_t MaxK() const override { return options_.max_k; }
  size_t MaxRows() const override { return options_.max_rows; }
  // torch.set_num_threads for torch tensors; a NumPy callable's threads are
  // its BLAS's, which cannot be set from here.
  bool SetThreads(unsigned threads) override;
  void Multiply(const DotShape& shape, const float* a, const float* b, float* c) override;

  // How many calls Multiply made (tests count them).
  size_t calls() const { return calls_; }

 private:
  pybind11::object fn_;
  Options options_;
  size_t calls_ = 0;
};

}  // namespace ulpgate

#endif  // ULPGATE_TOOLS_PYTHON_ULPGATE_PYTHON_ARRAYS_H_
