// Outputs made elsewhere as golden files and gate inputs: a check (its files,
// label, models and the model the outputs must follow) blessed under its
// label as <golden>/external/<label>.json, with the record it gave. `golden
// check` replays every one and compares the records; the gate replays them
// for the ledger's rules that match a label. Blessing copies the data it
// reads beside the golden (<label>.npz: the operand arrays and the outputs
// array; a text or .npy file as <label>.inputs.* / <label>.outputs.*) and
// names it relative to <golden>/external, so that a golden directory holds
// what it replays and can be copied anywhere. Goldens blessed before that
// name files relative to the repository root (the golden directory's
// parent), and still replay.
#ifndef ULPGATE_SUITES_EXTERNAL_GOLDEN_H_
#define ULPGATE_SUITES_EXTERNAL_GOLDEN_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suites/investigate/check.h"

namespace ulpgate {

inline constexpr const char* kExternalGoldenFormat = "ulpgate-external-golden-1";
// The target name external records carry in the gate.
inline constexpr const char* kExternalTarget = "external";

struct ExternalGolden {
  std::string path;  // the golden file
  CheckSpec spec;    // inputs and outputs relative to <golden>/external
  // Where the data came from ({inputs, outputs} as the check named them),
  // for people: replay reads the copies.
  nlohmann::ordered_json source;
  nlohmann::ordered_json record;
};

// FILE[:ARRAY] of a golden as a path to open: beside the golden, else (a
// golden blessed before the data travelled with it) from the repository root.
std::string ResolveExternalFile(const std::string& spec, const std::string& golden_dir);
// <golden_dir>/external/*.json, by name. Throws InputError naming a malformed file.
std::vector<ExternalGolden> ReadExternalGoldens(const std::string& golden_dir);
// Runs the check again (files resolved from the repository root); the
// record's suite names the inputs relative to it, as the golden does.
nlohmann::ordered_json ReplayExternal(const CheckSpec& spec, const std::string& golden_dir,
                                      unsigned threads);
// The check a `check --json` report describes, its files as absolute paths
// (an error for a file that is not there), expecting `expected` (may be
// empty).
CheckSpec SpecFromCheckReport(const std::string& report_path, const std::string& golden_dir,
                              const std::string& expected);
// Copies the data `spec` reads into <golden_dir>/external (see above) and
// returns the golden's spec naming the copies, its source the files `spec`
// named. Throws InputError for a file it cannot read or an outputs array it
// cannot tell.
ExternalGolden StoreExternalData(const std::string& golden_dir, const CheckSpec& spec);
// Writes <golden_dir>/external/<label>.json; returns its path.
std::string WriteExternalGolden(const std::string& golden_dir, const CheckSpec& spec,
                                const nlohmann::ordered_json& source,
                                const nlohmann::ordered_json& record);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_EXTERNAL_GOLDEN_H_
