// Lane isolation, SLEEF's habit: each test value in a random lane of a call
// whose other lanes hold garbage (random bit patterns: NaNs, infinities,
// subnormals, huge values) must give the output it gives alone (a call of
// one, zeros around it). A kernel that lets one lane's value leak into
// another's (a shuffle or a blend with the wrong index, a reduction across
// lanes, a mask built from the whole vector, a special-case path taken for the
// vector when one lane needs it) passes every sampled suite, whose neighbours
// are values like its own, and fails here. Every tanh_bwd kernel, f32, bf16 and f16, on every
// target this CPU runs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "suites/tests/tanh_bwd_kernels.h"
#include "kernels/narrow_formats.h"
#include "kernels/registry.h"
#include "kernels/ops/tanh_bwd/tanh_bwd_spec.h"
#include "oracles/float_text.h"
#include "oracles/format.h"
#include "suites/inputs/tanh_bwd_suites.h"
#include "suites/tests/test_targets.h"

namespace ulpgate {
namespace {

// Calls of two full binary32 vectors: both halves of a 16-bit vector too.
size_t CallLength(const TargetInfo& target) { return 2 * target.f32_lanes; }

// Garbage for the other lanes: half uniformly random patterns (most of them
// huge, tiny or NaN when read as values), half the patterns a kernel is most
// likely to react to.
template <typename Bits>
Bits Garbage(std::mt19937_64& rng) {
  static constexpr uint32_t kF32[] = {0x7fc00000, 0xffc00000, 0x7f800001, 0x7f800000,
                                      0xff800000, 0x00000001, 0x80000000, 0x7f7fffff,
                                      0x00800000, 0x3f800000};
  static constexpr uint16_t kNarrow[] = {0x7fff, 0xffff, 0x7f81, 0x7e00, 0xfc00, 0x7c00,
                                         0xff80, 0x0001, 0x8000, 0x7bff};
  const uint64_t r = rng();
  if (r & 1) return static_cast<Bits>(r >> 32);
  if constexpr (sizeof(Bits) == 4) {
    return kF32[(r >> 8) % std::size(kF32)];
  } else {
    return kNarrow[(r >> 8) % std::size(kNarrow)];
  }
}

// Output bits agree, or both are NaNs (a NaN's payload is not a lane's
// business here: the engine makes NaNs canonical).
// A value of the format as text (every bf16 and f16 value is a float).
std::string Text(const FloatFormat& format, uint64_t bits) {
  return HexFloat(static_cast<float>(DecodeBits(format, bits)));
}

template <typename Bits>
bool Same(Bits a, Bits b, const FloatFormat& format) {
  return a == b || (std::isnan(DecodeBits(format, a)) && std::isnan(DecodeBits(format, b)));
}

// kernel(grad, t, out, n) over Bits; grad and t the test values' patterns.
// Returns the failures' description, empty when every value is isolated.
template <typename Bits, typename Kernel>
std::string CheckIsolation(const FloatFormat& format, Kernel kernel, const TargetInfo& target,
                           const std::vector<Bits>& grad, const std::vector<Bits>& t) {
  // Each value alone (a call of one: the kernel's tail path, which runs the
  // body's instructions on a vector of zeros around it).
  const size_t n = grad.size();
  std::vector<Bits> clean(n);
  for (size_t i = 0; i < n; ++i) kernel(&grad[i], &t[i], &clean[i], 1);
  const size_t length = CallLength(target);
  std::mt19937_64 rng(0x5eed ^ n);
  std::vector<Bits> g(length), x(length), out(length);
  std::ostringstream failures;
  size_t failed = 0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < length; ++k) {
      g[k] = Garbage<Bits>(rng);
      x[k] = Garbage<Bits>(rng);
    }
    const size_t lane = rng() % length;
    g[lane] = grad[i];
    x[lane] = t[i];
    kernel(g.data(), x.data(), out.data(), length);
    if (Same(out[lane], clean[i], format)) continue;
    if (failed++ < 3) {
      failures << "\n  grad = " << Text(format, grad[i]) << ", t = " << Text(format, t[i])
               << " in lane " << lane << " of " << length << ": " << Text(format, out[lane])
               << " among garbage, " << Text(format, clean[i]) << " alone";
    }
  }
  if (failed == 0) return "";
  return std::to_string(failed) + " of " + std::to_string(n) + " values differ" +
         failures.str();
}

std::vector<uint32_t> Patterns32(const std::vector<float>& v) {
  std::vector<uint32_t> bits(v.size());
  std::memcpy(bits.data(), v.data(), v.size() * sizeof(float));
  return bits;
}

std::vector<uint16_t> Patterns16(const FloatFormat& format, const std::vector<float>& v) {
  std::vector<uint16_t> bits(v.size());
  for (size_t i = 0; i < v.size(); ++i) bits[i] = static_cast<uint16_t>(EncodeBits(format, v[i]));
  return bits;
}

class LaneIsolation : public PerTargetTest {};

TEST_P(LaneIsolation, Binary32KernelsAmongGarbage) {
  const TargetInfo& target = *GetParam();
  const InputSet inputs = GenerateTanhBwdSuite(
      "adversarial", 5, TanhBwdAdversarialCatalogueSize() + 30000);
  const std::vector<uint32_t> grad = Patterns32(inputs.columns[0]);
  const std::vector<uint32_t> t = Patterns32(inputs.columns[1]);
  for (const auto& variant : kTanhBwdVariants) {
    const TanhBwdKernel kernel = FindTanhBwdKernel(variant.name, target.bits);
    ASSERT_NE(kernel, nullptr) << variant.name;
    const auto call = [kernel](const uint32_t* a, const uint32_t* b, uint32_t* out, size_t n) {
      kernel(reinterpret_cast<const float*>(a), reinterpret_cast<const float*>(b),
             reinterpret_cast<float*>(out), n);
    };
    const std::string failures = CheckIsolation(kBinary32, call, target, grad, t);
    EXPECT_TRUE(failures.empty()) << "f32 " << variant.name << " on " << target.name << ": "
                                  << failures;
  }
}

TEST_P(LaneIsolation, SixteenBitKernelsAmongGarbage) {
  const TargetInfo& target = *GetParam();
  for (const NarrowFormat& narrow : kNarrowFormats) {
    const FloatFormat& format = *narrow.format;
    const InputSet inputs = GenerateTanhBwdSuite(
        format, "adversarial", 5, TanhBwdAdversarialCatalogueSize(format) + 30000);
    const std::vector<uint16_t> grad = Patterns16(format, inputs.columns[0]);
    const std::vector<uint16_t> t = Patterns16(format, inputs.columns[1]);
    for (const auto& variant : kTanhBwdNarrowVariants) {
      const TanhBwdNarrowKernel kernel =
          FindTanhBwdNarrowKernel(format.name, variant.name, target.bits);
      ASSERT_NE(kernel, nullptr) << format.name << " " << variant.name;
      const std::string failures = CheckIsolation(format, kernel, target, grad, t);
      EXPECT_TRUE(failures.empty())
          << format.name << " " << variant.name << " on " << target.name << ": " << failures;
    }
  }
}

ULPGATE_INSTANTIATE_PER_TARGET(LaneIsolation);

}  // namespace
}  // namespace ulpgate
