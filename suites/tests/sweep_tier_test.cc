// The sweep's vectorized exact tier (suites/sweep/sweep_tier.h) and its MPFR
// fallback (MpfrTanhBwdError) against the MPFR path: on every tanh_bwd suite
// in every format, for outputs that are the models', their neighbours a few
// ULPs away, the correctly rounded value, zeros, infinities, NaN and values
// far off, every output's error (ulp bit for bit, fine bin, histogram bin,
// special mismatch) and every tile's counts, exact ULP sum, maximum and its
// position equal what MeasureUlpError(TanhBwdExact(...)) gives; the models
// equal the emulated ones bit for bit. Once per Highway target this CPU runs
// (the tier's dispatch forced to it): lane counts from 1 to 8, with and
// without FMA. ULPGATE_SWEEP_TIER_N raises the inputs per suite (the
// exhaustive label runs 10^7 per format).
#include "suites/tests/tanh_bwd_kernels.h"
#include "suites/sweep/sweep_tier.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hwy/targets.h"
#include "suites/tests/format_steps.h"
#include "oracles/fast_ulp.h"
#include "oracles/float_text.h"
#include "suites/engine/statistics.h"
#include "suites/sweep/sweep.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/tanh_bwd_oracle.h"
#include "suites/inputs/tanh_bwd_suites.h"
#include "suites/tests/test_targets.h"

namespace ulpgate {
namespace {

uint64_t DoubleBitsOf(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

size_t InputsPerSuite() {
  const char* n = std::getenv("ULPGATE_SWEEP_TIER_N");
  return n != nullptr ? std::strtoull(n, nullptr, 10) : 6000;
}

// The tier's dispatch goes to `target` while it lives.
class ForceTarget {
 public:
  explicit ForceTarget(const TargetInfo& target) { hwy::SetSupportedTargetsForTest(target.bits); }
  ~ForceTarget() { hwy::SetSupportedTargetsForTest(0); }
};

// The outputs measured at one input: one per "column" of a tile.
std::vector<float> Outputs(const FloatFormat& format, float grad, float t, double rounded) {
  std::vector<float> ys;
  for (float m : TanhBwdModelOutputs(format, grad, t)) ys.push_back(m);
  ys.push_back(static_cast<float>(rounded));
  if (std::isfinite(rounded)) {
    for (int k : {-3, -1, 1, 2, 40, -1000}) ys.push_back(static_cast<float>(Step(format, rounded, k)));
    ys.push_back(static_cast<float>(-rounded));
  }
  const double largest = DecodeBits(format, EncodeBits(format, INFINITY) - 1);
  const double smallest = DecodeBits(format, 1);
  for (double y : {0.0, -0.0, double{INFINITY}, -double{INFINITY}, double{NAN}, largest, -smallest}) {
    ys.push_back(static_cast<float>(y));
  }
  for (float& y : ys) y = CanonicalNan(y);
  return ys;
}

struct Reference {
  UlpError error;
  bool decided_by_mpfr = false;
};

void ExpectEqualsMpfr(const FloatFormat& format);

class SweepTierTest : public PerTargetTest {};

TEST_P(SweepTierTest, EqualsMpfrOnEverySuite) {
  const ForceTarget force(*GetParam());
  ASSERT_EQ(SweepTierTarget(), GetParam()->name);
  for (const FloatFormat* f : {&kBinary32, &kBFloat16, &kBinary16}) {
    SCOPED_TRACE(f->name);
    ExpectEqualsMpfr(*f);
    if (HasFatalFailure()) return;
  }
}

void ExpectEqualsMpfr(const FloatFormat& format) {
  const int bound_count = HistogramBoundCount(format);
  const size_t model_count = TanhBwdModelNames(format).size();
  uint64_t measured = 0, by_mpfr = 0, undecided_inputs = 0, inputs_total = 0;
  MpfrTanhBwdError lean;
  auto exact = std::make_unique<SweepExactTile>();
  auto errors = std::make_unique<SweepErrorTile>();
  auto fine_counts = std::make_unique<SweepFineCounts>();
  auto bare_errors = std::make_unique<SweepErrorTile>();
  std::vector<float> grad(kSweepTile), t(kSweepTile), y(kSweepTile);
  std::vector<uint16_t> grad_bits(kSweepTile), t_bits(kSweepTile);
  std::vector<uint64_t> keys(kSweepTile);
  std::vector<std::vector<float>> models(model_count, std::vector<float>(kSweepTile));
  std::vector<float*> model_pointers;
  for (auto& m : models) model_pointers.push_back(m.data());
  for (const SuiteInfo& suite : TanhBwdSuites()) {
    const InputSet inputs = GenerateTanhBwdSuite(format, suite.name, 11, InputsPerSuite());
    for (size_t begin = 0; begin < inputs.size(); begin += kSweepTile) {
      // Tiles of every length: a partial last tile, and a short one per suite.
      const size_t n = std::min<size_t>(kSweepTile, inputs.size() - begin) - (begin == 0 ? 3 : 0);
      for (size_t i = 0; i < n; ++i) {
        grad[i] = inputs.columns[0][begin + i];
        t[i] = inputs.columns[1][begin + i];
        if (format.bits == 16) {
          grad_bits[i] = static_cast<uint16_t>(EncodeBits(format, grad[i]));
          t_bits[i] = static_cast<uint16_t>(EncodeBits(format, t[i]));
        }
        keys[i] = (0x9e3779b97f4a7c15ULL * (i + 1) | 1) ^ 0x0123456789abcdefULL;
      }
      SweepExactValues(format, grad.data(), t.data(), n, exact.get());
      SweepModelOutputs(format, grad.data(), t.data(), grad_bits.data(), t_bits.data(), n,
                        model_pointers.data());
      std::vector<MpfrNumber> x;
      std::vector<std::vector<float>> columns;
      for (size_t i = 0; i < n; ++i) {
        const std::string where = std::string(format.name) + " " + suite.name +
                                  " grad=" + HexFloat(grad[i]) + " t=" + HexFloat(t[i]);
        x.push_back(TanhBwdExact(grad[i], t[i]));
        ++inputs_total;
        if (exact->kind[i] == kSweepExactUndecided) ++undecided_inputs;
        const std::vector<float> emulated = TanhBwdModelOutputs(format, grad[i], t[i]);
        for (size_t m = 0; m < model_count; ++m) {
          ASSERT_TRUE(SameFloat(models[m][i], emulated[m]))
              << where << " model " << TanhBwdModelNames(format)[m] << ": " << HexFloat(models[m][i])
              << " vs " << HexFloat(emulated[m]);
        }
        const std::vector<float> ys = Outputs(format, grad[i], t[i], RoundToFormat(format, x.back().get()));
        // Output k in column (k + i) mod the count: each vector mixes outputs
        // of every kind, so that the tier's long road measures every kind too.
        if (columns.size() < ys.size()) columns.resize(ys.size(), std::vector<float>(kSweepTile));
        for (size_t c = 0; c < columns.size(); ++c) columns[c][i] = ys[(c + i) % ys.size()];
        // And a column of the correctly rounded value alone (the short road).
        if (columns.size() == ys.size()) columns.emplace_back(kSweepTile);
        columns.back()[i] = ys[model_count];
      }
      for (const std::vector<float>& column : columns) {
        SweepErrorSums sums;
        std::vector<uint64_t> low(kSweepTile);
        for (size_t i = 0; i < n; ++i) low[i] = keys[i] ^ 0x0123456789abcdefULL;
        SweepMeasure(format, *exact, column.data(), 0x0123456789abcdefULL, low.data(), n,
                     errors.get(), &sums, fine_counts.get(), true);
        // Without the totals (the engine's measure): each output's error,
        // fine bin and flags and the two counts as with them.
        SweepErrorSums bare;
        SweepMeasure(format, *exact, column.data(), 0, nullptr, n, bare_errors.get(), &bare, nullptr,
                     true, /*totals=*/false);
        ASSERT_EQ(bare.correctly_rounded, sums.correctly_rounded);
        ASSERT_EQ(bare.signed_zero_mismatch, sums.signed_zero_mismatch);
        for (size_t i = 0; i < n; ++i) {
          ASSERT_EQ(bare_errors->fine[i], errors->fine[i]) << i;
          ASSERT_EQ(DoubleBitsOf(bare_errors->ulp[i]), DoubleBitsOf(errors->ulp[i])) << i;
          if (errors->fine[i] == kSweepSeeFlags) {
            ASSERT_EQ(bare_errors->flags[i], errors->flags[i]) << i;
          }
        }
        // The counts: each fine bin's, and the outputs counted apart.
        std::vector<uint32_t> tier_fine(kSweepFineBins, 0), expected_fine(kSweepFineBins, 0);
        for (size_t k = 0; k < 4 * SweepFineCounts::kStride; ++k) {
          const size_t bin = k % SweepFineCounts::kStride;
          if (bin != SweepFineCounts::kNowhere) {
            ASSERT_TRUE(fine_counts->counts[k] == 0 || (bin >= sums.fine_low && bin <= sums.fine_high));
            tier_fine[bin] += fine_counts->counts[k];
          }
          fine_counts->counts[k] = 0;
        }
        std::vector<bool> apart(n, false);
        for (size_t j = 0; j < sums.slow_count; ++j) apart[errors->slow[j]] = true;
        uint64_t correct = 0, signed_zero = 0, digest = 0;
        UlpSum sum, tier_sum;
        tier_sum.AddUnits(static_cast<uint64_t>(sums.high), 1);
        tier_sum.AddUnits(static_cast<uint64_t>(sums.high >> 64), 3);
        tier_sum.AddUnits(sums.low, 0);
        double max_ulp = -1;
        int64_t max_at = -1;
        for (size_t i = 0; i < n; ++i) {
          const double yi = column[i];
          const UlpError ref = MeasureUlpError(x[i].get(), yi, format);
          lean.Set(grad[i], t[i]);
          const UlpError mpfr = lean.Measure(yi, format);
          const std::string where = std::string(format.name) + " " + suite.name + " grad=" +
                                    HexFloat(grad[i]) + " t=" + HexFloat(t[i]) + " y=" + HexFloat(column[i]);
          // The MPFR fallback, on every output.
          ASSERT_EQ(DoubleBitsOf(mpfr.ulp), DoubleBitsOf(ref.ulp)) << where;
          ASSERT_EQ(mpfr.bin, ref.bin) << where;
          ASSERT_EQ(mpfr.special_mismatch, ref.special_mismatch) << where;
          ASSERT_EQ(mpfr.signed_zero_mismatch, ref.signed_zero_mismatch) << where;
          ASSERT_EQ(mpfr.correctly_rounded, ref.correctly_rounded) << where;
          ++measured;
          digest += SweepDigestTerm(keys[i], FloatBits(column[i]));
          const uint64_t fine = errors->fine[i];
          const uint64_t flags = fine == kSweepSeeFlags ? errors->flags[i] : 0;
          ASSERT_EQ(apart[i], fine == kSweepSeeFlags) << where;
          if (fine != kSweepSeeFlags) ++expected_fine[fine];
          if (flags & kSweepUndecidedError) {
            ++by_mpfr;
            continue;
          }
          ASSERT_EQ((flags & kSweepSpecialMismatch) != 0, ref.special_mismatch) << where;
          if (ref.special_mismatch) continue;
          correct += ref.correctly_rounded;
          signed_zero += ref.signed_zero_mismatch;
          const double tier_ulp = std::fabs(errors->ulp[i]);
          ASSERT_EQ(DoubleBitsOf(tier_ulp), DoubleBitsOf(ref.ulp)) << where;
          if (max_at < 0 || ref.ulp > max_ulp) {
            max_ulp = ref.ulp;
            max_at = static_cast<int64_t>(i);
          }
          ASSERT_EQ((flags & kSweepLargeError) != 0, ref.ulp >= 0x1p16) << where;
          if (ref.ulp < 0x1p16) sum.AddUlp(ref.ulp);
          if (fine != kSweepSeeFlags) {
            ASSERT_EQ(static_cast<int>(fine), ErrorStatistics::FineBinOf(ref.ulp)) << where;
            ASSERT_EQ(SweepBinOfFine(fine, bound_count), ref.bin) << where;
          } else {
            const int bin = SweepBinOfUlp(tier_ulp, bound_count) + ((flags & kSweepAboveBound) ? 1 : 0);
            ASSERT_EQ(bin, ref.bin) << where;
          }
        }
        ASSERT_EQ(sums.correctly_rounded, correct) << suite.name;
        ASSERT_EQ(sums.signed_zero_mismatch, signed_zero) << suite.name;
        ASSERT_EQ(tier_sum, sum) << suite.name << ": " << tier_sum.ToDecimal() << " vs " << sum.ToDecimal();
        ASSERT_EQ(sums.max_at, max_at) << suite.name;
        ASSERT_EQ(DoubleBitsOf(sums.max_at < 0 ? -1.0 : sums.max_ulp), DoubleBitsOf(max_at < 0 ? -1.0 : max_ulp));
        ASSERT_EQ(sums.digest, digest) << suite.name;
        ASSERT_EQ(tier_fine, expected_fine) << suite.name;
      }
    }
  }
  std::printf("%s: %llu measurements, %llu left to MPFR; %llu of %llu exact values undecided\n",
              format.name, static_cast<unsigned long long>(measured),
              static_cast<unsigned long long>(by_mpfr), static_cast<unsigned long long>(undecided_inputs),
              static_cast<unsigned long long>(inputs_total));
  // The tier decides almost everything: MPFR stays a fallback.
  EXPECT_LT(by_mpfr, measured / 100);
}

ULPGATE_INSTANTIATE_PER_TARGET(SweepTierTest);

}  // namespace
}  // namespace ulpgate
