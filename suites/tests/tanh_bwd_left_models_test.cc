// The models of grad - grad*t*t as C and Python associate it, grad - (grad*t)*t:
// mac_left_unfused (three roundings) and mac_left_fused (the product p*t and
// the subtraction one FMA). Each is held to its operations written out here
// with the hardware's binary32 arithmetic and std::fma (every translation unit
// is compiled with -ffp-contract=off, so `grad - q` stays its own rounding),
// through every road a model's output takes: the MPFR emulation, the engine's
// model outputs (emulated and native), the model-language program `check`
// runs, and the 16-bit formats' opmath models. And neither may be another
// model under a new name: each differs from every other model somewhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "oracles/float_text.h"
#include "oracles/format.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/engine/tanh_bwd_oracle.h"
#include "suites/inputs/tanh_bwd_suites.h"

namespace ulpgate {
namespace {

float LeftUnfused(float grad, float t) {
  const float p = grad * t;
  const float q = p * t;
  return grad - q;
}

float LeftFused(float grad, float t) {
  const float p = grad * t;
  return std::fma(-p, t, grad);
}

struct LeftModel {
  const char* name;
  float (*reference)(float, float);
};
constexpr LeftModel kLeftModels[] = {{"mac_left_unfused", LeftUnfused},
                                     {"mac_left_fused", LeftFused}};

const ElementwiseOpInfo& TanhBwd() { return *FindElementwiseOp("tanh_bwd"); }

size_t IndexOf(const std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  return static_cast<size_t>(it - names.begin());  // names.size() when absent
}

std::string Where(const char* model, const char* suite, float g, float t) {
  std::ostringstream s;
  s << model << ", suite " << suite << ", grad = " << HexFloat(g) << " (bits 0x" << std::hex
    << FloatBits(g) << "), t = " << HexFloat(t) << " (bits 0x" << FloatBits(t) << ")";
  return s.str();
}

TEST(TanhBwdLeftModels, AreTheirOperationsInF32) {
  const ElementwiseOpInfo& op = TanhBwd();
  const std::vector<std::string> names = ModelNames(op, kBinary32);
  const std::vector<ModelProgram> programs = ModelPrograms(op, kBinary32);
  size_t compared = 0;
  for (const LeftModel& m : kLeftModels) {
    const size_t index = IndexOf(names, m.name);
    ASSERT_LT(index, names.size()) << m.name << " is not a built-in f32 model";
    const auto program = std::find_if(programs.begin(), programs.end(),
                                      [&](const ModelProgram& p) { return p.name == m.name; });
    ASSERT_NE(program, programs.end()) << m.name << " has no program for check";
    for (const SuiteInfo& suite : TanhBwdSuites()) {
      const InputSet inputs = GenerateTanhBwdSuite(kBinary32, suite.name, 7, 20000);
      for (size_t i = 0; i < inputs.size(); ++i) {
        const float x[2] = {inputs.columns[0][i], inputs.columns[1][i]};
        const double wide[2] = {x[0], x[1]};
        const float want = m.reference(x[0], x[1]);
        const float emulated = TanhBwdModel(m.name, x[0], x[1]);
        const float engine = ModelOutput(op, kBinary32, index, x);
        const float native = ModelOutput(op, kBinary32, index, x, /*native=*/true);
        const float checked = static_cast<float>(program->Evaluate(wide));
        for (const float got : {emulated, engine, native, checked}) {
          ASSERT_TRUE(SameFloat(got, want))
              << Where(m.name, suite.name.c_str(), x[0], x[1]) << ": model " << HexFloat(got)
              << " (bits 0x" << std::hex << FloatBits(got) << "), its operations give "
              << HexFloat(want) << " (bits 0x" << FloatBits(want) << ")";
        }
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 100000u);
}

// In bf16 and f16 each is also <m>_opmath: the f32 model of the operands
// (exact widenings) rounded once to the format, to nearest even.
TEST(TanhBwdLeftModels, AreTheirOperationsRoundedOnceIn16Bits) {
  const ElementwiseOpInfo& op = TanhBwd();
  for (const FloatFormat* format : {&kBFloat16, &kBinary16}) {
    const std::vector<std::string> names = ModelNames(op, *format);
    for (const LeftModel& m : kLeftModels) {
      const std::string name = std::string(m.name) + "_opmath";
      const size_t index = IndexOf(names, name);
      ASSERT_LT(index, names.size()) << name << " is not a built-in " << format->name << " model";
      const InputSet inputs = GenerateTanhBwdSuite(*format, "domain", 7, 5000);
      for (size_t i = 0; i < inputs.size(); ++i) {
        const float x[2] = {inputs.columns[0][i], inputs.columns[1][i]};
        const float want = static_cast<float>(RoundDouble(*format, m.reference(x[0], x[1])));
        const float got = ModelOutput(op, *format, index, x);
        ASSERT_TRUE(SameFloat(got, want))
            << format->name << " " << Where(m.name, "domain", x[0], x[1]) << ": " << HexFloat(got)
            << " vs " << HexFloat(want);
      }
    }
  }
}

// A model equal to another everywhere would be a second name for it: each
// of the two must part from every other f32 model on the domain suite
// (measured: on 3,099 to 7,964 of its 20,000 inputs).
TEST(TanhBwdLeftModels, DifferFromEveryOtherModel) {
  const ElementwiseOpInfo& op = TanhBwd();
  const std::vector<std::string> names = ModelNames(op, kBinary32);
  const InputSet inputs = GenerateTanhBwdSuite(kBinary32, "domain", 7, 20000);
  std::vector<std::vector<float>> outputs(names.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const float x[2] = {inputs.columns[0][i], inputs.columns[1][i]};
    for (size_t m = 0; m < names.size(); ++m) {
      outputs[m].push_back(ModelOutput(op, kBinary32, m, x, /*native=*/true));
    }
  }
  for (const LeftModel& left : kLeftModels) {
    const size_t a = IndexOf(names, left.name);
    ASSERT_LT(a, names.size()) << left.name;
    for (size_t b = 0; b < names.size(); ++b) {
      if (b == a) continue;
      uint64_t differ = 0;
      for (size_t i = 0; i < inputs.size(); ++i) differ += !SameFloat(outputs[a][i], outputs[b][i]);
      std::printf("%s vs %s: %llu of %zu outputs differ\n", left.name, names[b].c_str(),
                  static_cast<unsigned long long>(differ), inputs.size());
      EXPECT_GT(differ, 0u) << left.name << " equals " << names[b] << " on every input";
    }
  }
}

}  // namespace
}  // namespace ulpgate
