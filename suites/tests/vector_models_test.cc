// The engine's vector models (suites/engine/vector_models.h) against the
// scalar models they stand for: every model of every registered op, bit for
// bit, on random bit patterns of both operands and on every suite of the op.
#include "suites/engine/vector_models.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/elementwise_ops.h"
#include "kernels/registry.h"
#include "oracles/float_text.h"
#include "oracles/format.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/inputs/elementwise_suites.h"

namespace ulpgate {
namespace {

// Columns of n operands with the vectors' slack past n.
void ExpectEqualToScalarModels(const ElementwiseOpInfo& op, const std::vector<std::vector<float>>& columns,
                               const std::string& where, bool* ran) {
  const size_t n = columns[0].size();
  std::vector<std::vector<float>> padded = columns;
  std::vector<const float*> operands;
  for (auto& c : padded) {
    c.resize(n + 16, 0.0f);
    operands.push_back(c.data());
  }
  std::vector<float> out(n + 16);
  std::vector<float> x(op.arity());
  for (size_t m = 0; m < op.models.size(); ++m) {
    if (!VectorModelOutputs(op, m, operands.data(), n, out.data())) {
      *ran = false;
      return;
    }
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < op.arity(); ++k) x[k] = columns[k][i];
      const float expected = CanonicalNan(ModelOutput(op, kBinary32, m, x.data(), /*native=*/true));
      ASSERT_EQ(FloatBits(out[i]), FloatBits(expected))
          << op.name << " model " << op.models[m].name << ", " << where << ", input #" << i << ": "
          << HexFloat(x[0]) << ", " << HexFloat(x[1]) << ": " << HexFloat(out[i]) << " instead of "
          << HexFloat(expected);
    }
  }
}

TEST(VectorModels, EveryModelOfEveryOpIsItsScalarModelBitForBit) {
  bool ran = true;
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    ASSERT_EQ(op.arity(), 2u) << op.name;
    std::mt19937 rng(11);
    std::vector<std::vector<float>> random(2, std::vector<float>(300000));
    for (auto& column : random) {
      for (float& v : column) {
        const uint32_t b = static_cast<uint32_t>(rng());
        std::memcpy(&v, &b, sizeof v);
      }
    }
    ExpectEqualToScalarModels(op, random, "random patterns", &ran);
    if (!ran) break;
    // Every pair of the values where the functions branch (erf's pieces at
    // 1, 2 and 4, exp's range ends at +-104, tanh's limit, the op's
    // landmarks), one ulp either side, zeros, infinities, NaN, subnormals.
    std::vector<float> special = {0.0f, 1e-40f, 0x1p-149f, 1.0f, 2.0f, 4.0f, 0.5f, 3.0f, 104.0f,
                                  88.72f, 18.714973875f, 9.357486938f, 0.34657359f, 1e30f,
                                  HUGE_VALF, std::nanf("")};
    for (const double l : op.landmarks) special.push_back(static_cast<float>(l));
    std::vector<float> values;
    for (const float v : special) {
      for (const float s : {v, -v}) {
        values.push_back(s);
        values.push_back(std::nextafter(s, HUGE_VALF));
        values.push_back(std::nextafter(s, -HUGE_VALF));
      }
    }
    std::vector<std::vector<float>> pairs(2);
    for (const float a : values) {
      for (const float b : values) {
        pairs[0].push_back(a);
        pairs[1].push_back(b);
      }
    }
    ExpectEqualToScalarModels(op, pairs, "special pairs", &ran);
    for (const SuiteInfo& suite : ElementwiseSuites(op)) {
      const InputSet inputs = GenerateElementwiseSuite(op, kBinary32, suite.name, 5, 100003);
      ExpectEqualToScalarModels(op, inputs.columns, "suite " + std::string(suite.name), &ran);
    }
  }
  if (!ran) GTEST_SKIP() << "the best target this CPU runs has no fused multiply-add: no vector models";
}

// The vectors run on the best target the CPU runs after ULPGATE_CPU_TARGETS:
// there are vector models exactly where that target has FMA (ctest runs this
// also as if the CPU stopped at SSE4, where dispatch must not reach AVX2).
TEST(VectorModels, ComeFromTheBestRunnableTarget) {
  const TargetInfo* best = nullptr;
  for (const TargetInfo& t : CompiledTargets()) {
    if (t.supported) best = &t;
  }
  ASSERT_NE(best, nullptr);
  const ElementwiseOpInfo& op = ElementwiseOps().front();
  std::vector<float> a(32, 1.5f), b(32, 0.5f), out(32);
  const float* operands[2] = {a.data(), b.data()};
  EXPECT_EQ(VectorModelOutputs(op, 0, operands, 16, out.data()), best->fused_muladd) << best->name;
}

}  // namespace
}  // namespace ulpgate
