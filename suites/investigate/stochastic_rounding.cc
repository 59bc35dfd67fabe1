#include "suites/investigate/stochastic_rounding.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "oracles/cast_policy.h"
#include "oracles/float_text.h"
#include "oracles/format.h"
#include "suites/inputs/counter_rng.h"

namespace ulpgate {
namespace {

// Kernel calls go in chunks, so that a probe of 2^20 draws needs no 2^20
// buffers.
constexpr size_t kChunk = size_t{1} << 15;

// The codes below and above |x| (toward zero, and the next away from zero),
// exact values of `to`.
void Bracket(const FloatFormat& to, double magnitude, double* down, double* up) {
  CastPolicy toward_zero;
  toward_zero.rounding = CastRounding::kTowardZero;
  CastPolicy upward;
  upward.rounding = CastRounding::kUp;
  *down = CastValue(kBinary32, to, magnitude, toward_zero);
  *up = CastValue(kBinary32, to, magnitude, upward);
}

uint64_t ReadCode(const unsigned char* out, size_t i, int bytes) {
  uint64_t code = 0;
  for (int b = 0; b < bytes; ++b) code |= uint64_t{out[i * bytes + b]} << (8 * b);
  return code;
}

// Two-sided binomial p-value of `ups` in `draws` at probability `p`; where p
// is 0 or 1 any other count is impossible.
double BinomialPValue(uint64_t ups, uint64_t draws, double p) {
  if (p == 0) return ups == 0 ? 1.0 : 0.0;
  if (p == 1) return ups == draws ? 1.0 : 0.0;
  const boost::math::binomial_distribution<double> b(static_cast<double>(draws), p);
  const double k = static_cast<double>(ups);
  const double low = boost::math::cdf(b, k);
  const double high = ups == 0 ? 1.0 : boost::math::cdf(boost::math::complement(b, k - 1));
  return std::min(1.0, 2 * std::min(low, high));
}

double ClaimedProbability(double fraction, int bits) {
  return std::floor(std::ldexp(fraction, bits)) / std::ldexp(1.0, bits);
}

// The probes: around 1 (f = 2^-j for j up to k + 1, where the bits k claims
// run out, and 1 - 2^-j), and f = 1/2, 1/4, 3/4, 2^-k around a negative
// value, the largest binade, a subnormal and an exact code (f = 0), each
// where binary32 holds the input.
std::vector<StochasticProbe> Probes(const FloatFormat& to, int bits) {
  std::vector<StochasticProbe> probes;
  auto add = [&](double code, double quantum, double fraction) {
    const double magnitude = std::fabs(code) + fraction * quantum;
    const double x = std::copysign(magnitude, code);
    if (static_cast<double>(static_cast<float>(x)) != x) return;
    StochasticProbe p;
    p.input = x;
    Bracket(to, magnitude, &p.down, &p.up);
    p.fraction = p.up == p.down ? 0.0 : (magnitude - p.down) / (p.up - p.down);
    p.expected = ClaimedProbability(p.fraction, bits);
    for (const StochasticProbe& q : probes) {
      if (q.input == p.input) return;
    }
    probes.push_back(p);
  };
  const double one_quantum = std::ldexp(1.0, 1 - to.precision);
  for (int j = 1; j <= bits + 1; ++j) add(1.0, one_quantum, std::ldexp(1.0, -j));
  for (int j = 2; j <= bits + 1; ++j) add(1.0, one_quantum, 1 - std::ldexp(1.0, -j));
  const double top = std::ldexp(1.0, to.emax - 1);  // below the overflow's reach
  const double subnormal = SmallestPositive(to);
  const double others[][2] = {{-1.5, one_quantum},
                              {top, std::ldexp(top, 1 - to.precision)},
                              {subnormal, subnormal}};
  for (const auto& [code, quantum] : others) {
    for (double f : {0.5, 0.25, 0.75, std::ldexp(1.0, -bits)}) add(code, quantum, f);
  }
  add(1.0, one_quantum, 0.0);
  return probes;
}

}  // namespace

StochasticVerdict JudgeStochastic(const FloatFormat& to, const StochasticRounder& kernel,
                                  const StochasticOptions& options) {
  if (!to.has_sign || !to.has_subnormals || to.bits > 16 || to.precision > 24) {
    throw std::invalid_argument(fmt::format(
        "stochastic rounding is judged for signed formats with subnormals narrower than "
        "f32, not {}",
        to.name));
  }
  if (options.claimed_bits < 1 || options.claimed_bits > 24 || options.draws == 0 ||
      options.bias_inputs == 0 || !(options.confidence > 0 && options.confidence < 1)) {
    throw std::invalid_argument(
        "stochastic options: claimed bits 1..24, draws and bias inputs > 0, confidence in (0, 1)");
  }
  StochasticVerdict v;
  v.to = &to;
  v.claimed_bits = options.claimed_bits;
  v.confidence = options.confidence;
  v.probes = Probes(to, options.claimed_bits);
  const int bytes = to.storage_bytes();
  const double alpha = (1 - options.confidence) / static_cast<double>(v.probes.size() + 1);

  std::vector<float> in(kChunk);
  std::vector<unsigned char> out(kChunk * bytes);
  for (StochasticProbe& p : v.probes) {
    const uint64_t down_code = EncodeBits(to, std::copysign(p.down, p.input));
    const uint64_t up_code = EncodeBits(to, std::copysign(p.up, p.input));
    std::fill(in.begin(), in.end(), static_cast<float>(p.input));
    for (uint64_t done = 0; done < options.draws;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, options.draws - done));
      kernel(in.data(), out.data(), n);
      for (size_t i = 0; i < n; ++i) {
        const uint64_t code = ReadCode(out.data(), i, bytes);
        if (code == up_code && up_code != down_code) {
          ++p.ups;
        } else if (code != down_code) {
          ++p.impossible;
        }
      }
      done += n;
    }
    p.draws = options.draws;
    p.p_value = p.impossible > 0 ? 0.0 : BinomialPValue(p.ups, p.draws, p.expected);
    p.failed = p.p_value < alpha;
    if (p.failed && v.failure.empty()) {
      v.failure = p.impossible > 0
                      ? fmt::format("{} outputs of input {} are neither {} nor {}", p.impossible,
                                    p.input, p.down, p.up)
                      : fmt::format("input {} (f = {}) rounded up {} times in {} draws: "
                                    "{} random bits give probability {} (p = {:.3g})",
                                    p.input, p.fraction, p.ups, p.draws, v.claimed_bits,
                                    p.expected, p.p_value);
    }
  }
  for (int j = 1;; ++j) {
    const auto probe = std::find_if(v.probes.begin(), v.probes.end(), [&](const auto& p) {
      return p.input == 1.0 + std::ldexp(1.0, 1 - to.precision - j);
    });
    if (probe == v.probes.end() || probe->ups == 0) break;
    v.shown_bits = j;
  }

  // The bias: random inputs over the normal binades below the largest (so
  // that no rounding up overflows), one draw each.
  std::vector<float> inputs(options.bias_inputs);
  CounterRng rng(options.seed, StreamId("stochastic bias"), 0);
  for (float& x : inputs) {
    const int exponent = to.emin + static_cast<int>(rng.Below(to.emax - to.emin));
    const uint32_t mantissa = rng.Next32() >> 9;  // binary32's 23 bits
    x = std::ldexp(1.0f + static_cast<float>(mantissa) * 0x1p-23f, exponent);
    if (rng.Next() & 1) x = -x;
  }
  double measured = 0, expected = 0, variance = 0;
  for (size_t begin = 0; begin < inputs.size(); begin += kChunk) {
    const size_t n = std::min(kChunk, inputs.size() - begin);
    kernel(inputs.data() + begin, out.data(), n);
    for (size_t i = 0; i < n; ++i) {
      const double x = inputs[begin + i];
      double down = 0, up = 0;
      Bracket(to, std::fabs(x), &down, &up);
      const double quantum = up - down;
      const double got = std::fabs(DecodeBits(to, ReadCode(out.data(), i, bytes)));
      const double f = quantum == 0 ? 0.0 : (std::fabs(x) - down) / quantum;
      const double p = ClaimedProbability(f, options.claimed_bits);
      measured += quantum == 0 ? 0.0 : (got - std::fabs(x)) / quantum;
      expected += p - f;
      variance += p * (1 - p);
    }
  }
  const double n = static_cast<double>(inputs.size());
  v.bias = measured / n;
  v.expected_bias = expected / n;
  v.bias_stderr = std::sqrt(variance) / n;
  v.bias_p_value = v.bias_stderr > 0
                       ? std::erfc(std::fabs(v.bias - v.expected_bias) / v.bias_stderr / std::sqrt(2.0))
                       : (v.bias == v.expected_bias ? 1.0 : 0.0);
  v.bias_failed = v.bias_p_value < alpha;
  if (v.bias_failed && v.failure.empty()) {
    v.failure = fmt::format("bias {:.3g} quantum over {} random inputs, {} random bits give "
                            "{:.3g} (standard error {:.2g}, p = {:.3g})",
                            v.bias, inputs.size(), v.claimed_bits, v.expected_bias,
                            v.bias_stderr, v.bias_p_value);
  }
  v.passed = v.failure.empty();
  return v;
}

std::vector<float> StochasticConformanceInputs(const FloatFormat& to) {
  std::vector<float> x;
  auto with_neighbours = [&](double v) {
    const float f = static_cast<float>(v);
    for (float g : {f, std::nextafter(f, 0.0f), std::nextafter(f, HUGE_VALF)}) {
      x.push_back(g);
      x.push_back(-g);
    }
  };
  // The positive half; of bf16's 32,768 codes every 16th and the first and
  // last 64 (subnormals, the overflow's edge), so the test stays fast.
  const uint64_t codes = uint64_t{1} << (to.bits - 1);
  const uint64_t stride = codes > 2048 ? codes / 2048 : 1;
  for (uint64_t c = 0; c < codes; ++c) {
    if (c % stride != 0 && c >= 64 && c + 64 < codes) continue;
    const double v = DecodeBits(to, c);
    if (!std::isfinite(v)) continue;
    with_neighbours(v);
    const double next = DecodeBits(to, c + 1);
    if (!std::isfinite(next)) continue;
    for (double f : {0.25, 0.5, 0.75}) with_neighbours(v + f * (next - v));
  }
  with_neighbours(LargestFinite(to) * 1.0625);
  with_neighbours(LargestFinite(to) * 4);
  for (uint32_t b : {0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u, 0x7f800001u,
                     0x00000001u, 0x807fffffu, 0x7f7fffffu}) {
    x.push_back(FloatFromBits(b));
  }
  CounterRng rng(1, StreamId("stochastic inputs"), 0);
  for (int i = 0; i < 4096; ++i) x.push_back(FloatFromBits(rng.Next32()));
  return x;
}

StochasticExactCheck CheckStochasticExact(const FloatFormat& to, const CastPolicy& policy,
                                          const StochasticKernelCall& kernel) {
  const std::vector<float> inputs = StochasticConformanceInputs(to);
  std::vector<float> in;
  std::vector<uint32_t> random;
  CounterRng rng(2, StreamId(to.name), 0);
  for (float v : inputs) {
    for (uint32_t r : {0u, 0xffffu, 0x8000u, 0xffff0000u, rng.Next32(), rng.Next32()}) {
      in.push_back(v);
      random.push_back(r);
    }
  }
  const int bytes = to.storage_bytes();
  std::vector<unsigned char> out(in.size() * bytes);
  kernel(in.data(), random.data(), out.data(), in.size());
  StochasticExactCheck check;
  check.checked = in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    const uint64_t got = ReadCode(out.data(), i, bytes);
    const uint64_t want = CastCode(kBinary32, to, in[i], policy, random[i]);
    if (got == want) continue;
    if (check.mismatches++ == 0) {
      check.first = fmt::format("input {} ({}) with random 0x{:08x} gave 0x{:x}, {} gives 0x{:x}",
                                HexFloat(in[i]), in[i], random[i], got, policy.Name(), want);
    }
  }
  return check;
}

std::string StochasticVerdictText(const StochasticVerdict& v) {
  std::string text = fmt::format(
      "stochastic rounding to {}, {} random bits claimed, confidence {} (Bonferroni over {} "
      "tests)\n",
      v.to->name, v.claimed_bits, v.confidence, v.probes.size() + 1);
  text += fmt::format("  {:>16}  {:>12}  {:>12}  {:>10}  {:>10}  {:>9}\n", "input", "f",
                      "P(up) claimed", "ups", "draws", "p-value");
  for (const StochasticProbe& p : v.probes) {
    text += fmt::format("  {:>16.9g}  {:>12.6g}  {:>12.6g}  {:>10}  {:>10}  {:>9.3g}{}\n",
                        p.input, p.fraction, p.expected, p.ups, p.draws, p.p_value,
                        p.failed ? "  FAIL" : "");
  }
  text += fmt::format("  random bits shown: {} (f = 2^-j rounds up for every j up to it)\n",
                      v.shown_bits);
  text += fmt::format(
      "  bias: {:.4g} quantum (ideal 0; {} bits give {:.4g}; standard error {:.2g}, p = "
      "{:.3g}){}\n",
      v.bias, v.claimed_bits, v.expected_bias, v.bias_stderr, v.bias_p_value,
      v.bias_failed ? "  FAIL" : "");
  text += v.passed ? "  verdict: follows stochastic rounding with the bits claimed\n"
                   : "  verdict: FAILS: " + v.failure + "\n";
  return text;
}

}  // namespace ulpgate
