// The vectorized exact tier of `sweep` (suites/sweep/sweep.h): the exact value
// of each input of a tile, every model's output and every output's ULP error,
// decided in double arithmetic wherever error-free transformations prove the
// decision, and flagged for MPFR (oracles/fast_ulp.h) where they cannot. The
// exact values and models are those of the op whose spec declares this tier
// (OwnTiers::vector_sweep, kernels/ops/elementwise_spec.h: tanh_bwd), or a
// staged op's exact values from its tabulated factors. Compiled for every
// Highway target (suites/sweep/sweep_tier-inl.h) and run on the best one this
// CPU runs; plain C++ here, no Highway types.
//
// Every result is bit for bit what the MPFR path gives: the exact value is
// MPFR's TanhBwdExact (a staged op's Exact: within a bound that no decision
// crosses, else MPFR decides), the models TanhBwdModels / TanhBwdNarrowModels,
// the error MeasureUlpError. suites/tests/sweep_tier_test.cc holds them equal on
// every suite of every format.
#ifndef ULPGATE_SUITES_SWEEP_TIER_H_
#define ULPGATE_SUITES_SWEEP_TIER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <algorithm>

#include "oracles/format.h"
#include "oracles/ulp_metric.h"

namespace ulpgate {

// Inputs per tile: small enough that a tile's arrays stay in the second-level
// cache, large enough that a kernel call, a dispatch and the per-tile
// bookkeeping are negligible.
inline constexpr size_t kSweepTile = 4096;

static_assert(kSweepTile <= 4096, "the tier's sums hold 2^12 errors below 2^16 per lane");

// The functions below work in whole vectors: they read every array given them
// (and write every output array) up to n rounded up to a multiple of
// kSweepVectorSlack, the most 32-bit lanes of any target. Arrays of kSweepTile
// entries (a multiple of it) meet that for any n up to a tile; a shorter array
// needs that many entries of slack past its end (what they hold does not
// change a result: lanes past n are masked out of every count and the digest).
inline constexpr size_t kSweepVectorSlack = 16;
static_assert(kSweepTile % kSweepVectorSlack == 0, "a tile is whole vectors on every target");

// What the tier knows of the exact value x at one input.
enum SweepExactKind : uint64_t {
  kSweepExactPair = 0,       // x = x0 + x1 (x2 = 0)
  kSweepExactNaN = 1,        // x is NaN (inf * 0, NaN operands): any NaN is right
  kSweepExactInfinite = 2,   // x = x0 = +-inf
  kSweepExactUndecided = 3,  // doubles did not prove x0 = RN(x): MPFR decides
  kSweepExactTriple = 4,     // x = x0 + x1 + x2 with x2 != 0
  // A staged op (SweepScaledExactValues): x0 + x1 + x2 within eta of the
  // value the MPFR path takes, x0 = RN53(x0 + x1 + x2), and no rounding of
  // x to the format, no binade of it, within eta of a boundary.
  kSweepExactApprox = 5,
  // A staged op's x so far below the format's smallest subnormal that every
  // error against it rounds as against x0 = +-0 (x's sign), but at a
  // histogram bound, where its side is x's sign: MPFR decides there.
  kSweepExactTiny = 6,
};

// The exact value of each input of a tile, as the error of any output needs it.
struct SweepExactTile {
  // x = x0 + x1 + x2 exactly, with x0 = RN53(x) and x1 = RN53(x1 + x2); an
  // exact zero as x0 with MPFR's sign; a NaN or infinite x as x0.
  alignas(64) double x0[kSweepTile];
  alignas(64) double x1[kSweepTile];
  alignas(64) double x2[kSweepTile];
  // 2^-q, q the ULP exponent of x in the format (UlpExponent).
  alignas(64) double scale[kSweepTile];
  alignas(64) uint64_t kind[kSweepTile];  // SweepExactKind
  // kSweepExactApprox: the bound on |x - (x0 + x1 + x2)|; 0 otherwise.
  alignas(64) double eta[kSweepTile];
};

// A staged op's factor f (ElementwiseOracle::ExactFactor) at each value of
// its second operand, as the tier reads it: x = grad * f.
enum SweepFactorClass : uint64_t {
  kSweepFactorNormal = 0,  // f = f0 + f1 + f2 within 2^-159 |f|, |f| in [2^-600, 2^600]
  kSweepFactorZero = 1,    // f = +-0 (sign)
  kSweepFactorNaN = 2,
  kSweepFactorInfinite = 3,  // f = sign * inf
  kSweepFactorTiny = 4,    // 0 < |f| < 2^-600: x is +-0 to every decision where |grad| < tiny_limit
  kSweepFactorHuge = 5,    // |f| > 2^600: MPFR decides
};
// Arrays the tier reads whole vectors of (kSweepVectorSlack entries past n).
struct SweepFactorColumns {
  const double* f0;
  const double* f1;
  const double* f2;
  const double* sign;        // +-1: f's sign
  const double* tiny_limit;  // kSweepFactorTiny: |grad| below this puts x below 2^-1076 ulp
  const uint64_t* kind;      // SweepFactorClass
  // kSweepFactorNormal: an upper bound on |f - (f0 + f1 + f2)|, and the
  // relative distance the MPFR path's value may have from grad * f (0 where
  // its products are exact, else 2^-315).
  const double* f_error;
  const double* path_error;
};

// Per output: what the statistics take from it.
enum SweepErrorFlag : uint64_t {
  kSweepSpecialMismatch = 1,  // no ulp; counted apart
  kSweepUndecidedError = 2,   // MPFR decides (the sums below leave it out)
  kSweepAboveBound = 4,       // ulp is a histogram bound and the exact error is above it
  kSweepLargeError = 8,       // ulp >= 2^16: left out of the sums below
  kSweepFineBinExact = 16,    // ulp is next to a fine bin's edge: FineBinOf places it
  // Only with kSweepLargeError (no other flag): flags >> 32 is ulp's fine
  // bin, FineBinOf's.
  kSweepFineInFlags = 32,
};

// fine[i] == kSweepSeeFlags: ulp[i] and flags[i] say what the statistics
// take from the output, and i is among slow[]. Otherwise the output counts in
// SweepFineCounts under its fine bin fine[i] (ErrorStatistics's), and its
// histogram bin is SweepBinOfFine(fine[i]); fine[i] and ulp[i] are written
// only when asked (every_ulp), flags[i] not at all.
inline constexpr uint64_t kSweepSeeFlags = ~uint64_t{0};

struct SweepErrorTile {
  alignas(64) uint64_t fine[kSweepTile];
  alignas(64) double ulp[kSweepTile];      // UlpError::ulp
  alignas(64) uint64_t flags[kSweepTile];  // SweepErrorFlag bits
  alignas(64) uint32_t slow[kSweepTile];   // the outputs with fine[i] == kSweepSeeFlags
};

// The fine histogram of a tile's outputs (ErrorStatistics's 4097 bins): four
// copies of 16-bit counts, output i of a vector counting in copy i mod 4, so
// that a run of equal bins is not one chain of loads waiting on stores, and
// a last bin per copy where lanes that count elsewhere go. All zero between
// tiles: the caller reads and clears the bins touched.
inline constexpr size_t kSweepFineBins = 4097;
struct SweepFineCounts {
  static constexpr size_t kStride = kSweepFineBins + 1;
  static constexpr size_t kNowhere = kSweepFineBins;
  alignas(64) uint16_t counts[4 * kStride] = {};
};

// The histogram bin MeasureUlpError gives an error e (no special mismatch)
// before its exact tie-break: 0 for e = 0, else the least i >= 1 with
// e <= HistogramBound(i), or the bound count.
inline int SweepBinOfUlp(double e, int bound_count) {
  return e == 0 ? 0 : LeastBoundAtOrAbove(e, bound_count);
}

// The histogram bin of the errors of a fine bin (ErrorStatistics: bin f >= 1
// holds (2^((f-1)/16 - 64), 2^(f/16 - 64)], and a histogram bound 2^j is the
// top of fine bin 16 (64 + j)).
inline int SweepBinOfFine(uint64_t fine, int bound_count) {
  if (fine == 0) return 0;
  const long j = static_cast<long>((fine + 15) / 16) - 64;  // e in (2^(j-1), 2^j]
  if (j < 0) return 1;
  return static_cast<int>(std::min<long>(j + 2, bound_count));
}

// The tile's outputs without kSweepSpecialMismatch or kSweepUndecidedError.
struct SweepErrorSums {
  uint64_t correctly_rounded = 0;
  uint64_t signed_zero_mismatch = 0;
  // Outputs +-0 against a kSweepExactTiny x: an error too small for a double
  // (e = 0) that is not exactly 0, which the metric puts in histogram bin 1
  // and fine bin 0; counted here in fine bin 0.
  uint64_t underflowed_errors = 0;
  // Over those without kSweepLargeError: the sum of floor(ulp * 2^64) is
  // high * 2^32 + low.
  unsigned __int128 high = 0;
  uint64_t low = 0;
  double max_ulp = -1;  // the largest ulp and its first position; -1 when none
  int64_t max_at = -1;
  // Over every output of the tile: the sum of (key_high ^ key_low[i]) * (the
  // output's bits), mod 2^64.
  uint64_t digest = 0;
  // The fine bins counted lie in [fine_low, fine_high] (fine_low > fine_high
  // when none); slow[0, slow_count) are the outputs counted apart.
  uint64_t fine_low = 0, fine_high = 0;
  size_t slow_count = 0;
};

// The exact values of grad[i] * (1 - t[i]^2) for operands that are values of
// `format` (f32, bf16 or f16).
void SweepExactValues(const FloatFormat& format, const float* grad, const float* t, size_t n,
                      SweepExactTile* out);

// The exact values of grad[i] * f[i] for a staged op: x0 + x1 + x2 from
// error-free products and sums of grad and f0 + f1 + f2, within eta of the
// MPFR path's value (f's own error, the roundings of the product's lowest
// parts, Exact's 320-bit roundings); exact (eta = 0) where all of them are
// 0. Lanes where eta could change a decision are left to MPFR.
void SweepScaledExactValues(const FloatFormat& format, const float* grad,
                            const SweepFactorColumns& f, size_t n, SweepExactTile* out);

// The errors of outputs y[i] (values of the format, NaN canonical) against
// tile.x[i], and the digest of y under keys key_high ^ key_low[i]; every_ulp:
// write fine[i] and ulp[i] for every output (for tests). totals false: only
// what each output takes (fine[i] and ulp[i] for every output, as with
// every_ulp, flags[i] where fine[i] says) and the counts of correctly rounded
// outputs and signed-zero mismatches, for a caller that keeps its own
// statistics from them: no
// digest, sums, maximum or fine counts (the sums' as for an empty tile;
// key_low and `fine` not read, and may be null).
void SweepMeasure(const FloatFormat& format, const SweepExactTile& tile, const float* y,
                  uint64_t key_high, const uint64_t* key_low, size_t n, SweepErrorTile* out,
                  SweepErrorSums* sums, SweepFineCounts* fine, bool every_ulp = false,
                  bool totals = true);

// Every built-in model's output (TanhBwdModelNames(format) order) into
// models[m][0, n), NaNs canonical; with `wanted`, only the models m with
// wanted[m] != 0 (the others' arrays are left as they are). bf16/f16: grad_bits and t_bits are the
// operands' patterns (a NaN its sign's quiet NaN), which Highway's software
// f16 conversion reads.
void SweepModelOutputs(const FloatFormat& format, const float* grad, const float* t,
                       const uint16_t* grad_bits, const uint16_t* t_bits, size_t n,
                       float* const* models, const uint8_t* wanted = nullptr);

// NaNs made the canonical quiet NaN 0x7fc00000, as the engine does.
void SweepCanonicalNans(float* y, size_t n);
// The values of 16-bit patterns of `format`, NaNs canonical.
void SweepDecodeNarrow(const FloatFormat& format, const uint16_t* bits, size_t n, float* out);
// Positions where a and b differ as bit patterns: the count, and the first
// into *first (left alone when none).
uint64_t SweepMismatches(const float* a, const float* b, size_t n, int64_t* first);

// Scale reuse (the staged sweep over 16-bit pairs, sweep_run.cc):
// out[i] = v[i] * p (p a power of two) where |v[i]| and |v[i] * p| both lie
// in [low, high); v[i] itself where it is NaN, and with `specials` where it
// is zero or infinite; false (out partly written) where some v[i] is none of
// these.
bool SweepScaledFloats(const float* v, float p, size_t n, bool specials, float low, float high,
                       float* out);
// Every factor class kind[i] normal with |f0[i]| times both small and large
// (grads' magnitudes) in [low, high), or NaN or infinite.
bool SweepFactorsScale(const uint64_t* kind, const double* f0, size_t n, double small, double large,
                       double low, double high);
// The digest SweepMeasure gives outputs y[0, n) under keys key_high ^ key_low[i].
uint64_t SweepDigest(const float* y, uint64_t key_high, const uint64_t* key_low, size_t n);

// The Highway target the tier runs on ("AVX3", "SSE4", ...).
std::string_view SweepTierTarget();

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_SWEEP_TIER_H_
