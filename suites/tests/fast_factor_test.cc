// The double-word tier against MPFR: exp and expm1 within their stated
// bounds, and each op's fast factor (ElementwiseOracle::FastFactor) within its
// own bound of the factor the exact oracle computes (ExactFactor), its kind,
// sign and magnitude bound right, over random binary32 patterns and the
// places each estimate changes its formula.
#include <cfloat>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <random>
#include <vector>

#include <gtest/gtest.h>
#include <mpfr.h>

#include "kernels/elementwise_ops.h"
#include "oracles/double_word.h"
#include "oracles/mpfr_number.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/sweep/factor_columns.h"

namespace ulpgate {
namespace {

std::string Bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", b);
  return text;
}

// |approx - exact| / |exact| in MPFR (approx a double-word, exact at 400 bits).
double RelativeError(DoubleWord approx, const MpfrNumber& exact) {
  MpfrNumber d(400);
  mpfr_set_d(d.get(), approx.hi, MPFR_RNDN);
  mpfr_add_d(d.get(), d.get(), approx.lo, MPFR_RNDN);  // exact at 400 bits
  mpfr_sub(d.get(), d.get(), exact.get(), MPFR_RNDN);
  mpfr_div(d.get(), d.get(), exact.get(), MPFR_RNDN);
  return std::fabs(mpfr_get_d(d.get(), MPFR_RNDU));
}

DoubleWord RandomDoubleWord(std::mt19937_64& rng, double lo_bound, double hi_bound) {
  std::uniform_real_distribution<double> u(lo_bound, hi_bound);
  const double hi = u(rng);
  // A low word below half an ulp of the high one.
  const double lo = std::ldexp(std::uniform_real_distribution<double>(-0.5, 0.5)(rng),
                               std::ilogb(hi == 0 ? 1.0 : hi) - 52);
  return FastTwoSum(hi, lo);
}

TEST(DoubleWord, ExpWithinItsBound) {
  std::mt19937_64 rng(7);
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    const double range = i % 3 == 0 ? 1.0 : i % 3 == 1 ? 50.0 : kDoubleWordExpLimit;
    const DoubleWord v = RandomDoubleWord(rng, -range, range);
    MpfrNumber exact(400);
    mpfr_set_d(exact.get(), v.hi, MPFR_RNDN);
    mpfr_add_d(exact.get(), exact.get(), v.lo, MPFR_RNDN);
    mpfr_exp(exact.get(), exact.get(), MPFR_RNDN);
    const double e = RelativeError(Exp(v), exact);
    worst = std::max(worst, e);
    ASSERT_LE(e, kDoubleWordExpError) << "exp(" << v.hi << " + " << v.lo << ")";
  }
  // The bound is not vacuous: the errors come within a factor 2^6 of it.
  EXPECT_GT(worst, kDoubleWordExpError / 64);
}

// ExpLanes is Exp, bit for bit, in every lane and for every count of lanes
// (the lanes past the count untouched).
TEST(DoubleWord, ExpLanesIsExpBitForBit) {
  std::mt19937_64 rng(11);
  size_t compared = 0;
  for (int round = 0; round < 40000; ++round) {
    const size_t n = 1 + static_cast<size_t>(round) % kDoubleWordLanes;
    DoubleWord v[kDoubleWordLanes], out[kDoubleWordLanes + 1];
    for (size_t l = 0; l < n; ++l) {
      const double range = (round + l) % 3 == 0 ? 1.0 : (round + l) % 3 == 1 ? 50.0 : kDoubleWordExpLimit;
      v[l] = RandomDoubleWord(rng, -range, range);
    }
    for (DoubleWord& o : out) o = {-7.0, -7.0};
    ExpLanes(v, out, n);
    for (size_t l = 0; l < n; ++l) {
      const DoubleWord e = Exp(v[l]);
      ASSERT_EQ(std::memcmp(&e, &out[l], sizeof e), 0)
          << "exp(" << v[l].hi << " + " << v[l].lo << ") in lane " << l << " of " << n << ": "
          << out[l].hi << " + " << out[l].lo << ", Exp " << e.hi << " + " << e.lo;
      ++compared;
    }
    ASSERT_EQ(out[n].hi, -7.0);
  }
  EXPECT_GT(compared, 100000u);
}

TEST(DoubleWord, Expm1WithinItsBound) {
  std::mt19937_64 rng(8);
  for (int i = 0; i < 200000; ++i) {
    const double range = i % 4 == 0 ? 2.0 : i % 4 == 1 ? 0x1p-5 : i % 4 == 2 ? 0x1p-20 : 0x1p-140;
    const DoubleWord v = RandomDoubleWord(rng, -range, range);
    if (v.hi == 0) continue;
    MpfrNumber exact(400);
    mpfr_set_d(exact.get(), v.hi, MPFR_RNDN);
    mpfr_add_d(exact.get(), exact.get(), v.lo, MPFR_RNDN);
    mpfr_expm1(exact.get(), exact.get(), MPFR_RNDN);
    double bound = 0;
    const DoubleWord m = Expm1(v, &bound);
    ASSERT_LE(RelativeError(m, exact), bound) << "expm1(" << v.hi << " + " << v.lo << ")";
    ASSERT_LE(bound, 0x1p-90);
  }
}

// The binary32 values around each place an estimate changes: its formula's
// thresholds and what its op's landmarks name, and random patterns.
std::vector<float> FactorProbes(const ElementwiseOpInfo& op) {
  std::vector<float> x;
  const auto around = [&](float c, int count) {
    float v = c;
    for (int i = 0; i < count; ++i) v = std::nextafter(v, -INFINITY);
    for (int i = 0; i < 2 * count; ++i) {
      x.push_back(v);
      v = std::nextafter(v, INFINITY);
    }
  };
  for (double l : op.landmarks) around(static_cast<float>(l), 200);
  // Where each op's estimate switches formula (its own, probed for it alone:
  // the oracle's erfc at 320 bits takes milliseconds past x = 10).
  // Gelu (tanh) at 2u = +-1 (x = +-0.6012), 250 (x = 14.70) and -650 (x =
  // -20.5); its value crosses 1 near x = 0.77.
  // SiLU's at z = x = +-1, 250 and -650; its value crosses 1 near x = 1.28.
  // GELU (erf)'s where its table's layout changes (|x| = 1/64 and 2, then
  // each binade to 32), at x = 22 (exactly 1 above), where it falls below
  // 2^-600 (x = -28.92) and at -32 (tiny by a formula below); its value
  // crosses 1 near x = 0.7518.
  const std::map<std::string_view, std::vector<float>> switches = {
      {"gelu_tanh_bwd", {0.6012f, -0.6012f, 14.70f, 14.72f, -20.5f, -20.47f, -18.f, 0.7732f}},
      {"silu_bwd", {1.f, -1.f, 1.278f, 250.f, -650.f}},
      {"gelu_bwd", {0.015625f, -0.015625f, 2.f, -2.f, 8.f, -16.f, 22.f, -28.92f, -32.f, 0.7518f}},
  };
  // GELU (erf)'s oracle is slow where MPFR's erfc is (about 2 ms a call for
  // arguments from 7 to 25 at 320 bits): a tenth of the others' draws.
  const bool slow_oracle = op.name == "gelu_bwd";
  const float step = slow_oracle ? 0.0025f : 0.0005f;
  if (const auto it = switches.find(op.name); it != switches.end()) {
    for (float c : it->second) {
      for (float d = -0.01f; d <= 0.01f; d += step) around(c + d, 40);
    }
  }
  for (float c : {0.0f, 0x1p-149f, 0x1p-126f, 0x1p-60f, 0x1p-30f, 0x1p-20f, FLT_MAX, 1e30f, 2200.f, 1e13f}) {
    around(c, 100);
    around(-c, 100);
  }
  x.push_back(INFINITY);
  x.push_back(-INFINITY);
  x.push_back(NAN);
  std::mt19937 rng(11);
  for (int i = 0; i < 60000; ++i) {
    const uint32_t bits = rng();
    float v;
    std::memcpy(&v, &bits, sizeof v);
    x.push_back(v);
  }
  std::uniform_real_distribution<float> moderate(-25.0f, 25.0f);
  for (int i = 0; i < (slow_oracle ? 6000 : 60000); ++i) x.push_back(moderate(rng));
  return x;
}

TEST(FastFactor, WithinItsBoundOfTheOraclesFactor) {
  size_t ops_with_one = 0;
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    const ElementwiseOracle& oracle = OracleOf(op);
    if (!oracle.HasFastFactor()) {
      const float operands[2] = {1.0f, 0.5f};
      EXPECT_FALSE(oracle.FastFactor(operands).has_value()) << op.name;
      continue;
    }
    ++ops_with_one;
    size_t finite = 0, loose = 0, undecided = 0, tiny = 0;
    const std::vector<float> probes = FactorProbes(op);
    for (const float x : probes) {
      const float operands[2] = {1.0f, x};
      const std::optional<FactorEstimate> f = oracle.FastFactor(operands);
      if (!f) {
        ++undecided;
        continue;
      }
      const std::optional<MpfrNumber> exact = oracle.ExactFactor(operands);
      ASSERT_TRUE(exact.has_value()) << op.name;
      mpfr_srcptr v = exact->get();
      const std::string where = std::string(op.name) + " at x = " + std::to_string(x) + " (" +
                                Bits(x) + ")";
      switch (f->kind) {
        case FactorEstimate::kNaN:
          ASSERT_TRUE(mpfr_nan_p(v)) << where;
          break;
        case FactorEstimate::kZero:
          ASSERT_TRUE(mpfr_zero_p(v)) << where;
          ASSERT_EQ(mpfr_signbit(v) != 0, f->sign < 0) << where;
          break;
        case FactorEstimate::kTiny: {
          ++tiny;
          ASSERT_TRUE(mpfr_regular_p(v)) << where;
          ASSERT_EQ(mpfr_sgn(v) < 0, f->sign < 0) << where;
          // |v| < 2^log2_bound: v's exponent (|v| in [2^(e-1), 2^e)) at most the bound.
          ASSERT_LE(static_cast<double>(mpfr_get_exp(v)), f->log2_bound) << where;
          break;
        }
        case FactorEstimate::kFinite: {
          ++finite;
          ASSERT_TRUE(mpfr_number_p(v)) << where;
          MpfrNumber d(2000);
          mpfr_set(d.get(), v, MPFR_RNDN);
          mpfr_sub_d(d.get(), d.get(), f->f0, MPFR_RNDN);  // exact at 2000 bits
          mpfr_sub_d(d.get(), d.get(), f->f1, MPFR_RNDN);
          mpfr_sub_d(d.get(), d.get(), f->f2, MPFR_RNDN);
          if (f->exact) {
            ASSERT_TRUE(mpfr_zero_p(d.get())) << where << ": claimed exact";
            ASSERT_EQ(f->error, 0.0) << where;
            break;
          }
          mpfr_abs(d.get(), d.get(), MPFR_RNDN);
          ASSERT_LE(mpfr_cmp_d(d.get(), f->error), 0)
              << where << ": off by " << mpfr_get_d(d.get(), MPFR_RNDU) << ", bound " << f->error;
          // Useful: tight enough to decide a binary32 output's error bits.
          if (f->error > 0x1p-80 * std::fabs(mpfr_get_d(v, MPFR_RNDN))) ++loose;
          break;
        }
      }
    }
    // Loose bounds and MPFR's share stay at the few places that need them
    // (the derivative's zero, whose 400 neighbours are among the probes;
    // the thresholds' neighbourhoods; infinities).
    EXPECT_LT(loose, finite / 100) << op.name;
    EXPECT_LT(undecided, 1000u) << op.name;
    EXPECT_GT(finite, probes.size() / 4) << op.name;  // half of the patterns are finite
    if (!op.exact_definition) {
      EXPECT_GT(tiny, 0u) << op.name;  // a transcendental tail
    }
  }
  EXPECT_GT(ops_with_one, 0u);
}

// Each op's term-magnitude estimate (ElementwiseOracle::FastTermFactor)
// within kFastTermFactorError of TermMagnitude at grad = 1, over the same
// probes, and nullopt only where the magnitude is not finite and nonzero (a
// NaN or infinite x, an op whose terms all vanish), where a double could not
// hold it to that bound (below 2^-700 or above 2^700), or at a few places.
TEST(FastTermFactor, WithinItsBoundOfTheOraclesTermMagnitude) {
  size_t ops_with_one = 0;
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    const ElementwiseOracle& oracle = OracleOf(op);
    if (!oracle.HasFastTermFactor()) {
      const float operands[2] = {1.0f, 0.5f};
      EXPECT_FALSE(oracle.FastTermFactor(operands).has_value()) << op.name;
      continue;
    }
    ++ops_with_one;
    size_t estimated = 0, left = 0;
    double worst = 0;
    const std::vector<float> probes = FactorProbes(op);
    for (const float x : probes) {
      const float operands[2] = {1.0f, x};
      const std::optional<double> t = oracle.FastTermFactor(operands);
      const MpfrNumber exact = oracle.TermMagnitude(operands);
      const std::string where = std::string(op.name) + " at x = " + std::to_string(x) + " (" +
                                Bits(x) + ")";
      if (!t) {
        if (mpfr_regular_p(exact.get()) && std::abs(mpfr_get_exp(exact.get())) <= 700) ++left;
        continue;
      }
      ++estimated;
      ASSERT_TRUE(mpfr_regular_p(exact.get())) << where << ": estimated " << *t;
      const double e = RelativeError({*t, 0.0}, exact);
      worst = std::max(worst, e);
      ASSERT_LE(e, kFastTermFactorError) << where << ": estimated " << *t;
    }
    EXPECT_LT(left, 1000u) << op.name;
    EXPECT_GT(estimated, probes.size() / 2) << op.name;
    EXPECT_GT(worst, 0.0) << op.name << ": every estimate exact is not believable";
  }
  EXPECT_GT(ops_with_one, 0u);
}

// FastFactors (the op's batch) is FastFactor bit for bit in every column it
// writes, and writes every estimate of the main sort (kFinite, not exact):
// over the probes, a million random patterns and values of the
// domain, in blocks of every length up to 70 so that the batch's full and
// partial groups meet every kind of value.
bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }
TEST(FastFactor, FastFactorsIsFastFactorBitForBit) {
  size_t ops = 0;
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    const ElementwiseOracle& oracle = OracleOf(op);
    if (!oracle.HasFastFactor()) continue;
    std::vector<float> xs = FactorProbes(op);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> domain(-40.0f, 40.0f);
    for (int i = 0; i < 1000000; ++i) {
      if (i % 2 == 0) {
        xs.push_back(domain(rng));
      } else {
        const uint32_t bits = static_cast<uint32_t>(rng());
        float v;
        std::memcpy(&v, &bits, sizeof v);
        xs.push_back(v);
      }
    }
    const size_t n = xs.size();
    std::vector<double> f0(n), f1(n), f2(n), error(n), term(n);
    std::vector<uint8_t> plain(n, 7);
    bool batched = true;
    for (size_t i = 0, len = 1; i < n; i += len, len = len % 70 + 1) {
      const FactorEstimateColumns out{f0.data() + i,    f1.data() + i,   f2.data() + i,
                                      error.data() + i, term.data() + i, plain.data() + i};
      batched = oracle.FastFactors(xs.data() + i, std::min(len, n - i), out) && batched;
    }
    if (!batched) continue;
    ++ops;
    size_t written = 0, main_sort = 0;
    for (size_t i = 0; i < n; ++i) {
      const float operands[2] = {1.0f, xs[i]};
      const std::optional<FactorEstimate> one = oracle.FastFactor(operands);
      const std::string where = std::string(op.name) + " at x = " + Bits(xs[i]);
      const bool plain_one = one && one->kind == FactorEstimate::kFinite && !one->exact;
      main_sort += plain_one ? 1 : 0;
      ASSERT_TRUE(plain[i] == 0 || plain[i] == 1) << where;
      if (plain[i] == 0) continue;
      ++written;
      ASSERT_TRUE(plain_one) << where;
      const FactorEstimate& a = *one;
      for (const auto& [u, v] : {std::pair{a.f0, f0[i]}, {a.f1, f1[i]}, {a.f2, f2[i]},
                                 {a.error, error[i]}, {a.term, term[i]}}) {
        ASSERT_TRUE(SameBits(u, v)) << where << ": " << u << " and " << v;
      }
    }
    // Every batch takes every value, so it writes every plain estimate.
    EXPECT_EQ(written, main_sort) << op.name;
  }
  EXPECT_GT(ops, 0u);
}

// The term factor an op's factor estimate carries (FactorEstimate::term,
// what the engine uses in place of FastTermFactor) within the same bound of
// TermMagnitude at grad = 1, over the same probes; and carried on most of
// them by an op that gives it at all.
TEST(FastFactor, TermAlongsideWithinItsBound) {
  size_t ops_with_terms = 0;
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    const ElementwiseOracle& oracle = OracleOf(op);
    if (!oracle.HasFastFactor()) continue;
    const std::vector<float> probes = FactorProbes(op);
    size_t carried = 0;
    double worst = 0;
    for (const float x : probes) {
      const float operands[2] = {1.0f, x};
      const std::optional<FactorEstimate> f = oracle.FastFactor(operands);
      if (!f || std::isnan(f->term)) continue;
      ++carried;
      const MpfrNumber exact = oracle.TermMagnitude(operands);
      const std::string where = std::string(op.name) + " at x = " + std::to_string(x) + " (" +
                                Bits(x) + ")";
      ASSERT_TRUE(mpfr_regular_p(exact.get())) << where << ": carried " << f->term;
      const double e = RelativeError({f->term, 0.0}, exact);
      worst = std::max(worst, e);
      ASSERT_LE(e, kFastTermFactorError) << where << ": carried " << f->term;
    }
    if (carried == 0) continue;
    ++ops_with_terms;
    EXPECT_GT(carried, probes.size() / 2) << op.name;
    EXPECT_GT(worst, 0.0) << op.name << ": every term exact is not believable";
  }
  EXPECT_GT(ops_with_terms, 0u);
}

// PerInputFactors marks the inputs whose factor MPFR computed (the engine
// counts them among the elements MPFR measured): exactly those whose
// estimate declines or whose class the tier cannot hold.
TEST(PerInputFactors, MarksTheFactorsMpfrComputed) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> xs = {0.5f, inf, -2.0f, -inf, std::nanf(""), 1e-30f, 3.0f};
  const std::vector<float> grads(xs.size(), 1.0f);
  size_t ops = 0;
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    const ElementwiseOracle& oracle = OracleOf(op);
    if (!oracle.HasFastFactor()) continue;
    ++ops;
    FactorColumnsBuffer buffer;
    std::vector<uint8_t> marked(xs.size(), 7);
    uint64_t count = 0;
    PerInputFactors(oracle, kBinary32, grads.data(), xs.data(), xs.size(), &buffer, &count,
                    marked.data());
    uint64_t expected_count = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const float operands[2] = {1.0f, xs[i]};
      const std::optional<FactorEstimate> f = oracle.FastFactor(operands);
      FactorColumnsBuffer probe;
      const bool held = f && SetEstimatedFactor(*f, kBinary32, probe.Slots(), 0);
      EXPECT_EQ(marked[i], held ? 0 : 1) << op.name << " at x = " << xs[i];
      expected_count += held ? 0 : 1;
    }
    EXPECT_EQ(count, expected_count) << op.name;
  }
  EXPECT_GT(ops, 0u);
}

}  // namespace
}  // namespace ulpgate
