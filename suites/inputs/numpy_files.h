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
// Accepted: float32 and float64 holding values of the format; codes of the
// format as unsigned integers of its storage width (uint8 for the 8-, 6- and
// 4-bit formats, one element a byte, uint16 for bf16 and f16); the types
// NumPy writes for ml_dtypes' arrays: a 2-byte void ("|V2") for bfloat16, a
// 1-byte void ("|V1") for each 8-, 6- and 4-bit type (which it does not
// name: the format is `format`), "<f1" for ml_dtypes' float8_e5m2;
// float16; and a registered format's name as the type string. Codes of a
// narrower format are read as its values. Throws InputError naming `where`
// and the first element that is not a value (or a code) of the format, or
// the dtype.
std::vector<float> ArrayValues(const NumpyArray& array, const FloatFormat& format,
                               const std::string& where);

// Writes arrays (name, shape, values) as an .npz archive (one .npy member
// per array) or, for a single array, an .npy file, after the path's
// extension: float32, or with `format` f16 as float16, bf16 as the 2-byte
// void ml_dtypes' bfloat16 saves as, and an 8-, 6- or 4-bit format as the
// 1-byte void ml_dtypes' types save as, one code a byte (read back by
// ArrayValues; NumpyFormat names the first two only). Atomic (temporary file,
// then rename); throws InputError on failure, and on a value that is not one
// of `format`.
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

// The format an array's dtype says it holds (float16: f16, a 2-byte void:
// bf16, "<f1": float8_e5m2, a registered format's name: that one), else
// nullptr (float32, float64, bit patterns and 1-byte voids say nothing).
const FloatFormat* NumpyFormat(const NumpyArray& array);
void WriteNumpyFile(const std::string& path, const std::vector<NumpyOutput>& arrays);
// What WriteNumpyFile writes a format as, for people: "float32", "float16",
// "bfloat16 (2-byte void)", "uint16 codes", "1-byte void (ml_dtypes' float8_e4m3fn)".
std::string NumpyDtypeText(const FloatFormat* format);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_NUMPY_FILES_H_
