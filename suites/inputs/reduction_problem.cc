#include "suites/inputs/reduction_problem.h"

#include <sstream>

#include "suites/inputs/inputs.h"

namespace ulpgate {

ElementTerms GatherElementTerms(const ReductionOpInfo& op, const ReductionShape& shape,
                                const ReductionInstance& instance, size_t element) {
  return op.gather(instance.operands, shape, element);
}

std::vector<size_t> ElementIndices(const ReductionOpInfo& op, const ReductionShape& s,
                                   size_t element) {
  const std::vector<size_t> shape = ReductionOutputShape(op, s);
  std::vector<size_t> indices(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    indices[d] = element % shape[d];
    element /= shape[d];
  }
  return indices;
}

std::string ElementName(const ReductionOpInfo& op, const ReductionShape& s, size_t element) {
  std::string name(op.output.name);
  const std::vector<size_t> indices = ElementIndices(op, s, element);
  if (indices.empty()) return name;
  name += "[";
  for (size_t i = 0; i < indices.size(); ++i) {
    name += (i ? "," : "") + std::to_string(indices[i]);
  }
  return name + "]";
}

std::string ShapeText(const ReductionOpInfo& op, const ReductionShape& s) {
  std::string text;
  for (size_t e = 0; e < op.extents.size(); ++e) text += (e ? "," : "") + std::to_string(s[e]);
  return text;
}

ReductionShape ParseShape(const ReductionOpInfo& op, const std::string& text) {
  std::vector<size_t> extents;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    size_t used = 0;
    unsigned long long value = 0;
    try {
      value = std::stoull(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || item[0] == '-') {
      throw InputError("--shape '" + text + "': '" + item + "' is not a positive integer");
    }
    if (value == 0 || value > kMaxReductionLength) {
      throw InputError("--shape '" + text + "': extents must be in [1, " +
                       std::to_string(kMaxReductionLength) + "]");
    }
    extents.push_back(static_cast<size_t>(value));
  }
  if (extents.size() != op.extents.size()) {
    static const char* const kCounts[] = {"no", "one", "two", "three", "four"};
    std::string letters;
    for (size_t e = 0; e < op.extents.size(); ++e) {
      letters += (e ? "," : "") + std::string(op.extents[e].letters);
    }
    const size_t rank = op.extents.size();
    throw InputError("--shape for " + std::string(op.name) + " is " + letters + " (" +
                     kCounts[rank < 5 ? rank : 0] + " positive integer" + (rank == 1 ? "" : "s") +
                     "), got '" + text + "'");
  }
  ReductionShape shape;
  shape.rank = extents.size();
  for (size_t e = 0; e < extents.size(); ++e) shape[e] = extents[e];
  return shape;
}

ReductionShape RunShape(const ReductionOpInfo& op, const std::string& text) {
  const ReductionShape shape = text.empty() ? DefaultShape(op) : ParseShape(op, text);
  for (const auto& extents : ReductionOperandShapes(op, shape)) {
    uint64_t count = 1;
    for (size_t e : extents) count *= e;
    if (count > (uint64_t{1} << 26)) {
      throw InputError("--shape " + ShapeText(op, shape) +
                       ": an operand would hold more than 2^26 floats");
    }
  }
  return shape;
}

}  // namespace ulpgate
