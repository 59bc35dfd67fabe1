// The facts docs/design.md "Models and conformance" pins, each measured on the models (which the
// conformance tests tie to the kernels of every target), with the bound
// derived beside it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "oracles/float_text.h"
#include "oracles/ulp_metric.h"
#include "suites/inputs/counter_rng.h"
#include "suites/engine/tanh_bwd_oracle.h"

namespace ulpgate {
namespace {

constexpr int kMacFused = 0, kMacUnfused = 1, kMulSub = 2, kMulSubFused = 3;

// |grad| log-uniform in [2^-20, 2^20): products and results stay normal.
float Grad(CounterRng& rng) {
  const float m = 1.0f + static_cast<float>(rng.Next32() >> 9) * 0x1p-23f;
  return ((rng.Next() & 1) ? -1.0f : 1.0f) * std::ldexp(m, int(rng.Below(40)) - 20);
}

TEST(TanhBwdFacts, SterbenzMakesMacFusedAndMulSubIdenticalAboveOneOverSqrt2) {
  // For RN(t*t) = r in [1/2, 2], 1 - r is exact (Sterbenz), so mulsub rounds
  // grad * (1 - r) once, exactly what the fused MAC rounds: same bits. That
  // holds for |t| in [1/sqrt(2), sqrt(2)]; below it, 1 - r rounds and the two
  // forms part.
  uint64_t differ_inside = 0, differ_below = 0;
  for (uint64_t i = 0; i < 50000; ++i) {
    CounterRng rng(11, 1, i);
    const float g = Grad(rng);
    const float inside = static_cast<float>(0x1.6a09e6p-1 + rng.Unit() * (0x1.6a09e6p+0 - 0x1.6a09e6p-1));
    const float below = static_cast<float>(0.25 + rng.Unit() * 0.4);
    const auto a = TanhBwdModels(g, inside);
    differ_inside += !SameFloat(a[kMacFused], a[kMulSub]);
    const auto b = TanhBwdModels(g, below);
    differ_below += !SameFloat(b[kMacFused], b[kMulSub]);
  }
  EXPECT_EQ(differ_inside, 0u);
  EXPECT_GT(differ_below, 1000u);
}

struct BandMaxima {
  double ulp[4] = {0, 0, 0, 0};
};

// t = +-(1 - k 2^-24), k = 1 .. 2^14: the band just below |t| = 1.
BandMaxima MeasureNearOne() {
  BandMaxima maxima;
  for (uint64_t k = 1; k <= (1u << 14); ++k) {
    CounterRng rng(12, 1, k);
    const float g = Grad(rng);
    const float t = ((k & 1) ? -1.0f : 1.0f) * (1.0f - static_cast<float>(k) * 0x1p-24f);
    const MpfrNumber exact = TanhBwdExact(g, t);
    const auto models = TanhBwdModels(g, t);
    for (int m = 0; m < 4; ++m) {
      maxima.ulp[m] = std::max(maxima.ulp[m], MeasureUlpError(exact.get(), models[m]).ulp);
    }
  }
  std::printf("near |t| = 1: max ULP mac_fused %.4g, mac_unfused %.4g, mulsub %.4g, mulsub_fused %.4g\n",
              maxima.ulp[0], maxima.ulp[1], maxima.ulp[2], maxima.ulp[3]);
  return maxima;
}

TEST(TanhBwdFacts, NearOneTheRoundingOfTSquaredIsAmplifiedAboutAThousandTimes) {
  // With t = 1 - k u (u = 2^-24), t^2 = 1 - 2ku + k^2 u^2 loses k^2 u^2 (k <
  // 2^11.5) or up to u/2 to rounding, while 1 - t^2 is about 2ku: the error is
  // about min(k/4, 2^22/k) ulps, at most about 2^10 near k = 2^11.5 (up to a
  // factor 2 from where the result sits in its binade). Both forms carry it.
  const BandMaxima m = MeasureNearOne();
  EXPECT_GE(m.ulp[kMacFused], 0x1p9);
  EXPECT_LE(m.ulp[kMacFused], 0x1p11);
  EXPECT_EQ(m.ulp[kMacFused], m.ulp[kMulSub]);  // identical bits there (Sterbenz)
}

TEST(TanhBwdFacts, NearOneTheUnfusedMacIsCatastrophic) {
  // grad - RN(grad * r) with r near 1: RN(grad * r) is off by up to half an ulp
  // of grad, and the difference is about 2k u grad, so the error reaches about
  // 2^22 / k ulps: millions for small k.
  const BandMaxima m = MeasureNearOne();
  EXPECT_GE(m.ulp[kMacUnfused], 1e6);
}

TEST(TanhBwdFacts, NearOneTheFusedMulSubStaysNearOneUlp) {
  // s = RN(1 - t^2) and RN(grad * s): two relative errors of at most u each, so
  // at most (2u + u^2) |x|, and |x| < 2^24 ulp(x): e < 2 + 2^-24.
  const BandMaxima m = MeasureNearOne();
  EXPECT_LE(m.ulp[kMulSubFused], 2.0 + 0x1p-24);
  EXPECT_GE(m.ulp[kMacFused] / m.ulp[kMulSubFused], 256.0);
}

}  // namespace
}  // namespace ulpgate
