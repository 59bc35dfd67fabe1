// Golden files: committed snapshots of what Measure reports, one file per
// (target, op) at golden/<TARGET>/<op>.json, written only by `ulpgate golden
// bless` and compared exactly by `ulpgate golden check` (the runs are
// deterministic, so any change of a statistic or of one output bit is a
// difference). Format "ulpgate-golden-2", documented in docs/golden-and-gate.md.
//
// A golden file holds what the target's kernels must give, not what the
// blessing machine's kernels gave: bless evaluates every case on the target's
// expected model (its lane count, its MulAdd fused or not), so every compiled
// target has goldens whatever CPU blesses them. Check runs the kernels of the
// targets this CPU runs (RAN) and evaluates the models of the others (MODEL
// ONLY: that catches a change of a model or of the oracle, never a kernel bug).
#ifndef ULPGATE_SUITES_GOLDEN_H_
#define ULPGATE_SUITES_GOLDEN_H_

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "oracles/float_format.h"
#include "suites/engine/measure.h"
#include "suites/sweep/sweep.h"

namespace ulpgate {

inline constexpr const char* kGoldenFormat = "ulpgate-golden-2";

// What bless snapshots for an op: one Measure call per suite (drift: per
// scenario), every kernel variant, seed 1, sizes small enough to commit and
// odd enough that every lane width has tails. Targets are left empty.
std::vector<MeasureSpec> GoldenPlan(const std::string& op);

// "<dir>/<TARGET>/<op>.json".
std::string GoldenPath(const std::string& dir, const std::string& target, const std::string& op);

// The input behind output `index` of one case (Measurement::describe).
using DescribeOutput = std::function<nlohmann::ordered_json(uint64_t)>;

struct OutputChange {
  uint64_t index = 0;           // output index (drift: epoch)
  nlohmann::ordered_json input;  // the input behind it, when known
  uint32_t old_bits = 0;
  uint32_t new_bits = 0;
  // A cast's codes as text ("0x7e (448)"); empty for binary32 outputs.
  std::string old_text, new_text;
};

// "0x7e (448)": a code of a cast's destination and its value.
std::string CastCodeText(const FloatFormat& to, uint32_t code);

// A golden file in memory: the JSON as written, and for cases measured in
// this process the input behind each output (empty for a file read back).
struct GoldenFile {
  std::string path;
  std::string target;
  std::string op;
  nlohmann::ordered_json json;
  std::vector<DescribeOutput> describe;  // per case, or empty
  // Per sweep label (GoldenSweepLabel) whose kernel digest differed from the
  // recorded one when checked: the first input where the kernel leaves its
  // model (old_bits the model's output, new_bits the kernel's).
  std::map<std::string, OutputChange> sweep_differences;
  // The sweeps whose kernels ran (a check on a target this CPU runs).
  size_t sweeps_run = 0;
  // Per case label (GoldenCaseLabel) whose kernel faulted (crashed, hung,
  // wrote outside its output): the fault in words (FaultText) and the command
  // that replays it. Such a case is not measured, so it is not in json's
  // cases: a file with faults is never written, and a check reports each.
  struct Fault {
    std::string text, replay;
  };
  std::map<std::string, Fault> faults;
};

// Why a bless went through although budgets failed: recorded in the header.
struct ForcedBless {
  std::string reason;
  std::vector<std::string> failing_budgets;
};

// How MeasureGolden measures a target.
enum class GoldenSource {
  kModels,   // every case on the target's model (bless)
  kKernels,  // the target's kernels where this CPU runs it, else its model (check)
};

// Runs `specs` (GoldenPlan's, or a file's own cases) on one target and
// returns the golden file they make. `forced` is recorded when non-null.
//
// An elementwise op's file also holds its sweeps: per (variant, dtype) the
// digest of the outputs over 2^24 inputs of a fixed domain range
// (GoldenSweepPlan), as `ulpgate sweep` reports it, so that a kernel wrong
// on one input in 2^20 differs although the sampled suites miss it. Bless
// takes the digest of the expected model; check runs the kernel where this
// CPU runs the target and keeps `recorded`'s digest elsewhere (a model
// cannot show a kernel bug, and the sampled cases already check the model).
GoldenFile MeasureGolden(const std::vector<MeasureSpec>& specs, const TargetInfo& target,
                         const std::string& op, unsigned threads, GoldenSource source,
                         const ForcedBless* forced = nullptr,
                         const GoldenFile* recorded = nullptr);

// One golden sweep: a variant in a format over [begin, end) of a domain.
struct GoldenSweep {
  std::string variant, dtype;
  SweepDomain domain;
  uint64_t begin = 0, end = 0;
};
// What bless sweeps for an elementwise op (none for other ops): every
// variant in every format over 2^24 inputs: in f32 every pattern of the
// second operand in [0x3f000000, 0x40000000) (values in [0.5, 2)) at the
// first = 1.3 (not a short significand, so that the product of the two
// rounds and the variants differ), in bf16 and f16 the pairs whose first
// operand's pattern is in [0x3f00, 0x4000), with every second operand.
std::vector<GoldenSweep> GoldenSweepPlan(const std::string& op);
// "OP VARIANT TARGET sweep every f32 t at grad = 0x1.4cccccp+0 [0x3f000000, 0x40000000)"
// (t and grad: the op's operands).
std::string GoldenSweepLabel(const std::string& op, const std::string& target,
                             const nlohmann::ordered_json& sweep);

// The golden form of one measured case (outputs must have been kept).
nlohmann::ordered_json GoldenCaseJson(const MeasuredCase& measured);

// Reads and validates a golden file: format version, types, known op,
// variants, target and suites, the file's place (<dir>/<TARGET>/<op>.json).
// Throws InputError "PATH:LINE:COL: malformed JSON ..." or "PATH: /pointer:
// what". The target need not run on this CPU.
GoldenFile ReadGoldenFile(const std::string& path);
// The same checks on JSON already in memory (`path` names it in errors).
void ValidateGolden(const std::string& path, const nlohmann::ordered_json& json);

// The Measure calls that re-run exactly the cases a golden file records.
std::vector<MeasureSpec> RecordedRuns(const GoldenFile& file);

// "OP VARIANT SCALAR suite random seed 1 n 512": names one case; equal for
// the same case in two files.
std::string GoldenCaseLabel(const nlohmann::ordered_json& golden_case);
// The labels of the cases GoldenPlan(op) makes on a target.
std::vector<std::string> PlannedCaseLabels(const std::string& op, const std::string& target);

struct FieldChange {
  std::string field;  // "max_ulp", "histogram (0.5, 1]", "conformance.model"
  std::string old_value;
  std::string new_value;
};


// How one case differs between an old and a new golden file.
struct CaseDifference {
  std::string label;  // GoldenCaseLabel
  // Set when the case is in one file only ("missing from the golden file",
  // "new case", "no longer measured").
  std::string note;
  std::vector<FieldChange> fields;    // statistics, digests, side by side
  std::vector<OutputChange> outputs;  // the first differing outputs (up to 5)
  uint64_t outputs_differing = 0;     // how many differ in all
  std::string replay;  // a command that shows the first difference, when there is one
};

// Case by case, in the order of the new file (then cases only in the old
// one). Header fields are not compared.
// Outputs are described with new_file.describe when it has them.
std::vector<CaseDifference> CompareGolden(const GoldenFile& old_file, const GoldenFile& new_file);

// The sweeps of a golden file run again on a target this CPU runs: the
// differences (as CompareGolden gives them), and in `run` how many sweeps
// ran (0 where the target does not run here or the file has none).
std::vector<CaseDifference> CheckGoldenSweeps(const GoldenFile& file, const TargetInfo& target,
                                              unsigned threads, size_t* run);

// The golden file as it is written: 2-space pretty print, trailing newline.
std::string GoldenText(const GoldenFile& file);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_GOLDEN_H_
