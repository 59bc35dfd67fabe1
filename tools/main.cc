// ulpgate: validates SIMD kernels against exact MPFR oracles in ULPs.
#include <cstdio>
#include <exception>
#include <iostream>
#include <optional>
#include <string>

#include "suites/engine/kernel_fault.h"
#include "suites/reports/report.h"
#include "tools/cli.h"
#include "tools/cmd_blockquant.h"
#include "tools/cmd_invariance.h"
#include "tools/text_table.h"

int main(int argc, char** argv) {
  CLI::App app{
      "ulpgate: runs SIMD kernels on every Highway target against exact MPFR oracles,\n"
      "measures every output's error in ULPs and checks which rounding model each\n"
      "kernel follows bit for bit."};
  app.require_subcommand(1);
  // Help fits 120 columns; subcommands inherit the formatter when added.
  app.formatter(std::make_shared<ulpgate::WrappingHelpFormatter>());
  app.set_version_flag("--version", ulpgate::ToolVersion());
  // Global options are accepted after the subcommand too (`ulpgate run
  // --cpu-targets ...`); subcommands inherit this when they are added.
  app.fallthrough();
  std::optional<std::string> cpu_targets;
  app.add_option("--cpu-targets", cpu_targets,
                 "Run as if this CPU had only these Highway targets: max:T (every target up "
                 "to T, e.g. max:AVX2) or T1,T2,...; SCALAR always runs, targets this CPU "
                 "lacks stay off; 'all': no restriction. Overrides the environment variable " +
                     std::string(ulpgate::kCpuTargetsVariable))
      ->type_name("LIST");
  // Runs after parsing and before the subcommand's callback, the registry's
  // first user: the restriction must be in place before any target is looked at.
  app.parse_complete_callback([&cpu_targets] {
    ulpgate::InitRegistry(cpu_targets, "--cpu-targets");
  });
  ulpgate::AddListCommand(app);
  ulpgate::AddRunCommand(app);
  ulpgate::AddCheckCommand(app);
  ulpgate::AddExplainCommand(app);
  ulpgate::AddDivergeCommand(app);
  ulpgate::AddCompareCommand(app);
  ulpgate::AddSweepCommand(app);
  ulpgate::AddMatrixCommand(app);
  ulpgate::AddStochasticCommand(app);
  ulpgate::AddRevealCommand(app);
  ulpgate::AddDriftCommand(app);
  ulpgate::AddReportCommand(app);
  ulpgate::AddGoldenCommand(app);
  ulpgate::AddGateCommand(app);
  ulpgate::AddBlockQuantCommand(app);
  ulpgate::AddInvarianceCommand(app);
  // A mistyped command: CLI11 would say only that a subcommand is required.
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      names += (names.empty() ? "" : ", ") + sub->get_name();
      known = known || sub->check_name(argv[1]);
    }
    if (!known) {
      std::cerr << "ulpgate: error: unknown command '" << argv[1] << "' (" << names << ")\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "ulpgate: error: " << e.what() << " (see 'ulpgate --help')\n";
    return 2;
  } catch (const ulpgate::KernelFaultError& e) {
    // A command that measures one kernel directly (explain, a replay): the
    // fault is its answer.
    std::cerr << "ulpgate: the kernel faulted: " << e.what() << '\n';
    return ulpgate::kExitKernelFault;
  } catch (const std::exception& e) {
    // UsageError, InputError, unwritable reports: one line, status 2.
    std::cerr << "ulpgate: error: " << e.what() << '\n';
    return 2;
  }
  return ulpgate::ExitStatus();
}
