#include "tools/python/ulpgate/python_arrays.h"

#include <pybind11/numpy.h>

#include <algorithm>
#include <cstring>
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

void PythonDotDoor::Multiply(const DotShape& shape, const float* a, const float* b, float* c) {
  py::gil_scoped_acquire gil;
  // Every failure is caught here, with the GIL still held (reading a Python
  // error needs it), and leaves as the door's error: reveal and invariance
  // must stop with Python's words, never read c.
  try {
    py::object pa = MakePythonArray(a, {shape.m, shape.k}, *options_.operands, options_.kind);
    py::object pb = MakePythonArray(b, {shape.n, shape.k}, *options_.operands, options_.kind);
    py::object result = fn_(pa, pb);
    ++calls_;
    const std::vector<float> values =
        PythonArrayValues(result, {shape.m, shape.n}, *options_.outputs, "returned");
    std::copy(values.begin(), values.end(), c);
  } catch (py::error_already_set& e) {
    throw DotDoorError(Name() + " raised " + e.what());
  } catch (const PythonArrayError& e) {
    throw DotDoorError(Name() + ": " + e.what());
  } catch (const std::exception& e) {
    throw DotDoorError(Name() + ": " + e.what());
  }
}

}  // namespace ulpgate
