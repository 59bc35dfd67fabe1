// The vectorized exact tier of `sweep` (suites/sweep.h): tanh_bwd's exact
// value, every model's output and every output's ULP error over a tile of
// inputs, decided in double arithmetic wherever error-free transformations
// prove the decision, and flagged for MPFR (oracles/fast_ulp.h) where they
// cannot. Compiled for every Highway target (suites/sweep_tier-inl.h) and run
// on the best one this CPU runs; plain C++ here, no Highway types.
//
// Every result is bit for bit what the MPFR path gives: the exact value is
// MPFR's TanhBwdExact, the models TanhBwdModels / TanhBwdNarrowModels, the
// error MeasureUlpError. suites/tests/sweep_tier_test.cc holds them equal on
// every suite of every format.
#ifndef ULPGATE_SUITES_SWEEP_TIER_H_
#define ULPGATE_SUITES_SWEEP_TIER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "oracles/format.h"

namespace ulpgate {

// Inputs per tile: small enough that a tile's arrays stay in the first-level
// caches, large enough that a kernel call and a dispatch are negligible.
inline constexpr size_t kSweepTile = 1024;

// What the tier knows of the exact value x at one input.
enum SweepExactKind : uint64_t {
  kSweepExactFinite = 0,     // x = x0 + x1 + x2, every field below holds
  kSweepExactNaN = 1,        // x is NaN (inf * 0, NaN operands): any NaN is right
  kSweepExactInfinite = 2,   // x = rounded = +-inf
  kSweepExactUndecided = 3,  // doubles did not prove x0 = RN(x): MPFR decides
};

// The exact value of each input of a tile, as the error of any output needs it.
struct SweepExactTile {
  // x = x0 + x1 + x2 exactly, with x0 = RN53(x) and x1 = RN53(x1 + x2).
  alignas(64) double x0[kSweepTile];
  alignas(64) double x1[kSweepTile];
  alignas(64) double x2[kSweepTile];
  // 2^-q, q the ULP exponent of x in the format (UlpExponent).
  alignas(64) double scale[kSweepTile];
  // x rounded to the format (to nearest even, +-inf past the largest finite
  // value; the sign of an exact zero as MPFR gives it); x itself when NaN or
  // infinite.
  alignas(64) double rounded[kSweepTile];
  alignas(64) uint64_t kind[kSweepTile];  // SweepExactKind
};

// Per output: what the statistics take from it.
enum SweepErrorFlag : uint64_t {
  kSweepSpecialMismatch = 1,  // no ulp; counted apart
  kSweepUndecidedError = 2,   // MPFR decides (the sums below leave it out)
  kSweepAboveBound = 4,       // ulp is a histogram bound and the exact error is above it
  kSweepLargeError = 8,       // ulp >= 2^32: left out of the sums below
};

struct SweepErrorTile {
  alignas(64) double ulp[kSweepTile];       // UlpError::ulp
  alignas(64) uint64_t flags[kSweepTile];   // SweepErrorFlag bits
};

// The tile's outputs without kSweepSpecialMismatch or kSweepUndecidedError.
struct SweepErrorSums {
  uint64_t correctly_rounded = 0;
  uint64_t signed_zero_mismatch = 0;
  // Over those without kSweepLargeError: the sum of floor(ulp * 2^64) is
  // whole * 2^64 + high * 2^32 + low (whole: the integer parts; high, low:
  // the two 32-bit halves of each fraction's 64 bits).
  uint64_t whole = 0, high = 0, low = 0;
  double max_ulp = -1;  // the largest ulp and its first position; -1 when none
  int64_t max_at = -1;
};

// The exact values of grad[i] * (1 - t[i]^2) for operands that are values of
// `format` (f32, bf16 or f16).
void SweepExactValues(const FloatFormat& format, const float* grad, const float* t, size_t n,
                      SweepExactTile* out);

// The errors of outputs y[i] (values of the format, NaN canonical or not)
// against tile.x[i].
void SweepMeasure(const FloatFormat& format, const SweepExactTile& tile, const float* y, size_t n,
                  SweepErrorTile* out, SweepErrorSums* sums);

// Every built-in model's output (TanhBwdModelNames(format) order) into
// models[m][0, n), NaNs canonical. bf16/f16: grad_bits and t_bits are the
// operands' patterns (a NaN its sign's quiet NaN), which Highway's software
// f16 conversion reads.
void SweepModelOutputs(const FloatFormat& format, const float* grad, const float* t,
                       const uint16_t* grad_bits, const uint16_t* t_bits, size_t n,
                       float* const* models);

// NaNs made the canonical quiet NaN 0x7fc00000, as the engine does.
void SweepCanonicalNans(float* y, size_t n);
// The values of 16-bit patterns of `format`, NaNs canonical.
void SweepDecodeNarrow(const FloatFormat& format, const uint16_t* bits, size_t n, float* out);
// Positions where a and b differ as bit patterns: the count, and the first
// into *first (left alone when none).
uint64_t SweepMismatches(const float* a, const float* b, size_t n, int64_t* first);

// The Highway target the tier runs on ("AVX3", "SSE4", ...).
std::string_view SweepTierTarget();

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_SWEEP_TIER_H_
