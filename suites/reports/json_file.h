// Reading the JSON files ulpgate takes as data (golden files, the budget
// ledger, scenarios) with errors a person can act on: every failure is an
// InputError naming the file and the place, "golden/AVX2/OP.json:12:5:
// ..." for malformed text, "golden/budgets.json: /rules/3/limits/max_ulp: ..."
// for a field of the wrong type or value.
#ifndef ULPGATE_SUITES_JSON_FILE_H_
#define ULPGATE_SUITES_JSON_FILE_H_

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ulpgate {

// Parses a whole file (key order kept). Throws InputError "PATH: cannot open",
// "PATH: empty file", or "PATH:LINE:COLUMN: malformed JSON (...)", which also
// covers a truncated file.
nlohmann::ordered_json ReadJsonFile(const std::string& path);
// The same on text already read; `path` names it in messages.
nlohmann::ordered_json ParseJsonText(const std::string& text, const std::string& path);

// A JSON value with where it came from, for typed reads that fail with the
// file and the JSON pointer of the field:
//   JsonField rule(file, "/rules/0", json["rules"][0]);
//   double limit = rule["limits"]["max_ulp"].Number();
class JsonField {
 public:
  JsonField(std::string file, std::string pointer, const nlohmann::ordered_json& value)
      : file_(std::move(file)), pointer_(std::move(pointer)), value_(&value) {}

  const nlohmann::ordered_json& json() const { return *value_; }
  const std::string& pointer() const { return pointer_; }
  // "FILE: POINTER" (or "FILE" at the root), the prefix of every message.
  std::string Where() const;
  [[noreturn]] void Fail(const std::string& what) const;

  bool Has(const std::string& key) const;  // an object with that key (not null)
  JsonField operator[](const std::string& key) const;  // required member
  JsonField operator[](size_t index) const;            // required element
  size_t Size() const;                                 // array length (must be an array)

  std::string String() const;
  double Number() const;  // any JSON number
  uint64_t Unsigned() const;
  bool Bool() const;
  std::vector<std::string> Strings() const;  // an array of strings
  void RequireObject() const;
  void RequireArray() const;
  // Fails naming the first key not in `allowed` (catches typos in hand-edited files).
  void OnlyKeys(const std::vector<std::string>& allowed) const;

 private:
  std::string file_;
  std::string pointer_;
  const nlohmann::ordered_json* value_;
};

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_JSON_FILE_H_
