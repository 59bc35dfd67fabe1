// The cast ops (cast_f32, cast_bf16, cast_f16) in the CLI: run, check, sweep
// and list call these for an op of OpFamily::kCast (suites/engine/cast_cases.h
// measures; docs/commands.md shows the commands).
#ifndef ULPGATE_TOOLS_CAST_COMMANDS_H_
#define ULPGATE_TOOLS_CAST_COMMANDS_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "tools/run_args.h"

namespace ulpgate {

// `run cast_X --dtype DEST`: each variant on each target over the suites
// (--suite one of them; default all three) or the sources of --inputs (as
// check reads them), the policies each follows.
void RunCastCommand(const RunArgs& args);

// `check cast_X --dtype DEST --inputs IN --outputs OUT`: IN the source
// values (.npy of float32 or uint16 patterns, or raw little-endian .bin of
// them), OUT the codes (.npy of uint8, or .bin), one a byte; prints the
// policies they follow. Exit 1 under `require` when the outputs follow no
// policy or not that one.
struct CastCheckArgs {
  std::string op, dtype, inputs_path, outputs_path;
  std::string require;  // a policy's name the outputs must follow; "any": some policy
};
void CheckCastCommand(const CastCheckArgs& args);

// `sweep cast_X --dtype DEST`: every source pattern through each variant on
// each target (2^32 for f32: against the step functions of
// oracles/cast_reference.h, each policy they take; 2^16 for bf16 and f16:
// against every policy of the catalogue).
void SweepCastCommand(const std::string& op, const std::string& dtype, const std::string& variant,
                      const std::string& target, unsigned threads);

// The cast ops for `list`.
void PrintCastOps(std::ostream& out);

}  // namespace ulpgate

#endif  // ULPGATE_TOOLS_CAST_COMMANDS_H_
