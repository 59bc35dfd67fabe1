#include "tools/python/ulpgate/python_arrays.h"

#include <pybind11/numpy.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace py = pybind11;

namespace ulpgate {

ArrayKind ParseArrayKind(const std::string& name) {
  if (name == "numpy") return ArrayKind::kNumpy;
  if (name == "torch") return ArrayKind::kTorch;
  throw std::invalid_argument("tensors: 'numpy' or 'torch', not '" + name + "'");
}

std::string PythonDtypeName(const FloatFormat& format) {
  // The three formats whose report name is short; every other registered
  // format is named as ml_dtypes and PyTorch name it.
  if (IsBinary32(format)) return "float32";
  if (std::string(format.name) == "bf16") return "bfloat16";
  if (std::string(format.name) == "f16") return "float16";
  if (std::string(format.name) == "f64") return "float64";
  return format.name;
}

namespace {

size_t Count(const std::vector<size_t>& dims) {
  size_t count = 1;
  for (size_t d : dims) count *= d;
  return count;
}

std::string DimsText(const std::vector<size_t>& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

py::module_ Import(const char* module, const std::string& why) {
  try {
    return py::module_::import(module);
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_ImportError)) throw;
    throw PythonArrayError(why + ": " + module + " is not installed in this Python");
  }
}

}  // namespace

py::object MakePythonArray(const float* values, const std::vector<size_t>& dims,
                           const FloatFormat& format, ArrayKind kind) {
  std::vector<py::ssize_t> shape(dims.begin(), dims.end());
  py::array_t<float> f32(shape);
  std::memcpy(f32.mutable_data(), values, Count(dims) * sizeof(float));
  const std::string dtype = PythonDtypeName(format);
  if (kind == ArrayKind::kTorch) {
    py::module_ torch = Import("torch", dtype + " tensors");
    if (!py::hasattr(torch, dtype.c_str())) {
      throw PythonArrayError(fmt::format("PyTorch {} has no {} tensors",
                                         py::str(torch.attr("__version__")).cast<std::string>(), dtype));
    }
    // Each value is one of the format's, so the conversion is exact whatever
    // rounding PyTorch's cast applies.
    return torch.attr("from_numpy")(f32).attr("to")(torch.attr(dtype.c_str()));
  }
  if (dtype == "float32") return std::move(f32);
  if (dtype == "float16" || dtype == "float64") {
    return f32.attr("astype")(py::module_::import("numpy").attr(dtype.c_str()));
  }
  py::module_ ml_dtypes = Import("ml_dtypes", "NumPy arrays of " + dtype + " (or tensors='torch')");
  if (!py::hasattr(ml_dtypes, dtype.c_str())) {
    throw PythonArrayError(fmt::format("ml_dtypes {} has no {}",
                                       py::str(ml_dtypes.attr("__version__")).cast<std::string>(), dtype));
  }
  return f32.attr("astype")(ml_dtypes.attr(dtype.c_str()));
}

std::vector<float> PythonArrayValues(py::handle result, const std::vector<size_t>& dims,
                                     const FloatFormat& format, const std::string& what) {
  const std::string want = PythonDtypeName(format);
  py::module_ np = py::module_::import("numpy");
  const bool tensor = py::hasattr(result, "detach") && py::hasattr(result, "cpu") && py::hasattr(result, "dtype");
  const bool array = py::isinstance(result, np.attr("ndarray")) || py::isinstance(result, np.attr("generic"));
  if (!tensor && !array) {
    throw PythonArrayError(fmt::format("{} {}, not a NumPy array or a torch tensor ({} {} due)", what,
                                       py::str(py::type::of(result)).cast<std::string>(), want,
                                       DimsText(dims)));
  }
  py::object a = tensor ? py::reinterpret_borrow<py::object>(result) : np.attr("asarray")(result);
  std::string dtype = py::str(a.attr("dtype"));
  if (dtype.rfind("torch.", 0) == 0) dtype.erase(0, 6);
  std::vector<size_t> shape;
  for (py::handle d : py::tuple(a.attr("shape"))) shape.push_back(d.cast<size_t>());
  const bool scalar = dims.empty() && (shape.empty() || shape == std::vector<size_t>{1});
  if (dtype != want || (shape != dims && !scalar)) {
    throw PythonArrayError(fmt::format("{} {} {} where {} {} was due", what, dtype, DimsText(shape), want,
                                       DimsText(dims)));
  }
  // Widening any of the formats to float32 is exact.
  py::object f32 = tensor ? a.attr("detach")().attr("cpu")().attr("float")().attr("contiguous")().attr("numpy")()
                          : a.attr("astype")(np.attr("float32"));
  auto values = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(f32);
  if (!values || static_cast<size_t>(values.size()) != Count(dims)) {
    throw PythonArrayError(what + " values that do not read as " + std::to_string(Count(dims)) + " floats");
  }
  return std::vector<float>(values.data(), values.data() + values.size());
}

PythonDotDoor::PythonDotDoor(py::object fn, Options options) : fn_(std::move(fn)), options_(std::move(options)) {}

PythonDotDoor::~PythonDotDoor() {
  // The callable's reference is dropped under the GIL, wherever the door dies.
  py::gil_scoped_acquire gil;
  fn_ = py::object();
}

bool PythonDotDoor::SetThreads(unsigned threads) {
  if (options_.kind != ArrayKind::kTorch) return false;
  py::gil_scoped_acquire gil;
  py::module_::import("torch").attr("set_num_threads")(std::max(threads, 1u));
  return true;
}

namespace {

// Rows of `cols` values `ld` apart as an array (tensor) of [rows, ld] sliced
// to [rows, cols]: a view whose rows are ld apart, as a BLAS leading
// dimension lays them out. The padding is NaN where the format has one, so
// that a callable that reads it shows it.
py::object RowsView(const float* values, size_t rows, size_t cols, size_t ld, const FloatFormat& format,
                    ArrayKind kind) {
  if (ld == cols) return MakePythonArray(values, {rows, cols}, format, kind);
  std::vector<float> padded(rows * ld, format.has_nan() ? std::numeric_limits<float>::quiet_NaN() : 0.0f);
  for (size_t r = 0; r < rows; ++r) std::copy(values + r * ld, values + r * ld + cols, padded.data() + r * ld);
  py::object full = MakePythonArray(padded.data(), {rows, ld}, format, kind);
  return full[py::make_tuple(py::slice(0, static_cast<py::ssize_t>(rows), 1),
                             py::slice(0, static_cast<py::ssize_t>(cols), 1))];
}

}  // namespace

std::vector<float> PythonDotDoor::Call(const DotShape& shape, const float* a, size_t lda, const float* b,
                                       size_t ldb) {
  // Every failure is caught here, with the GIL held (reading a Python error
  // needs it), and leaves as the door's error: reveal and invariance must
  // stop with Python's words, never read c.
  try {
    py::object pa = RowsView(a, shape.m, shape.k, lda, *options_.operands, options_.kind);
    py::object pb = RowsView(b, shape.n, shape.k, ldb, *options_.operands, options_.kind);
    py::object result = fn_(pa, pb);
    ++calls_;
    return PythonArrayValues(result, {shape.m, shape.n}, *options_.outputs, "returned");
  } catch (py::error_already_set& e) {
    throw DotDoorError(Name() + " raised " + e.what());
  } catch (const PythonArrayError& e) {
    throw DotDoorError(Name() + ": " + e.what());
  } catch (const DotDoorError&) {
    throw;
  } catch (const std::exception& e) {
    throw DotDoorError(Name() + ": " + e.what());
  }
}

void PythonDotDoor::Multiply(const DotShape& shape, const float* a, const float* b, float* c) {
  py::gil_scoped_acquire gil;
  const std::vector<float> values = Call(shape, a, shape.k, b, shape.k);
  std::copy(values.begin(), values.end(), c);
}

bool PythonDotDoor::MultiplyStrided(const DotShape& shape, const float* a, size_t lda, const float* b, size_t ldb,
                                    float* c, size_t ldc) {
  py::gil_scoped_acquire gil;
  const std::vector<float> values = Call(shape, a, lda, b, ldb);
  for (size_t r = 0; r < shape.m; ++r) {
    std::copy(values.begin() + static_cast<std::ptrdiff_t>(r * shape.n),
              values.begin() + static_cast<std::ptrdiff_t>((r + 1) * shape.n), c + r * ldc);
  }
  return true;
}

}  // namespace ulpgate
