// The op sequences' erf (oracles/erf_polynomial.h) against MPFR: within the
// error measured on every binary32 value, odd, and right at its specials and
// where its pieces meet; and the kernels' vector erf (VectorArith::Erf) equal
// to it bit for bit on every target this CPU runs, multiply-adds fused as the
// target's are. foreach_target.h compiles the vector part once per target.
#ifndef ULPGATE_SEQUENCE_ERF_TEST_TYPES_
#define ULPGATE_SEQUENCE_ERF_TEST_TYPES_
#include <cstddef>
#include <cstdint>
namespace ulpgate {
// One target's vector erf.
struct ErfOnTarget {
  int64_t target;
  void (*erf)(const float* in, float* out, size_t n);  // n a multiple of the lanes
};
}  // namespace ulpgate
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "suites/tests/sequence_erf_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/vector_arith-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {
namespace {
namespace hn = hwy::HWY_NAMESPACE;

void ErfLanes(const float* in, float* out, size_t n) {
  const hn::ScalableTag<float> d;
  const VectorArith<decltype(d)> a{d};
  for (size_t i = 0; i < n; i += hn::Lanes(d)) hn::StoreU(a.Erf(hn::LoadU(d, in + i)), d, out + i);
}

}  // namespace

// An address only, no target instruction: called for targets this CPU lacks.
const ::ulpgate::ErfOnTarget* GetErfOnTarget() {
  static constexpr ::ulpgate::ErfOnTarget kErf{HWY_TARGET, &ErfLanes};
  return &kErf;
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mpfr.h>

#include "kernels/registry.h"
#include "oracles/erf_polynomial.h"
#include "oracles/highway_math.h"
#include "oracles/mpfr_number.h"

namespace ulpgate {

HWY_EXPORT(GetErfOnTarget);

namespace {

float FromBits(uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}
uint32_t Bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// |y - erf(x)| in ULPs of binary32 at erf(x) (2^-149 below the normal range).
double UlpError(float x, float y) {
  MpfrNumber e(128, x);
  mpfr_erf(e.get(), e.get(), MPFR_RNDN);
  if (e.IsZero()) return std::ldexp(std::fabs(static_cast<double>(y)), 149);  // erf(+-0)
  const long exponent = mpfr_get_exp(e.get());  // e in [2^(exponent-1), 2^exponent)
  const long ulp_exponent = std::max(exponent - 24, -149L);
  MpfrNumber d(128);
  mpfr_sub_d(d.get(), e.get(), static_cast<double>(y), MPFR_RNDN);  // exact at 128 bits
  mpfr_abs(d.get(), d.get(), MPFR_RNDN);
  mpfr_mul_2si(d.get(), d.get(), -ulp_exponent, MPFR_RNDN);
  return d.ToDouble();
}

// Every 1021st pattern of [0, 4.5] and 512 values each side of where the
// pieces meet and of the clamp, and the smallest values.
std::vector<float> Sample() {
  std::vector<float> xs;
  for (uint32_t b = 0; b < 0x40900000u; b += 1021) xs.push_back(FromBits(b));
  for (float edge : {kErfSmallEnd, kErfNearEnd, 3.92f, kErfClamp}) {
    for (int k = -512; k <= 512; ++k) xs.push_back(FromBits(static_cast<uint32_t>(Bits(edge) + k)));
  }
  for (uint32_t b = 1; b < 4096; ++b) xs.push_back(FromBits(b));
  return xs;
}

TEST(SequenceErf, WithinItsMeasuredErrorAndOdd) {
  const std::vector<float> xs = Sample();
  for (const bool fused : {false, true}) {
    const double bound = fused ? kErfMaxUlpFused : kErfMaxUlp;
    double worst = 0;
    float worst_x = 0;
    for (const float x : xs) {
      const float y = ErfOfSequences(x, fused);
      ASSERT_EQ(Bits(ErfOfSequences(-x, fused)), Bits(-y)) << "erf(-x) != -erf(x) at " << x;
      const double e = UlpError(x, y);
      if (e > worst) {
        worst = e;
        worst_x = x;
      }
    }
    EXPECT_LE(worst, bound) << (fused ? "fused" : "two roundings") << ": at "
                            << std::hexfloat << worst_x;
    // The sample reaches most of the largest error: a looser polynomial shows.
    EXPECT_GE(worst, 0.9) << (fused ? "fused" : "two roundings");
  }
}

TEST(SequenceErf, EveryTargetsVectorErfIsTheModel) {
  // Every 4099th pattern of all 2^32 (NaNs and infinities among them), the
  // sample above with both signs: whole vectors of each target's lanes.
  std::vector<float> xs;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4099) xs.push_back(FromBits(static_cast<uint32_t>(b)));
  for (const float x : Sample()) {
    xs.push_back(x);
    xs.push_back(-x);
  }
  while (xs.size() % 64 != 0) xs.push_back(0.0f);
  std::vector<float> ys(xs.size());
  size_t checked = 0;
  for (const auto& entry : HWY_DISPATCH_TABLE(GetErfOnTarget)) {
    if (entry == nullptr || entry == HWY_DISPATCH_TABLE(GetErfOnTarget)[0]) continue;
    const auto* on = entry();
    const auto info = std::find_if(CompiledTargets().begin(), CompiledTargets().end(),
                                   [&](const TargetInfo& t) { return t.bits == on->target; });
    ASSERT_NE(info, CompiledTargets().end());
    if (!info->supported) continue;
    on->erf(xs.data(), ys.data(), xs.size());
    size_t differ = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const float model = ErfOfSequences(xs[i], info->fused_muladd);
      const bool same = std::isnan(model) ? std::isnan(ys[i]) : Bits(model) == Bits(ys[i]);
      if (!same && differ++ < 3) {
        ADD_FAILURE() << info->name << ": erf(" << std::hexfloat << xs[i] << ") = " << ys[i]
                      << ", the model " << model;
      }
    }
    EXPECT_EQ(differ, 0u) << info->name << " of " << xs.size();
    ++checked;
  }
  EXPECT_GE(checked, 2u);  // SCALAR and at least one SIMD target run everywhere
}

TEST(SequenceErf, Specials) {
  for (const bool fused : {false, true}) {
    EXPECT_EQ(Bits(ErfOfSequences(0.0f, fused)), Bits(0.0f));
    EXPECT_EQ(Bits(ErfOfSequences(-0.0f, fused)), Bits(-0.0f));
    EXPECT_EQ(ErfOfSequences(std::numeric_limits<float>::infinity(), fused), 1.0f);
    EXPECT_EQ(ErfOfSequences(-std::numeric_limits<float>::infinity(), fused), -1.0f);
    EXPECT_TRUE(std::isnan(ErfOfSequences(std::numeric_limits<float>::quiet_NaN(), fused)));
    // erf rounds to 1 from 3.9192 on (erfc below a quarter ULP of 1): so does this.
    EXPECT_EQ(ErfOfSequences(3.92f, fused), 1.0f);
    EXPECT_EQ(ErfOfSequences(1e30f, fused), 1.0f);
    EXPECT_LT(ErfOfSequences(3.9f, fused), 1.0f);
    // The smallest subnormal: 2/sqrt(pi) 2^-149 rounds to 2^-149.
    EXPECT_EQ(ErfOfSequences(FromBits(1), fused), FromBits(1));
  }
}

}  // namespace
}  // namespace ulpgate
#endif  // HWY_ONCE
