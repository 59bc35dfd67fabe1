// A consumer's tests of its own kernel with ulpgate's helpers.
#include <ulpgate/testing.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "suites/inputs/tanh_bwd_suites.h"

void MyTanhBwd(const float* grad, const float* t, float* out, size_t n);

namespace {

std::vector<float> MyOutputs(const ulpgate::InputSet& inputs) {
  std::vector<float> out(inputs.size());
  MyTanhBwd(inputs.columns[0].data(), inputs.columns[1].data(), out.data(), out.size());
  return out;
}

TEST(MyTanhBwd, FollowsTheTwoRoundingModelOnEverySuite) {
  for (const char* suite : {"random", "domain", "training", "adversarial"}) {
    const ulpgate::InputSet inputs = ulpgate::GenerateTanhBwdSuite(ulpgate::kBinary32, suite, 1, 20000);
    ULPGATE_EXPECT_FOLLOWS_MODEL("tanh_bwd", ulpgate::kBinary32, inputs.columns, MyOutputs(inputs), "mulsub")
        << "suite " << suite;
    // The same claim as an expression of its own.
    ULPGATE_EXPECT_FOLLOWS_MODEL("tanh_bwd", ulpgate::kBinary32, inputs.columns, MyOutputs(inputs),
                                 "two_roundings: r = t*t; s = 1 - r; out = grad*s");
  }
}

TEST(MyTanhBwd, StaysWithinItsBudgetWhereTheInputsAreTame) {
  // Away from |t| = 1, where 1 - t*t cancels, three roundings cost at most
  // about 1.5 ULP.
  const ulpgate::InputSet all = ulpgate::GenerateTanhBwdSuite(ulpgate::kBinary32, "training", 1, 50000);
  ulpgate::InputSet inputs = all;
  for (auto& column : inputs.columns) column.clear();
  for (size_t i = 0; i < all.size(); ++i) {
    if (std::fabs(all.columns[1][i]) > 0.5f) continue;
    for (size_t k = 0; k < 2; ++k) inputs.columns[k].push_back(all.columns[k][i]);
  }
  ULPGATE_EXPECT_ULP_HISTOGRAM("tanh_bwd", ulpgate::kBinary32, inputs.columns, MyOutputs(inputs),
                               ulpgate::testing::UlpBudget{2, 0.05});
  const float grad = 0.75f, t = 0.5f;  // 0.75 * (1 - 0.25): exact in binary32
  float out;
  MyTanhBwd(&grad, &t, &out, 1);
  ULPGATE_EXPECT_CORRECTLY_ROUNDED("tanh_bwd", ulpgate::kBinary32, {grad, t}, out);
  ULPGATE_EXPECT_WITHIN_ULP("tanh_bwd", ulpgate::kBinary32, {grad, t}, out, 0.5);
}

// Run only by the test that expects it to fail (CMakeLists.txt): the kernel
// has no FMA, so the fused model is the wrong claim.
TEST(MyTanhBwd, ExpectedToFailClaimsTheFusedModel) {
  const ulpgate::InputSet inputs = ulpgate::GenerateTanhBwdSuite(ulpgate::kBinary32, "domain", 1, 20000);
  ULPGATE_EXPECT_FOLLOWS_MODEL("tanh_bwd", ulpgate::kBinary32, inputs.columns, MyOutputs(inputs),
                               "mulsub_fused");
}

}  // namespace
