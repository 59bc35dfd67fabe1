// Outputs made elsewhere as golden files and gate inputs: a check (its files,
// label, models and the model the outputs must follow) blessed under its
// label as <golden>/external/<label>.json, with the record it gave. `golden
// check` replays every one and compares the records; the gate replays them
// for the ledger's rules that match a label. The files are named relative to
// the repository root (the golden directory's parent), so a clone replays
// them anywhere.
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
  CheckSpec spec;    // inputs and outputs relative to the repository root
  nlohmann::ordered_json record;
};

// <golden_dir>/external/*.json, by name. Throws InputError naming a malformed file.
std::vector<ExternalGolden> ReadExternalGoldens(const std::string& golden_dir);
// Runs the check again (files resolved from the repository root); the
// record's suite names the inputs relative to it, as the golden does.
nlohmann::ordered_json ReplayExternal(const CheckSpec& spec, const std::string& golden_dir,
                                      unsigned threads);
// The check a `check --json` report describes, its files made relative to
// the repository root (an error for a file outside it), expecting `expected`
// (may be empty).
CheckSpec SpecFromCheckReport(const std::string& report_path, const std::string& golden_dir,
                              const std::string& expected);
// Writes <golden_dir>/external/<label>.json; returns its path.
std::string WriteExternalGolden(const std::string& golden_dir, const CheckSpec& spec,
                                const nlohmann::ordered_json& record);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_EXTERNAL_GOLDEN_H_
