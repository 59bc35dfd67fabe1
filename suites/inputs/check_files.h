// Reading what `check` takes: inputs and outputs from NumPy or text files as
// values of a format, a reduction's operands and shape from its arrays (the
// format and the models, which ask the engine's tables:
// suites/investigate/check_models.h). Every problem is one InputError naming the file, the
// array and, for a value, the first bad element.
#ifndef ULPGATE_SUITES_CHECK_FILES_H_
#define ULPGATE_SUITES_CHECK_FILES_H_

#include <string>
#include <vector>

#include "kernels/elementwise_ops.h"
#include "kernels/reduction_spec.h"
#include "oracles/format.h"
#include "oracles/model_expr.h"
#include "suites/inputs/inputs.h"
#include "suites/inputs/numpy_files.h"
#include "suites/inputs/reduction_problem.h"

namespace ulpgate {

// The dtype NumPy files say their values are ("bf16" for a 2-byte void,
// "f16" for float16), from the arrays `check` reads of --inputs and --outputs
// (FILE[:ARRAY]; "" for an absent path or a text file); "" when they say
// nothing (float32, float64, uint16). Throws InputError when two arrays say
// different things.
std::string DtypeOfFiles(const std::string& inputs_path, const std::string& outputs_spec);
// The array of that name, or the error listing the arrays of the file.
const NumpyArray& ArrayNamed(const std::vector<NumpyArray>& arrays, const std::string& name,
                             const std::string& path);
// An elementwise op's inputs: an .npz with one array per operand, named as
// the op names them (`ulpgate list`), an .npy [operands, n], or an input
// file.
InputSet ReadCheckInputs(const ElementwiseOpInfo& op, const std::string& path,
                         const FloatFormat& format);
// FILE[:ARRAY]: an array of an .npz (the only one that is not an operand when
// none is named), an .npy, or a text file of one value per line. Sets *label
// to the array's name when it is empty.
std::vector<float> ReadCheckOutputs(const ElementwiseOpInfo& op, const std::string& spec,
                                    const FloatFormat& format, std::string* label);
// A reduction's operands from an .npz, one array per operand (names compared
// without case: PyTorch's W is w), the shape read from them, with an optional
// leading dimension of instances; a missing scalar operand is 1.
ReductionInputSet ReadReductionInputs(const ReductionOpInfo& op, const std::string& path,
                                      const FloatFormat& format);
// The outputs FILE.npz[:ARRAY] or FILE.npy of a reduction, split by instance.
std::vector<std::vector<float>> ReadReductionOutputs(const ReductionOpInfo& op,
                                                     const ReductionInputSet& inputs,
                                                     const std::string& spec, std::string* label);
// The same from arrays in memory (the Python package's): `path` names where
// they come from in messages ("python:x: shape [3, 4] does not fit ...") and
// is the input set's source.
ReductionInputSet ReductionInputsFromArrays(const ReductionOpInfo& op, const std::vector<NumpyArray>& arrays,
                                            const FloatFormat& format, const std::string& path);
std::vector<std::vector<float>> ReductionOutputsFromArray(const ReductionOpInfo& op,
                                                          const ReductionInputSet& inputs,
                                                          const NumpyArray& array, const std::string& path);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_CHECK_FILES_H_
