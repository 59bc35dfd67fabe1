// ulpgate: validates SIMD kernels against exact MPFR oracles in ULPs.
#include <cstdio>
#include <exception>
#include <iostream>

#include "tools/cli.h"

int main(int argc, char** argv) {
  CLI::App app{
      "ulpgate: runs SIMD kernels on every Highway target against exact MPFR oracles,\n"
      "measures every output's error in ULPs and checks which rounding model each\n"
      "kernel follows bit for bit."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ulpgate 0.1.0");
  ulpgate::AddListCommand(app);
  ulpgate::AddRunCommand(app);
  ulpgate::AddExplainCommand(app);
  ulpgate::AddDivergeCommand(app);
  ulpgate::AddMatrixCommand(app);
  ulpgate::AddDriftCommand(app);
  ulpgate::AddGoldenCommand(app);
  ulpgate::AddGateCommand(app);
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
  } catch (const std::exception& e) {
    // UsageError, InputError, unwritable reports: one line, status 2.
    std::cerr << "ulpgate: error: " << e.what() << '\n';
    return 2;
  }
  return ulpgate::ExitStatus();
}
