#include "suites/inputs/tanh_bwd_suites.h"

#include <mpfr.h>

#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <string>

#include "oracles/float_text.h"
#include "suites/inputs/counter_rng.h"

namespace ulpgate {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kMaxFinite = 0x1.fffffep127f;
constexpr float kMinNormal = 0x1p-126f;
constexpr float kMinSubnormal = 0x1p-149f;
constexpr float kMaxSubnormal = 0x1.fffffcp-127f;
// RN(1/sqrt(2)) = 0x1.6a09e6p-1 (1/sqrt(2) = 0x1.6a09e667f3bcc9...p-1).
constexpr float kRecipSqrt2 = 0x1.6a09e6p-1f;

// The special values of the adversarial catalogue (docs/design.md "Inputs") plus the landmarks of
// tanh_bwd (1, 1/sqrt(2), 0.5, values past 1).
const std::vector<float>& SpecialValues() {
  static const std::vector<float> values = [] {
    const float magnitudes[] = {0.0f,  kMinSubnormal, kMaxSubnormal, kMinNormal,
                                kMaxFinite, kInf, 1.0f, 0.5f, kRecipSqrt2,
                                0x1.fffffep-1f, 1.5f};
    std::vector<float> v;
    for (float m : magnitudes) {
      v.push_back(m);
      v.push_back(-m);
    }
    v.push_back(std::numeric_limits<float>::quiet_NaN());
    return v;
  }();
  return values;
}

float RandomFiniteBits(CounterRng& rng) {
  for (;;) {
    const float x = FloatFromBits(rng.Next32());
    if (std::isfinite(x)) return x;  // rejects the 2^24 inf/NaN patterns
  }
}

float RandomSign(CounterRng& rng, float x) { return (rng.Next() & 1) ? -x : x; }

// |x| log-uniform over [2^lo, 2^hi), all significand bits random.
float LogUniform(CounterRng& rng, int lo, int hi) {
  const int e = lo + static_cast<int>(rng.Below(static_cast<uint64_t>(hi - lo)));
  const float significand = 1.0f + static_cast<float>(rng.Next32() >> 9) * 0x1p-23f;
  return RandomSign(rng, std::ldexp(significand, e));
}

// Uniform real in [-1, 1] rounded to binary32: the magnitude from a 53-bit
// grid, rounded once from double.
float UniformSymmetric(CounterRng& rng) {
  return RandomSign(rng, static_cast<float>(rng.Unit() * (1.0 + 0x1p-52)));
}

// A normal-like draw with unit variance: the sum of four uniforms (Irwin-Hall),
// exact in double, centred and scaled. Bounded by 2*sqrt(3); training data is
// near-normal, and this stays portable (no libm).
double NormalLike(CounterRng& rng) {
  double s = 0;
  for (int k = 0; k < 4; ++k) s += rng.Unit();
  return (s - 2.0) * 1.7320508075688772;  // sqrt(12 / 4)
}

// RN(tanh(z)) to binary32 via MPFR: correctly rounded, so the same on every
// machine, unlike libm's tanh.
float TanhToFloat(double z) {
  mpfr_t x;
  mpfr_init2(x, 128);
  mpfr_set_d(x, z, MPFR_RNDN);
  mpfr_tanh(x, x, MPFR_RNDN);
  const float t = mpfr_get_flt(x, MPFR_RNDN);  // |t| < 1: no subnormal issue
  mpfr_clear(x);
  return t;
}

// x with x^2 == r (mod 2^bits), for odd r == 1 (mod 8): Hensel lifting; if x
// squares to r modulo 2^i then x or x + 2^(i-1) does modulo 2^(i+1).
uint64_t OddSquareRootMod2k(uint64_t r, int bits) {
  uint64_t x = 1;
  for (int i = 3; i < bits; ++i) {
    const uint64_t mask = (uint64_t{2} << i) - 1;
    if (((x * x - r) & mask) != 0) x += uint64_t{1} << (i - 1);
  }
  return x & ((uint64_t{1} << bits) - 1);
}

}  // namespace

float TieSquareOperand(int64_t offset, uint64_t pick) {
  // t = m * 2^-24 with m in [2^23, 2^24). For m < 2^23.5, m^2 has 47 bits and
  // its 23 low bits are discarded by rounding to 24 bits: a tie is
  // m^2 == 2^22 (mod 2^23). For m >= 2^23.5 the 24 low bits go and a tie
  // would need m^2 == 2^23 (mod 2^24), impossible for a square, so exact ties
  // live only in [0.5, 1/sqrt(2)); near-ties exist on both sides.
  constexpr uint64_t kLow = uint64_t{1} << 23;
  constexpr uint64_t kHigh = uint64_t{1} << 24;
  constexpr uint64_t kSplit = 11863283;  // ceil(2^23.5)
  if (offset == 0) {
    // m = 2^11 * odd gives m^2 = 2^22 * odd^2, and odd^2 == 1 (mod 8).
    const uint64_t odd_lo = (kLow >> 11) | 1, odd_hi = (kSplit >> 11) - 1;
    const uint64_t odd = odd_lo + 2 * (pick % ((odd_hi - odd_lo) / 2));
    return std::ldexp(static_cast<float>(odd << 11), -24);
  }
  const bool wide = (pick & 1) != 0;  // 48-bit square: t in [1/sqrt(2), 1)
  const int bits = wide ? 24 : 23;
  const uint64_t modulus = uint64_t{1} << bits;
  const uint64_t residue = (modulus / 2 + static_cast<uint64_t>(offset)) & (modulus - 1);
  const uint64_t x = OddSquareRootMod2k(residue, bits);
  const uint64_t roots[4] = {x, modulus - x, (x + modulus / 2) & (modulus - 1),
                             (modulus - x + modulus / 2) & (modulus - 1)};
  for (int k = 0; k < 4; ++k) {
    const uint64_t root = roots[(k + (pick >> 1)) % 4];
    for (uint64_t m = root; m < kHigh; m += modulus) {
      if (m >= (wide ? kSplit : kLow) && m < (wide ? kHigh : kSplit)) {
        return std::ldexp(static_cast<float>(m), -24);
      }
    }
  }
  return 0x1.8p-1f;  // unreachable for offsets == 1 (mod 8)
}

const std::vector<SuiteInfo>& TanhBwdSuites() {
  static const std::vector<SuiteInfo> suites = {
      {"random", "grad and t uniform over all finite binary32 bit patterns", 100000},
      {"domain", "t uniform in [-1, 1]; |grad| log-uniform in [2^-24, 2^8), random sign",
       100000},
      {"training", "t = tanh(1.5 z), grad = z' / 128, z and z' normal-like (training data)",
       100000},
      {"adversarial",
       "specials (+-0, subnormals, +-max, +-inf, NaN) crossed; t within ulps of +-1 and "
       "+-1/sqrt(2); t*t ties and near-ties; overflow, underflow; |t| > 1",
       20000},
  };
  return suites;
}

size_t TanhBwdAdversarialCatalogueSize() {
  return SpecialValues().size() * SpecialValues().size();
}

std::array<float, 2> TanhBwdInput(std::string_view suite, uint64_t seed, uint64_t index) {
  CounterRng rng(seed, StreamId(suite), index);
  if (suite == "random") {
    const float grad = RandomFiniteBits(rng);
    return {grad, RandomFiniteBits(rng)};
  }
  if (suite == "domain") {
    const float grad = LogUniform(rng, -24, 8);
    return {grad, UniformSymmetric(rng)};
  }
  if (suite == "training") {
    const float t = TanhToFloat(1.5 * NormalLike(rng));
    return {static_cast<float>(NormalLike(rng) * 0x1p-7), t};
  }
  if (suite == "adversarial") {
    const auto& specials = SpecialValues();
    const uint64_t catalogue = specials.size() * specials.size();
    if (index < catalogue) {
      return {specials[index / specials.size()], specials[index % specials.size()]};
    }
    const uint64_t family = (index - catalogue) % 7;
    const float grad = LogUniform(rng, -20, 20);
    switch (family) {
      case 0: {  // within k ulps of +-1, both sides (ulp 2^-24 below, 2^-23 above)
        const int64_t k = 1 + static_cast<int64_t>(rng.Below(4096));
        const float t = (rng.Next() & 1) ? 1.0f - static_cast<float>(k) * 0x1p-24f
                                         : 1.0f + static_cast<float>(k) * 0x1p-23f;
        return {grad, RandomSign(rng, t)};
      }
      case 1: {  // within 64 ulps of +-1/sqrt(2)
        const int64_t k = static_cast<int64_t>(rng.Below(129)) - 64;
        const float t = FloatFromBits(static_cast<uint32_t>(FloatBits(kRecipSqrt2) + k));
        return {grad, RandomSign(rng, t)};
      }
      case 2: {  // t*t a tie, scaled by a power of 4 (t by 2^j keeps the tie)
        const int j = static_cast<int>(rng.Below(21)) - 10;
        return {grad, RandomSign(rng, std::ldexp(TieSquareOperand(0, rng.Next()), j))};
      }
      case 3: {  // t*t within a few units of the last discarded bit off a tie
        const int64_t offset = 1 + 8 * (static_cast<int64_t>(rng.Below(9)) - 4);
        return {grad, RandomSign(rng, TieSquareOperand(offset, rng.Next()))};
      }
      case 4: {  // grad*t*t overflows: |grad| near max, |t| in [1, 2)
        const float g = RandomSign(rng, kMaxFinite * static_cast<float>(0.5 + 0.5 * rng.Unit()));
        return {g, RandomSign(rng, static_cast<float>(1.0 + rng.Unit()))};
      }
      case 5: {  // grad*t*t or t*t underflows into subnormals or to zero
        if (rng.Next() & 1) {
          return {LogUniform(rng, -149, -120), UniformSymmetric(rng)};
        }
        return {LogUniform(rng, -60, 0), LogUniform(rng, -90, -60)};
      }
      default: {  // |t| > 1, up to 2^20
        return {grad, LogUniform(rng, 0, 20)};
      }
    }
  }
  throw InputError("unknown suite '" + std::string(suite) +
                   "' for tanh_bwd (random, domain, training, adversarial)");
}

InputSet GenerateTanhBwdSuite(std::string_view suite, uint64_t seed, size_t n) {
  return GenerateTanhBwdSuite(kBinary32, suite, seed, n);
}

namespace {


float ValueOf(const FloatFormat& format, uint64_t bits) {
  return static_cast<float>(DecodeBits(format, bits));
}
float Round(const FloatFormat& format, double x) {
  return static_cast<float>(RoundToFormat(format, x));
}
uint64_t BitsOf(const FloatFormat& format, float x) { return EncodeBits(format, x); }
// The value `k` patterns above x (x positive finite, same binade or next).
float Step(const FloatFormat& format, float x, int64_t k) {
  return ValueOf(format, static_cast<uint64_t>(static_cast<int64_t>(BitsOf(format, x)) + k));
}

struct NarrowLandmarks {
  float max_finite, min_normal, min_subnormal, max_subnormal, below_one, recip_sqrt2;
  std::vector<float> specials;
  std::vector<float> ties, near_ties;  // t in [0.5, 1) whose square is a tie / nearly
};

const NarrowLandmarks& Landmarks(const FloatFormat& format) {
  static std::map<std::string, NarrowLandmarks> cache;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(format.name);
  if (it != cache.end()) return it->second;
  NarrowLandmarks l;
  const int p = format.precision;
  const uint64_t exponent_mask = ((uint64_t{1} << format.exponent_bits()) - 1) << (p - 1);
  l.max_finite = ValueOf(format, exponent_mask - 1);
  l.min_normal = ValueOf(format, uint64_t{1} << (p - 1));
  l.min_subnormal = ValueOf(format, 1);
  l.max_subnormal = ValueOf(format, (uint64_t{1} << (p - 1)) - 1);
  l.below_one = Step(format, 1.0f, -1);
  l.recip_sqrt2 = Round(format, 0.70710678118654752440);
  for (float m : {0.0f, l.min_subnormal, l.max_subnormal, l.min_normal, l.max_finite, kInf, 1.0f,
                  0.5f, l.recip_sqrt2, l.below_one, 1.5f}) {
    l.specials.push_back(m);
    l.specials.push_back(-m);
  }
  l.specials.push_back(std::numeric_limits<float>::quiet_NaN());
  // t = m 2^-p, m in [2^(p-1), 2^p): m^2 has 2p-1 or 2p bits, of which p are
  // kept; the rest decides the rounding. Few enough to enumerate.
  for (uint64_t m = uint64_t{1} << (p - 1); m < (uint64_t{1} << p); ++m) {
    const uint64_t square = m * m;
    const int dropped = square >= (uint64_t{1} << (2 * p - 1)) ? p : p - 1;
    const uint64_t rest = square & ((uint64_t{1} << dropped) - 1);
    const uint64_t half = uint64_t{1} << (dropped - 1);
    const float t = std::ldexp(static_cast<float>(m), -p);
    if (rest == half) {
      l.ties.push_back(t);
    } else if ((rest > half ? rest - half : half - rest) <= (half >> 3)) {
      l.near_ties.push_back(t);
    }
  }
  return cache.emplace(format.name, std::move(l)).first->second;
}

float NarrowRandomFinite(const FloatFormat& format, CounterRng& rng) {
  for (;;) {
    const float x = ValueOf(format, rng.Next32() & ((uint64_t{1} << format.bits) - 1));
    if (std::isfinite(x)) return x;
  }
}

// |x| = 2^e (1 + random mantissa bits), e uniform in [lo, hi), random sign;
// exponents below the normal range round into the format's subnormals.
float NarrowLogUniform(const FloatFormat& format, CounterRng& rng, int lo, int hi) {
  const int e = lo + static_cast<int>(rng.Below(static_cast<uint64_t>(hi - lo)));
  const int m = format.mantissa_bits();
  const double significand = 1.0 + static_cast<double>(rng.Next32() >> (32 - m)) * std::ldexp(1.0, -m);
  return RandomSign(rng, Round(format, std::ldexp(significand, e)));
}

std::array<float, 2> NarrowAdversarial(const FloatFormat& format, CounterRng& rng,
                                       uint64_t index) {
  const NarrowLandmarks& l = Landmarks(format);
  const uint64_t catalogue = l.specials.size() * l.specials.size();
  if (index < catalogue) {
    return {l.specials[index / l.specials.size()], l.specials[index % l.specials.size()]};
  }
  const int p = format.precision;
  const float grad = NarrowLogUniform(format, rng, -20, 20);
  switch ((index - catalogue) % 7) {
    case 0: {  // within k of the format's ulps of +-1, both sides
      const int64_t k = 1 + static_cast<int64_t>(rng.Below(uint64_t{1} << (p - 2)));
      const float t = (rng.Next() & 1) ? Step(format, 1.0f, -k) : Step(format, 1.0f, k);
      return {grad, RandomSign(rng, t)};
    }
    case 1: {  // within 8 of its ulps of +-1/sqrt(2)
      const int64_t k = static_cast<int64_t>(rng.Below(17)) - 8;
      return {grad, RandomSign(rng, Step(format, l.recip_sqrt2, k))};
    }
    case 2: {  // t*t a tie in the format, t scaled by a power of 2
      const int j = static_cast<int>(rng.Below(11)) - 5;
      const float t = l.ties.empty() ? 0.75f : l.ties[rng.Below(l.ties.size())];
      return {grad, RandomSign(rng, std::ldexp(t, j))};
    }
    case 3: {  // t*t within an eighth of the dropped part off a tie
      const float t = l.near_ties.empty() ? 0.75f : l.near_ties[rng.Below(l.near_ties.size())];
      return {grad, RandomSign(rng, t)};
    }
    case 4: {  // grad*t*t overflows the format: |grad| near its max, |t| in [1, 2)
      const float g = RandomSign(rng, Round(format, l.max_finite * (0.5 + 0.5 * rng.Unit())));
      return {g, RandomSign(rng, Round(format, 1.0 + rng.Unit()))};
    }
    case 5: {  // results in the format's subnormals or below
      const int sub = format.emin - p + 1;
      if (rng.Next() & 1) {
        return {NarrowLogUniform(format, rng, sub, format.emin + 4),
                RandomSign(rng, Round(format, rng.Unit()))};
      }
      return {NarrowLogUniform(format, rng, format.emin / 2, 0),
              NarrowLogUniform(format, rng, sub, format.emin / 2)};
    }
    default: {  // |t| > 1, up to 2^min(20, emax / 2)
      return {grad, NarrowLogUniform(format, rng, 0, std::min(20, format.emax / 2))};
    }
  }
}

}  // namespace

size_t TanhBwdAdversarialCatalogueSize(const FloatFormat& format) {
  if (IsBinary32(format)) return TanhBwdAdversarialCatalogueSize();
  const size_t specials = Landmarks(format).specials.size();
  return specials * specials;
}

float NarrowTieSquareOperand(const FloatFormat& format, bool tie, uint64_t pick) {
  const NarrowLandmarks& l = Landmarks(format);
  const std::vector<float>& from = tie ? l.ties : l.near_ties;
  return from.empty() ? 0.0f : from[pick % from.size()];
}

std::array<float, 2> TanhBwdInput(const FloatFormat& format, std::string_view suite,
                                  uint64_t seed, uint64_t index) {
  if (IsBinary32(format)) return TanhBwdInput(suite, seed, index);
  if (format.bits != 16) {
    throw InputError(std::string("no tanh_bwd suites in ") + format.name + " (f32, bf16, f16)");
  }
  CounterRng rng(seed, StreamId(suite), index);
  if (suite == "random") {
    const float grad = NarrowRandomFinite(format, rng);
    return {grad, NarrowRandomFinite(format, rng)};
  }
  if (suite == "domain") {
    const float grad = NarrowLogUniform(format, rng, -format.precision, 8);
    return {grad, Round(format, static_cast<double>(UniformSymmetric(rng)))};
  }
  if (suite == "training") {
    const float t = Round(format, TanhToFloat(1.5 * NormalLike(rng)));
    return {Round(format, NormalLike(rng) * 0x1p-7), t};
  }
  if (suite == "adversarial") return NarrowAdversarial(format, rng, index);
  return TanhBwdInput(suite, seed, index);  // names the suites in its error
}

InputSet GenerateTanhBwdSuite(const FloatFormat& format, std::string_view suite, uint64_t seed,
                              size_t n) {
  InputSet set;
  set.operand_names = kTanhBwdOperands;
  set.columns.assign(2, std::vector<float>(n));
  set.source = std::string(suite);
  set.seed = seed;
  for (size_t i = 0; i < n; ++i) {
    const auto input = TanhBwdInput(format, suite, seed, i);
    set.columns[0][i] = input[0];
    set.columns[1][i] = input[1];
  }
  return set;
}

}  // namespace ulpgate
