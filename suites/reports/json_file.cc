#include "suites/reports/json_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "suites/inputs/inputs.h"

namespace ulpgate {
namespace {

const char* TypeName(const nlohmann::ordered_json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  return "an object";
}

// JSON pointer escaping of one reference token (RFC 6901).
std::string Escape(const std::string& key) {
  std::string s;
  for (char c : key) {
    if (c == '~') {
      s += "~0";
    } else if (c == '/') {
      s += "~1";
    } else {
      s += c;
    }
  }
  return s;
}

}  // namespace

nlohmann::ordered_json ReadJsonFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open for reading");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError(path + ": read failed");
  return ParseJsonText(text, path);
}

nlohmann::ordered_json ParseJsonText(const std::string& text, const std::string& path) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw InputError(path + ": empty file (expected JSON)");
  }
  try {
    return nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based and points just past the offending character.
    const size_t at = std::min(e.byte == 0 ? 0 : e.byte - 1, text.size());
    const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + at, '\n'));
    const size_t line_start = text.rfind('\n', at == 0 ? 0 : at - 1);
    const size_t column = line_start == std::string::npos || at == 0 ? at + 1 : at - line_start;
    const bool truncated = at >= text.size();
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 3, column 1: syntax error ..."
    const size_t colon = what.find(": ", what.find("column"));
    if (colon != std::string::npos) what = what.substr(colon + 2);
    throw InputError(fmt::format("{}:{}:{}: malformed JSON{}: {}", path, line, column,
                                 truncated ? " (the file ends early: truncated?)" : "", what));
  } catch (const nlohmann::json::exception& e) {
    // A number no double holds ("1e3081") is out_of_range, not a parse error.
    std::string what = e.what();
    const size_t bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    throw InputError(fmt::format("{}: malformed JSON: {}", path, what));
  }
}

std::string JsonField::Where() const {
  return pointer_.empty() ? file_ : file_ + ": " + pointer_;
}

void JsonField::Fail(const std::string& what) const { throw InputError(Where() + ": " + what); }

bool JsonField::Has(const std::string& key) const {
  return value_->is_object() && value_->contains(key) && !(*value_)[key].is_null();
}

JsonField JsonField::operator[](const std::string& key) const {
  RequireObject();
  const auto it = value_->find(key);
  if (it == value_->end()) Fail("missing field \"" + key + "\"");
  return JsonField(file_, pointer_ + "/" + Escape(key), *it);
}

JsonField JsonField::operator[](size_t index) const {
  RequireArray();
  if (index >= value_->size()) Fail(fmt::format("missing element {}", index));
  return JsonField(file_, fmt::format("{}/{}", pointer_, index), (*value_)[index]);
}

size_t JsonField::Size() const {
  RequireArray();
  return value_->size();
}

std::string JsonField::String() const {
  if (!value_->is_string()) Fail(std::string("expected a string, found ") + TypeName(*value_));
  return value_->get<std::string>();
}

double JsonField::Number() const {
  if (!value_->is_number()) Fail(std::string("expected a number, found ") + TypeName(*value_));
  return value_->get<double>();
}

uint64_t JsonField::Unsigned() const {
  if (!value_->is_number_unsigned()) {
    Fail(std::string("expected a non-negative integer, found ") +
         (value_->is_number() ? value_->dump() : TypeName(*value_)));
  }
  return value_->get<uint64_t>();
}

bool JsonField::Bool() const {
  if (!value_->is_boolean()) Fail(std::string("expected true or false, found ") + TypeName(*value_));
  return value_->get<bool>();
}

std::vector<std::string> JsonField::Strings() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < Size(); ++i) out.push_back((*this)[i].String());
  return out;
}

void JsonField::RequireObject() const {
  if (!value_->is_object()) Fail(std::string("expected an object, found ") + TypeName(*value_));
}

void JsonField::RequireArray() const {
  if (!value_->is_array()) Fail(std::string("expected an array, found ") + TypeName(*value_));
}

void JsonField::OnlyKeys(const std::vector<std::string>& allowed) const {
  RequireObject();
  for (const auto& [key, value] : value_->items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      Fail("unknown field \"" + key + "\" (expected: " + list + ")");
    }
  }
}

}  // namespace ulpgate
