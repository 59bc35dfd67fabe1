#include "suites/investigate/check_models.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "suites/engine/elementwise_oracle.h"
#include "suites/engine/op_table.h"
#include "suites/inputs/inputs.h"

namespace ulpgate {

const FloatFormat& CheckFormat(const std::string& op, const std::string& dtype) {
  const OpInfo& info = GetOp(op);
  if (info.family == OpFamily::kDrift) {
    throw InputError("check takes the outputs of an op, not of a training run (drift --compare)");
  }
  if (info.family == OpFamily::kCast) {
    // Its check names the cast model's policies (tools/cmd_cast.cc), not models.
    throw InputError("the outputs of " + op + " are checked by `ulpgate check --op " + op +
                     " --dtype DEST --inputs IN --outputs CODES`");
  }
  const FloatFormat* format = FindFormat(dtype);
  if (format == nullptr ||
      std::find(info.dtypes.begin(), info.dtypes.end(), dtype) == info.dtypes.end()) {
    std::string known;
    for (const auto& d : info.dtypes) known += (known.empty() ? "" : ", ") + d;
    throw InputError("unknown --dtype '" + dtype + "' for " + op + " (" + known + ")");
  }
  return *format;
}

std::vector<ModelProgram> CheckModels(const ElementwiseOpInfo& op,
                                      const std::vector<std::string>& model_specs,
                                      const std::string& models_path, const FloatFormat& format,
                                      std::vector<bool>* user, std::vector<int>* builtin) {
  std::vector<ModelProgram> models = ModelPrograms(op, format);
  builtin->assign(models.size(), -1);
  if (models.empty()) {
    const std::vector<std::string> names = ModelNames(op, format);
    for (size_t m = 0; m < names.size(); ++m) {
      ModelProgram named;
      named.name = names[m];
      named.storage = &format;
      models.push_back(std::move(named));
      builtin->push_back(static_cast<int>(m));
    }
  }
  user->assign(models.size(), false);
  const std::vector<std::string> operands = op.operand_names();
  std::vector<std::string> specs = model_specs;
  std::vector<std::string> where(specs.size(), "--model");
  if (!models_path.empty()) {
    std::ifstream in(models_path);
    if (!in) throw InputError(models_path + ": cannot open");
    std::string line;
    for (size_t number = 1; std::getline(in, line); ++number) {
      const size_t first = line.find_first_not_of(" \t\r");
      if (first == std::string::npos || line[first] == '#') continue;
      specs.push_back(line);
      where.push_back(fmt::format("{}:{}", models_path, number));
    }
  }
  for (size_t k = 0; k < specs.size(); ++k) {
    ModelProgram m;
    try {
      m = ParseModelSpec(specs[k], operands, format);
    } catch (const ModelSyntaxError& e) {
      throw InputError(where[k] + ": " + e.what());
    }
    for (const ModelProgram& o : models) {
      if (o.name == m.name) {
        throw InputError(where[k] + ": model '" + m.name + "' is already defined" +
                         (user->at(&o - models.data()) ? "" : " (a built-in model)"));
      }
    }
    models.push_back(std::move(m));
    user->push_back(true);
    builtin->push_back(-1);
  }
  return models;
}

}  // namespace ulpgate
