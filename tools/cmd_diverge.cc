// ulpgate diverge: search for the inputs where two variants (or targets, or a
// variant and the exact value) disagree most (suites/investigate/diverge.h does the
// search); print the worst, and write them as an input file for `run --inputs`
// that doubles as a worst-case list for golden/.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>

#include "oracles/float_text.h"
#include "oracles/ulp_metric.h"
#include "suites/investigate/diverge.h"
#include "suites/investigate/explain.h"
#include "suites/engine/kernel_names.h"
#include "suites/engine/plugins.h"
#include "suites/reports/replay.h"
#include "suites/inputs/inputs.h"
#include "suites/engine/elementwise_oracle.h"
#include "tools/cli.h"
#include "tools/text_table.h"

namespace ulpgate {
namespace {

struct DivergeArgs {
  std::string kernel;
  std::string a, b;
  uint64_t evaluations = 100000;
  uint64_t seed = 1;
  size_t keep = 16;
  std::string out_path;
  std::vector<std::string> plugins;
};

// "VARIANT[@TARGET]" (default target: the best this CPU has), or "exact".
DivergeSide ParseSide(const ElementwiseOpInfo& op, const std::string& spec, const char* flag,
                      bool allow_exact, const std::vector<std::string>& plugin_paths) {
  if (spec == "exact") {
    if (!allow_exact) throw UsageError(std::string(flag) + " must be a variant; only --b may be exact");
    return DivergeSide{};
  }
  // A built-in variant (on the best target this CPU runs, or on @TARGET), or
  // a plugin's kernel, named as every command names kernels.
  const std::vector<const TargetInfo*> plugins = LoadPlugins(plugin_paths);
  NamedKernel kernel;
  try {
    kernel = ResolveOneKernel(op.name, kBinary32, spec, plugins, &BestTarget(), flag);
  } catch (const InputError& e) {
    std::string message = e.what();
    if (message.rfind(flag, 0) != 0) message = std::string(flag) + ": " + message;
    throw UsageError(message + (allow_exact ? " (or exact)" : ""));
  }
  DivergeSide side;
  side.variant = kernel.variant;
  side.target = kernel.target;
  if (!IsPluginTarget(*side.target) && !side.target->supported) {
    throw UsageError(std::string(flag) + ": target " + side.target->name +
                     " is compiled but not runnable here (" + NotRunnableReason(*side.target) + ")");
  }
  return side;
}

// " --plugin P" (" --iut 'COMMAND'") for each plugin given.
std::string PluginFlags(const DivergeArgs& args) {
  std::string flags;
  for (const std::string& plugin : args.plugins) flags += " " + PluginSourceArgument(plugin);
  return flags;
}

std::string Command(const DivergeArgs& args, const DivergeSide& a, const DivergeSide& b) {
  std::string command = fmt::format("ulpgate diverge --op {} --a {} --b {} --evals {} --seed {}",
                                    args.kernel, a.Label(), b.Label(), args.evaluations, args.seed);
  if (args.keep != 16) command += fmt::format(" --keep {}", args.keep);
  if (!args.out_path.empty()) command += " --out " + args.out_path;
  return command + PluginFlags(args);
}

std::string FloatCell(float x) { return fmt::format("{} ({})", HexFloat(x), BitsHex(x)); }

void WriteInputFile(const std::string& path, const DivergeArgs& args, const DivergeSide& a,
                    const DivergeSide& b, const DivergeResult& result) {
  const std::vector<std::string> header = {
      fmt::format("{} worst-case inputs: where {} and {} disagree most", args.kernel, a.Label(),
                  b.Label()),
      "found by ulpgate diverge: random restarts, hill climbing over neighbouring bit",
      "patterns, refinement of the input intervals with the largest disagreement",
      fmt::format("disagreement: |a - b| / ulp(b), in ULPs of {} ({} evaluations, seed {}){}",
                  b.Label(), result.evaluations, args.seed,
                  b.exact() ? "; b below is the exact value rounded to binary32" : ""),
      "regenerate: " + Command(args, a, b),
      "replay:     ulpgate run --op " + args.kernel + " --inputs " + path + PluginFlags(args),
  };
  std::ofstream out(path, std::ios::trunc);
  if (!out) throw UsageError(path + ": cannot open for writing");
  out << DivergeInputFileText(result, FindElementwiseOp(args.kernel)->operand_names(), header);
  if (!out.flush()) throw UsageError(path + ": write failed");
}

void RunDiverge(const DivergeArgs& args) {
  const ElementwiseOpInfo& op = ElementwiseOpArgument(args.kernel);
  const std::vector<std::string> operands = op.operand_names();
  const ElementwiseOracle& oracle = OracleOf(op);
  if (args.evaluations == 0) throw UsageError("--evals must be at least 1");
  if (args.keep == 0) throw UsageError("--keep must be at least 1");
  const DivergeSide a = ParseSide(op, args.a, "--a", false, args.plugins);
  const DivergeSide b = ParseSide(op, args.b, "--b", true, args.plugins);
  DivergeOptions options;
  options.evaluations = args.evaluations;
  options.seed = args.seed;
  options.keep = args.keep;
  const auto start = std::chrono::steady_clock::now();
  const DivergeResult result = DivergeElementwise(op, a, b, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::cout << fmt::format(
      "diverge {}: a = {}, b = {}; disagreement |a - b| / ulp(b) in ULPs of b\n"
      "{} evaluations (seed {}) in {:.2f} s\n",
      op.name, a.Label(), b.Label(), result.evaluations, args.seed, seconds);
  std::string reached;
  for (double threshold = 1; threshold <= 1e12; threshold *= 10) {
    const uint64_t at = result.FirstReaching(threshold);
    if (at == 0) break;
    reached += fmt::format("{}>= {:.0e} at {}", reached.empty() ? "" : ", ", threshold, at);
  }
  if (!reached.empty()) PrintWrapped(std::cout, "first evaluation reaching: " + reached, 2);
  if (result.worst.empty()) {
    std::cout << "no input was evaluated without a special mismatch\n";
  } else if (result.worst.front().evaluation.ulp == 0) {
    std::cout << "no disagreement: the two sides agreed on every input evaluated"
              << (result.special_mismatches ? " but the special mismatches below\n" : "\n");
  } else {
    std::cout << fmt::format("\nworst {} inputs found\n", result.worst.size());
    // Besides the disagreement, each side's own error against the exact value
    // (outside the evaluation budget: a handful of oracle calls).
    std::vector<std::string> header = {"#", "ULP apart"};
    header.insert(header.end(), operands.begin(), operands.end());
    header.push_back("a: " + a.Label());
    header.push_back("a error");
    if (b.exact()) {
      header.push_back("b: exact");
    } else {
      header.push_back("b: " + b.Label());
      header.push_back("b error");
    }
    header.push_back("found at");
    TextTable table(header);
    std::vector<size_t> left;
    for (size_t k = 0; k < operands.size() + 1; ++k) left.push_back(2 + k);
    left.push_back(operands.size() + 4);
    table.SetLeftAligned(left);
    for (size_t i = 0; i < result.worst.size(); ++i) {
      const DivergePoint& p = result.worst[i];
      const MpfrNumber exact = oracle.Exact(p.operands.data());
      auto error = [&](float y) {
        const UlpError e = MeasureUlpError(exact.get(), y);
        return e.special_mismatch ? std::string("special") : FormatUlp(e.ulp);
      };
      std::vector<std::string> row = {std::to_string(i + 1), FormatUlp(p.evaluation.ulp)};
      for (const float x : p.operands) row.push_back(FloatCell(x));
      row.push_back(HexFloat(p.evaluation.a));
      row.push_back(error(p.evaluation.a));
      if (b.exact()) {
        row.push_back(exact.ToDecimal(9));
      } else {
        row.push_back(HexFloat(p.evaluation.b));
        row.push_back(error(p.evaluation.b));
      }
      row.push_back(std::to_string(p.found_at));
      table.AddRow(row);
    }
    table.Print(std::cout, "  ");
    const DivergePoint& worst = result.worst.front();
    std::vector<ReplayKernel> kernels;
    for (const DivergeSide* side : {&a, &b}) {
      if (!side->exact()) kernels.push_back(ReplayKernelOf(std::string(op.name), "f32", side->variant, *side->target));
    }
    std::cout << "explain the worst: "
              << WrappedCommand(ExplainCommand(kernels, operands, worst.operands), 19, 4) << '\n';
  }
  if (result.special_mismatches > 0) {
    const DivergePoint& s = *result.first_special;
    std::string at;
    for (size_t k = 0; k < operands.size(); ++k) {
      at += fmt::format("{}{} = {}", k ? ", " : "", operands[k], HexFloat(s.operands[k]));
    }
    PrintWrapped(std::cout, fmt::format(
        "special mismatches (NaN or infinity against something else, not ranked): {}, first: "
        "{}: a = {}, b = {}",
        result.special_mismatches, at, HexFloat(s.evaluation.a),
        b.exact() ? oracle.Exact(s.operands.data()).ToDecimal(9)
                  : HexFloat(s.evaluation.b)), 2);
  }
  if (!args.out_path.empty()) {
    WriteInputFile(args.out_path, args, a, b, result);
    PrintWrapped(std::cout,
                 fmt::format("wrote {} inputs to {} (replay: ulpgate run --op {} --inputs {})",
                             result.worst.size(), args.out_path, op.name, args.out_path),
                 2);
  }
}

}  // namespace

void AddDivergeCommand(CLI::App& app) {
  auto args = std::make_shared<DivergeArgs>();
  auto* cmd = app.add_subcommand(
      "diverge", "Search for the inputs where two variants/targets (or one and exact) disagree most");
  cmd->add_option("--op,--kernel", args->kernel, "Elementwise op (" + ElementwiseOpNames() + ")")
      ->required();
  cmd->add_option("--a", args->a,
                  "A kernel: VARIANT[@TARGET] (default target: the best this CPU runs), or a plugin's or "
                  "IUT's NAME (NAME@TARGET where several share it)")
      ->required();
  cmd->add_option("--b", args->b, "A kernel as --a takes it, or exact; disagreement is in ULPs of b")
      ->required();
  cmd->add_option("--evals", args->evaluations, "Inputs to evaluate on both sides")
      ->capture_default_str()
      ->check(CountValidator("the number of evaluations", 1, kMaxElementwiseInputs));
  cmd->add_option("--seed", args->seed, "Search seed")
      ->capture_default_str()
      ->check(CountValidator("a seed", 0, kMaxSeed));
  cmd->add_option("--keep", args->keep, "Distinct worst inputs to report")
      ->capture_default_str()
      ->check(CountValidator("the number of inputs to keep", 1, 100000));
  cmd->add_option("--out", args->out_path,
                  "Write the worst inputs here (input-file format: run --inputs, golden/ worst-case list)");
  AddPluginOption(cmd, &args->plugins, ": a side names one of its kernels by its name (NAME@TARGET where several share it)");
  cmd->callback([args] { RunDiverge(*args); });
}

}  // namespace ulpgate
