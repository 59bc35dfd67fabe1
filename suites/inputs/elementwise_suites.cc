#include "suites/inputs/elementwise_suites.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "oracles/float_text.h"
#include "suites/inputs/counter_rng.h"
#include "suites/inputs/tanh_bwd_suites.h"

namespace ulpgate {
namespace {

// Whether the op's suites are its own (elementwise_suites.h says why): the
// suites of tanh_bwd_suites.h, written for the one op whose spec declares them
// (registered_ops.h allows no second).
bool HasOwnSuites(const ElementwiseOpInfo& op) { return op.own_tiers.suites; }

// FNV-1a of the op's and the suite's names: each (op, suite) draws its own
// stream.
uint64_t StreamOf(const ElementwiseOpInfo& op, std::string_view suite) {
  uint64_t h = 0xcbf29ce484222325ULL;
  const auto add = [&](std::string_view s) {
    for (const char c : s) {
      h ^= static_cast<unsigned char>(c);
      h *= 0x100000001b3ULL;
    }
    h ^= 0xff;
    h *= 0x100000001b3ULL;
  };
  add(op.name);
  add(suite);
  return h;
}

double MinSubnormal(const FloatFormat& f) { return Pow2(f.emin - f.precision + 1); }
double MinNormal(const FloatFormat& f) { return Pow2(f.emin); }
double MaxSubnormal(const FloatFormat& f) { return MinNormal(f) - MinSubnormal(f); }
double MaxFinite(const FloatFormat& f) { return (2.0 - Pow2(1 - f.precision)) * Pow2(f.emax); }

float Round(const FloatFormat& format, double x) {
  return static_cast<float>(RoundToFormat(format, x));
}

// A value of the format k steps (of its ordering of non-negative bit
// patterns) away from the non-negative value v, staying finite and >= 0.
float Step(const FloatFormat& format, float v, int64_t k) {
  const int64_t bits = static_cast<int64_t>(EncodeBits(format, v));
  const int64_t max_finite = static_cast<int64_t>(EncodeBits(format, MaxFinite(format)));
  const int64_t moved = std::min(std::max<int64_t>(bits + k, 0), max_finite);
  return static_cast<float>(DecodeBits(format, static_cast<uint64_t>(moved)));
}

float RandomSign(CounterRng& rng, float x) { return (rng.Next() & 1) ? -x : x; }

float RandomFinite(const FloatFormat& format, CounterRng& rng) {
  for (;;) {
    const uint64_t bits = rng.Next() >> (64 - format.bits);
    const double x = DecodeBits(format, bits);
    if (std::isfinite(x)) return static_cast<float>(x);
  }
}

// |x| log-uniform over [2^l, 2^h] (powers of two apart or not), random
// sign, all significand bits random, rounded to the format.
float LogUniformOfLogs(const FloatFormat& format, CounterRng& rng, double l, double h) {
  const double e = l + (h - l) * rng.Unit();
  return RandomSign(rng, Round(format, std::exp2(e)));
}

// The same over [lo, hi].
float LogUniform(const FloatFormat& format, CounterRng& rng, double lo, double hi) {
  return LogUniformOfLogs(format, rng, std::log2(lo), std::log2(hi));
}

float Uniform(const FloatFormat& format, CounterRng& rng, double lo, double hi) {
  return Round(format, lo + (hi - lo) * rng.Unit());
}

// An operand's domain with the logarithms of its ends, taken once per suite.
struct OperandDraw {
  const OperandInfo* info;
  double log_lo, log_hi;
};

float FromDomain(const FloatFormat& format, CounterRng& rng, const OperandDraw& o) {
  switch (o.info->domain) {
    case OperandDomain::kLogUniform:
      return LogUniformOfLogs(format, rng, o.log_lo, o.log_hi);
    case OperandDomain::kUniform:
      return Uniform(format, rng, o.info->lo, o.info->hi);
  }
  return 0;
}

std::vector<float> Specials(const FloatFormat& format) {
  const float magnitudes[] = {0.0f,
                              static_cast<float>(MinSubnormal(format)),
                              static_cast<float>(MaxSubnormal(format)),
                              static_cast<float>(MinNormal(format)),
                              static_cast<float>(MaxFinite(format)),
                              std::numeric_limits<float>::infinity()};
  std::vector<float> v;
  for (const float m : magnitudes) {
    v.push_back(m);
    v.push_back(-m);
  }
  v.push_back(std::numeric_limits<float>::quiet_NaN());
  return v;
}

// The last operand's landmarks as values of the format, both signs, with the
// specials first.
std::vector<float> LastOperandCatalogue(const ElementwiseOpInfo& op, const FloatFormat& format) {
  std::vector<float> v = Specials(format);
  for (const double l : op.landmarks) {
    const float r = Round(format, l);
    v.push_back(r);
    if (r != 0) v.push_back(-r);
  }
  return v;
}

// What every input of a suite shares, made once: its stream, its operands'
// domains, the adversarial suite's catalogue.
struct SuiteDraws {
  SuiteDraws(const ElementwiseOpInfo& op_in, const FloatFormat& format_in,
             std::string_view suite_in, uint64_t seed_in)
      : op(op_in), format(format_in), suite(suite_in), seed(seed_in), stream(StreamOf(op, suite)) {
    for (const OperandInfo& o : op.operands) {
      const bool logs = o.domain == OperandDomain::kLogUniform;
      operands.push_back({&o, logs ? std::log2(o.lo) : 0.0, logs ? std::log2(o.hi) : 0.0});
    }
    if (suite == "adversarial") {
      first = Specials(format);
      last = LastOperandCatalogue(op, format);
      catalogue = first.size() * last.size();
    }
  }
  const ElementwiseOpInfo& op;
  const FloatFormat& format;
  std::string_view suite;
  uint64_t seed, stream;
  std::vector<OperandDraw> operands;
  std::vector<float> first, last;
  uint64_t catalogue = 0;
};

// Input `index` of the suite into x[0 .. arity).
void Input(const SuiteDraws& draws, uint64_t index, float* x) {
  const ElementwiseOpInfo& op = draws.op;
  const FloatFormat& format = draws.format;
  const std::string_view suite = draws.suite;
  CounterRng rng(draws.seed, draws.stream, index);
  const size_t arity = op.arity();
  if (suite == "random") {
    for (size_t k = 0; k < arity; ++k) x[k] = RandomFinite(format, rng);
    return;
  }
  if (suite == "domain") {
    for (size_t k = 0; k < arity; ++k) x[k] = FromDomain(format, rng, draws.operands[k]);
    return;
  }
  if (suite == "adversarial") {
    const std::vector<float>& first = draws.first;
    const std::vector<float>& last = draws.last;
    const uint64_t catalogue = draws.catalogue;
    for (size_t k = 0; k < arity; ++k) x[k] = FromDomain(format, rng, draws.operands[k]);
    if (index < catalogue) {
      // Operands before the last: the specials, the same one for each (every
      // spec here has one operand before its last, grad).
      x[0] = first[index / last.size()];
      for (size_t k = 1; k + 1 < arity; ++k) x[k] = x[0];
      x[arity - 1] = last[index % last.size()];
      return;
    }
    const std::vector<double>& landmarks = op.landmarks;
    const uint64_t family = (index - catalogue) % 4;
    float& y = x[arity - 1];
    switch (family) {
      case 0: {  // within 64 steps of a landmark, both signs
        const float l = std::fabs(Round(format, landmarks[rng.Below(landmarks.size())]));
        const int64_t k = static_cast<int64_t>(rng.Below(129)) - 64;
        y = RandomSign(rng, Step(format, l, k));
        break;
      }
      case 1: {  // far out: |y| log-uniform up to the largest finite value
        y = LogUniform(format, rng, 1.0, MaxFinite(format));
        break;
      }
      case 2: {  // grad near overflow
        x[0] = RandomSign(rng, Round(format, MaxFinite(format) * (0.5 + 0.5 * rng.Unit())));
        break;
      }
      default: {  // grad in the subnormals
        x[0] = LogUniform(format, rng, MinSubnormal(format), MinNormal(format));
        break;
      }
    }
    return;
  }
  std::string names;
  for (const SuiteInfo& s : ElementwiseSuites(op)) names += (names.empty() ? "" : ", ") + s.name;
  throw InputError("unknown suite '" + std::string(suite) + "' for " + std::string(op.name) + " (" +
                   names + ")");
}

}  // namespace

const std::vector<SuiteInfo>& ElementwiseSuites(const ElementwiseOpInfo& op) {
  if (HasOwnSuites(op)) return TanhBwdSuites();
  static const std::vector<SuiteInfo> suites = {
      {"random", "every operand uniform over the format's finite bit patterns", 100000},
      {"domain", "each operand over its domain (list shows it): a gradient log-uniform, "
                 "the other uniform",
       100000},
      {"adversarial",
       "specials (+-0, subnormals, +-max, +-inf, NaN) crossed with the op's landmarks; the "
       "last operand within 64 ulps of a landmark and far out; grad near overflow and "
       "subnormal",
       20000},
  };
  return suites;
}

size_t ElementwiseAdversarialCatalogueSize(const ElementwiseOpInfo& op, const FloatFormat& format) {
  if (HasOwnSuites(op)) return TanhBwdAdversarialCatalogueSize(format);
  return Specials(format).size() * LastOperandCatalogue(op, format).size();
}

InputSet GenerateElementwiseSuite(const ElementwiseOpInfo& op, const FloatFormat& format,
                                  std::string_view suite, uint64_t seed, size_t n) {
  if (HasOwnSuites(op)) return GenerateTanhBwdSuite(format, suite, seed, n);
  InputSet set;
  set.operand_names = op.operand_names();
  set.columns.assign(op.arity(), std::vector<float>(n));
  set.source = std::string(suite);
  set.seed = seed;
  const SuiteDraws draws(op, format, suite, seed);
  std::vector<float> x(op.arity());
  for (size_t i = 0; i < n; ++i) {
    Input(draws, i, x.data());
    for (size_t k = 0; k < op.arity(); ++k) set.columns[k][i] = x[k];
  }
  return set;
}

}  // namespace ulpgate
