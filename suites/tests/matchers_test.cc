// The GoogleTest helpers (<ulpgate/testing.h>) on ops other than tanh_bwd:
// a compiled gelu_bwd kernel and a sigmoid_bwd kernel written here follow
// their models through the helpers, in f32 and bf16; a wrong claim fails with
// a message that names the op, the input, the exact value and the models the
// result matches; a wrong op or operand count fails with a message, never a
// crash. The consumer project (examples/consumer) covers tanh_bwd through an
// installed package.
#include <ulpgate/testing.h>
#include <regex.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/elementwise_ops.h"
#include "kernels/registry.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/inputs/elementwise_suites.h"

namespace ulpgate {
namespace {

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "no '" << part << "' in:\n" << text;
}

::testing::AssertionResult Matches(const std::string& text, const std::string& pattern) {
  // POSIX extended expressions: std::regex trips GCC 12's
  // -Wmaybe-uninitialized inside its own headers under the sanitizers.
  regex_t re;
  if (regcomp(&re, pattern.c_str(), REG_EXTENDED | REG_NOSUB) != 0) {
    return ::testing::AssertionFailure() << "bad pattern /" << pattern << "/";
  }
  const bool found = regexec(&re, text.c_str(), 0, nullptr, 0) == 0;
  regfree(&re);
  if (found) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "no match of /" << pattern << "/ in:\n" << text;
}

// sigmoid_bwd as p - p*s with p = grad*s (this tree compiles without
// contraction: the two-rounding model fms_unfused).
std::vector<float> SigmoidFms(const InputSet& in) {
  std::vector<float> out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const float p = in.columns[0][i] * in.columns[1][i];
    out[i] = p - p * in.columns[1][i];
  }
  return out;
}

// A float rounded to the nearest bf16 value (ties to even), as a float.
float RoundToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return f;
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// PyTorch's sequence in f32 on bf16 operands, rounded once: torch_opmath.
std::vector<float> SigmoidTorchBf16(const InputSet& in) {
  std::vector<float> out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const float g = in.columns[0][i], s = in.columns[1][i];
    out[i] = RoundToBf16(g * (1.0f - s) * s);
  }
  return out;
}

const ElementwiseOpInfo& Op(const char* name) {
  const ElementwiseOpInfo* op = FindElementwiseOp(name);
  EXPECT_NE(op, nullptr) << name;
  return *op;
}

// The best target this CPU runs, its compiled gelu_bwd "torch" kernel's
// outputs on `in`, and the model that kernel must follow there.
std::vector<float> GeluTorchKernel(const InputSet& in, std::string* model) {
  const TargetInfo* best = nullptr;
  for (const TargetInfo& t : CompiledTargets()) {
    if (t.supported) best = &t;
  }
  const ElementwiseKernel kernel = FindElementwiseKernel("gelu_bwd", "f32", "torch", best->bits);
  EXPECT_NE(kernel, nullptr);
  *model = ExpectedModel(Op("gelu_bwd"), kBinary32, "torch", *best);
  std::vector<float> out(in.size());
  const void* operands[2] = {in.columns[0].data(), in.columns[1].data()};
  kernel(operands, out.data(), out.size());
  return out;
}

TEST(Matchers, GeluBwdKernelFollowsItsModelAndStaysNearTheExactValue) {
  const InputSet in = GenerateElementwiseSuite(Op("gelu_bwd"), kBinary32, "domain", 1, 2000);
  std::string model;
  const std::vector<float> out = GeluTorchKernel(in, &model);
  ULPGATE_EXPECT_FOLLOWS_MODEL("gelu_bwd", kBinary32, in.columns, out, model);
  // For x >= 0 nothing cancels (Phi(x) >= 1/2 and x phi(x) >= 0 add): the
  // sequence's roundings and exp's and erf's errors cost about 2 ULPs
  // (measured 1.97, 4.5% of outputs above 1 ULP, on AVX2). Below,
  // the zero of the derivative (x = -0.7518) and 1 + erf (x < -4) cancel.
  InputSet tame = in;
  for (auto& column : tame.columns) column.clear();
  std::vector<float> tame_out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!(in.columns[1][i] >= 0.0f)) continue;
    for (size_t k = 0; k < 2; ++k) tame.columns[k].push_back(in.columns[k][i]);
    tame_out.push_back(out[i]);
  }
  ASSERT_GT(tame_out.size(), 500u);
  ULPGATE_EXPECT_ULP_HISTOGRAM("gelu_bwd", kBinary32, tame.columns, tame_out,
                               testing::UlpBudget{4, 0.1});
  // gelu_bwd(1, 0) = Phi(0) = 1/2: exact.
  ULPGATE_EXPECT_CORRECTLY_ROUNDED("gelu_bwd", kBinary32, {1.0f, 0.0f}, 0.5f);
  ULPGATE_EXPECT_WITHIN_ULP("gelu_bwd", kBinary32, {1.0f, 0.0f}, 0.5f, 0.0);
}

TEST(Matchers, GeluBwdWrongClaimNamesOpInputExactAndModels) {
  const InputSet in = GenerateElementwiseSuite(Op("gelu_bwd"), kBinary32, "domain", 1, 2000);
  std::string model;
  const std::vector<float> out = GeluTorchKernel(in, &model);
  // The kernel follows one of torch_fma and torch_nofma: claim the other.
  const std::string wrong = model == "torch_fma" ? "torch_nofma" : "torch_fma";
  const ::testing::AssertionResult r = testing::FollowsModel("gelu_bwd", kBinary32, in.columns, out, wrong);
  ASSERT_FALSE(r);
  const std::string m = r.message();
  EXPECT_TRUE(Contains(m, "gelu_bwd in f32: "));
  EXPECT_TRUE(Contains(m, "outputs differ from model " + wrong));
  EXPECT_TRUE(Matches(m, "grad = -?0x[0-9a-f.]+p[-+][0-9]+ \\(0x[0-9a-f]{8}\\), "
                                          "x = -?0x[0-9a-f.]+p[-+][0-9]+ \\(0x[0-9a-f]{8}\\)"));
  EXPECT_TRUE(Matches(m, "exact +-?[0-9]\\.[0-9]{16}e[-+][0-9]+"));
  EXPECT_TRUE(Matches(m, "matches models +[a-z0-9_, ]*" + model));
  EXPECT_TRUE(Contains(m, "ulpgate check --op gelu_bwd --dtype f32"));
}

TEST(Matchers, SigmoidBwdInF32AndBf16) {
  const InputSet in = GenerateElementwiseSuite(Op("sigmoid_bwd"), kBinary32, "domain", 1, 5000);
  ULPGATE_EXPECT_FOLLOWS_MODEL("sigmoid_bwd", kBinary32, in.columns, SigmoidFms(in), "fms_unfused");
  ULPGATE_EXPECT_FOLLOWS_MODEL("sigmoid_bwd", kBinary32, in.columns, SigmoidFms(in),
                               "mine: p = grad*s; q = p*s; out = p - q");
  const InputSet bf = GenerateElementwiseSuite(Op("sigmoid_bwd"), kBFloat16, "domain", 1, 5000);
  ULPGATE_EXPECT_FOLLOWS_MODEL("sigmoid_bwd", kBFloat16, bf.columns, SigmoidTorchBf16(bf), "torch_opmath");
  // Computed in f32 and rounded once: within a bf16 ULP everywhere.
  ULPGATE_EXPECT_ULP_HISTOGRAM("sigmoid_bwd", kBFloat16, bf.columns, SigmoidTorchBf16(bf),
                               testing::UlpBudget{4, 0.1});
  // 2 * 0.5 * (1 - 0.5) = 0.5, exact in every format.
  ULPGATE_EXPECT_CORRECTLY_ROUNDED("sigmoid_bwd", kBFloat16, {2.0f, 0.5f}, 0.5f);
}

TEST(Matchers, SigmoidBwdWrongClaimNamesOpInputExactAndModels) {
  const InputSet in = GenerateElementwiseSuite(Op("sigmoid_bwd"), kBinary32, "domain", 1, 5000);
  const ::testing::AssertionResult r =
      testing::FollowsModel("sigmoid_bwd", kBinary32, in.columns, SigmoidFms(in), "torch");
  ASSERT_FALSE(r);
  const std::string m = r.message();
  EXPECT_TRUE(Matches(m, "sigmoid_bwd in f32: [0-9]+ of 5000 outputs differ from "
                                          "model torch \\(q = 1 - s; p = grad\\*q; out = p\\*s\\)"));
  EXPECT_TRUE(Matches(m, "grad = -?0x[0-9a-f.]+p[-+][0-9]+ \\(0x[0-9a-f]{8}\\), "
                                          "s = 0x[0-9a-f.]+p[-+][0-9]+ \\(0x[0-9a-f]{8}\\)"));
  EXPECT_TRUE(Matches(m, "exact +-?[0-9]\\.[0-9]{16}e[-+][0-9]+"));
  EXPECT_TRUE(Matches(m, "matches models +[a-z0-9_, ]*fms_unfused"));
  EXPECT_TRUE(Contains(m, "ulpgate check --op sigmoid_bwd --dtype f32"));
  // One result, off by one ULP from the exact 0.5.
  const ::testing::AssertionResult one =
      testing::WithinUlp("sigmoid_bwd", kBFloat16, {2.0f, 0.5f}, 0x1.02p-1f, 0.5);
  ASSERT_FALSE(one);
  EXPECT_TRUE(Contains(one.message(), "sigmoid_bwd in bf16: the result is 1 ULP from the exact value"));
  EXPECT_TRUE(Contains(one.message(), "grad = 0x1p+1 (0x4000), s = 0x1p-1 (0x3f00)"));
  EXPECT_TRUE(Contains(one.message(), "matches models    none"));
}

TEST(Matchers, WrongOpOrOperandsFailWithAMessage) {
  const ::testing::AssertionResult unknown = testing::WithinUlp("relu_bwd", kBinary32, {1, 2}, 0, 1);
  ASSERT_FALSE(unknown);
  EXPECT_TRUE(Contains(unknown.message(), "op 'relu_bwd': not an elementwise op (tanh_bwd, "));
  const ::testing::AssertionResult arity = testing::CorrectlyRounded("gelu_bwd", kBinary32, {1}, 0);
  ASSERT_FALSE(arity);
  EXPECT_TRUE(Contains(arity.message(), "gelu_bwd takes 2 operands (grad, x), got 1"));
  const ::testing::AssertionResult arrays =
      testing::FollowsModel("silu_bwd", kBinary32, {{1.0f}}, {0.5f}, "torch");
  ASSERT_FALSE(arrays);
  EXPECT_TRUE(Contains(arrays.message(), "silu_bwd takes 2 operand arrays (grad, x), got 1"));
  const ::testing::AssertionResult value =
      testing::WithinUlp("sigmoid_bwd", kBFloat16, {1.0f, 0x1.0001p-1f}, 0, 1);
  ASSERT_FALSE(value);
  EXPECT_TRUE(Contains(value.message(), "operand s = 0x1.0001p-1 is not a bf16 value"));
  // tanh_bwd, the first op the helpers knew, as before.
  ULPGATE_EXPECT_CORRECTLY_ROUNDED("tanh_bwd", kBinary32, {0.75f, 0.5f}, 0.5625f);
}

}  // namespace
}  // namespace ulpgate
