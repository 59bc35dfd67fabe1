#include "suites/inputs/reduction_problem.h"

#include <sstream>

#include "suites/inputs/inputs.h"

namespace ulpgate {

ElementTerms GatherElementTerms(ReductionOp op, const ReductionShape& s,
                                const ReductionInstance& instance, size_t element) {
  ElementTerms t;
  const auto& a = instance.operands;
  switch (op) {
    case ReductionOp::kLinearFwd: {
      const size_t b = element / s.out, o = element % s.out;
      t.p.assign(a[0].begin() + b * s.in, a[0].begin() + (b + 1) * s.in);
      t.q.assign(a[1].begin() + o * s.in, a[1].begin() + (o + 1) * s.in);
      t.has_bias = true;
      t.bias = a[2][o];
      break;
    }
    case ReductionOp::kLinearBwdInput: {
      const size_t b = element / s.in, i = element % s.in;
      t.p.assign(a[0].begin() + b * s.out, a[0].begin() + (b + 1) * s.out);
      for (size_t o = 0; o < s.out; ++o) t.q.push_back(a[1][o * s.in + i]);
      break;
    }
    case ReductionOp::kLinearBwdWeight: {
      const size_t o = element / s.in, i = element % s.in;
      for (size_t b = 0; b < s.batch; ++b) {
        t.p.push_back(a[0][b * s.out + o]);
        t.q.push_back(a[1][b * s.in + i]);
      }
      break;
    }
    case ReductionOp::kLinearBwdBias:
      for (size_t b = 0; b < s.batch; ++b) t.p.push_back(a[0][b * s.out + element]);
      break;
    case ReductionOp::kMseFwd:
      t.p = a[0];
      t.q = a[1];
      t.count = s.batch;
      break;
    case ReductionOp::kMseBwd:
      t.p = {a[0][element]};
      t.q = {a[1][element]};
      t.count = s.batch;
      t.grad_out = a[2][0];
      break;
  }
  return t;
}

std::vector<size_t> ElementIndices(ReductionOp op, const ReductionShape& s, size_t element) {
  const std::vector<size_t> shape = ReductionOutputShape(op, s);
  if (shape.size() == 2) return {element / shape[1], element % shape[1]};
  if (shape.size() == 1) return {element};
  return {};
}

std::string ElementName(ReductionOp op, const ReductionShape& s, size_t element) {
  static const char* names[] = {"y", "dx", "dw", "db", "loss", "dy"};
  std::string name = names[static_cast<int>(op)];
  const std::vector<size_t> indices = ElementIndices(op, s, element);
  if (indices.empty()) return name;
  name += "[";
  for (size_t i = 0; i < indices.size(); ++i) {
    name += (i ? "," : "") + std::to_string(indices[i]);
  }
  return name + "]";
}

std::string ShapeText(ReductionOp op, const ReductionShape& s) {
  if (ReductionShapeRank(op) == 1) return std::to_string(s.batch);
  return std::to_string(s.batch) + "," + std::to_string(s.in) + "," + std::to_string(s.out);
}

ReductionShape ParseShape(ReductionOp op, const std::string& text) {
  const bool mse = ReductionShapeRank(op) == 1;
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
  const std::string name(GetReductionOp(op).name);
  if (mse && extents.size() != 1) {
    throw InputError("--shape for " + name + " is N (one positive integer), got '" + text + "'");
  }
  if (!mse && extents.size() != 3) {
    throw InputError("--shape for " + name + " is B,IN,OUT (three positive integers), got '" +
                     text + "'");
  }
  ReductionShape shape;
  shape.batch = extents[0];
  if (!mse) {
    shape.in = extents[1];
    shape.out = extents[2];
  }
  return shape;
}

ReductionShape RunShape(ReductionOp op, const std::string& text) {
  const bool mse = ReductionShapeRank(op) == 1;
  const ReductionShape shape = ParseShape(op, text.empty() ? (mse ? "1000" : "32,32,32") : text);
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
