#include "suites/inputs/check_files.h"

#include <algorithm>
#include <cctype>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "oracles/float_text.h"

namespace ulpgate {

namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// An array of the file by name, or the error listing the arrays there.
}  // namespace

// The outputs array of a file: the one named, the only one, or the only one
// whose name (case aside) is not an operand's.
static const NumpyArray& OutputArray(const std::vector<NumpyArray>& arrays, const std::string& name,
                              const std::vector<std::string>& operands, const std::string& path) {
  if (!name.empty()) return ArrayNamed(arrays, name, path);
  if (arrays.size() == 1) return arrays[0];
  std::vector<const NumpyArray*> candidates;
  for (const NumpyArray& a : arrays) {
    bool operand = false;
    for (const auto& o : operands) operand = operand || Lower(o) == Lower(a.name);
    if (!operand) candidates.push_back(&a);
  }
  if (candidates.size() != 1) {
    std::string names;
    for (const auto* a : candidates) names += (names.empty() ? "" : ", ") + a->name;
    throw InputError(path + " holds several output arrays: name one as " + path + ":ARRAY (" +
                     names + ")");
  }
  return *candidates[0];
}

const NumpyArray& ArrayNamed(const std::vector<NumpyArray>& arrays, const std::string& name,
                             const std::string& path) {
  for (const NumpyArray& a : arrays) {
    if (a.name == name) return a;
  }
  std::string names;
  for (const NumpyArray& a : arrays) names += (names.empty() ? "" : ", ") + a.name;
  throw InputError(path + ": no array '" + name + "' (arrays: " + names + ")");
}

std::string DtypeOfFiles(const std::string& inputs_path, const std::string& outputs_spec) {
  std::string dtype, said_by;
  auto consider = [&](const std::string& spec) {
    const auto [path, name] = SplitArraySpec(spec);
    if (path.empty() || !IsNumpyPath(path)) return;
    for (const NumpyArray& a : ReadNumpyFile(path)) {
      if (!name.empty() && a.name != name) continue;
      const FloatFormat* format = NumpyFormat(a);
      if (format == nullptr) continue;
      const std::string where = path + ":" + a.name;
      if (!dtype.empty() && dtype != format->name) {
        throw InputError(fmt::format("{} holds {} values and {} {}: pass --dtype", said_by, dtype,
                                     where, format->name));
      }
      dtype = format->name;
      said_by = where;
    }
  };
  consider(inputs_path);
  consider(outputs_spec);
  return dtype;
}

// The inputs: an .npz with one array per operand (named as the op names
// them), an .npy of shape [operands, n], or an input file.
InputSet ReadCheckInputs(const ElementwiseOpInfo& op, const std::string& path,
                         const FloatFormat& format) {
  const std::vector<std::string> names = op.operand_names();
  if (!IsNumpyPath(path)) {
    InputSet inputs = ReadInputFile(path, names);
    for (size_t k = 0; k < names.size(); ++k) {
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (!IsRepresentable(format, inputs.columns[k][i])) {
          throw InputError(fmt::format("{}: input {} {} = {} is not a {} value", path, i, names[k],
                                       HexFloat(inputs.columns[k][i]), format.name));
        }
      }
    }
    return inputs;
  }
  const std::vector<NumpyArray> arrays = ReadNumpyFile(path);
  InputSet inputs;
  inputs.operand_names = names;
  inputs.source = "file:" + path;
  if (arrays.size() == 1 && arrays[0].shape.size() == 2 && arrays[0].shape[0] == names.size()) {
    const std::vector<float> all = ArrayValues(arrays[0], format, path);
    const size_t n = arrays[0].shape[1];
    for (size_t k = 0; k < names.size(); ++k) {
      inputs.columns.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(k * n),
                                  all.begin() + static_cast<std::ptrdiff_t>((k + 1) * n));
    }
    return inputs;
  }
  for (const std::string& name : names) {
    const NumpyArray& a = ArrayNamed(arrays, name, path);
    inputs.columns.push_back(ArrayValues(a, format, path + ":" + name));
    if (inputs.columns.back().size() != inputs.columns.front().size()) {
      throw InputError(fmt::format("{}: '{}' has {} elements, '{}' {}", path, name,
                                   inputs.columns.back().size(), names.front(),
                                   inputs.columns.front().size()));
    }
  }
  return inputs;
}

// FILE[:ARRAY]: an array of an .npz (the only one that is not an operand when
// no name is given), an .npy, or a text file of one value per line.
std::vector<float> ReadCheckOutputs(const ElementwiseOpInfo& op, const std::string& spec,
                                    const FloatFormat& format, std::string* label) {
  const auto [path, array] = SplitArraySpec(spec);
  if (!IsNumpyPath(path)) {
    InputSet values = ReadInputFile(path, {"output"});
    if (label->empty()) *label = path;
    return values.columns[0];
  }
  const std::vector<NumpyArray> arrays = ReadNumpyFile(path);
  const NumpyArray* chosen = &OutputArray(arrays, array, op.operand_names(), path);
  if (label->empty()) *label = chosen->name;
  return ArrayValues(*chosen, format, path + ":" + chosen->name);
}

// A reduction's operands from an .npz, one array per operand named as the op
// names it (case aside: PyTorch's W is w); the shape (B, in, out or N) read
// from the arrays and checked against every operand. A scalar operand
// (mse_bwd's grad_out) defaults to 1 when absent.
ReductionInputSet ReadReductionInputs(const ReductionOpInfo& op, const std::string& path,
                                      const FloatFormat& format) {
  if (!IsNpzPath(path)) {
    throw InputError("--inputs " + path + ": the linear and MSE ops take an .npz with arrays " +
                     fmt::format("{}", fmt::join(op.operands, ", ")));
  }
  ReductionInputSet inputs = ReductionInputsFromArrays(op, ReadNumpyFile(path), format, path);
  inputs.source = "file:" + path;
  return inputs;
}

ReductionInputSet ReductionInputsFromArrays(const ReductionOpInfo& op, const std::vector<NumpyArray>& arrays,
                                            const FloatFormat& format, const std::string& path) {
  // Each extent's place in the operands: their shapes for distinct sentinels.
  const ReductionShape sentinel{1000003, 1000033, 1000037};
  const auto where = ReductionOperandShapes(op.op, sentinel);
  ReductionShape shape;
  std::vector<const NumpyArray*> found(op.operands.size(), nullptr);
  // One instance, or (what `suite export --n N` writes) a leading dimension of
  // N instances on every operand.
  size_t instances = 0;
  for (size_t k = 0; k < op.operands.size(); ++k) {
    for (const NumpyArray& a : arrays) {
      if (Lower(a.name) == Lower(op.operands[k])) found[k] = &a;
    }
    if (found[k] == nullptr && !where[k].empty()) ArrayNamed(arrays, op.operands[k], path);
    if (found[k] == nullptr) continue;
    std::vector<size_t> dims = found[k]->shape;
    if (where[k].empty() && dims == std::vector<size_t>{1}) dims.clear();  // a scalar as [1]
    const bool leading = dims.size() == where[k].size() + 1 ||
                         (where[k].empty() && dims.size() == 2 && dims[1] == 1);
    if (instances == 0) instances = leading ? dims.front() : 1;
    if (leading) {
      if (dims.front() != instances) {
        throw InputError(fmt::format("{}:{}: {} instances, the other operands {}", path,
                                     found[k]->name, dims.front(), instances));
      }
      dims.erase(dims.begin());
      if (where[k].empty()) dims.clear();
    } else if (instances != 1 && !where[k].empty()) {
      throw InputError(fmt::format("{}:{}: no instance dimension, the other operands have {}",
                                   path, found[k]->name, instances));
    }
    if (dims.size() != where[k].size()) {
      throw InputError(fmt::format("{}:{}: {} dimensions, {} takes {}", path, found[k]->name,
                                   found[k]->shape.size(), op.name, where[k].size()));
    }
    for (size_t d = 0; d < where[k].size(); ++d) {
      const size_t extent = dims[d];
      if (where[k][d] == sentinel.batch) shape.batch = extent;
      if (where[k][d] == sentinel.in) shape.in = extent;
      if (where[k][d] == sentinel.out) shape.out = extent;
    }
  }
  const auto expected = ReductionOperandShapes(op.op, shape);
  ReductionInputSet inputs;
  inputs.op = op.op;
  inputs.format = &format;
  inputs.shape = shape;
  inputs.source = path;
  if (shape.batch == 0 || shape.in == 0 || shape.out == 0 || instances == 0) {
    throw InputError(path + ": an empty operand");
  }
  inputs.instances.resize(instances);
  for (size_t i = 0; i < instances; ++i) inputs.instances[i].index = i;
  for (size_t k = 0; k < op.operands.size(); ++k) {
    if (found[k] == nullptr) {
      for (auto& instance : inputs.instances) instance.operands.push_back({1.0f});
      continue;
    }
    std::vector<size_t> want = expected[k];
    if (instances > 1 || found[k]->shape.size() == want.size() + 1) want.insert(want.begin(), instances);
    std::vector<size_t> have = found[k]->shape;
    if (expected[k].empty()) {  // a scalar: [], [1] or [N, 1]
      want = {instances};
      have = {found[k]->size()};
    }
    if (have != want) {
      throw InputError(fmt::format("{}:{}: shape [{}] does not fit {} with shape {} (expected [{}])",
                                   path, found[k]->name, fmt::join(found[k]->shape, ", "), op.name,
                                   ShapeText(op.op, shape), fmt::join(want, ", ")));
    }
    const std::vector<float> values = ArrayValues(*found[k], format, path + ":" + found[k]->name);
    const size_t per = values.size() / instances;
    for (size_t i = 0; i < instances; ++i) {
      inputs.instances[i].operands.emplace_back(values.begin() + static_cast<std::ptrdiff_t>(i * per),
                                                values.begin() + static_cast<std::ptrdiff_t>((i + 1) * per));
    }
  }
  return inputs;
}

std::vector<std::vector<float>> ReadReductionOutputs(const ReductionOpInfo& op,
                                                     const ReductionInputSet& inputs,
                                                     const std::string& spec, std::string* label) {
  const auto [path, name] = SplitArraySpec(spec);
  if (!IsNumpyPath(path)) throw InputError(path + ": the linear and MSE ops take .npz or .npy outputs");
  const std::vector<NumpyArray> arrays = ReadNumpyFile(path);
  const NumpyArray* chosen = &OutputArray(arrays, name, op.operands, path);
  if (label->empty()) *label = chosen->name;
  return ReductionOutputsFromArray(op, inputs, *chosen, path);
}

std::vector<std::vector<float>> ReductionOutputsFromArray(const ReductionOpInfo& op,
                                                          const ReductionInputSet& inputs,
                                                          const NumpyArray& array, const std::string& path) {
  const FloatFormat& format = *inputs.format;
  const NumpyArray* chosen = &array;
  const std::vector<size_t> want = ReductionOutputShape(op.op, inputs.shape);
  size_t want_count = inputs.instances.size();
  for (size_t e : want) want_count *= e;
  if (chosen->size() != want_count) {
    throw InputError(fmt::format("{}:{}: {} outputs, {} instance{} of {} {} give {} (shape [{}] each)",
                                 path, chosen->name, chosen->size(), inputs.instances.size(),
                                 inputs.instances.size() == 1 ? "" : "s", op.name,
                                 ShapeText(op.op, inputs.shape), want_count, fmt::join(want, ", ")));
  }
  const std::vector<float> all = ArrayValues(*chosen, format, path + ":" + chosen->name);
  const size_t per = all.size() / inputs.instances.size();
  std::vector<std::vector<float>> outputs;
  for (size_t i = 0; i < inputs.instances.size(); ++i) {
    outputs.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(i * per),
                         all.begin() + static_cast<std::ptrdiff_t>((i + 1) * per));
  }
  return outputs;
}

}  // namespace ulpgate
