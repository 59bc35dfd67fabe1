// reveal: summation trees as data, their exact evaluation, and the recovery
// of ulpgate's own linear_fwd schedules (per target) and of the planted
// accelerator-like kernels from their outputs alone. Every expected tree is
// written here from the kernel's definition, not asked of reveal.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "suites/reveal/builtin_door.h"
#include "suites/reveal/planted_kernels.h"
#include "suites/reveal/reveal.h"
#include "suites/reveal/summation_tree.h"
#include "suites/tests/test_targets.h"

namespace ulpgate {
namespace {

SumNode L(int64_t term, bool rounded = false) {
  SumNode n;
  n.term = term;
  n.rounded = rounded;
  return n;
}

SumNode Add(std::vector<SumNode> children, NodeArith arith = {}) {
  SumNode n;
  n.children = std::move(children);
  n.arith = arith;
  return n;
}

TEST(SummationTree, TextRoundTripsAndCanonicalizes) {
  const std::string text = "(fused3[0r,1,2]@t14+(3+4r)@z20)";
  const SummationTree tree = ParseSummationTree(text);
  EXPECT_EQ(tree.k(), 5u);
  EXPECT_EQ(tree.Text(), text);
  EXPECT_EQ(tree.RoundedLeaves(), 2u);
  EXPECT_EQ(tree.InternalNodes(), 3u);
  EXPECT_EQ(tree.MaxFanIn(), 3u);
  EXPECT_EQ(SummationTreeFromJson(tree.Json()), tree);
  SummationTree swapped = ParseSummationTree("((4r+3)@z20+fused3[2,0r,1]@t14)");
  EXPECT_NE(swapped, tree);
  swapped.Canonicalize();
  EXPECT_EQ(swapped, tree);
  EXPECT_THROW(ParseSummationTree("((0+1)+1)"), std::invalid_argument);
  EXPECT_THROW(ParseSummationTree("((0+1)+2"), std::invalid_argument);
  EXPECT_THROW(ParseSummationTree("fused3[0,1]"), std::invalid_argument);
}

TEST(SummationTree, BuildersFollowTheSchedulesDefinitions) {
  EXPECT_EQ(SequentialTree(4, true).Text(), "(((0r+1)+2)+3)");
  EXPECT_EQ(SequentialTree(3, false).Text(), "((0r+1r)+2r)");
  EXPECT_EQ(PairwiseTree(5).Text(), "(((0r+1r)+(2r+3r))+4r)");
  // Lanes 0..3 take 0,4,8 / 1,5 / 2,6 / 3,7; then lane0+lane2, lane1+lane3,
  // and the two.
  EXPECT_EQ(LaneParallelTree(9, 4, true).Text(), "((((0r+4)+8)+(2r+6))+((1r+5)+(3r+7)))");
  // Fewer terms than lanes: empty lanes add nothing.
  EXPECT_EQ(LaneParallelTree(3, 8, false).Text(), "((0r+2r)+1r)");
}

TEST(SummationTree, EvaluateRoundsWhereTheTreeSays) {
  // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24, then -1: exact product keeps 2^-24.
  const double a[2] = {1 + std::ldexp(1.0, -12), -1.0};
  const double b[2] = {1 + std::ldexp(1.0, -12), 1.0};
  EXPECT_EQ(Evaluate(ParseSummationTree("(0+1)"), a, b, kBinary32),
            std::ldexp(1.0, -11) + std::ldexp(1.0, -24));
  EXPECT_EQ(Evaluate(ParseSummationTree("(0r+1)"), a, b, kBinary32), std::ldexp(1.0, -11));
  // 14 bits after alignment, truncated: 1 + 2^-13 stays, 1 + 2^-14 does not;
  // one rounding of the exact sum to nearest would keep 2^-13 of 1.5 2^-13.
  const double c[2] = {1.0, std::ldexp(1.0, -13)};
  const double e[2] = {1.0, std::ldexp(1.5, -14)};
  const double ones[3] = {1.0, 1.0, 1.0};
  EXPECT_EQ(Evaluate(ParseSummationTree("(0+1)@t14"), c, ones, kBinary32), 1 + std::ldexp(1.0, -13));
  EXPECT_EQ(Evaluate(ParseSummationTree("(0+1)@t14"), e, ones, kBinary32), 1.0);
  EXPECT_EQ(Evaluate(ParseSummationTree("(0+1)@n14"), e, ones, kBinary32), 1 + std::ldexp(1.0, -13));
  // fused3: 1 + 2^-24 + 2^-24 = 1 + 2^-23 exactly, once rounded; two binary32
  // additions lose both halves (ties to even).
  const double d[3] = {1.0, std::ldexp(1.0, -24), std::ldexp(1.0, -24)};
  EXPECT_EQ(Evaluate(ParseSummationTree("fused3[0,1,2]"), d, ones, kBinary32), 1 + std::ldexp(1.0, -23));
  EXPECT_EQ(Evaluate(ParseSummationTree("((0+1)+2)"), d, ones, kBinary32), 1.0);
}

// The tree each builtin variant must have, from kernels/reduction_spec-inl.h.
SummationTree ExpectedBuiltin(const std::string& variant, const TargetInfo& t, size_t k) {
  if (variant == "sequential_fma") return SequentialTree(k, t.fused_muladd);
  if (variant == "sequential") return SequentialTree(k, false);
  if (variant == "lane_parallel") return LaneParallelTree(k, t.f32_lanes, t.fused_muladd);
  return PairwiseTree(k);
}

class RevealBuiltin : public PerTargetTest {};

TEST_P(RevealBuiltin, RecoversEveryVariantExactly) {
  for (const std::string& variant : BuiltinDotVariants()) {
    for (size_t k : {size_t{1}, size_t{7}, size_t{37}, size_t{100}}) {
      SCOPED_TRACE(variant + " k=" + std::to_string(k));
      auto door = MakeBuiltinDoor(variant, *GetParam());
      ASSERT_NE(door, nullptr);
      const DotShape shape{8, 40, k};
      const AccumulatorFingerprint fp = RevealFingerprint(*door, shape, 3, 5);
      SummationTree expected = ExpectedBuiltin(variant, *GetParam(), k);
      expected.Canonicalize();
      EXPECT_EQ(fp.model.Text(), expected.Text());
      const ModelCheck check = CheckModel(*door, shape, fp.model, 640, 1);
      EXPECT_EQ(check.mismatches, 0u) << check.first_mismatch;
    }
  }
}
ULPGATE_INSTANTIATE_PER_TARGET(RevealBuiltin);

// fp8_trunc14_promote128: chains of 128 in the 14-bit truncating adder,
// joined left to right in binary32.
SummationTree ExpectedFp8(size_t k) {
  NodeArith t14;
  t14.bits = 14;
  t14.aligned = true;
  t14.rounding = NodeRounding::kTowardZero;
  std::optional<SumNode> total;
  for (size_t b = 0; b < k; b += 128) {
    SumNode block = L(b);
    for (size_t t = b + 1; t < std::min(k, b + 128); ++t) block = Add({block, L(t)}, t14);
    total = total ? Add({*total, block}) : block;
  }
  return SummationTree(k, *total);
}

SummationTree ExpectedFused4(size_t k) {
  std::optional<SumNode> acc;
  for (size_t g = 0; g < k; g += 4) {
    std::vector<SumNode> in;
    if (acc) in.push_back(*acc);
    for (size_t t = g; t < std::min(k, g + 4); ++t) in.push_back(L(t));
    acc = in.size() == 1 ? in[0] : Add(in);
  }
  return SummationTree(k, *acc);
}

SummationTree ExpectedSplitK(size_t k, bool late) {
  std::optional<SumNode> total;
  size_t begin = 0;
  const size_t first = std::min(k, 3 * k / 8 + (late ? 1 : 0));
  for (size_t end : {first, std::min(k, first + k / 4), k}) {
    if (end == begin) continue;
    SumNode part = L(begin, true);  // fma(a, b, +0)
    for (size_t t = begin + 1; t < end; ++t) part = Add({part, L(t)});
    total = total ? Add({*total, part}) : part;
    begin = end;
  }
  return SummationTree(k, *total);
}

TEST(RevealPlanted, Fp8Trunc14Promote128) {
  auto door = MakePlantedDoor("fp8_trunc14_promote128");
  for (size_t k : {size_t{5}, size_t{300}}) {
    SCOPED_TRACE(k);
    const DotShape shape{8, 8, k};
    const AccumulatorFingerprint fp = RevealFingerprint(*door, shape, 0, 0);
    EXPECT_EQ(fp.model.Text(), ExpectedFp8(k).Text());
    const ModelCheck check = CheckModel(*door, shape, fp.model, 2000, 2);
    EXPECT_EQ(check.mismatches, 0u) << check.first_mismatch;
  }
}

TEST(RevealPlanted, Bf16Fused4) {
  auto door = MakePlantedDoor("bf16_fused4");
  for (size_t k : {size_t{6}, size_t{101}}) {
    SCOPED_TRACE(k);
    const DotShape shape{8, 32, k};
    const AccumulatorFingerprint fp = RevealFingerprint(*door, shape, 0, 0);
    EXPECT_EQ(fp.model.Text(), ExpectedFused4(k).Text());
    const ModelCheck check = CheckModel(*door, shape, fp.model, 2000, 3);
    EXPECT_EQ(check.mismatches, 0u) << check.first_mismatch;
  }
}

TEST(RevealPlanted, F32SplitK3) {
  auto door = MakePlantedDoor("f32_splitk3");
  for (size_t k : {size_t{9}, size_t{100}}) {
    SCOPED_TRACE(k);
    const DotShape shape{8, 32, k};
    const AccumulatorFingerprint fp = RevealFingerprint(*door, shape, 0, 0);
    EXPECT_EQ(fp.model.Text(), ExpectedSplitK(k, false).Text());
    const ModelCheck check = CheckModel(*door, shape, fp.model, 2000, 4);
    EXPECT_EQ(check.mismatches, 0u) << check.first_mismatch;
  }
}

}  // namespace
}  // namespace ulpgate
