// `ulpgate invariance` (suites/reveal/invariance.h): the planted kernels'
// verdicts follow from their definitions (planted_doors.h), a change of a
// zero's sign or a NaN's payload counts, a door that writes nothing is an
// error, and ulpgate's own linear_fwd kernels are batch-invariant on every
// target.
#include "suites/reveal/invariance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "oracles/format.h"
#include "suites/reveal/builtin_door.h"
#include "suites/reveal/planted_invariance.h"
#include "suites/tests/test_targets.h"

namespace ulpgate {
namespace {

float FromBits(uint32_t bits) {
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// Small enough for the smoke tier; k and n not multiples of any lane count,
// so that tails are in every call.
InvarianceOptions SmallOptions() {
  InvarianceOptions o;
  o.k = 100;
  o.n = 19;
  o.max_batch = 70;
  o.time_budget_seconds = 0;
  return o;
}

InvarianceReport CheckPlanted(const std::string& name) {
  std::unique_ptr<DotDoor> door = MakeInvariancePlantedDoor(name);
  EXPECT_NE(door, nullptr) << name;
  return CheckInvariance(*door, SmallOptions());
}

std::string Describe(const InvarianceReport& r) {
  std::string text = r.door + ": " + r.VerdictText() + "\n";
  for (const InvarianceDimensionResult& d : r.dimensions) {
    const InvarianceTrial* t = d.FirstChange();
    text += std::string("  ") + InvarianceDimensionName(d.dimension) + ": " +
            (!d.varied ? "not varied" : t ? "first change " + t->what : "same") + "\n";
  }
  return text;
}

bool Changed(const InvarianceReport& r, InvarianceDimension d) {
  return r.Dimension(d).FirstChange() != nullptr;
}

TEST(InvarianceTest, BatchSizesAreEverySizeTo17ThenAroundPowersOfTwo) {
  const std::vector<size_t> expected = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                                        13, 14, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65,
                                        96, 127, 128, 129, 192, 255, 256, 257, 384, 511, 512};
  EXPECT_EQ(InvarianceBatchSizes(512), expected);
  EXPECT_EQ(InvarianceBatchSizes(5), (std::vector<size_t>{1, 2, 3, 4, 5}));
  // The largest batch asked for is always tried.
  EXPECT_EQ(InvarianceBatchSizes(40).back(), 40u);
}

TEST(InvarianceTest, EncodingsNotValuesAreCompared) {
  EXPECT_FALSE(SameEncoding(0.0f, -0.0f));
  EXPECT_TRUE(SameEncoding(FromBits(0x7fc00001u), FromBits(0x7fc00001u)));
  EXPECT_FALSE(SameEncoding(FromBits(0x7fc00001u), FromBits(0x7fc00002u)));
  const float zeros[] = {0.0f, 1.0f};
  const float negative[] = {-0.0f, 1.0f};
  const BitsDifference d = CompareOutputs(kBinary32, zeros, negative, 2);
  EXPECT_EQ(d.changed, 1u);
  EXPECT_EQ(d.first_changed, 0u);
  EXPECT_EQ(d.max_ulp, 0.0);  // the two zeros are one value, two encodings
}

TEST(InvarianceTest, UlpDistanceCountsEncodingsOfTheOutputFormat) {
  EXPECT_EQ(UlpDistance(kBinary32, 1.0f, std::nextafter(1.0f, 2.0f)), 1.0);
  EXPECT_EQ(UlpDistance(kBinary32, 1.0f, 1.0f + 0x1p-20f), 8.0);
  // Across zero: the smallest subnormals of both signs are 2 apart.
  EXPECT_EQ(UlpDistance(kBinary32, 0x1p-149f, -0x1p-149f), 2.0);
  // bf16 has 7 fraction bits: 1 and 1 + 2^-7 are neighbours.
  EXPECT_EQ(UlpDistance(kBFloat16, 1.0f, 1.0f + 0x1p-7f), 1.0);
  // f16 has 10: its ULP at 2 is 2^-9.
  EXPECT_EQ(UlpDistance(kBinary16, 2.0f, 2.0f + 0x1p-9f * 3), 3.0);
  EXPECT_TRUE(std::isinf(UlpDistance(kBinary32, std::nanf(""), 1.0f)));
}

TEST(InvarianceTest, OperandsArePureFunctionsOfSeedAndIndexAndValuesOfTheFormat) {
  for (const FloatFormat* f : {&kBinary32, &kBFloat16, &kBinary16}) {
    for (size_t i = 0; i < 200; ++i) {
      const float v = InvarianceValue(*f, 7, InvarianceOperand::kFiller, 3, i);
      EXPECT_TRUE(IsRepresentable(*f, v)) << f->name << " " << v;
      EXPECT_TRUE(SameEncoding(v, InvarianceValue(*f, 7, InvarianceOperand::kFiller, 3, i)));
      EXPECT_GE(std::fabs(v), 0x1p-3f);
      EXPECT_LT(std::fabs(v), 0x1p4f);
    }
  }
  EXPECT_FALSE(SameEncoding(InvarianceValue(kBinary32, 7, InvarianceOperand::kFiller, 3, 0),
                            InvarianceValue(kBinary32, 7, InvarianceOperand::kFiller, 4, 0)));
  EXPECT_FALSE(SameEncoding(InvarianceValue(kBinary32, 7, InvarianceOperand::kFiller, 3, 0),
                            InvarianceValue(kBinary32, 8, InvarianceOperand::kFiller, 3, 0)));
}

TEST(InvarianceTest, SequentialIsBatchInvariantInEveryDimension) {
  const InvarianceReport r = CheckPlanted("sequential");
  EXPECT_EQ(r.Verdict(), InvarianceVerdict::kInvariant) << Describe(r);
  EXPECT_EQ(r.VerdictText(), "batch-invariant");
  EXPECT_EQ(r.FirstChangedBatch(), 0u);
  for (const InvarianceDimensionResult& d : r.dimensions) {
    EXPECT_EQ(d.varied, d.dimension != InvarianceDimension::kThreads) << InvarianceDimensionName(d.dimension);
  }
  EXPECT_EQ(r.batch_sizes, InvarianceBatchSizes(70));
}

// Sequential below 8 rows, split-K from 8 on: 8 is the first size that
// changes bits, 7 the last whose bits are the probe's alone.
TEST(InvarianceTest, SplitByBatchChangesFirstAtEight) {
  const InvarianceReport r = CheckPlanted("planted:split_by_batch");
  EXPECT_EQ(r.Verdict(), InvarianceVerdict::kNotBatchInvariant) << Describe(r);
  EXPECT_EQ(r.VerdictText(), "not batch-invariant (first at m=8)");
  EXPECT_EQ(r.FirstChangedBatch(), 8u);
  EXPECT_EQ(r.LastInvariantBatch(), 7u);
  const InvarianceTrial* first = r.Dimension(InvarianceDimension::kBatchSize).FirstChange();
  ASSERT_NE(first, nullptr);
  EXPECT_GT(first->diff.changed, 0u);
  EXPECT_EQ(first->diff.compared, 19u);
  EXPECT_GT(first->diff.max_ulp, 0.0);
  // Below 8 rows nothing changes, from 8 on every size does; no other
  // dimension changes bits.
  for (const InvarianceTrial& t : r.Dimension(InvarianceDimension::kBatchSize).trials) {
    EXPECT_EQ(t.diff.changed > 0, t.shape.m >= 8) << t.what;
  }
  EXPECT_FALSE(Changed(r, InvarianceDimension::kPosition));
  EXPECT_FALSE(Changed(r, InvarianceDimension::kAlignment));
  EXPECT_FALSE(Changed(r, InvarianceDimension::kRunToRun));
}

// Where the bits change, reveal names the trees: one chain over the 100 terms
// below 8 rows, two chains of 50 joined from 8 on.
TEST(InvarianceTest, SplitByBatchTreesAreOneChainThenTwoHalves) {
  std::unique_ptr<DotDoor> door = MakeInvariancePlantedDoor("split_by_batch");
  const InvarianceReport r = CheckInvariance(*door, SmallOptions());
  const std::optional<BatchTrees> trees = RevealBatchTrees(*door, r);
  ASSERT_TRUE(trees.has_value());
  ASSERT_EQ(trees->error, "");
  EXPECT_EQ(trees->before_m, 7u);
  EXPECT_EQ(trees->after_m, 8u);
  std::string chain = "0";
  for (int t = 1; t < 50; ++t) chain = "(" + chain + "+" + std::to_string(t) + ")";
  std::string second = "50";
  for (int t = 51; t < 100; ++t) second = "(" + second + "+" + std::to_string(t) + ")";
  std::string whole = chain;
  for (int t = 50; t < 100; ++t) whole = "(" + whole + "+" + std::to_string(t) + ")";
  EXPECT_EQ(trees->before.Text(), whole);
  EXPECT_EQ(trees->after.Text(), "(" + chain + "+" + second + ")");
  EXPECT_EQ(ShortTreeText(trees->before), "sequential chain");
  EXPECT_EQ(ShortTreeText(trees->after), "2 parts added: 0-49 (chain), 50-99 (chain)");
  // No trees where the batch size changed nothing, or where the door is
  // nondeterministic.
  std::unique_ptr<DotDoor> sequential = MakeInvariancePlantedDoor("sequential");
  EXPECT_FALSE(RevealBatchTrees(*sequential, CheckInvariance(*sequential, SmallOptions())));
  std::unique_ptr<DotDoor> racy = MakeInvariancePlantedDoor("order_by_call");
  EXPECT_FALSE(RevealBatchTrees(*racy, CheckInvariance(*racy, SmallOptions())));
}

TEST(InvarianceTest, ShortTreeTextNamesKnownShapesElseTheParts) {
  EXPECT_EQ(ShortTreeText(ParseSummationTree("(((0+1)+2)+3)")), "sequential chain");
  EXPECT_EQ(ShortTreeText(ParseSummationTree("((0+1)+(2+3))")), "pairwise cascade");
  // Lanes 0 and 1 take terms 0, 2, 4 and 1, 3, 5; then lane 0 + lane 1.
  EXPECT_EQ(ShortTreeText(ParseSummationTree("(((0+2)+4)+((1+3)+5))")),
            "2 strided chains + halving tree");
  EXPECT_EQ(ShortTreeText(ParseSummationTree("((((0+1)+2)+((3+4)+5))+((6+7)+8))")),
            "3 parts added: 0-2 (chain), 3-5 (chain), 6-8 (chain)");
}

TEST(InvarianceTest, SplitByThreadsChangesWithTheThreadCountOnly) {
  const InvarianceReport r = CheckPlanted("split_by_threads");
  EXPECT_EQ(r.Verdict(), InvarianceVerdict::kVariesWithLayout) << Describe(r);
  EXPECT_EQ(r.VerdictText(), "not invariant (threads: m=1 t=2)");
  EXPECT_TRUE(r.Dimension(InvarianceDimension::kThreads).varied);
  EXPECT_FALSE(Changed(r, InvarianceDimension::kBatchSize));
  EXPECT_FALSE(Changed(r, InvarianceDimension::kAlignment));
}

TEST(InvarianceTest, PeelToAlignmentChangesWithWhereTheRowStarts) {
  // k = 128: rows are 512 bytes apart, so every row of an aligned A starts
  // aligned and only moving A changes the bits.
  InvarianceOptions options = SmallOptions();
  options.k = 128;
  std::unique_ptr<DotDoor> door = MakeInvariancePlantedDoor("peel_to_alignment");
  InvarianceReport r = CheckInvariance(*door, options);
  EXPECT_EQ(r.Verdict(), InvarianceVerdict::kVariesWithLayout) << Describe(r);
  EXPECT_EQ(r.VerdictText(), "not invariant (alignment: m=1 ABC+1)");
  EXPECT_FALSE(Changed(r, InvarianceDimension::kPosition));
  // Only A's start matters to it: moving B or C alone changes nothing.
  for (const InvarianceTrial& t : r.Dimension(InvarianceDimension::kAlignment).trials) {
    const bool moves_a = t.what.find(" A+") != std::string::npos || t.what.find("ABC") != std::string::npos;
    if (!moves_a) {
      EXPECT_EQ(t.diff.changed, 0u) << t.what;
    }
  }
  // k = 100: rows are 400 bytes apart, so the second row of a batch starts
  // 16 bytes off a 32-byte boundary and the position changes the bits.
  r = CheckPlanted("peel_to_alignment");
  EXPECT_EQ(r.VerdictText(), "not batch-invariant (position: m=2 row 1)") << Describe(r);
}

TEST(InvarianceTest, OrderByCallIsCaughtRunToRun) {
  const InvarianceReport r = CheckPlanted("order_by_call");
  EXPECT_EQ(r.Verdict(), InvarianceVerdict::kNondeterministic) << Describe(r);
  EXPECT_EQ(r.VerdictText(), "nondeterministic (run to run)");
  const InvarianceTrial* first = r.Dimension(InvarianceDimension::kRunToRun).FirstChange();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->what, "m=1 call 2");
  // Every output of the call is compared run to run, not the probe's row only.
  const InvarianceDimensionResult& rerun = r.Dimension(InvarianceDimension::kRunToRun);
  EXPECT_EQ(rerun.trials.back().diff.compared, 70u * 19u);
}

// Test doors whose outputs are one value of two encodings.
class SignedZeroDoor : public DotDoor {
 public:
  explicit SignedZeroDoor(size_t from) : from_(from) {}
  std::string Name() const override { return "test:signed_zero"; }
  const FloatFormat& OperandFormat() const override { return kBinary32; }
  const FloatFormat& OutputFormat() const override { return kBinary32; }
  void Multiply(const DotShape& shape, const float*, const float*, float* c) override {
    for (size_t i = 0; i < shape.m * shape.n; ++i) c[i] = shape.m >= from_ ? -0.0f : 0.0f;
  }

 private:
  size_t from_;
};

class NanPayloadDoor : public SignedZeroDoor {
 public:
  using SignedZeroDoor::SignedZeroDoor;
  void Multiply(const DotShape& shape, const float*, const float*, float* c) override {
    for (size_t i = 0; i < shape.m * shape.n; ++i) c[i] = FromBits(shape.m >= 33 ? 0x7fc00002u : 0x7fc00001u);
  }
};

TEST(InvarianceTest, AZeroOfTheOtherSignChangesTheBits) {
  SignedZeroDoor door(33);
  const InvarianceReport r = CheckInvariance(door, SmallOptions());
  EXPECT_EQ(r.VerdictText(), "not batch-invariant (first at m=33)") << Describe(r);
  const InvarianceTrial* first = r.Dimension(InvarianceDimension::kBatchSize).FirstChange();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->diff.changed, 19u);
  EXPECT_EQ(first->diff.max_ulp, 0.0);
}

TEST(InvarianceTest, ANanOfAnotherPayloadChangesTheBits) {
  NanPayloadDoor door(0);
  const InvarianceReport r = CheckInvariance(door, SmallOptions());
  EXPECT_EQ(r.VerdictText(), "not batch-invariant (first at m=33)") << Describe(r);
}

class SilentDoor : public SignedZeroDoor {
 public:
  using SignedZeroDoor::SignedZeroDoor;
  void Multiply(const DotShape& shape, const float*, const float*, float* c) override {
    // Writes every row but the last: a kernel that lost its tail.
    for (size_t i = 0; i + shape.n < shape.m * shape.n; ++i) c[i] = 1.0f;
  }
};

TEST(InvarianceTest, ADoorThatLeavesOutputsUnwrittenIsAnError) {
  SilentDoor door(0);
  EXPECT_THROW(CheckInvariance(door, SmallOptions()), DotDoorError);
}

// ulpgate's own kernels pick no tree by shape: every variant gives the probe
// the same bits in every dimension.
class LinearFwdInvarianceTest : public PerTargetTest {};

TEST_P(LinearFwdInvarianceTest, EveryVariantIsBatchInvariant) {
  for (const std::string& variant : BuiltinDotVariants()) {
    std::unique_ptr<DotDoor> door = MakeBuiltinDoor(variant, *GetParam());
    ASSERT_NE(door, nullptr) << variant;
    const InvarianceReport r = CheckInvariance(*door, SmallOptions());
    EXPECT_EQ(r.Verdict(), InvarianceVerdict::kInvariant) << Describe(r);
    EXPECT_EQ(r.batch_sizes.back(), 70u);
  }
}

ULPGATE_INSTANTIATE_PER_TARGET(LinearFwdInvarianceTest);

TEST(InvarianceTest, LinearFwdDoorShowsTheDotProductsOwnZeros) {
  // Pairwise adds two terms as p0 + p1: 3 + -3 is +0 and -0 + -0 is -0 under
  // round to nearest. The door's bias must leave both as they are (a +0 bias
  // would turn the -0 into +0).
  const TargetInfo& target = CompiledTargets().front();
  std::unique_ptr<DotDoor> door = MakeBuiltinDoor("pairwise", target);
  ASSERT_NE(door, nullptr);
  DotShape shape;
  shape.m = 2;
  shape.n = 1;
  shape.k = 2;
  const float a[] = {1.5f, -1.5f, -0.0f, -0.0f};
  const float b[] = {2.0f, 2.0f};
  float c[2];
  door->Multiply(shape, a, b, c);
  EXPECT_TRUE(SameEncoding(c[0], 0.0f)) << c[0];
  EXPECT_TRUE(SameEncoding(c[1], -0.0f)) << c[1];
}

TEST(InvarianceTest, PlantedNamesRoundTrip) {
  for (const std::string& name : InvariancePlantedNames()) {
    std::unique_ptr<DotDoor> door = MakeInvariancePlantedDoor(name);
    ASSERT_NE(door, nullptr);
    EXPECT_EQ(door->Name(), kPlantedPrefix + name);
  }
  EXPECT_EQ(MakeInvariancePlantedDoor("no_such_kernel"), nullptr);
}

}  // namespace
}  // namespace ulpgate
