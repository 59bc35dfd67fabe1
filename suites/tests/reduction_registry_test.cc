// Smoke tier: the reductions as registered folders. What the generic code
// reads from a spec is checked against what the spec's tables say, written
// out here by hand: the registry's kernels (one per variant, in every format,
// on every compiled target), the shapes (--shape, element names, operand and
// output shapes), each op's gathered terms, and the input streams the goldens
// depend on.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "kernels/narrow_formats.h"
#include "kernels/reductions/registered_reductions.h"
#include "kernels/registry.h"
#include "suites/inputs/inputs.h"
#include "suites/inputs/reduction_problem.h"

namespace ulpgate {
namespace {

const ReductionOpInfo& Op(const char* name) {
  const ReductionOpInfo* op = FindReductionOp(name);
  if (op == nullptr) throw std::logic_error(std::string("no reduction ") + name);
  return *op;
}

TEST(ReductionRegistry, ListsTheOpsInRegistrationOrderWithTheirOldInputStreams) {
  // The order `list` and reports give, and the streams the goldens' inputs
  // were drawn from (one per op, never reused).
  const std::vector<std::pair<std::string, uint64_t>> want = {
      {"linear_fwd", 0}, {"linear_bwd_input", 1}, {"linear_bwd_weight", 2},
      {"linear_bwd_bias", 3}, {"mse_fwd", 4}, {"mse_bwd", 5},
      {"rmsnorm_fwd", 101}, {"rmsnorm_bwd", 102}, {"softmax_fwd", 103}, {"softmax_bwd", 104},
      {"log_softmax_fwd", 105}, {"log_softmax_bwd", 106}};
  ASSERT_EQ(ReductionOps().size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(ReductionOps()[i].name, want[i].first);
    EXPECT_EQ(ReductionOps()[i].index, i);
    EXPECT_EQ(ReductionOps()[i].input_stream, want[i].second) << want[i].first;
  }
}

TEST(ReductionRegistry, EveryVariantHasAKernelInEveryFormatOnEveryTarget) {
  std::vector<std::string> formats = {"f32"};
  for (const NarrowFormat& f : kNarrowFormats) formats.emplace_back(f.format->name);
  for (const ReductionOpInfo& op : ReductionOps()) {
    for (const ReductionVariantInfo& v : op.variants) {
      std::set<ReductionKernel> distinct;
      for (const TargetInfo& t : CompiledTargets()) {
        for (const std::string& format : formats) {
          const ReductionKernel k = FindReductionKernel(op.name, format, v.name, t.bits);
          EXPECT_NE(k, nullptr) << op.name << " " << v.name << " " << format << " " << t.name;
          distinct.insert(k);
        }
      }
      EXPECT_EQ(distinct.size(), CompiledTargets().size() * formats.size())
          << op.name << " " << v.name << ": two (format, target) pairs share a kernel";
    }
    EXPECT_EQ(FindReductionKernel(op.name, "f32", "no_such_variant", BestTarget().bits), nullptr);
    EXPECT_EQ(FindReductionKernel(op.name, "f64", op.variants[0].name, BestTarget().bits),
              nullptr);
  }
  EXPECT_EQ(FindReductionKernel("no_such_op", "f32", "pairwise", BestTarget().bits), nullptr);
}

TEST(ReductionRegistry, ShapesFollowTheExtents) {
  const ReductionOpInfo& fwd = Op("linear_fwd");
  const ReductionShape s = ParseShape(fwd, "3,5,7");
  EXPECT_EQ(ShapeText(fwd, s), "3,5,7");
  EXPECT_EQ(ReductionOperandShapes(fwd, s),
            (std::vector<std::vector<size_t>>{{3, 5}, {7, 5}, {7}}));
  EXPECT_EQ(ReductionOutputShape(fwd, s), (std::vector<size_t>{3, 7}));
  EXPECT_EQ(ReductionLength(fwd, s), 5u);
  EXPECT_EQ(ElementName(fwd, s, 2 * 7 + 1), "y[2,1]");
  const ReductionOpInfo& weight = Op("linear_bwd_weight");
  EXPECT_EQ(ReductionOutputShape(weight, s), (std::vector<size_t>{7, 5}));
  EXPECT_EQ(ReductionLength(weight, s), 3u);
  EXPECT_EQ(ReductionLength(Op("linear_bwd_input"), s), 7u);
  EXPECT_EQ(ShapeText(fwd, RunShape(fwd, "")), "32,32,32");

  const ReductionOpInfo& loss = Op("mse_fwd");
  const ReductionShape n = ParseShape(loss, "37");
  EXPECT_EQ(ReductionOutputCount(loss, n), 1u);
  EXPECT_EQ(ElementName(loss, n, 0), "loss");
  EXPECT_EQ(ReductionLength(loss, n), 37u);
  const ReductionOpInfo& grad = Op("mse_bwd");
  EXPECT_EQ(ReductionOperandShapes(grad, n), (std::vector<std::vector<size_t>>{{37}, {37}, {}}));
  EXPECT_EQ(ElementName(grad, n, 7), "dy[7]");
  EXPECT_EQ(ReductionLength(grad, n), 1u);
  EXPECT_EQ(ShapeText(grad, RunShape(grad, "")), "1000");

  try {
    ParseShape(fwd, "3,5");
    ADD_FAILURE() << "a linear shape of two extents was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--shape for linear_fwd is B,IN,OUT (three positive integers), got '3,5'");
  }
  try {
    ParseShape(loss, "3,5");
    ADD_FAILURE() << "an MSE shape of two extents was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--shape for mse_fwd is N (one positive integer), got '3,5'");
  }
}

// Operands numbered so that every value says where it sits: operand k's
// element i is 1000 k + i.
ReductionInstance Numbered(const ReductionOpInfo& op, const ReductionShape& s) {
  ReductionInstance instance;
  const auto shapes = ReductionOperandShapes(op, s);
  for (size_t k = 0; k < shapes.size(); ++k) {
    size_t count = 1;
    for (size_t e : shapes[k]) count *= e;
    instance.operands.emplace_back();
    for (size_t i = 0; i < count; ++i) {
      instance.operands.back().push_back(static_cast<float>(1000 * k + i));
    }
  }
  return instance;
}

TEST(ReductionRegistry, EachOpGathersTheTermsItsDefinitionNames) {
  const ReductionShape s = ParseShape(Op("linear_fwd"), "2,3,4");  // B = 2, IN = 3, OUT = 4
  // y[1,2] = sum_k x[1,k] w[2,k] + b[2]: x[1,:] = 3..5, w[2,:] = 1006..1008, b[2] = 2002.
  ElementTerms t = GatherElementTerms(Op("linear_fwd"), s, Numbered(Op("linear_fwd"), s), 6);
  EXPECT_EQ(t.vectors, (std::vector<std::vector<float>>{{3, 4, 5}, {1006, 1007, 1008}}));
  EXPECT_EQ(t.scalars, (std::vector<float>{2002}));
  // dx[1,2] = sum_o dy[1,o] w[o,2]: dy[1,:] = 4..7, w[:,2] = 1002, 1005, 1008, 1011.
  t = GatherElementTerms(Op("linear_bwd_input"), s, Numbered(Op("linear_bwd_input"), s), 5);
  EXPECT_EQ(t.vectors, (std::vector<std::vector<float>>{{4, 5, 6, 7}, {1002, 1005, 1008, 1011}}));
  // dw[3,1] = sum_b dy[b,3] x[b,1]: dy[:,3] = 3, 7; x[:,1] = 1001, 1004.
  t = GatherElementTerms(Op("linear_bwd_weight"), s, Numbered(Op("linear_bwd_weight"), s), 10);
  EXPECT_EQ(t.vectors, (std::vector<std::vector<float>>{{3, 7}, {1001, 1004}}));
  // db[2] = sum_b dy[b,2]: 2, 6.
  t = GatherElementTerms(Op("linear_bwd_bias"), s, Numbered(Op("linear_bwd_bias"), s), 2);
  EXPECT_EQ(t.vectors, (std::vector<std::vector<float>>{{2, 6}}));

  const ReductionShape n = ParseShape(Op("mse_fwd"), "3");
  t = GatherElementTerms(Op("mse_fwd"), n, Numbered(Op("mse_fwd"), n), 0);
  EXPECT_EQ(t.vectors, (std::vector<std::vector<float>>{{0, 1, 2}, {1000, 1001, 1002}}));
  EXPECT_EQ(t.count, 3u);
  // dy[1] = (2/N) (y[1] - t[1]) grad_out.
  t = GatherElementTerms(Op("mse_bwd"), n, Numbered(Op("mse_bwd"), n), 1);
  EXPECT_EQ(t.vectors, (std::vector<std::vector<float>>{{1}, {1001}}));
  EXPECT_EQ(t.scalars, (std::vector<float>{2000}));
  EXPECT_EQ(t.count, 3u);
}

}  // namespace
}  // namespace ulpgate
