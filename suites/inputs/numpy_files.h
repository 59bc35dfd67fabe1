// NumPy .npy and .npz files: arrays in (inputs and outputs made elsewhere,
// PyTorch's say) and out (a suite's inputs for another framework to run).
// The .npy format is xtensor's (xt::detail::load_npy_file, xt::dump_npy); the
// .npz archive (a zip of .npy files, stored or deflated) is libzip's.
#ifndef ULPGATE_SUITES_NUMPY_FILES_H_
#define ULPGATE_SUITES_NUMPY_FILES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "oracles/format.h"

namespace ulpgate {

struct NumpyArray {
  std::string name;            // the .npz member without ".npy"; a .npy file's stem
  std::string dtype;           // NumPy's type string: "<f4", "<f2", "<u2", "|V2", ...
  std::vector<size_t> shape;   // C order (a Fortran-order array is refused)
  std::vector<uint8_t> data;   // the elements, little-endian, as stored
  size_t size() const;         // elements
};

// Every array of a .npy (one) or .npz file, in the archive's order. Throws
// InputError (suites/inputs/inputs.h), one line naming the file and the member: not
// a NumPy file, truncated, a big-endian or Fortran-order array, an archive
// without arrays.
std::vector<NumpyArray> ReadNumpyFile(const std::string& path);
// True for a path ending in .npy or .npz; in .npz.
bool IsNumpyPath(const std::string& path);
bool IsNpzPath(const std::string& path);
// "FILE.npz:ARRAY" -> {FILE.npz, ARRAY}; anything else (no array named, or not
// a NumPy file before the colon) -> {spec, ""}.
struct ArraySpec {
  std::string path, array;
};
ArraySpec SplitArraySpec(const std::string& spec);

// The values of an array as values of `format`, held exactly in floats.
// Accepted: float32 and float64 holding values of the format, float16 for
// f16, uint16 bit patterns for bf16 and f16, and a 2-byte void ("|V2", what
// ml_dtypes' bfloat16 saves as) for bf16. Throws InputError naming `where`
// and the first element that is not a value of the format, or the dtype.
std::vector<float> ArrayValues(const NumpyArray& array, const FloatFormat& format,
                               const std::string& where);

// Writes arrays (name, shape, values) as an .npz archive (one .npy member
// per array) or, for a single array, an .npy file, after the path's
// extension: float32, or with `format` f16 as float16 and bf16 as the 2-byte
// void ml_dtypes' bfloat16 saves as (read back by ArrayValues and
// NumpyFormat). Atomic (temporary file, then rename); throws InputError on
// failure, and on a value that is not one of `format`.
struct NumpyOutput {
  std::string name;
  std::vector<size_t> shape;
  std::vector<float> values;
  const FloatFormat* format = nullptr;  // nullptr or f32: float32
};

// Writes arrays as read (dtype, shape and bytes unchanged) to an .npz or,
// one array, an .npy: a copy of some members of a file. Atomic; throws
// InputError on failure.
void WriteNumpyArrays(const std::string& path, const std::vector<NumpyArray>& arrays);

// The 16-bit format an array's dtype is (float16: f16, a 2-byte void: bf16),
// else nullptr (float32, float64 and uint16 bit patterns say nothing).
const FloatFormat* NumpyFormat(const NumpyArray& array);
void WriteNumpyFile(const std::string& path, const std::vector<NumpyOutput>& arrays);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_NUMPY_FILES_H_
