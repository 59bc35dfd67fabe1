#include "suites/release/external_golden.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "suites/inputs/inputs.h"
#include "suites/inputs/numpy_files.h"
#include "suites/reports/report.h"

namespace ulpgate {

namespace fs = std::filesystem;

namespace {

fs::path Root(const std::string& golden_dir) {
  return fs::weakly_canonical(fs::absolute(golden_dir)).parent_path();
}

// A file the user named, relative to the repository root.
std::string Relative(const std::string& spec, const fs::path& root) {
  const auto [file, name] = SplitArraySpec(spec);
  const std::string array = name.empty() ? "" : ":" + name;
  const fs::path absolute = fs::weakly_canonical(fs::absolute(file));
  if (!fs::exists(absolute)) throw InputError(file + ": no such file");
  const fs::path relative = absolute.lexically_relative(root);
  if (relative.empty() || *relative.begin() == "..") {
    throw InputError(file + " is outside the repository (" + root.string() +
                     "): copy it in, so that a clone can replay the check");
  }
  return relative.generic_string() + array;
}

std::string Resolve(const std::string& spec, const fs::path& root) {
  const auto [file, array] = SplitArraySpec(spec);
  return (root / file).string() + (array.empty() ? "" : ":" + array);
}

}  // namespace

std::vector<ExternalGolden> ReadExternalGoldens(const std::string& golden_dir) {
  std::vector<ExternalGolden> goldens;
  const fs::path dir = fs::path(golden_dir) / "external";
  if (!fs::is_directory(dir)) return goldens;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    std::ifstream in(file);
    nlohmann::ordered_json j;
    try {
      j = nlohmann::ordered_json::parse(in);
      if (j.at("format") != kExternalGoldenFormat) throw std::runtime_error("format is not " + std::string(kExternalGoldenFormat));
      ExternalGolden g;
      g.path = file.string();
      g.spec.label = j.at("label").get<std::string>();
      g.spec.op = j.at("op").get<std::string>();
      g.spec.dtype = j.at("dtype").get<std::string>();
      g.spec.inputs = j.at("inputs").get<std::string>();
      g.spec.outputs = j.at("outputs").get<std::string>();
      g.spec.models = j.at("models").get<std::vector<std::string>>();
      g.spec.expected_model = j.at("expected_model").get<std::string>();
      g.record = j.at("record");
      if (file.stem().string() != g.spec.label) throw std::runtime_error("the file is not named after its label");
      goldens.push_back(std::move(g));
    } catch (const std::exception& e) {
      throw InputError(file.string() + ": not an external golden (" + e.what() + ")");
    }
  }
  return goldens;
}

nlohmann::ordered_json ReplayExternal(const CheckSpec& spec, const std::string& golden_dir,
                                      unsigned threads) {
  const fs::path root = Root(golden_dir);
  CheckSpec resolved = spec;
  resolved.inputs = Resolve(spec.inputs, root);
  resolved.outputs = Resolve(spec.outputs, root);
  resolved.threads = threads;
  nlohmann::ordered_json record = CheckRecord(resolved);
  record["suite"] = "file:" + spec.inputs;
  return record;
}

CheckSpec SpecFromCheckReport(const std::string& report_path, const std::string& golden_dir,
                              const std::string& expected) {
  std::ifstream in(report_path);
  if (!in) throw InputError(report_path + ": cannot open");
  CheckSpec spec;
  try {
    const auto j = nlohmann::ordered_json::parse(in);
    if (j.at("format") != "ulpgate-check-1") throw std::runtime_error("not a check report");
    const auto& r = j.at("results").at(0);
    spec.label = j.at("label").get<std::string>();
    spec.op = r.at("op").get<std::string>();
    spec.dtype = r.at("dtype").get<std::string>();
    spec.inputs = j.at("inputs").get<std::string>();
    spec.outputs = j.at("outputs").get<std::string>();
    if (r.at("conformance").contains("models")) {
      for (const auto& m : r.at("conformance").at("models")) {
        if (m.at("source") == "user") {
          spec.models.push_back(m.at("name").get<std::string>() + ": " +
                                m.at("expression").get<std::string>());
        }
      }
    }
  } catch (const std::exception& e) {
    throw InputError(report_path + ": not a `check --json` report (" + e.what() + ")");
  }
  for (char c : spec.label) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
      throw InputError("label '" + spec.label + "': a golden is named after it; use letters, digits, _ - .");
    }
  }
  const fs::path root = Root(golden_dir);
  spec.inputs = Relative(spec.inputs, root);
  spec.outputs = Relative(spec.outputs, root);
  spec.expected_model = expected;
  return spec;
}

std::string WriteExternalGolden(const std::string& golden_dir, const CheckSpec& spec,
                                const nlohmann::ordered_json& record) {
  nlohmann::ordered_json j;
  j["format"] = kExternalGoldenFormat;
  j["label"] = spec.label;
  j["op"] = spec.op;
  j["dtype"] = spec.dtype;
  j["inputs"] = spec.inputs;
  j["outputs"] = spec.outputs;
  j["models"] = spec.models;
  j["expected_model"] = spec.expected_model;
  j["record"] = record;
  const fs::path dir = fs::path(golden_dir) / "external";
  fs::create_directories(dir);
  const std::string path = (dir / (spec.label + ".json")).string();
  WriteJsonFile(path, j);
  return path;
}

}  // namespace ulpgate
