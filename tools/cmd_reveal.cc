// ulpgate reveal: how a matrix product adds up, from its outputs alone: the
// summation tree of an output (FPRev's cancellation probes), the accumulator's
// fingerprint, and the resulting model checked bit for bit against the kernel
// (suites/reveal/reveal.h does the work; this file prints).
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>

#include "suites/reports/json_file.h"
#include "suites/reports/report.h"
#include "suites/reveal/builtin_door.h"
#include "suites/reveal/iut_door.h"
#include "suites/reveal/plugin_door.h"
#include "suites/reveal/planted_kernels.h"
#include "suites/reveal/reveal.h"
#include "suites/reveal/reveal_golden.h"
#include "tools/cli.h"

namespace ulpgate {
namespace {

struct RevealArgs {
  std::string kernel = "sequential_fma";
  std::string targets = "best";
  // Where the kernel comes from when not ulpgate's own: a plugin's library or
  // an IUT's command line, --door then naming its linear_fwd variant.
  std::string plugin;
  std::string iut;
  uint64_t k = 4096, m = 16, n = 256, row = 0, col = 0;
  bool no_batch = false;
  uint64_t check = 100000;
  uint64_t seed = 1;
  bool print_tree = false;
  std::string json_path;
  std::string write_golden;
  std::string check_golden;
  uint64_t golden_probes = 256;
};

constexpr char kPlantedPrefix[] = "planted:";

std::string KernelNames() {
  std::string names;
  for (const std::string& v : BuiltinDotVariants()) names += (names.empty() ? "" : ", ") + v;
  for (const PlantedKernelInfo& p : PlantedKernels()) names += ", planted:" + p.name;
  return names;
}

// The doors --kernel and --targets name: a builtin variant on each target,
// one planted kernel, or the variant of --plugin's or --iut's linear_fwd.
std::vector<std::unique_ptr<DotDoor>> Doors(const RevealArgs& args, const std::string& kernel,
                                            const std::string& targets) {
  std::vector<std::unique_ptr<DotDoor>> doors;
  if (!args.plugin.empty() || !args.iut.empty()) {
    const std::string variant = kernel.rfind("linear_fwd/", 0) == 0 ? kernel.substr(11) : kernel;
    // Both throw a DotDoorError naming the library or command when it does
    // not load or start, or offers no such variant.
    doors.push_back(!args.plugin.empty() ? MakePluginDotDoor(args.plugin, variant)
                                         : MakeIutDotDoor(args.iut, variant));
    return doors;
  }
  if (kernel.rfind(kPlantedPrefix, 0) == 0) {
    auto door = MakePlantedDoor(kernel.substr(sizeof(kPlantedPrefix) - 1));
    if (!door) throw UsageError(fmt::format("--door: no planted kernel '{}' ({})", kernel, KernelNames()));
    doors.push_back(std::move(door));
    return doors;
  }
  const std::string variant = kernel.rfind("linear_fwd/", 0) == 0 ? kernel.substr(11) : kernel;
  std::vector<const TargetInfo*> chosen;
  if (targets == "best") {
    chosen.push_back(&BestTarget());
  } else {
    std::vector<std::string> skipped;
    chosen = ResolveTargets(targets, &skipped);
    if (!skipped.empty()) std::cout << "not run: " << DescribeSkipped(skipped) << "\n";
  }
  for (const TargetInfo* t : chosen) {
    auto door = MakeBuiltinDoor(variant, *t);
    if (!door) throw UsageError(fmt::format("--door: no kernel '{}' ({})", kernel, KernelNames()));
    doors.push_back(std::move(door));
  }
  return doors;
}

// The source options that bring the kernel back: a replay without them would
// reveal ulpgate's own kernel of the same name.
std::string SourceOptions(const RevealArgs& args) {
  if (!args.plugin.empty()) return " --plugin " + ShellWord(args.plugin);
  if (!args.iut.empty()) return " --iut " + ShellWord(args.iut);
  return "";
}

std::string CommandLine(const RevealArgs& args, const std::string& kernel) {
  // A builtin variant runs on the targets named: the one written from. A
  // planted kernel, a plugin's or an IUT's take no targets.
  const bool builtin = kernel.rfind(kPlantedPrefix, 0) != 0 && args.plugin.empty() && args.iut.empty();
  const std::string targets = builtin ? " --targets " + args.targets : "";
  return fmt::format("ulpgate reveal{} --door {}{} --k {} --m {} --n {} --row {} --col {}{} "
                     "--golden-probes {} --write-golden FILE",
                     SourceOptions(args), ShellWord(kernel), targets, args.k, args.m, args.n, args.row,
                     args.col,
                     args.no_batch ? " --no-batch" : "", args.golden_probes);
}

void RunCheckGolden(const RevealArgs& args, bool kernel_given) {
  RevealGolden golden;
  try {
    golden = RevealGoldenFromJson(ReadJsonFile(args.check_golden));
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("{}: {}", args.check_golden, e.what()));
  }
  // The golden's kernel unless --door names another (to hold a new
  // kernel to an old model).
  std::string kernel = golden.kernel;
  std::string targets = "best";
  if (kernel_given) {
    kernel = args.kernel;
    targets = args.targets;
  } else if (!args.plugin.empty() || !args.iut.empty()) {
    // "plugin:PATH:VARIANT" or "iut:COMMAND:VARIANT@TARGET": the variant, on
    // the library or command given now.
    kernel = kernel.substr(kernel.rfind(':') + 1);
  } else if (kernel.rfind("linear_fwd/", 0) == 0) {
    const size_t at = kernel.find('@');
    targets = kernel.substr(at + 1);
    kernel = kernel.substr(0, at);
  }
  for (auto& door : Doors(args, kernel, targets)) {
    RevealCost cost;
    const auto start = std::chrono::steady_clock::now();
    const RevealGoldenCheck check = CheckRevealGolden(*door, golden, &cost);
    cost.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << fmt::format("{}: {} probes of {} re-run ({} calls, {:.3f} s): ", door->Name(),
                             check.probes, args.check_golden, cost.calls, cost.seconds);
    if (check.passed()) {
      std::cout << "every output as the golden holds it, and its model gives them\n";
      continue;
    }
    std::cout << "FAILED\n";
    if (check.changed) {
      std::cout << fmt::format("  {} probe outputs changed; first: {}\n", check.changed,
                               check.first_change);
    }
    if (check.model_differs) {
      std::cout << fmt::format("  the golden's model disagrees with {} of its outputs; first: {}\n",
                               check.model_differs, check.first_model_difference);
    }
    ExitStatus() = 1;
  }
}

void RunReveal(const RevealArgs& args, bool kernel_given) {
  if (!args.check_golden.empty()) {
    RunCheckGolden(args, kernel_given);
    return;
  }
  if (args.row >= args.m || args.col >= args.n) {
    throw UsageError(fmt::format("--row/--col: output ({}, {}) outside a {} x {} call", args.row,
                                 args.col, args.m, args.n));
  }
  const DotShape shape{args.m, args.n, args.k};
  RevealOptions options;
  options.batch = !args.no_batch;
  auto doors = Doors(args, args.kernel, args.targets);
  if (!args.write_golden.empty() && doors.size() != 1) {
    throw UsageError("--write-golden: one kernel on one target (--targets NAME)");
  }
  nlohmann::ordered_json report = nlohmann::ordered_json::array();
  bool all_match = true;
  for (auto& door : doors) {
    std::cout << fmt::format("{}: output ({}, {}) of {} x {} x {} calls, {} operands, {} outputs\n",
                             door->Name(), args.row, args.col, args.m, args.n, args.k,
                             door->OperandFormat().name, door->OutputFormat().name);
    const TreeReveal tree = RevealTree(*door, shape, args.row, args.col, options);
    std::cout << fmt::format("  probes: {}\n", tree.probes);
    std::cout << fmt::format("  tree revealed: {} kernel calls, {} probes, {:.3f} s\n",
                             tree.cost.calls, tree.cost.probes, tree.cost.seconds);
    const AccumulatorFingerprint fp =
        RevealFingerprint(*door, shape, args.row, args.col, tree.tree, options);
    std::cout << fmt::format("  fingerprint: {} kernel calls, {} probes, {:.3f} s\n",
                             fp.cost.calls, fp.cost.probes, fp.cost.seconds);
    for (const std::string& line : DescribeFingerprint(fp)) std::cout << "  " << line << "\n";
    if (args.print_tree) std::cout << "  model: " << fp.model.Text() << "\n";
    nlohmann::ordered_json entry;
    entry["kernel"] = door->Name();
    entry["shape"] = {{"m", args.m}, {"n", args.n}, {"k", args.k}};
    entry["output"] = {args.row, args.col};
    entry["model"] = fp.model.Text();
    entry["shape_name"] = fp.shape;
    entry["fingerprint"] = DescribeFingerprint(fp);
    entry["tree_cost"] = {{"calls", tree.cost.calls}, {"probes", tree.cost.probes},
                          {"seconds", tree.cost.seconds}};
    entry["fingerprint_cost"] = {{"calls", fp.cost.calls}, {"probes", fp.cost.probes},
                                 {"seconds", fp.cost.seconds}};
    if (args.check > 0) {
      const ModelCheck check = CheckModel(*door, shape, fp.model, args.check, args.seed);
      std::cout << fmt::format(
          "  model check: {} of {} random outputs bit for bit ({} mismatches; {} calls, {:.3f} s, "
          "seed {}){}\n",
          check.outputs - check.mismatches, check.outputs, check.mismatches, check.calls,
          check.seconds, args.seed, check.mismatches ? "; first: " + check.first_mismatch : "");
      entry["check"] = {{"outputs", check.outputs}, {"mismatches", check.mismatches},
                        {"seconds", check.seconds}, {"seed", args.seed},
                        {"first_mismatch", check.first_mismatch}};
      all_match = all_match && check.mismatches == 0;
    }
    if (!args.write_golden.empty()) {
      RevealCost cost;
      const RevealGolden golden =
          MakeRevealGolden(*door, shape, fp.model, args.golden_probes, &cost);
      WriteJsonFile(args.write_golden, RevealGoldenJson(golden, CommandLine(args, args.kernel)));
      std::cout << fmt::format("  golden: {} probes written to {}\n", golden.probes.size(),
                               args.write_golden);
    }
    report.push_back(std::move(entry));
  }
  if (!args.json_path.empty()) {
    nlohmann::ordered_json file;
    file["format"] = "ulpgate-reveal-1";
    file["kernels"] = std::move(report);
    WriteJsonFile(args.json_path, file);
  }
  if (!all_match) ExitStatus() = 1;
}

}  // namespace

void AddRevealCommand(CLI::App& app) {
  auto args = std::make_shared<RevealArgs>();
  auto* cmd = app.add_subcommand(
      "reveal",
      "How a matrix product adds up, from its outputs alone: the summation tree of an output "
      "(cancellation probes), the accumulator's fingerprint (products rounded or exact, bits "
      "after alignment, nearest or truncation, promotion, split-K), and the model checked bit "
      "for bit against the kernel (exit 1 on a mismatch or a changed golden)");
  // --kernel elsewhere names an op (an alias of --op); here the matrix product
  // itself, so the option is --door, --kernel kept as its alias.
  auto* kernel = cmd->add_option("--door,--kernel", args->kernel,
                                 "The matrix product: a linear_fwd variant with a zero bias, on "
                                 "--targets, or a planted kernel (" + KernelNames() + ")")
                     ->capture_default_str();
  cmd->add_option("--targets", args->targets,
                  "Targets of a linear_fwd variant: best, all, or names comma-separated")
      ->capture_default_str();
  auto* plugin = cmd->add_option("--plugin", args->plugin,
                                 "A shared library (ulpgate/plugin.h, ABI version 4) whose linear_fwd "
                                 "kernel --door names (run in ulpgate-iut, where a crash or a hang "
                                 "is a fault)")
                     ->type_name("LIB");
  cmd->add_option("--iut", args->iut,
                  "The command line of an implementation-under-test process (docs/iut.md; run by "
                  "/bin/sh) whose linear_fwd kernel --door names, as VARIANT or VARIANT@TARGET")
      ->type_name("COMMAND")
      ->excludes(plugin);
  cmd->add_option("--k", args->k, "Terms of each dot product")
      ->capture_default_str()
      ->check(CountValidator("the terms of a dot product", 1, uint64_t{1} << 20));
  cmd->add_option("--m", args->m, "Rows of A (and of C) in each call")
      ->capture_default_str()
      ->check(CountValidator("the rows of a call", 1, 4096));
  cmd->add_option("--n", args->n, "Rows of B (columns of C) in each call")
      ->capture_default_str()
      ->check(CountValidator("the columns of a call", 1, 4096));
  cmd->add_option("--row", args->row, "The output revealed: its row")->capture_default_str();
  cmd->add_option("--col", args->col, "The output revealed: its column")->capture_default_str();
  cmd->add_flag("--no-batch", args->no_batch,
                "One probe per call, at (--row, --col), every other operand zero (by default "
                "every output of a call carries a probe, taking them all to add up alike)");
  cmd->add_option("--check", args->check,
                  "Random outputs on which the model is checked bit for bit against the kernel "
                  "(0: none)")
      ->capture_default_str()
      ->check(CountValidator("the outputs checked", 0, uint64_t{1} << 30));
  cmd->add_option("--seed", args->seed, "Seed of the model check's operands")
      ->capture_default_str()
      ->check(CountValidator("a seed", 0, kMaxSeed));
  cmd->add_flag("--tree", args->print_tree, "Print the whole model in its text form");
  cmd->add_option("--json", args->json_path, "Write the results as JSON here");
  cmd->add_option("--write-golden", args->write_golden,
                  "Write the model and its probe vectors (with the kernel's outputs) as a golden "
                  "file");
  cmd->add_option("--check-golden", args->check_golden,
                  "Re-run a golden file's probes (on its kernel, or --door's) and its model; "
                  "exit 1 naming the first probe whose output changed");
  cmd->add_option("--golden-probes", args->golden_probes, "Probes a golden file holds at most")
      ->capture_default_str()
      ->check(CountValidator("the probes of a golden", 2, 100000));
  cmd->callback([args, kernel] {
    try {
      RunReveal(*args, kernel->count() > 0);
    } catch (const DotDoorError& e) {
      std::cerr << "ulpgate reveal: " << e.what() << "\n";
      ExitStatus() = kExitKernelFault;
    } catch (const std::runtime_error& e) {
      if (dynamic_cast<const UsageError*>(&e)) throw;
      std::cerr << "ulpgate reveal: " << e.what() << "\n";
      ExitStatus() = 1;
    }
  });
}

}  // namespace ulpgate
