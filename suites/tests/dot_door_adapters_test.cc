// The plugin's and the IUT's DotDoors (suites/reveal/plugin_door.h,
// iut_door.h): C = A B^T through examples/plugin/linear_plugin.c's kernels
// and ulpgate-iut's built-in ones equals the product computed here in the
// kernel's order, and every fault or refusal is a DotDoorError, never
// outputs. ULPGATE_IUT and ULPGATE_PLUGINS are set by the build.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "oracles/float_format.h"
#include "suites/reveal/iut_door.h"
#include "suites/reveal/plugin_door.h"

namespace ulpgate {
namespace {

const std::string kIut = ULPGATE_IUT;
const std::string kExample = std::string(ULPGATE_PLUGINS) + "/liblinear_example.so";
const std::string kFaulty = std::string(ULPGATE_PLUGINS) + "/liblinear_faulty.so";

// One rounding to binary32 of an exact double result: binary64 carries more
// than 2*24+2 bits, so rounding twice equals rounding once for + and *.
float Round(double v) { return static_cast<float>(v); }

float Sequential(const float* a, const float* b, size_t k) {
  float acc = 0.0f;
  for (size_t i = 0; i < k; ++i) acc = Round(double{acc} + double{Round(double{a[i]} * double{b[i]})});
  return acc;
}

float Cascade(const float* a, const float* b, size_t n) {
  if (n == 1) return Round(double{a[0]} * double{b[0]});
  size_t left = 1;
  while (left * 2 < n) left *= 2;
  return Round(double{Cascade(a, b, left)} + double{Cascade(a + left, b + left, n - left)});
}

struct Product {
  DotShape shape;
  std::vector<float> a, b;
  // C[m][n] in one order; the zero bias adds +0, which changes only the sign
  // of a zero (a -0 sum becomes +0).
  std::vector<float> Want(float (*dot)(const float*, const float*, size_t)) const {
    std::vector<float> c(shape.m * shape.n);
    for (size_t i = 0; i < shape.m; ++i) {
      for (size_t j = 0; j < shape.n; ++j) {
        c[i * shape.n + j] = dot(&a[i * shape.k], &b[j * shape.k], shape.k) + 0.0f;
      }
    }
    return c;
  }
};

// Cancelling terms of mixed magnitudes, so that the two orders differ.
Product MakeProduct(size_t m, size_t n, size_t k, uint32_t seed) {
  Product p;
  p.shape = {m, n, k};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> scale(-12, 12);
  for (size_t i = 0; i < m * k; ++i) p.a.push_back(std::ldexp(unit(rng), scale(rng)));
  for (size_t i = 0; i < n * k; ++i) p.b.push_back(std::ldexp(unit(rng), scale(rng)));
  return p;
}

std::vector<uint32_t> Bits(const std::vector<float>& v) {
  std::vector<uint32_t> bits(v.size());
  std::memcpy(bits.data(), v.data(), v.size() * 4);
  return bits;
}

std::vector<float> Multiply(DotDoor& door, const Product& p) {
  std::vector<float> c(p.shape.m * p.shape.n, -1.0f);
  door.Multiply(p.shape, p.a.data(), p.b.data(), c.data());
  return c;
}

TEST(PluginDotDoor, ComputesTheProductInTheKernelsOrderOutOfProcessAndIn) {
  const Product p = MakeProduct(3, 5, 37, 1);
  const std::vector<float> sequential = p.Want(Sequential), pairwise = p.Want(Cascade);
  ASSERT_NE(Bits(sequential), Bits(pairwise)) << "the inputs do not tell the orders apart";
  for (const bool in_process : {false, true}) {
    PluginDoorOptions options;
    options.in_process = in_process;
    options.iut_path = kIut;
    auto seq = MakePluginDotDoor(kExample, "sequential", options);
    auto pw = MakePluginDotDoor(kExample, "pairwise", options);
    EXPECT_EQ(seq->OperandFormat().name, std::string("f32"));
    EXPECT_EQ(seq->Name(), "plugin:" + kExample + ":sequential");
    EXPECT_EQ(Bits(Multiply(*seq, p)), Bits(sequential)) << "in process: " << in_process;
    EXPECT_EQ(Bits(Multiply(*pw, p)), Bits(pairwise)) << "in process: " << in_process;
    EXPECT_FALSE(seq->SetThreads(2));
  }
}

TEST(PluginDotDoor, FaultsAndRefusalsAreErrorsNeverOutputs) {
  PluginDoorOptions options;
  options.iut_path = kIut;
  auto crash = MakePluginDotDoor(kFaulty, "crash", options);
  const Product small = MakeProduct(2, 2, 8, 2), large = MakeProduct(2, 2, 9, 3);
  EXPECT_EQ(Bits(Multiply(*crash, small)), Bits(small.Want(Sequential)));
  try {
    Multiply(*crash, large);
    ADD_FAILURE() << "a crashed kernel gave outputs";
  } catch (const DotDoorError& e) {
    EXPECT_NE(std::string(e.what()).find("CRASHED: SIGSEGV"), std::string::npos) << e.what();
  }
  // The IUT starts afresh: the next call answers.
  EXPECT_EQ(Bits(Multiply(*crash, small)), Bits(small.Want(Sequential)));
  for (const bool in_process : {false, true}) {
    options.in_process = in_process;
    auto overrun = MakePluginDotDoor(kFaulty, "overrun", options);
    try {
      Multiply(*overrun, small);
      ADD_FAILURE() << "an overrun gave outputs (in process: " << in_process << ")";
    } catch (const DotDoorError& e) {
      EXPECT_NE(std::string(e.what()).find("outside its output"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(MakePluginDotDoor(kExample, "sideways", options), DotDoorError);
  EXPECT_THROW(MakePluginDotDoor(std::string(ULPGATE_PLUGINS) + "/libnothing.so", "sequential", options),
               DotDoorError);
}

TEST(IutDotDoor, BuiltinKernelsThroughTheProtocol) {
  const Product p = MakeProduct(4, 3, 33, 4);
  auto seq = MakeIutDotDoor(kIut + " --builtin --reductions --targets SCALAR", "sequential_unfused");
  auto pw = MakeIutDotDoor(kIut + " --builtin --reductions --targets SCALAR", "pairwise@SCALAR");
  EXPECT_EQ(Bits(Multiply(*seq, p)), Bits(p.Want(Sequential)));
  EXPECT_EQ(Bits(Multiply(*pw, p)), Bits(p.Want(Cascade)));
  // Threads restart the IUT with the thread variables; the answers stay.
  EXPECT_TRUE(seq->SetThreads(3));
  EXPECT_EQ(Bits(Multiply(*seq, p)), Bits(p.Want(Sequential)));
}

TEST(IutDotDoor, FaultsAndRefusalsAreErrors) {
  auto crash = MakeIutDotDoor(kIut + " --plugin " + kFaulty, "crash");
  const Product large = MakeProduct(2, 2, 9, 5);
  EXPECT_THROW(Multiply(*crash, large), DotDoorError);
  // No such kernel; an IUT of an older version offers none; one that does not start.
  EXPECT_THROW(MakeIutDotDoor(kIut + " --plugin " + kExample, "sideways"), DotDoorError);
  EXPECT_THROW(MakeIutDotDoor("printf 'ulpgate-iut 2\\nkernel X sigmoid_bwd f32 v\\nready\\n'; sleep 5", "v"),
               DotDoorError);
  EXPECT_THROW(MakeIutDotDoor("exit 3", "v"), DotDoorError);
  // Two targets offer the name: it must be NAME@TARGET.
  EXPECT_THROW(MakeIutDotDoor(kIut + " --builtin --reductions --targets SCALAR,SSE4", "pairwise"), DotDoorError);
}

// The BLAS IUT over the reference BLAS, whose sgemm sums each output's
// products left to right from 0 (then the IUT adds the bias).
TEST(IutDotDoor, ReferenceBlasThroughTheBlasIut) {
  if (access(ULPGATE_REFERENCE_BLAS, R_OK) != 0) {
    GTEST_SKIP() << ULPGATE_REFERENCE_BLAS << " is not installed (apt-get install libblas3)";
  }
  auto door = MakeIutDotDoor(std::string(ULPGATE_BLAS_IUT) + " " + ULPGATE_REFERENCE_BLAS, "sgemm");
  EXPECT_EQ(door->Name(), std::string("iut:") + ULPGATE_BLAS_IUT + " " + ULPGATE_REFERENCE_BLAS + ":sgemm@blas");
  const Product p = MakeProduct(5, 4, 45, 6);
  EXPECT_EQ(Bits(Multiply(*door, p)), Bits(p.Want(Sequential)));
  EXPECT_TRUE(door->SetThreads(2));
  EXPECT_EQ(Bits(Multiply(*door, p)), Bits(p.Want(Sequential)));
}

}  // namespace
}  // namespace ulpgate
