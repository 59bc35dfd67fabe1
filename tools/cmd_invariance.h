// `ulpgate invariance`: whether a matrix product gives a row the same bits
// alone and in batches of other sizes, at other positions, alignments and
// thread counts, and run to run (suites/reveal/invariance.h does the work;
// docs/design.md "Batch invariance").
#ifndef ULPGATE_TOOLS_CMD_INVARIANCE_H_
#define ULPGATE_TOOLS_CMD_INVARIANCE_H_

#include <CLI/CLI.hpp>

namespace ulpgate {

void AddInvarianceCommand(CLI::App& app);

}  // namespace ulpgate

#endif  // ULPGATE_TOOLS_CMD_INVARIANCE_H_
