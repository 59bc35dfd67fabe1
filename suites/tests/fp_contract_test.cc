// Proves -ffp-contract=off is in effect for this project's translation units.
// a*b + c below sits in a function GCC may compile with FMA instructions; with
// contraction allowed (GCC's default, -ffp-contract=fast) it becomes one fused
// operation and the test fails.
#include <gtest/gtest.h>

namespace {

__attribute__((noinline, target("fma"))) float MultiplyThenAdd(float a, float b, float c) {
  return a * b + c;
}

__attribute__((noinline, target("fma"))) float SubtractProduct(float a, float b, float c) {
  return c - a * b;
}

TEST(FpContract, ProductsAreRoundedBeforeTheAdd) {
  volatile float a = 1.0f + 0x1p-23f, b = 1.0f - 0x1p-23f, c = -1.0f;
  // a*b = 1 - 2^-46 rounds to 1 in binary32, so two roundings give exactly 0;
  // a fused multiply-add would give -2^-46.
  EXPECT_EQ(MultiplyThenAdd(a, b, c), 0.0f) << "a*b + c was contracted into an FMA";
  EXPECT_EQ(SubtractProduct(a, b, 1.0f), 0.0f) << "c - a*b was contracted into an FMA";
}

}  // namespace
