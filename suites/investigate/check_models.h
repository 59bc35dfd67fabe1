// What `check` compares with, from the engine's tables: the format an op
// runs in, and the models (built-in, then the user's). Beside the check (not
// in inputs/check_files.h, which reads files only) so that inputs/ does not
// include the engine. Every problem is one InputError naming the option or
// the file and line.
#ifndef ULPGATE_SUITES_INVESTIGATE_CHECK_MODELS_H_
#define ULPGATE_SUITES_INVESTIGATE_CHECK_MODELS_H_

#include <string>
#include <vector>

#include "kernels/elementwise_ops.h"
#include "oracles/format.h"
#include "oracles/model_expr.h"

namespace ulpgate {

// The format `dtype` names, if `op` runs in it (a drift op is refused).
const FloatFormat& CheckFormat(const std::string& op, const std::string& dtype);
// The built-in models of the op in `format`, then the user's (--model specs,
// then a models file's lines); user[i] says which. An op whose models the
// model language cannot write (they call exp, tanh, erf) has its built-in
// models as named entries with no statements, builtin[i] their index in
// ModelNames(op, format) (-1 for a program). Errors name the option or the
// file and line.
std::vector<ModelProgram> CheckModels(const ElementwiseOpInfo& op,
                                      const std::vector<std::string>& model_specs,
                                      const std::string& models_path, const FloatFormat& format,
                                      std::vector<bool>* user, std::vector<int>* builtin);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_INVESTIGATE_CHECK_MODELS_H_
