#include "suites/inputs/inputs.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include <cstdio>

#include "oracles/float_text.h"

namespace ulpgate {

InputSet ReadInputFile(std::istream& in, const std::vector<std::string>& operand_names,
                       const std::string& where) {
  InputSet set;
  set.operand_names = operand_names;
  set.columns.resize(operand_names.size());
  set.source = "file:" + where;
  std::string line;
  size_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    for (char& c : line) {
      if (c == ',' || c == '\t' || c == '\r') c = ' ';
    }
    std::istringstream fields(line);
    std::vector<std::string> tokens;
    for (std::string token; fields >> token;) tokens.push_back(token);
    if (tokens.empty()) continue;
    if (tokens.size() != operand_names.size()) {
      std::string expected;
      for (const auto& name : operand_names) expected += (expected.empty() ? "" : " ") + name;
      throw InputError(where + ":" + std::to_string(line_number) + ": expected " +
                       std::to_string(operand_names.size()) + " values (" + expected +
                       "), found " + std::to_string(tokens.size()));
    }
    for (size_t k = 0; k < tokens.size(); ++k) {
      std::string why;
      const auto value = ParseFloat(tokens[k], &why);
      if (!value) {
        throw InputError(where + ":" + std::to_string(line_number) + ": " +
                         operand_names[k] + ": " + why);
      }
      set.columns[k].push_back(*value);
    }
  }
  if (in.bad()) throw InputError(where + ": read error");
  if (set.size() == 0) throw InputError(where + ": no inputs in the file");
  return set;
}

InputSet ReadInputFile(const std::string& path, const std::vector<std::string>& operand_names) {
  if (path == "-") return ReadInputFile(std::cin, operand_names, "<stdin>");
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open for reading");
  return ReadInputFile(in, operand_names, path);
}

void WriteInputFile(const std::string& path, const InputSet& inputs,
                    const std::vector<std::string>& header) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    if (!out) throw InputError(path + ": cannot open for writing");
    for (const std::string& line : header) out << "# " << line << '\n';
    out << '#';
    for (const std::string& name : inputs.operand_names) out << ' ' << name;
    out << '\n';
    for (size_t i = 0; i < inputs.size(); ++i) {
      for (size_t k = 0; k < inputs.columns.size(); ++k) {
        out << (k ? " " : "") << HexFloat(inputs.columns[k][i]);
      }
      out << '\n';
    }
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw InputError(path + ": write failed");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw InputError(path + ": cannot replace the file");
  }
}

}  // namespace ulpgate
