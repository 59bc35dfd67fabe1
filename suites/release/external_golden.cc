#include "suites/release/external_golden.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "kernels/elementwise_ops.h"
#include "kernels/reductions/reduction_spec.h"
#include "suites/inputs/inputs.h"
#include "suites/inputs/numpy_files.h"
#include "suites/reports/report.h"

namespace ulpgate {

namespace fs = std::filesystem;

namespace {

fs::path Root(const std::string& golden_dir) {
  return fs::weakly_canonical(fs::absolute(golden_dir)).parent_path();
}

fs::path ExternalDir(const std::string& golden_dir) { return fs::path(golden_dir) / "external"; }

// FILE[:ARRAY] of a golden: beside the golden file (where blessing copies the
// data), else, for goldens blessed before the data travelled with them,
// relative to the repository root (the golden directory's parent); an
// absolute path, or a check report's file before it is blessed, as it is.
std::string Resolve(const std::string& spec, const std::string& golden_dir) {
  const auto [file, array] = SplitArraySpec(spec);
  fs::path path(file);
  if (path.is_relative()) {
    const fs::path beside = ExternalDir(golden_dir) / path;
    const fs::path legacy = Root(golden_dir) / path;
    if (fs::exists(beside)) {
      path = beside;
    } else if (fs::exists(legacy)) {
      path = legacy;
    }  // else as given: a check report's file, relative to where ulpgate runs
  }
  return path.string() + (array.empty() ? "" : ":" + array);
}

bool SameName(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::vector<std::string> OperandNames(const std::string& op) {
  if (const ElementwiseOpInfo* e = FindElementwiseOp(op)) return e->operand_names();
  if (const ReductionOpInfo* r = FindReductionOp(op)) return r->operands;
  throw InputError("unknown op '" + op + "'");
}

void CopyFile(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (fs::equivalent(from, to, ec)) return;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) throw InputError(from.string() + ": cannot copy to " + to.string() + ": " + ec.message());
}

}  // namespace

std::string ResolveExternalFile(const std::string& spec, const std::string& golden_dir) {
  return Resolve(spec, golden_dir);
}

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
      if (j.contains("source")) g.source = j.at("source");
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
  CheckSpec resolved = spec;
  resolved.inputs = Resolve(spec.inputs, golden_dir);
  resolved.outputs = Resolve(spec.outputs, golden_dir);
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
  (void)golden_dir;
  for (std::string* named : {&spec.inputs, &spec.outputs}) {
    const auto [file, array] = SplitArraySpec(*named);
    if (!fs::exists(file)) throw InputError(file + ": no such file (named by " + report_path + ")");

  }
  spec.expected_model = expected;
  return spec;
}

ExternalGolden StoreExternalData(const std::string& golden_dir, const CheckSpec& spec) {
  ExternalGolden stored;
  stored.spec = spec;
  stored.source = {{"inputs", spec.inputs}, {"outputs", spec.outputs}};
  const fs::path dir = ExternalDir(golden_dir);
  fs::create_directories(dir);
  const auto [in_file, in_array] = SplitArraySpec(Resolve(spec.inputs, golden_dir));
  const auto [out_file, out_array] = SplitArraySpec(Resolve(spec.outputs, golden_dir));
  const std::vector<std::string> operands = OperandNames(spec.op);
  auto is_operand = [&](const std::string& name) {
    return std::any_of(operands.begin(), operands.end(),
                       [&](const std::string& o) { return SameName(o, name); });
  };
  // The outputs array of a NumPy file, chosen as check chooses it.
  std::vector<NumpyArray> outputs;
  if (IsNumpyPath(out_file)) {
    for (NumpyArray& a : ReadNumpyFile(out_file)) {
      if (out_array.empty() ? (!IsNpzPath(out_file) || !is_operand(a.name)) : a.name == out_array) {
        outputs.push_back(std::move(a));
      }
    }
    if (outputs.size() != 1) {
      throw InputError(out_file + ": name the outputs array (FILE.npz:ARRAY) to bless it");
    }
  }
  const std::string label = spec.label;
  if (IsNpzPath(in_file)) {
    std::vector<NumpyArray> arrays;
    for (NumpyArray& a : ReadNumpyFile(in_file)) {
      if (is_operand(a.name)) arrays.push_back(std::move(a));
    }
    std::string outputs_name;
    if (!outputs.empty() && !is_operand(outputs[0].name)) {
      outputs_name = outputs[0].name;
      arrays.push_back(outputs[0]);
      outputs.clear();
    }
    WriteNumpyArrays((dir / (label + ".npz")).string(), arrays);
    stored.spec.inputs = label + ".npz";
    if (!outputs_name.empty()) stored.spec.outputs = label + ".npz:" + outputs_name;
  } else {
    const std::string name = label + ".inputs" + fs::path(in_file).extension().string();
    CopyFile(in_file, dir / name);
    stored.spec.inputs = name;
  }
  if (stored.spec.outputs == spec.outputs) {  // not stored with the inputs
    if (!outputs.empty()) {
      outputs[0].name = "outputs";
      const std::string name = label + ".outputs" + fs::path(out_file).extension().string();
      WriteNumpyArrays((dir / name).string(), outputs);
      stored.spec.outputs = name + (IsNpzPath(name) ? ":outputs" : "");
    } else {
      const std::string name = label + ".outputs" + fs::path(out_file).extension().string();
      CopyFile(out_file, dir / name);
      stored.spec.outputs = name;
    }
  }
  return stored;
}

std::string WriteExternalGolden(const std::string& golden_dir, const CheckSpec& spec,
                                const nlohmann::ordered_json& source,
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
  if (!source.is_null()) j["source"] = source;
  j["record"] = record;
  const fs::path dir = fs::path(golden_dir) / "external";
  fs::create_directories(dir);
  const std::string path = (dir / (spec.label + ".json")).string();
  WriteJsonFile(path, j);
  return path;
}

}  // namespace ulpgate
