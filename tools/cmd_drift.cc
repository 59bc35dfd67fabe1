// ulpgate drift: replays a training run with float kernels on chosen targets
// and variants beside the exact shadow run; prints a table per run, writes the
// JSON report and the SVG of the loss curves.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>

#include "kernels/tanh_bwd_spec.h"
#include "suites/drift/report.h"
#include "suites/drift/run.h"
#include "suites/report.h"
#include "tools/cli.h"
#include "tools/text_table.h"

namespace ulpgate {
namespace {

struct DriftArgs {
  std::string scenario;
  std::string config_path;
  std::string target = "best";
  std::vector<std::string> variants;
  size_t epochs = 0;
  std::string json_path;
  std::string svg_path;
};

std::string Sci(double x) { return fmt::format("{:.3e}", x); }

void PrintRun(const DriftResult& d, const FloatRunResult& r) {
  std::cout << "\nrun " << r.config.Label() << '\n';
  TextTable table({"epoch", "reference loss", "run loss", "rel. deviation", "param max rel",
                   "param max ULP"});
  std::vector<size_t> epochs = {0};
  for (size_t e : LagEpochs(d.epochs)) {
    if (e != epochs.back()) epochs.push_back(e);
  }
  for (size_t e : epochs) {
    table.AddRow({std::to_string(e), fmt::format("{:.9g}", d.reference.loss[e]),
                  fmt::format("{:.9g}", r.loss[e]),
                  Sci(std::fabs(r.loss[e] - d.reference.loss[e]) / d.reference.loss[e]),
                  Sci(r.param_max_relative[e]), fmt::format("{:.4g}", r.param_max_ulp[e])});
  }
  table.Print(std::cout, "  ");
  std::string lags;
  for (const LagAt& lag : r.summary.lags) {
    lags += fmt::format("{}{}: {}", lags.empty() ? "" : ", ", lag.epoch,
                        lag.lag ? fmt::format("{:+d}", *lag.lag) : std::string("not reached"));
  }
  std::cout << fmt::format(
      "  final rel. deviation {}, max {} (epoch {}); lag (epochs) at {}\n",
      Sci(r.summary.final_relative_deviation), Sci(r.summary.max_relative_deviation),
      r.summary.max_deviation_epoch, lags);
  TextTable situ({"in-situ op", "outputs", "max ULP", "mean ULP", "correctly rounded", "special"});
  situ.SetLeftAligned({0});
  for (const auto& [op, s] : r.in_situ) {
    situ.AddRow({op, std::to_string(s.n()), fmt::format("{:.4g}", s.max_ulp()),
                 fmt::format("{:.3g}", s.mean_ulp()),
                 fmt::format("{:.1f}%", 100.0 * s.correctly_rounded() / std::max<uint64_t>(s.n(), 1)),
                 std::to_string(s.special_mismatch())});
  }
  situ.Print(std::cout, "  ");
}

void Drift(const DriftArgs& args) {
  if (!args.scenario.empty() && !args.config_path.empty()) {
    throw UsageError("--scenario and --config exclude each other");
  }
  const Scenario scenario = args.config_path.empty()
                                ? BuiltinScenario(args.scenario.empty() ? "seed" : args.scenario)
                                : ReadScenarioFile(args.config_path);
  std::vector<std::string> skipped;
  const std::vector<const TargetInfo*> targets = ResolveTargets(args.target, &skipped);
  std::vector<RunConfig> runs;
  std::vector<std::string> specs = args.variants;
  if (specs.empty()) {
    for (const auto& v : kTanhBwdVariants) specs.push_back("tanh_bwd=" + std::string(v.name));
  }
  for (const TargetInfo* target : targets) {
    for (const std::string& spec : specs) runs.push_back(ParseRunConfig(spec, target));
  }
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  const auto start = std::chrono::steady_clock::now();
  const DriftResult d = RunDrift(scenario, runs, args.epochs, [tty](size_t done, size_t total) {
    if (tty) std::cerr << fmt::format("\r  epoch {} / {}", done, total) << std::flush;
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (tty) std::cerr << '\r' << std::string(40, ' ') << '\r';
  PrintWrapped(std::cout,
               fmt::format("drift: scenario {} ({}), {} epochs, {} runs", scenario.name,
                           scenario.description, d.epochs, d.runs.size()),
               2);
  for (const FloatRunResult& r : d.runs) PrintRun(d, r);
  std::cerr << fmt::format("drift: {} epochs x ({} float runs + the exact run) in {:.2f} s\n",
                           d.epochs, d.runs.size(), seconds);
  if (!args.json_path.empty()) WriteJsonFile(args.json_path, DriftJson(d));
  if (!args.svg_path.empty()) WriteTextFile(args.svg_path, DriftSvg(d));
}

}  // namespace

void AddDriftCommand(CLI::App& app) {
  auto args = std::make_shared<DriftArgs>();
  auto* cmd = app.add_subcommand(
      "drift", "Replay a training run with float kernels beside an exact run; measure the drift");
  cmd->add_option("--scenario", args->scenario, "Built-in scenario: seed (default), saturating");
  cmd->add_option("--config", args->config_path, "Scenario JSON file (see the README)");
  cmd->add_option("--target", args->target,
                  "Target(s): a name, a comma-separated list, best (default) or all")
      ->capture_default_str();
  cmd->add_option("--variants", args->variants,
                  "One float run per value: op=variant,... over the defaults "
                  "(tanh_bwd=mac,linear=sequential_fma,bias=sequential,mse=sequential_fma,"
                  "sgd=unfused); default: one run per tanh_bwd variant");
  cmd->add_option("--epochs", args->epochs, "Epochs (default: the scenario's)")
      ->check(CountValidator("the number of epochs", 1, kMaxEpochs));
  cmd->add_option("--json", args->json_path, "Write the JSON report here");
  cmd->add_option("--svg", args->svg_path, "Write the loss curves as SVG here");
  cmd->callback([args] { Drift(*args); });
}

}  // namespace ulpgate
