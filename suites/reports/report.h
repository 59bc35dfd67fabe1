// Report JSON (docs/design.md "Reports and formats"). Every number that identifies an
// input is written as a C99 hex float and as its bit pattern.
#ifndef ULPGATE_SUITES_REPORT_H_
#define ULPGATE_SUITES_REPORT_H_

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

#include "suites/engine/elementwise_cases.h"
#include "suites/engine/reduction_cases.h"

namespace ulpgate {

// "ulpgate X.Y.Z", the version of the CMake project: what --version prints and
// every report records as the tool that wrote it.
const char* ToolVersion();

// {"index": i, "grad": "0x1p-1", "t": "...", "bits": {"grad": "0x3f000000", ...}}
nlohmann::ordered_json InputJson(const InputSet& inputs, uint64_t index);

// {"index": global, "instance": i, "element": [b, o], "name": "y[b,o]"}: one
// output element of a reduction run (global = instance * outputs + element).
nlohmann::ordered_json ReductionElementJson(const ReductionInputSet& inputs, uint64_t index);

// The JSON of a case record, one entry of a report's "results" (and what
// golden and gate read): names, kind, dtype, suite, seed, for reductions shape
// and instances, n, the ULP histogram, special mismatches (with
// "special_mismatch_causes": count and first input per SpecialCause) and
// signed-zero mismatches, max
// with its input, mean, percentiles, correctly rounded, for reductions
// "bound_fraction" (histogram, max, above_one, overflow_exempt),
// "conformance" (null for a peer), the output digest and any error map. A
// faulted case (CaseResult::fault) has its names, kind, dtype, suite, seed,
// shape, instances and n, then "fault" (kind, detail, input: null when no one
// input faults alone, call_first, call_count) and no measurement at all.
// `describe` gives the JSON of the input behind output element i.
using DescribeInput = std::function<nlohmann::ordered_json(uint64_t)>;
nlohmann::ordered_json CaseJson(const CaseResult& result, const DescribeInput& describe);
// With InputJson or ReductionElementJson as `describe`; an elementwise case
// of a kernel (or its model) also gets "reproduce": per input it names
// ("fault_input", "max_input", "first_mismatch_input",
// "first_special_mismatch_input") the command that computes it again
// (suites/reports/replay.h).
nlohmann::ordered_json CaseJson(const CaseResult& result, const InputSet& inputs);
nlohmann::ordered_json CaseJson(const CaseResult& result, const ReductionInputSet& inputs);

// A record's fault in words, from its JSON: "CRASHED (SIGSEGV) at input #12",
// "OUT OF BOUNDS (the kernel wrote outside its output) on a call of inputs #0
// to #0". Empty for a record without "fault".
std::string FaultText(const nlohmann::ordered_json& record);

// Writes JSON to a path atomically (temporary file in the same folder, then
// rename), so a crash never leaves a half-written report. Throws
// std::runtime_error naming the path on failure. For tests of that promise:
// when the environment variable ULPGATE_FAILPOINT equals `failpoint`, the
// process exits with status 3 after writing the temporary file, before the
// rename, as a crash there would.
void WriteJsonFile(const std::string& path, const nlohmann::ordered_json& json,
                   const char* failpoint = nullptr);
// The same for any text (JUnit XML, say).
void WriteTextFile(const std::string& path, const std::string& text,
                   const char* failpoint = nullptr);

std::string DigestHex(uint64_t digest);

// A word of a command line as a POSIX shell reads it back: as it is when it
// holds only the characters of names, numbers, paths and run specs, else in
// single quotes. For the replay commands reports print.
std::string ShellWord(const std::string& word);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REPORT_H_
