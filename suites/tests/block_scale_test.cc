// The block quantization model (oracles/block_scale.h) against bytes and
// codes derived by hand from the rules' definitions (each expectation says
// how), and NameScaleRules naming each rule from the outputs it made.
#include "oracles/block_scale.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "oracles/format.h"

namespace ulpgate {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

struct Bytes {
  uint8_t floor, ceil, even, rceil, reciprocal;
};

void ExpectBytes(const FloatFormat& element, float amax, Bytes want) {
  SCOPED_TRACE(testing::Message() << element.name << " amax " << std::hexfloat << amax);
  EXPECT_EQ(ScaleByte(ScaleRule::kOcpFloor, element, amax), want.floor);
  EXPECT_EQ(ScaleByte(ScaleRule::kCeil, element, amax), want.ceil);
  EXPECT_EQ(ScaleByte(ScaleRule::kEven, element, amax), want.even);
  EXPECT_EQ(ScaleByte(ScaleRule::kRceil, element, amax), want.rceil);
  EXPECT_EQ(ScaleByte(ScaleRule::kReciprocal, element, amax), want.reciprocal);
}

TEST(BlockScale, RuleNamesRoundTrip) {
  for (ScaleRule r : kScaleRules) EXPECT_EQ(ParseScaleRule(ScaleRuleName(r)), r);
  EXPECT_FALSE(ParseScaleRule("floor").has_value());
  EXPECT_EQ(FindBlockSpec("mxfp4"), &kMxfp4);
  EXPECT_EQ(FindBlockSpec("nvfp4"), &kNvfp4);
  EXPECT_EQ(FindBlockSpec("mxfp8"), nullptr);
}

// E4M3: emax 8, largest 448 = 1.75 2^8, 4 significant bits.
TEST(BlockScale, E4M3HandDerivedBytes) {
  // 150 = 1.17 2^7: floor 7 - 8 = -1 (126); ceil 8 - 8 = 0 (127); even: 150
  // to 4 bits is 144 (9 x 16), still 2^7's binade (126); rceil: 150/448 =
  // 0.33, rounded up to 2^-1 (126).
  ExpectBytes(kFloat8E4M3FN, 150, {126, 127, 126, 126, 126});
  // 448 exactly: floor 8 - 8 (127); ceil 9 - 8 (128, 448 is no power of
  // two); even: 448 has 3 significant bits (127); rceil 448/448 = 1 (127);
  // reciprocal: RN32(1/7) = 1/7 + (3/7) 2^-26, so 448 RN32(1/448) = 1 +
  // 3 2^-26, which rounds to 1 (127).
  ExpectBytes(kFloat8E4M3FN, 448, {127, 128, 127, 127, 127});
  // Powers of two: floor = ceil = even = log2 amax - 8; rceil rounds
  // 2^k / 448 = 2^(k-8) / 1.75 up to 2^(k-8).
  ExpectBytes(kFloat8E4M3FN, 256, {127, 127, 127, 127, 127});
  ExpectBytes(kFloat8E4M3FN, 1, {119, 119, 119, 119, 119});
  ExpectBytes(kFloat8E4M3FN, 0x1p100f, {219, 219, 219, 219, 219});
  // Between 448 and 512, where floor clips: 460 to 4 bits is 448 (14 x 32,
  // even stays); 500 to 4 bits is 512 (15.625 x 32 up to 16 x 32).
  ExpectBytes(kFloat8E4M3FN, 460, {127, 128, 127, 128, 128});
  ExpectBytes(kFloat8E4M3FN, 500, {127, 128, 128, 128, 128});
  // 496 = 15.5 x 32, the tie: half away carries (torchao adds half and
  // keeps the exponent field); the f32 below it does not.
  ExpectBytes(kFloat8E4M3FN, 496, {127, 128, 128, 128, 128});
  ExpectBytes(kFloat8E4M3FN, std::nextafter(496.0f, 0.0f), {127, 128, 127, 128, 128});
  // 300: ceil up, rceil not (300 < 448).
  ExpectBytes(kFloat8E4M3FN, 300, {127, 128, 127, 127, 127});
  // 448 + 2^-15 (the next f32): 448 + 2^-15 over 448 is 1 + 0.57 2^-23,
  // rounded to 1 + 2^-23, above 1.
  ExpectBytes(kFloat8E4M3FN, std::nextafter(448.0f, 1e9f), {127, 128, 127, 128, 128});
}

TEST(BlockScale, ZeroSubnormalSpecialsAndClamping) {
  for (const FloatFormat* f : {&kFloat8E4M3FN, &kFloat8E5M2, &kFloat6E2M3FN, &kFloat6E3M2FN,
                               &kFloat4E2M1FN}) {
    // Zero: byte 0 (2^-127) under every rule; binary32 subnormals sit far
    // below 2^(emax - 127) and clamp there too; inf and NaN are 0xff.
    ExpectBytes(*f, 0.0f, {0, 0, 0, 0, 0});
    ExpectBytes(*f, 0x1p-149f, {0, 0, 0, 0, 0});
    ExpectBytes(*f, 0x1.fffffcp-127f, {0, 0, 0, 0, 0});
    ExpectBytes(*f, kInf, {0xff, 0xff, 0xff, 0xff, 0xff});
    ExpectBytes(*f, std::numeric_limits<float>::quiet_NaN(), {0xff, 0xff, 0xff, 0xff, 0xff});
    // The bottom clamp: 2^-127 + emax - 1 gives X = -128, clamped to -127.
    const float low = std::ldexp(1.0f, f->emax - 128);
    EXPECT_EQ(ScaleByte(ScaleRule::kOcpFloor, *f, low), 0);
    EXPECT_EQ(ScaleByte(ScaleRule::kOcpFloor, *f, 2 * low), 0);
    EXPECT_EQ(ScaleByte(ScaleRule::kOcpFloor, *f, 4 * low), 1);
  }
  // E2M1 (emax 2, largest 6, 2 significant bits) at binary32's top: floor
  // 127 - 2 = 125 (252); ceil 128 - 2 (253); rceil: (2^128 - 2^104) / 6 =
  // 2^125.4, up to 2^126 (253); even: 2 bits carry to 2^128, binary32's
  // infinity: NaN. The top clamp (X = 127) is out of reach of an f32 amax.
  ExpectBytes(kFloat4E2M1FN, std::numeric_limits<float>::max(), {252, 253, 0xff, 253, 253});
  ExpectBytes(kFloat4E2M1FN, 0x1p127f, {252, 252, 252, 252, 252});
  // rceil's bottom: 448 2^-127 / 448 = 2^-127 exactly: byte 0; 448 2^-126:
  // 2^-126 (byte 1).
  EXPECT_EQ(ScaleByte(ScaleRule::kRceil, kFloat8E4M3FN, 448 * 0x1p-127f), 0);
  EXPECT_EQ(ScaleByte(ScaleRule::kRceil, kFloat8E4M3FN, 448 * 0x1p-126f), 1);
  EXPECT_EQ(ScaleByte(ScaleRule::kRceil, kFloat8E4M3FN, 449 * 0x1p-127f), 1);
}

TEST(BlockScale, MxElementsOfTheWorkedExample) {
  // One row, one block: 150 and other values; floor and rceil give X = -1
  // (elements doubled), ceil X = 0.
  std::vector<float> row(32, 0.0f);
  row[0] = 150;    // 300 -> 288 (9 x 32): exponent field 15, mantissa 1: 0x79
  row[1] = -1.0f;  // -2: exponent field 8: 0xc0
  row[2] = 0x1p-11f;  // 2^-10 -> below half of 2^-9: +0
  row[3] = 0x1.8p-11f;  // 1.5 2^-10 -> 2^-9 x 0.75, rounds to 2^-9: 0x01
  const BlockShape shape{1, 32, BlockAxis::kRows, 32};
  const CastPolicy rne{};
  const BlockQuantized floor =
      MxQuantize(kMxfp8E4M3, ScaleRule::kOcpFloor, rne, row.data(), shape);
  ASSERT_EQ(floor.scales.size(), 1u);
  EXPECT_EQ(floor.scales[0], 126);
  EXPECT_EQ(floor.codes[0], 0x79);
  EXPECT_EQ(floor.codes[1], 0xc0);
  EXPECT_EQ(floor.codes[2], 0x00);
  EXPECT_EQ(floor.codes[3], 0x01);
  EXPECT_EQ(floor.codes[4], 0x00);
  const BlockQuantized ceil = MxQuantize(kMxfp8E4M3, ScaleRule::kCeil, rne, row.data(), shape);
  EXPECT_EQ(ceil.scales[0], 127);
  EXPECT_EQ(ceil.codes[0], 0x71);  // 150 -> 144 (9 x 16): field 14, mantissa 1
  // Dequantized: 288 / 2 = 144; -1; 0; 2^-9 / 2.
  const std::vector<double> back = BlockDequantize(kMxfp8E4M3, floor, shape);
  EXPECT_EQ(back[0], 144.0);
  EXPECT_EQ(back[1], -1.0);
  EXPECT_EQ(back[2], 0.0);
  EXPECT_EQ(back[3], 0x1p-10);
  // 500 under floor clips to 448 (0x7e); under rceil (X = 1) 250 -> 256 (0x78).
  row[0] = 500;
  EXPECT_EQ(MxQuantize(kMxfp8E4M3, ScaleRule::kOcpFloor, rne, row.data(), shape).codes[0], 0x7e);
  EXPECT_EQ(MxQuantize(kMxfp8E4M3, ScaleRule::kRceil, rne, row.data(), shape).codes[0], 0x78);
  // A NaN element: the scale is NaN and every element the cast of NaN
  // (E4M3's 0x7f; FP4 has none: the sign bit alone, 0x8).
  row[5] = std::numeric_limits<float>::quiet_NaN();
  const BlockQuantized nan = MxQuantize(kMxfp8E4M3, ScaleRule::kOcpFloor, rne, row.data(), shape);
  EXPECT_EQ(nan.scales[0], 0xff);
  EXPECT_EQ(nan.codes[0], 0x7f);
  EXPECT_EQ(nan.codes[31], 0x7f);
  EXPECT_EQ(MxQuantize(kMxfp4, ScaleRule::kOcpFloor, rne, row.data(), shape).codes[7], 0x8);
}

TEST(BlockScale, ColumnBlocksAndShapes) {
  // A [64, 3] tensor blocked along columns: block (1, c) holds rows 32..63.
  const BlockShape shape{64, 3, BlockAxis::kColumns, 32};
  EXPECT_EQ(shape.blocks(), 6u);
  EXPECT_EQ(shape.ElementIndex(4, 0), 32u * 3 + 1);
  EXPECT_EQ(shape.ElementIndex(4, 31), 63u * 3 + 1);
  std::vector<float> t(64 * 3, 1.0f);
  t[40 * 3 + 2] = 150;  // column 2, row block 1: block 5
  const BlockQuantized q =
      MxQuantize(kMxfp8E4M3, ScaleRule::kOcpFloor, CastPolicy{}, t.data(), shape);
  EXPECT_EQ(q.scales[5], 126);
  EXPECT_EQ(q.scales[2], 119);  // amax 1: -8
  EXPECT_EQ(q.codes[40 * 3 + 2], 0x79);
  EXPECT_FALSE(BlockShape({2, 48, BlockAxis::kRows, 32}).Problem().empty());
  EXPECT_THROW(MxQuantize(kMxfp8E4M3, ScaleRule::kCeil, CastPolicy{}, t.data(),
                          BlockShape{3, 64, BlockAxis::kColumns, 32}),
               std::invalid_argument);
}

TEST(BlockScale, Nvfp4HandDerived) {
  // Four blocks of 16; tensor amax 2688 = 448 x 6, so ts = 1.
  std::vector<float> t(64, 0.0f);
  // Block 0, amax 6: block scale 1 (E4M3 0x38), r = 1: codes of x itself.
  t[0] = 6;       // 0x7
  t[1] = 0.5;     // 0x1
  t[2] = 2.9f;    // nearer 3: 0x5
  t[3] = 2.5f;    // tie 2 / 3: 2, the even one: 0x4
  t[4] = -1.25f;  // tie 1 / 1.5: 1: 0xa
  // Block 1, amax 2688: scale 448 (0x7e); 2688 RN32(1/448) = 6 (1 + 3 2^-26)
  // = 6 + 0.5625 2^-21, rounded to 6 + 2^-21 and clamped to 6: 0x7.
  t[16] = 2688;
  // Block 2, amax 1: RN32(1/6) to E4M3: 10.67 x 2^-6 -> 11 x 2^-6 =
  // 0.171875, field 4, mantissa 3: 0x23; r = RN32(1 / 0.171875) = 5.82:
  // 1 -> 6 (0x7), 0.25 -> 1.45 -> 1.5 (0x3).
  t[32] = 1;
  t[33] = 0.25f;
  // Block 3, zeros: scale clamped up to 2^-6 (0x08), codes 0.
  const BlockShape shape{1, 64, BlockAxis::kRows, 16};
  const BlockQuantized q = Nvfp4Quantize(CastPolicy{}, t.data(), shape);
  EXPECT_EQ(q.tensor_scale, 1.0f);
  ASSERT_EQ(q.scales.size(), 4u);
  EXPECT_EQ(q.scales[0], 0x38);
  EXPECT_EQ(q.scales[1], 0x7e);
  EXPECT_EQ(q.scales[2], 0x23);
  EXPECT_EQ(q.scales[3], 0x08);
  const uint8_t want0[] = {0x7, 0x1, 0x5, 0x4, 0xa, 0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(q.codes[static_cast<size_t>(i)], want0[i]) << i;
  EXPECT_EQ(q.codes[16], 0x7);
  EXPECT_EQ(q.codes[32], 0x7);
  EXPECT_EQ(q.codes[33], 0x3);
  EXPECT_EQ(q.codes[48], 0x0);
  const std::vector<double> back = BlockDequantize(kNvfp4, q, shape);
  EXPECT_EQ(back[16], 6 * 448.0);
  EXPECT_EQ(back[33], 1.5 * 0.171875);
}

// A tensor whose blocks tell every pair of rules apart except rceil and
// reciprocal, which agree on every binary32 amax for these five formats
// (RN32(1/M) is above 1/M by under 2^-24 relative for M = 448, 57344, 7.5,
// 28, 6, too little to move a threshold: docs/design.md "Block
// quantization"): 150 (floor vs ceil), 300 (ceil vs rceil and even), 460
// (floor and even vs rceil), 500 (floor vs even), then small and mixed ones.
std::vector<float> DistinguishingTensor() {
  const float amaxes[] = {150, 300, 460, 500, 1, 0x1p-20f, 0, 7};
  std::vector<float> t;
  for (float amax : amaxes) {
    for (int j = 0; j < 32; ++j) {
      // Values across the block's range, signs alternating, the amax first.
      const float v = j == 0 ? amax : amax * static_cast<float>(j) / 37.0f;
      t.push_back(j % 2 == 1 ? -v : v);
    }
  }
  return t;
}

std::set<ScaleRule> RulesOf(const BlockNaming& naming) {
  std::set<ScaleRule> rules;
  for (const BlockModel& m : naming.exact) rules.insert(m.rule);
  return rules;
}

bool HasModel(const BlockNaming& naming, ScaleRule rule, const CastPolicy& policy) {
  for (const BlockModel& m : naming.exact) {
    if (m.rule == rule && m.policy == policy) return true;
  }
  return false;
}

TEST(BlockScale, NameScaleRulesRecoversEachRule) {
  const std::vector<float> t = DistinguishingTensor();
  const BlockShape shape{2, t.size() / 2, BlockAxis::kRows, 32};
  const CastPolicy rne{};
  for (ScaleRule rule : kScaleRules) {
    SCOPED_TRACE(ScaleRuleName(rule));
    const BlockQuantized q = MxQuantize(kMxfp8E4M3, rule, rne, t.data(), shape);
    const BlockNaming naming = NameScaleRules(kMxfp8E4M3, t.data(), shape, q.scales, q.codes);
    const bool r = rule == ScaleRule::kRceil || rule == ScaleRule::kReciprocal;
    const std::set<ScaleRule> want =
        r ? std::set<ScaleRule>{ScaleRule::kRceil, ScaleRule::kReciprocal}
          : std::set<ScaleRule>{rule};
    EXPECT_EQ(RulesOf(naming), want);
    EXPECT_TRUE(HasModel(naming, rule, rne));
    EXPECT_FALSE(naming.nearest.first_broken_block.has_value());
  }
}

TEST(BlockScale, RceilClaimedAsFloorIsNamedRceil) {
  // A quantizer that says it follows OCP's floor but computes RCEIL: the
  // outputs name rceil (and reciprocal), never ocp_floor.
  const std::vector<float> t = DistinguishingTensor();
  const BlockShape shape{1, t.size(), BlockAxis::kRows, 32};
  const BlockQuantized claimed_floor =
      MxQuantize(kMxfp8E4M3, ScaleRule::kRceil, CastPolicy{}, t.data(), shape);
  const BlockNaming naming =
      NameScaleRules(kMxfp8E4M3, t.data(), shape, claimed_floor.scales, claimed_floor.codes);
  EXPECT_EQ(RulesOf(naming).count(ScaleRule::kOcpFloor), 0u);
  EXPECT_EQ(RulesOf(naming).count(ScaleRule::kRceil), 1u);
}

TEST(BlockScale, NearestModelNamesTheFirstBrokenBlock) {
  // Floor's outputs with one element changed in block 5: no model is exact;
  // the nearest is floor, nearest_even.saturate, broken at block 5.
  const std::vector<float> t = DistinguishingTensor();
  const BlockShape shape{1, t.size(), BlockAxis::kRows, 32};
  BlockQuantized q = MxQuantize(kMxfp8E4M3, ScaleRule::kOcpFloor, CastPolicy{}, t.data(), shape);
  q.codes[5 * 32 + 3] ^= 1;
  const BlockNaming naming = NameScaleRules(kMxfp8E4M3, t.data(), shape, q.scales, q.codes);
  EXPECT_TRUE(naming.exact.empty());
  EXPECT_EQ(naming.nearest.model.rule, ScaleRule::kOcpFloor);
  EXPECT_EQ(naming.nearest.model.policy, CastPolicy{});
  EXPECT_EQ(naming.nearest.blocks_matched, 7u);
  ASSERT_TRUE(naming.nearest.first_broken_block.has_value());
  EXPECT_EQ(*naming.nearest.first_broken_block, 5u);
  EXPECT_NE(naming.nearest.why.find("block 5 element 163"), std::string::npos) << naming.nearest.why;
}

TEST(BlockScale, AScaleAloneWrongIsCaught) {
  // Block 6 is all zeros: its codes are zeros under any scale, so only its
  // scale byte can tell; changed, no model is exact.
  const std::vector<float> t = DistinguishingTensor();
  const BlockShape shape{1, t.size(), BlockAxis::kRows, 32};
  BlockQuantized q = MxQuantize(kMxfp8E4M3, ScaleRule::kOcpFloor, CastPolicy{}, t.data(), shape);
  ASSERT_EQ(q.scales[6], 0);
  q.scales[6] = 1;
  const BlockNaming naming = NameScaleRules(kMxfp8E4M3, t.data(), shape, q.scales, q.codes);
  EXPECT_TRUE(naming.exact.empty());
  ASSERT_TRUE(naming.nearest.first_broken_block.has_value());
  EXPECT_EQ(*naming.nearest.first_broken_block, 6u);
  EXPECT_NE(naming.nearest.why.find("block 6: scale 0x01"), std::string::npos) << naming.nearest.why;
}

TEST(BlockScale, ElementPolicyNamedToo) {
  // Truncating elements under ceil: named ceil with toward_zero, and not
  // with nearest_even.
  const std::vector<float> t = DistinguishingTensor();
  const BlockShape shape{1, t.size(), BlockAxis::kRows, 32};
  const CastPolicy truncating{CastRounding::kTowardZero, CastOverflow::kSaturate};
  const BlockQuantized q = MxQuantize(kMxfp8E4M3, ScaleRule::kCeil, truncating, t.data(), shape);
  const BlockNaming naming = NameScaleRules(kMxfp8E4M3, t.data(), shape, q.scales, q.codes);
  EXPECT_TRUE(HasModel(naming, ScaleRule::kCeil, truncating));
  EXPECT_FALSE(HasModel(naming, ScaleRule::kCeil, CastPolicy{}));
  EXPECT_EQ(RulesOf(naming), std::set<ScaleRule>{ScaleRule::kCeil});
}

}  // namespace
}  // namespace ulpgate
