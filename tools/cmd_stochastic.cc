// ulpgate stochastic: the stochastic rounding kernels, with their random bits
// as an operand held bit for bit to their policy on every target, and, drawing
// their own bits, judged over many draws (suites/investigate/
// stochastic_rounding.h does the work; this file prints).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "kernels/registry.h"
#include "kernels/stochastic_cast.h"
#include "oracles/format.h"
#include "suites/inputs/counter_rng.h"
#include "suites/investigate/stochastic_rounding.h"
#include "tools/cli.h"

namespace ulpgate {
namespace {

struct StochasticArgs {
  std::string to = "all";
  std::string targets = "all";
  int bits = kStochasticRandomBits;
  uint64_t draws = uint64_t{1} << 20;
  double confidence = 0.999;
  uint64_t seed = 1;
};

std::string FormatNames() {
  std::string names;
  for (const StochasticCastInfo& info : StochasticCastKernels()) {
    names += (names.empty() ? "" : ", ") + std::string(info.to);
  }
  return names;
}

void RunStochastic(const StochasticArgs& args) {
  std::vector<const StochasticCastInfo*> kernels;
  for (const StochasticCastInfo& info : StochasticCastKernels()) {
    if (args.to == "all" || args.to == info.to) kernels.push_back(&info);
  }
  if (kernels.empty()) {
    throw UsageError(fmt::format("--to: no stochastic kernel casts to '{}' (they cast to {})",
                                 args.to, FormatNames()));
  }
  std::vector<std::string> skipped;
  const std::vector<const TargetInfo*> targets = ResolveTargets(args.targets, &skipped);
  bool all_pass = true;
  for (const StochasticCastInfo* info : kernels) {
    const FloatFormat& to = *FindFormat(info->to);
    const CastPolicy policy = *ParseCastPolicy(info->policy);
    std::cout << fmt::format("{}: random bits as an operand, against {} bit for bit\n", info->to,
                             info->policy);
    for (const TargetInfo* t : targets) {
      const StochasticCastKernel kernel = FindStochasticCastKernel(info->to, t->bits);
      const StochasticExactCheck check = CheckStochasticExact(to, policy, kernel);
      std::cout << fmt::format("  {:<8} {} of {} outputs differ{}\n", t->name, check.mismatches,
                               check.checked, check.mismatches ? ": " + check.first : "");
      all_pass = all_pass && check.mismatches == 0;
    }
    if (!skipped.empty()) std::cout << "  not run: " << DescribeSkipped(skipped) << "\n";
    // Drawing its own bits: the best of the chosen targets, fed by a
    // counter-based stream, a fresh stretch on every call.
    // Highway's target bits shrink as targets widen: the best has the least.
    const TargetInfo& best = **std::min_element(
        targets.begin(), targets.end(),
        [](const TargetInfo* a, const TargetInfo* b) { return a->bits < b->bits; });
    const StochasticCastKernel kernel = FindStochasticCastKernel(info->to, best.bits);
    auto calls = std::make_shared<uint64_t>(0);
    const uint64_t seed = args.seed;
    const StochasticRounder rounder = [kernel, calls, seed](const float* in, void* out, size_t n) {
      std::vector<uint32_t> random(n);
      CounterRng rng(seed, StreamId("stochastic draws"), (*calls)++);
      for (uint32_t& r : random) r = rng.Next32();
      kernel(in, random.data(), out, n);
    };
    StochasticOptions options;
    options.claimed_bits = args.bits;
    options.draws = args.draws;
    options.confidence = args.confidence;
    options.seed = args.seed;
    const StochasticVerdict v = JudgeStochastic(to, rounder, options);
    std::cout << fmt::format("{}: drawing its own bits, on {}\n", info->to, best.name)
              << StochasticVerdictText(v) << "\n";
    all_pass = all_pass && v.passed;
  }
  if (!all_pass) ExitStatus() = 1;
}

}  // namespace

void AddStochasticCommand(CLI::App& app) {
  auto args = std::make_shared<StochasticArgs>();
  auto* cmd = app.add_subcommand(
      "stochastic",
      "Stochastic rounding kernels: bit for bit against their policy with the random bits as an "
      "operand, on every target; and over many draws, whether they round up as often as the "
      "bits they claim give (exit 1 if not)");
  cmd->add_option("--to", args->to, "The format cast to (" + FormatNames() + ", or all)")
      ->capture_default_str();
  cmd->add_option("--targets", args->targets,
                  "Targets, comma-separated, or all; the draws run on the best of them")
      ->capture_default_str();
  cmd->add_option("--bits", args->bits, "The random bits claimed, 1 to 24")
      ->capture_default_str()
      ->check(CLI::Range(1, 24));
  cmd->add_option("--draws", args->draws, "Draws per probe")
      ->capture_default_str()
      ->check(CountValidator("the draws per probe", 1, uint64_t{1} << 30));
  cmd->add_option("--confidence", args->confidence,
                  "Confidence of the verdict, in (0, 1): a kernel that follows the claim fails "
                  "with probability at most 1 minus it")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 0.999999999));
  cmd->add_option("--seed", args->seed, "Seed of the random bits and the bias inputs")
      ->capture_default_str()
      ->check(CountValidator("a seed", 0, kMaxSeed));
  cmd->callback([args] { RunStochastic(*args); });
}

}  // namespace ulpgate
