// A kernel's fault as every command shows it: the kernel, the fault, the
// input (or the call) and the command that replays it. A faulted case is never
// a measurement: commands report it, measure the other cases, and exit with
// kExitKernelFault at the end.
#ifndef ULPGATE_TOOLS_FAULTS_H_
#define ULPGATE_TOOLS_FAULTS_H_

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

#include "suites/engine/engine.h"
#include "suites/inputs/inputs.h"

namespace ulpgate {

// The command that reproduces the fault of `r` (r.fault set): `run`'s replay
// command at the fault's input, or at the first input of the faulting call.
std::string FaultReplayCommand(const CaseResult& r, const InputSet& inputs);

// "CRASHED: sigmoid_bwd segv (f32) on flaky: SIGSEGV at input #12: grad = ...,
// t = ...; the case was not measured", wrapped, then "  reproduce: COMMAND".
void PrintKernelFault(std::ostream& out, const CaseResult& r, const InputSet& inputs);

// Adds the replay command to the record's "fault" (CaseJson's record of `r`).
void AddFaultReplay(nlohmann::ordered_json* record, const CaseResult& r, const InputSet& inputs);

}  // namespace ulpgate

#endif  // ULPGATE_TOOLS_FAULTS_H_
