// Whether a stochastic rounding is what it claims, from its outputs alone.
//
// With its random bits as an operand a stochastic cast is a model like any
// other (oracles/cast_policy.h's "stochasticK" policies, exact). A kernel
// that draws its own bits can only be judged over many draws: for an input a
// fraction f of the way from the code below it (toward zero) to the next, a
// rounding with k random bits that adds them below the kept bits rounds the
// magnitude up with probability floor(f 2^k) / 2^k, and an ideal one with f.
// The judge runs the kernel on probes, inputs whose f is 2^-j, 1 - 2^-j
// and a few others, each many times, tests every count of roundings up
// against the claimed k bits (two-sided binomial tests, Bonferroni over the
// probes, at a stated confidence), reads off how many random bits the
// outputs show (the largest j whose f = 2^-j probe ever rounds up), and
// measures the bias, mean(out - x) in units of each input's quantum, on
// random inputs against what k bits give.
#ifndef ULPGATE_SUITES_INVESTIGATE_STOCHASTIC_ROUNDING_H_
#define ULPGATE_SUITES_INVESTIGATE_STOCHASTIC_ROUNDING_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oracles/cast_policy.h"
#include "oracles/float_format.h"

namespace ulpgate {

// A kernel seen from outside: n f32 inputs to n codes of the format, in its
// storage units (FloatFormat::storage_bytes() each, little-endian), drawing
// its own random bits; each call a fresh draw.
using StochasticRounder = std::function<void(const float* in, void* out, size_t n)>;

struct StochasticOptions {
  int claimed_bits = 16;            // k
  uint64_t draws = uint64_t{1} << 20;  // per probe
  double confidence = 0.999;        // of the whole verdict (Bonferroni over the tests)
  size_t bias_inputs = size_t{1} << 18;
  uint64_t seed = 1;
};

struct StochasticProbe {
  double input = 0;     // an f32 value
  double down = 0;      // the code at or below its magnitude (toward zero)
  double up = 0;        // the next code away from zero
  double fraction = 0;  // f, exact
  double expected = 0;  // floor(f 2^k) / 2^k, the claimed probability of up
  uint64_t ups = 0;
  uint64_t draws = 0;
  uint64_t impossible = 0;  // outputs that are neither down nor up
  double p_value = 1;       // two-sided binomial, against `expected`
  bool failed = false;
};

struct StochasticVerdict {
  const FloatFormat* to = nullptr;
  int claimed_bits = 0;
  double confidence = 0;
  std::vector<StochasticProbe> probes;
  // The largest j such that the probes with f = 2^-1 ... 2^-j all rounded up
  // at least once: the random bits the outputs show (0: never up).
  int shown_bits = 0;
  // Over the bias inputs, in quanta: measured mean(out - x) toward x's sign,
  // what k bits give (mean of floor(f 2^k)/2^k - f), and the measured one's
  // standard error; an ideal rounding's is 0.
  double bias = 0;
  double expected_bias = 0;
  double bias_stderr = 0;
  double bias_p_value = 1;
  bool bias_failed = false;
  bool passed = false;
  std::string failure;  // the first failing test, in words; empty when passed
};

// Runs `kernel` over the probes and bias inputs of `to` (a signed format with
// subnormals whose codes f32 holds: bf16, f16, the FP8 and FP6 formats).
// Throws std::invalid_argument for another format or bad options.
StochasticVerdict JudgeStochastic(const FloatFormat& to, const StochasticRounder& kernel,
                                  const StochasticOptions& options = {});

// The inputs on which a stochastic kernel is held to its policy bit for bit,
// with its random bits as an operand: every code's value of `to` (of a
// 16-bit format every 16th and the first and last 64) with its binary32
// neighbours, the points a quarter, half and three quarters to the next
// code with theirs, the largest finite value and past it, signed zeros,
// infinities, NaN payloads, binary32 subnormals and random bit patterns.
std::vector<float> StochasticConformanceInputs(const FloatFormat& to);

// A kernel with its random operand (kernels/stochastic_cast.h's signature).
using StochasticKernelCall =
    std::function<void(const float* in, const uint32_t* random, void* out, size_t n)>;

struct StochasticExactCheck {
  uint64_t checked = 0;
  uint64_t mismatches = 0;
  std::string first;  // the first mismatch, in words
};

// `kernel` on StochasticConformanceInputs(to), each with several random
// words (their high bits set too), against the policy's codes.
StochasticExactCheck CheckStochasticExact(const FloatFormat& to, const CastPolicy& policy,
                                          const StochasticKernelCall& kernel);

// The verdict as text: a table of the probes, the bits shown, the bias and
// the verdict's line.
std::string StochasticVerdictText(const StochasticVerdict& verdict);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_INVESTIGATE_STOCHASTIC_ROUNDING_H_
