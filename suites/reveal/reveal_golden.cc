#include "suites/reveal/reveal_golden.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "kernels/reductions/reduction_spec.h"
#include "kernels/registry.h"
#include "suites/inputs/inputs.h"
#include "suites/reports/json_file.h"
#include "suites/reveal/builtin_door.h"
#include "suites/reveal/planted_kernels.h"

namespace ulpgate {
namespace {

// Values as hex floats: exact, and a changed bit shows in a diff.
std::string Hex(double x) { return fmt::format("{:a}", x); }

double FromHex(const nlohmann::ordered_json& j, const std::string& where) {
  if (!j.is_string()) throw std::invalid_argument(where + ": expected a hex float string");
  const std::string text = j.get<std::string>();
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0') {
    throw std::invalid_argument(where + ": expected a hex float, got '" + text + "'");
  }
  return x;
}

// The probe's operands as the model takes them: a[t] * b[t] per term.
void ProbeOperands(const GoldenProbe& p, size_t k, std::vector<double>* a, std::vector<double>* b) {
  a->assign(k, 0.0);
  b->assign(k, 0.0);
  for (uint32_t t = p.background_begin; t < p.background_end; ++t) {
    (*a)[t] = p.background_a;
    (*b)[t] = p.background_b;
  }
  for (const ProbeTerm& term : p.terms) {
    (*a)[term.term] = term.a;
    (*b)[term.term] = term.b;
  }
}

}  // namespace

nlohmann::ordered_json RevealGoldenJson(const RevealGolden& g, const std::string& command) {
  nlohmann::ordered_json j;
  j["format"] = "ulpgate-reveal-golden-1";
  j["what"] =
      "ulpgate reveal golden: how one kernel's dot products add up (summation tree and "
      "arithmetic, text form of suites/reveal/summation_tree.h) and probe vectors whose outputs "
      "pin it down; `ulpgate reveal --check-golden FILE` re-runs them";
  j["regenerate"] = command;
  j["kernel"] = g.kernel;
  j["shape"] = {{"m", g.shape.m}, {"n", g.shape.n}, {"k", g.shape.k}};
  j["model"] = g.model.Text();
  j["probes"] = nlohmann::ordered_json::array();
  for (const GoldenProbe& p : g.probes) {
    nlohmann::ordered_json probe;
    probe["what"] = p.what;
    probe["terms"] = nlohmann::ordered_json::array();
    for (const ProbeTerm& t : p.terms) probe["terms"].push_back({t.term, Hex(t.a), Hex(t.b)});
    if (p.background_end > p.background_begin) {
      probe["background"] = {Hex(p.background_a), Hex(p.background_b), p.background_begin,
                             p.background_end};
    }
    probe["output"] = Hex(p.output);
    j["probes"].push_back(std::move(probe));
  }
  return j;
}

RevealGolden RevealGoldenFromJson(const nlohmann::ordered_json& j) {
  RevealGolden g;
  try {
    if (j.at("format").get<std::string>() != "ulpgate-reveal-golden-1") {
      throw std::invalid_argument("reveal golden: format '" + j["format"].get<std::string>() +
                                  "', expected 'ulpgate-reveal-golden-1'");
    }
    g.kernel = j.at("kernel").get<std::string>();
    g.shape.m = j.at("shape").at("m").get<size_t>();
    g.shape.n = j.at("shape").at("n").get<size_t>();
    g.shape.k = j.at("shape").at("k").get<size_t>();
    g.model = ParseSummationTree(j.at("model").get<std::string>());
    for (size_t x = 0; x < j.at("probes").size(); ++x) {
      const auto& pj = j["probes"][x];
      const std::string where = fmt::format("/probes/{}", x);
      GoldenProbe p;
      p.what = pj.at("what").get<std::string>();
      for (const auto& t : pj.at("terms")) {
        const uint32_t term = t.at(0).get<uint32_t>();
        if (term >= g.shape.k) throw std::invalid_argument(where + ": a term beyond k");
        p.terms.push_back({term, FromHex(t.at(1), where), FromHex(t.at(2), where)});
      }
      if (pj.contains("background")) {
        const auto& bg = pj["background"];
        p.background_a = FromHex(bg.at(0), where);
        p.background_b = FromHex(bg.at(1), where);
        p.background_begin = bg.at(2).get<uint32_t>();
        p.background_end = bg.at(3).get<uint32_t>();
        if (p.background_end > g.shape.k || p.background_begin > p.background_end) {
          throw std::invalid_argument(where + ": background beyond k");
        }
      }
      p.output = FromHex(pj.at("output"), where + "/output");
      g.probes.push_back(std::move(p));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("reveal golden: ") + e.what());
  }
  if (g.model.k() != g.shape.k) throw std::invalid_argument("reveal golden: the model's k is not the shape's");
  return g;
}

RevealGolden MakeRevealGolden(DotDoor& door, const DotShape& shape, const SummationTree& model,
                              size_t max_probes, RevealCost* cost) {
  RevealGolden g;
  g.kernel = door.Name();
  g.shape = shape;
  g.model = model;
  g.probes = GoldenProbes(door, model, max_probes);
  RunGoldenProbes(door, shape, &g.probes, cost);
  return g;
}

RevealGoldenCheck CheckRevealGolden(DotDoor& door, const RevealGolden& golden, RevealCost* cost) {
  RevealGoldenCheck check;
  std::vector<GoldenProbe> rerun = golden.probes;
  RunGoldenProbes(door, golden.shape, &rerun, cost);
  check.probes = rerun.size();
  std::vector<double> a, b;
  for (size_t x = 0; x < rerun.size(); ++x) {
    const GoldenProbe& was = golden.probes[x];
    if (rerun[x].output != was.output || std::signbit(rerun[x].output) != std::signbit(was.output)) {
      if (check.changed++ == 0) {
        check.first_change = fmt::format("probe {} ({}): kernel {}, golden {}", x, was.what,
                                         Hex(rerun[x].output), Hex(was.output));
      }
    }
    ProbeOperands(was, golden.shape.k, &a, &b);
    const double model = Evaluate(golden.model, a.data(), b.data(), door.OutputFormat());
    if (model != was.output) {
      if (check.model_differs++ == 0) {
        check.first_model_difference = fmt::format("probe {} ({}): model {}, golden {}", x,
                                                   was.what, Hex(model), Hex(was.output));
      }
    }
  }
  return check;
}

namespace {

// The door a golden's kernel names ("planted:NAME" or
// "linear_fwd/VARIANT@TARGET"), or null with why in `not_runnable`.
std::unique_ptr<DotDoor> OpenGoldenDoor(const std::string& path, const std::string& kernel,
                                        std::string* not_runnable) {
  constexpr char kPlanted[] = "planted:";
  if (kernel.rfind(kPlanted, 0) == 0) {
    auto door = MakePlantedDoor(kernel.substr(sizeof(kPlanted) - 1));
    if (!door) throw InputError(path + ": kernel '" + kernel + "': no such planted kernel");
    return door;
  }
  const size_t at = kernel.rfind('@');
  if (kernel.rfind("linear_fwd/", 0) != 0 || at == std::string::npos) {
    throw InputError(path + ": kernel '" + kernel +
                     "': not a planted:NAME or linear_fwd/VARIANT@TARGET kernel");
  }
  const TargetInfo* target = FindTarget(kernel.substr(at + 1));
  if (target == nullptr) {
    throw InputError(path + ": kernel '" + kernel + "': target not compiled in this build");
  }
  auto door = MakeBuiltinDoor(kernel.substr(11, at - 11), *target);
  if (!door) throw InputError(path + ": kernel '" + kernel + "': no such linear_fwd variant");
  if (!target->supported) {
    *not_runnable = target->name + " " + NotRunnableReason(*target);
    return nullptr;
  }
  return door;
}

}  // namespace

std::string RevealGoldenDirectory(const std::string& golden_dir) {
  return (std::filesystem::path(golden_dir) / "reveal").string();
}

std::string RevealGoldenFileName(const std::string& kernel) {
  std::string name = kernel;
  for (char& c : name) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-' || c == '@' || c == '.';
    if (!safe) c = '-';
  }
  return name + ".json";
}

namespace {

// A built-in kernel is "op/variant@target"; a planted, plugin or IUT door's
// kernel names no op, and its dot products are a reduction's: selected with
// any reduction.
bool GoldenOfOps(const std::string& kernel, const std::vector<std::string>& ops) {
  const size_t slash = kernel.find('/');
  if (slash != std::string::npos) {
    return std::find(ops.begin(), ops.end(), kernel.substr(0, slash)) != ops.end();
  }
  return std::any_of(ops.begin(), ops.end(),
                     [](const std::string& op) { return FindReductionOp(op) != nullptr; });
}

}  // namespace

std::vector<RevealGoldenFileCheck> CheckRevealGoldens(const std::string& golden_dir,
                                                      const std::vector<std::string>& ops) {
  namespace fs = std::filesystem;
  const fs::path dir = RevealGoldenDirectory(golden_dir);
  std::vector<RevealGoldenFileCheck> results;
  if (!fs::is_directory(dir)) return results;
  std::vector<std::string> paths;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<RevealGolden> goldens;
  std::vector<std::unique_ptr<DotDoor>> doors;
  for (const std::string& path : paths) {
    RevealGoldenFileCheck r;
    r.path = path;
    try {
      goldens.push_back(RevealGoldenFromJson(ReadJsonFile(path)));
    } catch (const std::invalid_argument& e) {
      throw InputError(path + ": " + e.what());
    }
    r.kernel = goldens.back().kernel;
    if (!ops.empty() && !GoldenOfOps(r.kernel, ops)) {
      goldens.pop_back();
      continue;
    }
    doors.push_back(OpenGoldenDoor(path, r.kernel, &r.not_checked));
    results.push_back(std::move(r));
  }
  for (size_t i = 0; i < results.size(); ++i) {
    if (!doors[i]) continue;
    RevealCost cost;
    const auto start = std::chrono::steady_clock::now();
    results[i].check = CheckRevealGolden(*doors[i], goldens[i], &cost);
    results[i].seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return results;
}

std::string RevealGoldenFailure(const RevealGoldenFileCheck& file) {
  const RevealGoldenCheck& c = file.check;
  std::string s;
  if (c.changed) {
    s = fmt::format("{} of {} probe outputs changed; first: {}", c.changed, c.probes,
                    c.first_change);
  }
  if (c.model_differs) {
    s += fmt::format("{}the golden's model disagrees with {} of its outputs; first: {}",
                     s.empty() ? "" : "; ", c.model_differs, c.first_model_difference);
  }
  return s;
}

}  // namespace ulpgate
