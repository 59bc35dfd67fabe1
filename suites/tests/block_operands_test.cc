// The linear ops' block-quantized operands: which operands are quantized,
// along which dimension, and that the bias is not. Each operand is built so
// that its blocks along the reduced dimension share a magnitude and its
// other dimension spans 2^0 to 2^63: quantized along the right dimension
// every value keeps 4 significant bits (E4M3's), rounded to nearest even;
// along the wrong one the small values would fall below the block's
// subnormals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "oracles/block_scale.h"
#include "suites/inputs/block_operands.h"
#include "suites/inputs/inputs.h"

namespace ulpgate {
namespace {

constexpr size_t kN = 64;

// (1 + j/64) 2^e, and what E4M3 keeps of it under OCP's floor rule: every
// block's amax lies in [2^e, 2^(e+1)), so its scale is 2^(e-8) (E4M3's emax
// is 8) and an element is (1 + j/64) 256 in E4M3's top binade, [256, 512)
// with quantum 32: the significand rounded to eighths, ties to even, and
// saturated at 448 = 1.75 * 256 (the floor rule clips the block's largest).
float Value(size_t j, size_t e) { return std::ldexp(1.0f + static_cast<float>(j) / 64, static_cast<int>(e)); }
double Kept(size_t j, size_t e) {
  const double significand = std::nearbyint((1.0 + static_cast<double>(j) / 64) * 8) / 8;
  return std::ldexp(std::min(significand, 1.75), static_cast<int>(e));
}

ReductionInputSet Set(const ReductionOpInfo* op) {
  ReductionInputSet set;
  set.op = op;
  set.shape = {{kN, kN, kN, 1}, 3};
  set.instances.resize(1);
  return set;
}

TEST(BlockOperands, LinearFwdQuantizesXAndWAlongInAndLeavesTheBias) {
  ReductionInputSet set = Set(FindReductionOp("linear_fwd"));
  auto& ops = set.instances[0].operands;
  ops.assign(3, std::vector<float>(kN * kN));
  ops[2].assign(kN, 0x1.234567p-3f);
  for (size_t r = 0; r < kN; ++r) {
    for (size_t k = 0; k < kN; ++k) {
      ops[0][r * kN + k] = Value(k, r);  // x[b, k]: along k, one magnitude
      ops[1][r * kN + k] = Value(k, r / 2);
    }
  }
  QuantizeOperands(ParseBlockOperands("mxfp8_e4m3"), &set);
  for (size_t r = 0; r < kN; ++r) {
    for (size_t k = 0; k < kN; ++k) {
      ASSERT_EQ(ops[0][r * kN + k], Kept(k, r)) << "x[" << r << "," << k << "]";
      ASSERT_EQ(ops[1][r * kN + k], Kept(k, r / 2)) << "w[" << r << "," << k << "]";
    }
  }
  EXPECT_EQ(ops[2][0], 0x1.234567p-3f);
  EXPECT_EQ(set.operands, "mxfp8_e4m3/ocp_floor");
}

TEST(BlockOperands, LinearBwdInputQuantizesWDownItsColumns) {
  ReductionInputSet set = Set(FindReductionOp("linear_bwd_input"));
  auto& ops = set.instances[0].operands;
  ops.assign(2, std::vector<float>(kN * kN));
  for (size_t a = 0; a < kN; ++a) {
    for (size_t c = 0; c < kN; ++c) {
      ops[0][a * kN + c] = Value(c, a);  // dy[b, o]: along o
      ops[1][a * kN + c] = Value(a, c);  // w[o, i]: along o, down a column
    }
  }
  QuantizeOperands(ParseBlockOperands("mxfp8_e4m3"), &set);
  for (size_t a = 0; a < kN; ++a) {
    for (size_t c = 0; c < kN; ++c) {
      ASSERT_EQ(ops[0][a * kN + c], Kept(c, a)) << "dy[" << a << "," << c << "]";
      ASSERT_EQ(ops[1][a * kN + c], Kept(a, c)) << "w[" << a << "," << c << "]";
    }
  }
}

TEST(BlockOperands, LinearBwdWeightQuantizesAlongTheBatch) {
  ReductionInputSet set = Set(FindReductionOp("linear_bwd_weight"));
  auto& ops = set.instances[0].operands;
  ops.assign(2, std::vector<float>(kN * kN));
  for (size_t b = 0; b < kN; ++b) {
    for (size_t c = 0; c < kN; ++c) {
      ops[0][b * kN + c] = Value(b, c);
      ops[1][b * kN + c] = Value(b, c / 3);
    }
  }
  QuantizeOperands(ParseBlockOperands("mxfp8_e4m3"), &set);
  for (size_t b = 0; b < kN; ++b) {
    for (size_t c = 0; c < kN; ++c) {
      ASSERT_EQ(ops[0][b * kN + c], Kept(b, c)) << "dy[" << b << "," << c << "]";
      ASSERT_EQ(ops[1][b * kN + c], Kept(b, c / 3)) << "x[" << b << "," << c << "]";
    }
  }
}

TEST(BlockOperands, RejectsWhatItCannotQuantize) {
  ReductionInputSet mse = Set(FindReductionOp("mse_fwd"));
  mse.instances[0].operands.assign(2, std::vector<float>(kN, 1.0f));
  EXPECT_THROW(QuantizeOperands(ParseBlockOperands("mxfp4"), &mse), InputError);
  ReductionInputSet odd = Set(FindReductionOp("linear_fwd"));
  odd.shape = {{2, 48, 2, 1}, 3};
  odd.instances[0].operands = {std::vector<float>(96, 1.0f), std::vector<float>(96, 1.0f),
                               std::vector<float>(2, 0.0f)};
  EXPECT_THROW(QuantizeOperands(ParseBlockOperands("mxfp4"), &odd), InputError);
  EXPECT_THROW(ParseBlockOperands("mxfp9"), InputError);
  EXPECT_THROW(ParseBlockOperands("nvfp4/rceil"), InputError);
  EXPECT_THROW(ParseBlockOperands("mxfp4/round"), InputError);
  EXPECT_EQ(ParseBlockOperands("mxfp4/rceil").Name(), "mxfp4/rceil");
  EXPECT_EQ(ParseBlockOperands("nvfp4").Name(), "nvfp4");
}

}  // namespace
}  // namespace ulpgate
