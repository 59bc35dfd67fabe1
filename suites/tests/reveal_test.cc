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
#include "suites/reveal/reveal_golden.h"
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
  // An exact product below a binary32 midpoint that a double sum rounds onto
  // it: (1 + 2^-23) + 2^-24 (1 - 2^-46) is 1 + 3 2^-24 - 2^-70, which rounds
  // to 1 + 2^-23; the double sum 1 + 3 2^-24 would round (ties to even) up.
  const double f[2] = {1 + std::ldexp(1.0, -23), 1 + std::ldexp(1.0, -23)};
  const double g[2] = {1.0, std::ldexp(1 - std::ldexp(1.0, -23), -24)};
  EXPECT_EQ(Evaluate(ParseSummationTree("(0+1)"), f, g, kBinary32), 1 + std::ldexp(1.0, -23));
  // The other side: acc + p with acc = -0x1.325622p+12 and p exact; the
  // double sum -0x1.323fbafffffffp+12 lies just inside the midpoint
  // -0x1.323fbbp+12 and the exact sum further inside, so the sum rounds to
  // -0x1.323fbap+12, as a hardware FMA gives.
  const double h[2] = {-0x1.325622p+12, -0x1.162d34p-6};
  const double i[2] = {1.0, -0x1.49dcc8p+6};
  EXPECT_EQ(Evaluate(ParseSummationTree("(0+1)"), h, i, kBinary32),
            static_cast<double>(std::fma(-0x1.162d34p-6f, -0x1.49dcc8p+6f, -0x1.325622p+12f)));
  EXPECT_EQ(Evaluate(ParseSummationTree("(0+1)"), h, i, kBinary32), -0x1.323fbap+12);
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

// One probe per call, at the output named, the other operands zero: the same
// tree and model as the batched probes give, on a call shape whose output
// (2, 4) sits in a partial group of columns.
TEST(RevealOptions, OneProbePerCallFindsTheSameModel) {
  const TargetInfo& best = BestTarget();
  auto door = MakeBuiltinDoor("lane_parallel", best);
  const DotShape shape{3, 5, 20};
  RevealOptions single;
  single.batch = false;
  const TreeReveal tree = RevealTree(*door, shape, 2, 4, single);
  EXPECT_EQ(tree.cost.calls, tree.cost.probes);
  const AccumulatorFingerprint fp = RevealFingerprint(*door, shape, 2, 4, tree.tree, single);
  SummationTree expected = LaneParallelTree(20, best.f32_lanes, best.fused_muladd);
  expected.Canonicalize();
  EXPECT_EQ(fp.model, expected);
}

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
    EXPECT_FALSE(fp.products_can_round);  // E4M3 products have 8 bits at most
    if (k > 128) {
      EXPECT_EQ(fp.promote_every, 128u);
      // Every 14-bit node but a block's first (whose inputs are two leaves)
      // is probed, and realigns a cancelled partial sum as the planted adder
      // does: a block of B terms has B - 2 of them.
      EXPECT_EQ(fp.normalization_probed, k - 2 * ((k + 127) / 128));
      EXPECT_EQ(fp.not_normalized, 0u);
    }
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
    if (k == 100) {
      EXPECT_EQ(fp.parts, (std::vector<size_t>{37, 25, 38}));
    }
    const ModelCheck check = CheckModel(*door, shape, fp.model, 2000, 4);
    EXPECT_EQ(check.mismatches, 0u) << check.first_mismatch;
    // The model of a split one term later differs from the kernel, and the
    // check says where.
    const ModelCheck wrong = CheckModel(*door, shape, ExpectedSplitK(k, true), 2000, 4);
    EXPECT_GT(wrong.mismatches, 0u);
    EXPECT_NE(wrong.first_mismatch.find("output ("), std::string::npos);
  }
}

// A golden of f32_splitk3 passes on its kernel and, when the first part grows
// by one term, fails naming a probe of the tree that moved; a golden whose
// model was edited fails on the model, not the kernel.
TEST(RevealGolden, NamesTheFirstProbeWhoseOutputChanged) {
  auto door = MakePlantedDoor("f32_splitk3");
  const DotShape shape{4, 64, 64};
  const AccumulatorFingerprint fp = RevealFingerprint(*door, shape, 0, 0);
  RevealCost cost;
  const RevealGolden written = MakeRevealGolden(*door, shape, fp.model, 64, &cost);
  const RevealGolden golden =
      RevealGoldenFromJson(nlohmann::ordered_json::parse(RevealGoldenJson(written, "test").dump()));
  EXPECT_EQ(golden.model, fp.model);
  ASSERT_EQ(golden.probes.size(), written.probes.size());
  const RevealGoldenCheck same = CheckRevealGolden(*door, golden, &cost);
  EXPECT_TRUE(same.passed()) << same.first_change << same.first_model_difference;

  auto late = MakePlantedDoor("f32_splitk3_late");
  const RevealGoldenCheck moved = CheckRevealGolden(*late, golden, &cost);
  EXPECT_FALSE(moved.passed());
  EXPECT_GT(moved.changed, 0u);
  // Terms 0..23 are part one, 24..39 part two: moving term 24 into part one
  // changes the probe of the node where term 24 joins, "lca 0 24" (its first
  // input holds 0, its second 24) in the late kernel's terms.
  EXPECT_NE(moved.first_change.find("(lca "), std::string::npos) << moved.first_change;

  RevealGolden edited = golden;
  edited.model = ExpectedSplitK(64, true);
  const RevealGoldenCheck model_changed = CheckRevealGolden(*door, edited, &cost);
  EXPECT_EQ(model_changed.changed, 0u);
  EXPECT_GT(model_changed.model_differs, 0u);
}

// k = 4096, as the command's default: every builtin variant on the best
// target and every planted kernel, with the calls it took (seconds, label
// sampled).
TEST(RevealLarge, K4096BuiltinsOnTheBestTarget) {
  const size_t k = 4096;
  const TargetInfo& best = BestTarget();
  for (const std::string& variant : BuiltinDotVariants()) {
    SCOPED_TRACE(variant);
    auto door = MakeBuiltinDoor(variant, best);
    const DotShape shape{16, 256, k};
    const TreeReveal tree = RevealTree(*door, shape, 0, 0);
    SummationTree expected = ExpectedBuiltin(variant, best, k);
    expected.Canonicalize();
    const AccumulatorFingerprint fp = RevealFingerprint(*door, shape, 0, 0, tree.tree);
    EXPECT_EQ(fp.model, expected);
    // O(k log k) probes, packed: a few hundred calls at most.
    EXPECT_LT(tree.cost.calls, 400u);
    RecordProperty(variant + "_tree_calls", std::to_string(tree.cost.calls));
  }
}

TEST(RevealLarge, K4096Planted) {
  const size_t k = 4096;
  {
    auto door = MakePlantedDoor("fp8_trunc14_promote128");
    const AccumulatorFingerprint fp = RevealFingerprint(*door, DotShape{32, 32, k}, 0, 0);
    EXPECT_EQ(fp.model, ExpectedFp8(k));
    EXPECT_EQ(fp.promote_every, 128u);
  }
  {
    auto door = MakePlantedDoor("f32_splitk3");
    const AccumulatorFingerprint fp = RevealFingerprint(*door, DotShape{16, 256, k}, 0, 0);
    EXPECT_EQ(fp.model, ExpectedSplitK(k, false));
    EXPECT_EQ(fp.parts, (std::vector<size_t>{1536, 1024, 1536}));
  }
  {
    auto door = MakePlantedDoor("bf16_fused4");
    const AccumulatorFingerprint fp = RevealFingerprint(*door, DotShape{16, 256, k}, 0, 0);
    EXPECT_EQ(fp.model, ExpectedFused4(k));
  }
}

}  // namespace
}  // namespace ulpgate
