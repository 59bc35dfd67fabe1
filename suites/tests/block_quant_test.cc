// The block quantization kernels (kernels/block_quant-inl.h) on every
// target against the model (oracles/block_scale.h): MX under each scale rule
// and element format, along rows and columns (with a column tail narrower
// than a vector), NVFP4, and dequantization, on random and adversarial
// blocks; and a kernel that computes RCEIL where it claims OCP's floor,
// caught and named.
#include "kernels/block_quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "oracles/block_scale.h"
#include "oracles/float_text.h"
#include "oracles/format.h"
#include "suites/tests/test_targets.h"

namespace ulpgate {
namespace {

// A binary32 value as failure messages print it: hex float and bits.
std::string Describe(float x) { return HexFloat(x) + " (" + BitsHex(x) + ")"; }

const BlockSpec* const kMxSpecs[] = {&kMxfp8E4M3, &kMxfp8E5M2, &kMxfp6E2M3, &kMxfp6E3M2,
                                     &kMxfp4};

// Block amaxes where rules or element roundings turn: the largest element
// value M times powers of two and its neighbours, powers of two and theirs,
// the EVEN carry points, binary32's ends, zero, infinity, NaN.
std::vector<float> AdversarialAmaxes(const FloatFormat& element) {
  std::vector<float> out = {0.0f, 0x1p-149f, 0x1p-127f, 0x1.fffffcp-127f, 0x1p-126f, 150.0f,
                            448.0f, 460.0f, 496.0f, 500.0f, 1.0f,
                            std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  const float m = static_cast<float>(LargestFinite(element));
  const float even = 2.0f - std::ldexp(1.0f, -element.precision);
  for (int k : {-140, -130, -127, -126, -20, -1, 0, 1, 7, 60, 120, 124}) {
    for (float base : {m, 1.0f, even}) {
      const float a = std::ldexp(base, k);
      if (!(a > 0) || std::isinf(a)) continue;
      out.push_back(a);
      out.push_back(std::nextafter(a, 0.0f));
      out.push_back(std::nextafter(a, HUGE_VALF));
    }
  }
  return out;
}

// A [rows, cols] tensor whose blocks (along `axis`) each have an amax from
// the adversarial list or a random one, the amax placed at a random element
// and the others random fractions of it, some of them halfway cases.
std::vector<float> MakeTensor(const BlockSpec& spec, const BlockShape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  const std::vector<float> adversarial = AdversarialAmaxes(*spec.element);
  std::vector<float> t(shape.rows * shape.cols);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-135, 126);
  for (size_t b = 0; b < shape.blocks(); ++b) {
    float amax;
    if (b < adversarial.size()) {
      amax = adversarial[b];
    } else {
      amax = std::ldexp(1.0f + std::fabs(unit(rng)), exponent(rng));
    }
    const int at = static_cast<int>(rng() % static_cast<uint32_t>(shape.block_size));
    for (int j = 0; j < shape.block_size; ++j) {
      float v;
      if (j == at) {
        v = amax;
      } else if (std::isnan(amax) || std::isinf(amax)) {
        v = unit(rng);
      } else if (j % 5 == 1) {
        // k/16 of amax: halfway cases of the element grid after scaling.
        v = amax * static_cast<float>(rng() % 16) / 16.0f;
      } else {
        v = amax * unit(rng);
      }
      t[shape.ElementIndex(b, j)] = (rng() & 1) ? -v : v;
    }
  }
  return t;
}

// The first difference between kernel and model outputs, described once
// with everything needed to replay it; empty when they agree.
std::string FirstMismatch(const char* what, const BlockShape& shape, const std::vector<float>& t,
                          const BlockQuantized& want, const std::vector<uint8_t>& scales,
                          const std::vector<uint8_t>& codes) {
  for (size_t b = 0; b < shape.blocks(); ++b) {
    std::ostringstream s;
    if (scales[b] != want.scales[b]) {
      s << what << ": block " << b << " (amax " << Describe(BlockAmax(t.data(), shape, b))
        << "): scale 0x" << std::hex << int{scales[b]} << ", model 0x" << int{want.scales[b]};
      return s.str();
    }
    for (int j = 0; j < shape.block_size; ++j) {
      const size_t i = shape.ElementIndex(b, j);
      if (codes[i] != want.codes[i]) {
        s << what << ": block " << b << " element " << i << " x = " << Describe(t[i])
          << ": code 0x" << std::hex << int{codes[i]} << ", model 0x" << int{want.codes[i]};
        return s.str();
      }
    }
  }
  return "";
}

using MxKernel = std::function<void(ScaleRule, const BlockSpec&, const float*, size_t, size_t,
                                    BlockAxis, uint8_t*, uint8_t*)>;

// Every MX spec, rule and axis through `kernel`, against the model.
std::string MxMismatch(const MxKernel& kernel, const std::string& target) {
  for (const BlockSpec* spec : kMxSpecs) {
    for (ScaleRule rule : kScaleRules) {
      // Rows: 3 x 96 (9 blocks); columns: 64 x 19 (a tail of 3 after 16,
      // of 3 after two 8s, of 3 after four 4s), 38 blocks.
      for (const BlockShape shape : {BlockShape{3, 96, BlockAxis::kRows, 32},
                                     BlockShape{64, 19, BlockAxis::kColumns, 32},
                                     BlockShape{2, 32 * 40, BlockAxis::kRows, 32}}) {
        const std::vector<float> t = MakeTensor(*spec, shape, 7u + shape.cols);
        const BlockQuantized want = MxQuantize(*spec, rule, CastPolicy{}, t.data(), shape);
        std::vector<uint8_t> scales(shape.blocks()), codes(t.size());
        kernel(rule, *spec, t.data(), shape.rows, shape.cols, shape.axis, scales.data(),
               codes.data());
        const std::string what = std::string(spec->name) + " " + ScaleRuleName(rule) + " " +
                                 (shape.axis == BlockAxis::kRows ? "rows" : "columns") + " on " +
                                 target;
        const std::string m = FirstMismatch(what.c_str(), shape, t, want, scales, codes);
        if (!m.empty()) return m;
      }
    }
  }
  return "";
}

class BlockQuantTest : public PerTargetTest {
 protected:
  const BlockQuantKernels& Kernels() {
    const BlockQuantKernels* k = FindBlockQuantKernels(GetParam()->bits);
    EXPECT_NE(k, nullptr);
    return *k;
  }
};

TEST_P(BlockQuantTest, ScaleBytesMatchTheModel) {
  const BlockQuantKernels& k = Kernels();
  std::mt19937 rng(11);
  for (const BlockSpec* spec : kMxSpecs) {
    std::vector<float> amax = AdversarialAmaxes(*spec->element);
    for (int i = 0; i < 2000; ++i) {
      amax.push_back(FloatFromBits(static_cast<uint32_t>(rng()) & 0x7fffffffu));
    }
    for (ScaleRule rule : kScaleRules) {
      std::vector<uint8_t> bytes(amax.size());
      k.mx_scale_bytes(rule, *spec->element, amax.data(), amax.size(), bytes.data());
      for (size_t i = 0; i < amax.size(); ++i) {
        ASSERT_EQ(bytes[i], ScaleByte(rule, *spec->element, amax[i]))
            << spec->name << " " << ScaleRuleName(rule) << " amax " << Describe(amax[i])
            << " on " << GetParam()->name;
      }
    }
  }
}

TEST_P(BlockQuantTest, MxQuantizeMatchesTheModel) {
  const BlockQuantKernels& k = Kernels();
  EXPECT_EQ(MxMismatch(k.mx_quantize, GetParam()->name), "");
}

TEST_P(BlockQuantTest, RceilClaimedAsFloorIsCaughtAndNamed) {
  // The mutant: asked for OCP's floor, it computes RCEIL.
  const BlockQuantKernels& k = Kernels();
  const MxKernel mutant = [&](ScaleRule rule, const BlockSpec& spec, const float* in,
                              size_t rows, size_t cols, BlockAxis axis, uint8_t* scales,
                              uint8_t* codes) {
    k.mx_quantize(rule == ScaleRule::kOcpFloor ? ScaleRule::kRceil : rule, spec, in, rows, cols,
                  axis, scales, codes);
  };
  const std::string m = MxMismatch(mutant, GetParam()->name);
  EXPECT_NE(m.find("ocp_floor"), std::string::npos) << m;
  // Its outputs, named: rceil (and reciprocal, its twin), not ocp_floor.
  const BlockShape shape{3, 96, BlockAxis::kRows, 32};
  const std::vector<float> t = MakeTensor(kMxfp8E4M3, shape, 5);
  std::vector<uint8_t> scales(shape.blocks()), codes(t.size());
  mutant(ScaleRule::kOcpFloor, kMxfp8E4M3, t.data(), shape.rows, shape.cols, shape.axis,
         scales.data(), codes.data());
  const BlockNaming naming = NameScaleRules(kMxfp8E4M3, t.data(), shape, scales, codes);
  ASSERT_FALSE(naming.exact.empty()) << naming.nearest.why;
  for (const BlockModel& model : naming.exact) EXPECT_NE(model.rule, ScaleRule::kOcpFloor);
  EXPECT_EQ(naming.nearest.model.rule, ScaleRule::kRceil);
}

TEST_P(BlockQuantTest, Nvfp4MatchesTheModel) {
  const BlockQuantKernels& k = Kernels();
  for (const BlockShape shape : {BlockShape{3, 96, BlockAxis::kRows, 16},
                                 BlockShape{32, 19, BlockAxis::kColumns, 16},
                                 BlockShape{1, 16 * 50, BlockAxis::kRows, 16}}) {
    for (uint32_t seed : {1u, 2u, 3u}) {
      const std::vector<float> raw = MakeTensor(kNvfp4, shape, seed);
      // The tensor's own scale on finite values (a NaN or infinite tensor
      // amax makes every scale NaN); given scales (a small one pushes blocks
      // to the clamp) with NaN and infinite blocks too.
      std::vector<float> finite = raw;
      for (float& x : finite) {
        if (!std::isfinite(x)) x = 1.0f;
      }
      for (std::optional<float> ts : {std::optional<float>{}, std::optional<float>{0x1p-100f},
                                      std::optional<float>{1.0f}}) {
        const std::vector<float>& t = ts.has_value() ? raw : finite;
        const BlockQuantized want = Nvfp4Quantize(CastPolicy{}, t.data(), shape, ts);
        std::vector<uint8_t> scales(shape.blocks()), codes(t.size());
        k.nvfp4_quantize(t.data(), shape.rows, shape.cols, shape.axis, want.tensor_scale,
                         scales.data(), codes.data());
        const std::string what = "nvfp4 ts " + Describe(want.tensor_scale) + " on " +
                                 GetParam()->name;
        EXPECT_EQ(FirstMismatch(what.c_str(), shape, t, want, scales, codes), "");
      }
    }
  }
}

TEST_P(BlockQuantTest, MxDequantizeMatchesTheModel) {
  const BlockQuantKernels& k = Kernels();
  for (const BlockSpec* spec : kMxSpecs) {
    for (const BlockShape shape : {BlockShape{3, 96, BlockAxis::kRows, 32},
                                   BlockShape{64, 19, BlockAxis::kColumns, 32}}) {
      const std::vector<float> t = MakeTensor(*spec, shape, 3);
      const BlockQuantized q = MxQuantize(*spec, ScaleRule::kCeil, CastPolicy{}, t.data(), shape);
      const std::vector<double> want = BlockDequantize(*spec, q, shape);
      std::vector<float> got(t.size());
      k.mx_dequantize(*spec, q.scales.data(), q.codes.data(), shape.rows, shape.cols, shape.axis,
                      got.data());
      for (size_t i = 0; i < t.size(); ++i) {
        const float w = static_cast<float>(want[i]);  // one rounding of the exact value
        ASSERT_TRUE(FloatBits(got[i]) == FloatBits(w) || (std::isnan(w) && std::isnan(got[i])))
            << spec->name << " element " << i << ": " << Describe(got[i]) << ", model "
            << Describe(w) << " on " << GetParam()->name;
      }
    }
  }
}

ULPGATE_INSTANTIATE_PER_TARGET(BlockQuantTest);

}  // namespace
}  // namespace ulpgate
