#include "suites/drift/curves.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "suites/drift/report.h"
#include "suites/inputs/inputs.h"
#include "suites/reports/json_file.h"
#include "suites/inputs/numpy_files.h"

namespace ulpgate {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<double> FromJson(const std::string& text, const std::string& path) {
  const nlohmann::ordered_json j = ParseJsonText(text, path);
  const nlohmann::ordered_json* list = &j;
  std::string pointer;  // JSON pointer of the list
  if (j.is_object()) {
    if (!j.contains("loss")) throw InputError(path + ": expected a list of losses or an object with \"loss\"");
    list = &j["loss"];
    pointer = "/loss";
  }
  if (!list->is_array()) throw InputError(path + ": " + pointer + ": expected a list of losses");
  std::vector<double> loss;
  for (size_t i = 0; i < list->size(); ++i) {
    const auto& v = (*list)[i];
    // JSON has no NaN: a diverged epoch is written null (or "nan").
    if (v.is_null()) {
      loss.push_back(NAN);
    } else if (v.is_number()) {
      loss.push_back(v.get<double>());
    } else if (v.is_string() && (v == "nan" || v == "inf" || v == "-inf")) {
      loss.push_back(std::strtod(v.get<std::string>().c_str(), nullptr));
    } else {
      throw InputError(fmt::format("{}: {}/{}: expected a number, found {}", path, pointer, i, v.dump()));
    }
  }
  return loss;
}

std::vector<double> FromText(const std::string& text, const std::string& path) {
  std::istringstream in(text);
  std::vector<double> loss;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::stringstream fields(line);
    std::vector<std::string> cells;
    for (std::string cell; std::getline(fields, cell, ',');) {
      const size_t b = cell.find_first_not_of(" \t\r"), e = cell.find_last_not_of(" \t\r");
      cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
    }
    if (cells.empty() || (cells.size() == 1 && cells[0].empty())) continue;
    if (cells.size() > 2) {
      throw InputError(fmt::format("{}:{}: expected a loss or epoch,loss", path, number));
    }
    const std::string& cell = cells.back();
    char* end = nullptr;
    const double v = std::strtod(cell.c_str(), &end);
    if (cell.empty() || *end != '\0') {
      // A header ("epoch,loss") may open the file; anywhere else it is an error.
      if (loss.empty() && number == 1) continue;
      throw InputError(fmt::format("{}:{}: '{}' is not a number", path, number, cell));
    }
    if (cells.size() == 2) {
      char* epoch_end = nullptr;
      const double epoch = std::strtod(cells[0].c_str(), &epoch_end);
      if (*epoch_end != '\0' || epoch != static_cast<double>(loss.size())) {
        throw InputError(fmt::format("{}:{}: expected epoch {}, found '{}'", path, number,
                                     loss.size(), cells[0]));
      }
    }
    loss.push_back(v);
  }
  return loss;
}

std::vector<double> FromNumpy(const std::string& path) {
  const std::vector<NumpyArray> arrays = ReadNumpyFile(path);
  if (arrays.size() != 1) {
    throw InputError(fmt::format("{}: expected one array of losses, found {}", path, arrays.size()));
  }
  const NumpyArray& a = arrays[0];
  if (a.shape.size() != 1) throw InputError(path + ": expected a 1-D array of losses");
  std::vector<double> loss(a.size());
  if (a.dtype == "<f8") {
    std::memcpy(loss.data(), a.data.data(), loss.size() * sizeof(double));
  } else if (a.dtype == "<f4") {
    for (size_t i = 0; i < loss.size(); ++i) {
      float v;
      std::memcpy(&v, a.data.data() + i * sizeof v, sizeof v);
      loss[i] = v;
    }
  } else {
    throw InputError(path + ": expected float32 or float64 losses, found dtype " + a.dtype);
  }
  return loss;
}

double Distance(const std::vector<double>& a, const std::vector<double>& b,
                const std::vector<double>& reference, size_t epochs) {
  double sum = 0;
  for (size_t e = 0; e < epochs; ++e) {
    const double d = std::fabs(a[e] - b[e]) / std::fabs(reference[e]);
    sum += std::isnan(d) ? INFINITY : d;
  }
  return sum / static_cast<double>(epochs);
}

}  // namespace

RecordedCurve ParseLossCurve(const std::string& text, const std::string& path,
                             const std::string& label) {
  RecordedCurve c;
  c.label = label;
  c.path = path;
  c.loss = EndsWith(path, ".json") ? FromJson(text, path) : FromText(text, path);
  if (EndsWith(path, ".json")) {
    const nlohmann::ordered_json j = ParseJsonText(text, path);
    if (j.is_object() && j.contains("ops")) c.ops = j["ops"];
    if (j.is_object()) {
      if (j.contains("precision") && j["precision"].is_string()) c.precision = j["precision"];
      if (j.contains("device") && j["device"].is_string()) c.device = j["device"];
      if (j.contains("compiled") && j["compiled"].is_boolean()) c.compiled = j["compiled"];
    }
    if (j.is_object() && j.contains("experiment") && j["experiment"].is_object()) {
      c.experiment_setting = j["experiment"].value("setting", "");
      c.experiment_removes = j["experiment"].value("removes", "");
    }
  }
  if (c.loss.empty()) throw InputError(path + ": no losses");
  return c;
}

RecordedCurve ReadLossCurve(const std::string& path, const std::string& label) {
  if (IsNumpyPath(path)) {
    RecordedCurve c;
    c.label = label;
    c.path = path;
    c.loss = FromNumpy(path);
    if (c.loss.empty()) throw InputError(path + ": no losses");
    return c;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open for reading");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseLossCurve(text.str(), path, label);
}

CurveComparison CompareCurve(const RecordedCurve& curve, const DriftResult& d) {
  CurveComparison c;
  c.curve = curve;
  c.epochs = std::min(curve.loss.size(), d.reference.loss.size());
  const std::vector<double> ref(d.reference.loss.begin(), d.reference.loss.begin() + c.epochs);
  c.summary = SummarizeCurve(std::vector<double>(curve.loss.begin(), curve.loss.begin() + c.epochs), ref);
  for (size_t r = 0; r < d.runs.size(); ++r) {
    c.distance.push_back(Distance(curve.loss, d.runs[r].loss, d.reference.loss, c.epochs));
    if (c.distance[r] < c.distance[c.closest]) c.closest = r;
  }
  return c;
}

nlohmann::ordered_json CurveComparisonJson(const CurveComparison& c, const DriftResult& d) {
  nlohmann::ordered_json j;
  j["label"] = c.curve.label;
  j["file"] = c.curve.path;
  j["epochs_recorded"] = c.curve.loss.size();
  j["epochs_compared"] = c.epochs;
  j["summary"] = CurveSummaryJson(c.summary);
  if (!d.runs.empty()) {
    j["closest_run"] = d.runs[c.closest].config.Label();
    j["closest_distance"] = c.distance[c.closest];
  }
  nlohmann::ordered_json loss = nlohmann::ordered_json::array();
  for (double l : c.curve.loss) loss.push_back(std::isfinite(l) ? nlohmann::ordered_json(l) : nlohmann::ordered_json());
  j["loss"] = loss;
  return j;
}

}  // namespace ulpgate
