// Goldens of `reveal`: a kernel's summation model and probe vectors that pin
// it down, with the outputs the kernel gave; checking one re-runs the probes
// and the model and names the first probe whose output changed.
#ifndef ULPGATE_SUITES_REVEAL_REVEAL_GOLDEN_H_
#define ULPGATE_SUITES_REVEAL_REVEAL_GOLDEN_H_

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "suites/reveal/reveal.h"

namespace ulpgate {

struct RevealGolden {
  std::string kernel;  // the door's name
  DotShape shape;      // the calls the probes ran in
  SummationTree model;
  std::vector<GoldenProbe> probes;
};

// The file's JSON; `command` is the command line that regenerates it.
nlohmann::ordered_json RevealGoldenJson(const RevealGolden& golden, const std::string& command);
// Throws std::invalid_argument naming the field on a malformed file.
RevealGolden RevealGoldenFromJson(const nlohmann::ordered_json& json);

// Builds a golden for a model the door was revealed to follow: the probes
// (at most `max_probes`) run on the door.
RevealGolden MakeRevealGolden(DotDoor& door, const DotShape& shape, const SummationTree& model,
                              size_t max_probes, RevealCost* cost);

struct RevealGoldenCheck {
  size_t probes = 0;
  size_t changed = 0;        // probes whose kernel output differs from the file's
  std::string first_change;  // "probe 12 (lca 0 37): kernel 0x1p+4, golden 0x1.8p+4"
  size_t model_differs = 0;  // probes where the file's model disagrees with the file's outputs
  std::string first_model_difference;
  bool passed() const { return changed == 0 && model_differs == 0; }
};
RevealGoldenCheck CheckRevealGolden(DotDoor& door, const RevealGolden& golden, RevealCost* cost);

// The reveal goldens of a golden directory live in <dir>/reveal/, one file
// per kernel, named from the door's name made file-safe:
// "linear_fwd/pairwise@AVX2" -> "linear_fwd-pairwise@AVX2.json".
std::string RevealGoldenDirectory(const std::string& golden_dir);
std::string RevealGoldenFileName(const std::string& kernel);

// One reveal golden file checked on the kernel it names. A kernel of a
// target this CPU cannot run is not checked (not a pass, not a failure):
// `not_checked` says why.
struct RevealGoldenFileCheck {
  std::string path, kernel;
  std::string not_checked;  // empty when the probes ran
  RevealGoldenCheck check;
  double seconds = 0;
};
// Every <dir>/reveal/*.json, in name order; none when the folder is absent.
// Every file is read before any probe runs: a malformed file or an unknown
// kernel throws InputError naming the file. `ops` not empty: only the files
// whose kernel is one of those ops ("linear_fwd" of "linear_fwd/pairwise@AVX2"),
// so that a check of one elementwise op does not pay for every summation probe.
std::vector<RevealGoldenFileCheck> CheckRevealGoldens(const std::string& golden_dir,
                                                      const std::vector<std::string>& ops = {});
// "probe 12 (lca 0 37): kernel 0x1p+4, golden 0x1.8p+4" and the counts: why
// a file failed, one line.
std::string RevealGoldenFailure(const RevealGoldenFileCheck& file);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REVEAL_REVEAL_GOLDEN_H_
