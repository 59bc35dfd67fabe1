// The bf16 and f16 tanh_bwd kernels against their models, bit for bit, on
// every target: every t pattern of the format with grads of every kind, every
// grad pattern with landmark t values, and random pairs of patterns. The
// models (suites/engine/tanh_bwd_oracle.h) come from the emulated arithmetic and
// MPFR rounding, the conversions of the exact variants from IEEE 754's
// definition, Highway's own from oracles/highway_f16.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "suites/tests/tanh_bwd_kernels.h"
#include "oracles/float_text.h"
#include "oracles/format.h"
#include "oracles/highway_f16.h"
#include "suites/engine/tanh_bwd_oracle.h"
#include "suites/tests/test_targets.h"

namespace ulpgate {
namespace {

struct NarrowInputs {
  std::vector<uint16_t> grad, t;
};

NarrowInputs Inputs(const FloatFormat& format) {
  NarrowInputs in;
  auto bits = [&](double v) { return static_cast<uint16_t>(EncodeBits(format, v)); };
  const double max = DecodeBits(format, format.precision == 8 ? 0x7f7f : 0x7bff);
  const double tiny = std::ldexp(1.0, format.emin - format.precision + 1);
  for (double g : {1.0, -3.5, 0.0, max, -tiny, 1e-3, 7.0}) {
    const uint16_t gb = bits(RoundToFormat(format, g));
    for (uint32_t x = 0; x < 0x10000; ++x) {
      in.grad.push_back(gb);
      in.t.push_back(static_cast<uint16_t>(x));
    }
  }
  for (double t : {1.0, 0.5, -0.75, 2.0, 0.0}) {
    for (uint32_t g = 0; g < 0x10000; ++g) {
      in.grad.push_back(static_cast<uint16_t>(g));
      in.t.push_back(bits(t));
    }
  }
  std::mt19937 rng(12345);
  for (int i = 0; i < 100000; ++i) {
    in.grad.push_back(static_cast<uint16_t>(rng()));
    in.t.push_back(static_cast<uint16_t>(rng()));
  }
  return in;
}

class TanhBwdNarrow : public PerTargetTest {};

// The inputs and every model's outputs, computed once per format.
struct Expected {
  NarrowInputs in;
  std::vector<std::vector<float>> models;
};
const Expected& ExpectedFor(const FloatFormat& format) {
  static std::map<std::string, Expected> cache;
  Expected& e = cache[format.name];
  if (e.models.empty()) {
    e.in = Inputs(format);
    e.models.resize(e.in.grad.size());
    for (size_t i = 0; i < e.in.grad.size(); ++i) {
      e.models[i] = TanhBwdNarrowModels(format, e.in.grad[i], e.in.t[i]);
    }
  }
  return e;
}

// Outputs of a variant's kernel that differ from a model.
uint64_t Mismatches(const FloatFormat& format, const TargetInfo& target,
                    std::string_view variant, const std::string& model) {
  const Expected& e = ExpectedFor(format);
  const std::vector<std::string>& names = TanhBwdNarrowModelNames(format);
  const size_t m = std::find(names.begin(), names.end(), model) - names.begin();
  EXPECT_LT(m, names.size()) << model;
  if (m == names.size()) return 0;
  std::vector<uint16_t> out(e.in.grad.size());
  FindTanhBwdNarrowKernel(format.name, variant, target.bits)(e.in.grad.data(), e.in.t.data(),
                                                             out.data(), out.size());
  uint64_t mismatches = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const float y = static_cast<float>(DecodeBits(format, out[i]));
    mismatches += !SameFloat(CanonicalNan(y), CanonicalNan(e.models[i][m]));
  }
  return mismatches;
}

void CheckFormat(const FloatFormat& format, const TargetInfo& target) {
  const Expected& e = ExpectedFor(format);
  const NarrowInputs& in = e.in;
  const size_t n = in.grad.size();
  const std::vector<std::string>& names = TanhBwdNarrowModelNames(format);
  const std::vector<std::vector<float>>& models = e.models;
  for (const auto& variant : kTanhBwdNarrowVariants) {
    const TanhBwdNarrowKernel kernel =
        FindTanhBwdNarrowKernel(format.name, variant.name, target.bits);
    ASSERT_NE(kernel, nullptr) << variant.name;
    const std::string expected = ExpectedNarrowModel(format, variant.name, target);
    const size_t m = std::find(names.begin(), names.end(), expected) - names.begin();
    ASSERT_LT(m, names.size()) << expected;
    std::vector<uint16_t> out(n);
    kernel(in.grad.data(), in.t.data(), out.data(), n);
    uint64_t mismatches = 0;
    for (size_t i = 0; i < n; ++i) {
      const float y = static_cast<float>(DecodeBits(format, out[i]));
      if (!SameFloat(CanonicalNan(y), CanonicalNan(models[i][m]))) {
        if (mismatches++ < 3) {
          ADD_FAILURE() << format.name << " " << variant.name << " on " << target.name
                        << " differs from " << expected << " at grad "
                        << BitsText(format, in.grad[i]) << " t " << BitsText(format, in.t[i])
                        << ": kernel " << BitsText(format, out[i]) << " model "
                        << HexFloat(models[i][m]);
        }
      }
    }
    EXPECT_EQ(mismatches, 0u) << format.name << " " << variant.name << " on " << target.name
                              << " against " << expected << " over " << n << " inputs";
  }
}

TEST_P(TanhBwdNarrow, BFloat16VariantsFollowTheirModels) { CheckFormat(kBFloat16, *GetParam()); }
TEST_P(TanhBwdNarrow, Binary16VariantsFollowTheirModels) { CheckFormat(kBinary16, *GetParam()); }

// What Highway's own conversions cost: its bf16 demotion is not the correctly
// rounded one on any target; its f16 conversions are exactly that on the F16C
// targets and not on the others.
TEST_P(TanhBwdNarrow, HighwayConversionsAreTellableFromCorrectRounding) {
  const TargetInfo& target = *GetParam();
  EXPECT_GT(Mismatches(kBFloat16, target, "mulsub_opmath_hwy", "mulsub_opmath"), 1000u);
  EXPECT_EQ(Mismatches(kBFloat16, target, "mulsub_opmath", "mulsub_opmath"), 0u);
  if (target.f16c_conversions) {
    EXPECT_EQ(Mismatches(kBinary16, target, "mulsub_opmath_hwy", "mulsub_opmath"), 0u);
  } else {
    EXPECT_GT(Mismatches(kBinary16, target, "mulsub_opmath_hwy", "mulsub_opmath"), 1000u);
  }
  // Rounding each step is not rounding once.
  EXPECT_GT(Mismatches(kBFloat16, target, "mulsub_per_op", "mulsub_opmath"), 1000u);
  EXPECT_GT(Mismatches(kBinary16, target, "mulsub_per_op", "mulsub_opmath"), 1000u);
}

ULPGATE_INSTANTIATE_PER_TARGET(TanhBwdNarrow);

}  // namespace
}  // namespace ulpgate
