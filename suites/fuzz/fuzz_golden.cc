// libFuzzer target: golden files (suites/release/golden.h ValidateGolden), from the
// bytes through JSON parsing and validation to the comparison of a valid file
// with itself. The file is placed where its own "target" and "op" say, so
// that the fuzzer reaches the validation of the cases. Malformed text must end
// in InputError; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/elementwise_ops.h"
#include "suites/release/golden.h"
#include "suites/inputs/inputs.h"
#include "suites/reports/json_file.h"

namespace {

// A path component from a JSON string: letters, digits and '_' only.
std::string Component(const nlohmann::ordered_json& json, const char* key,
                      const std::string& fallback) {
  if (!json.is_object() || !json.contains(key) || !json[key].is_string()) return fallback;
  std::string s;
  for (char c : json[key].get<std::string>()) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') {
      s += c;
    }
  }
  return s.empty() ? fallback : s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const nlohmann::ordered_json json = ulpgate::ParseJsonText(text, "golden.json");
    const std::string op = Component(json, "op", std::string(ulpgate::DefaultElementwiseOp().name));
    const std::string path = "golden/" + Component(json, "target", "SCALAR") + "/" + op + ".json";
    ulpgate::ValidateGolden(path, json);
    ulpgate::GoldenFile file;
    file.path = path;
    file.json = json;
    file.target = json["target"];
    file.op = json["op"];
    if (!ulpgate::CompareGolden(file, file).empty()) __builtin_trap();  // a file equals itself
    ulpgate::RecordedRuns(file);
  } catch (const ulpgate::InputError&) {
  }
  return 0;
}
