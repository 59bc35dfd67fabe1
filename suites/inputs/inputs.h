// Input sets: the operands of an elementwise op as columns (one array per
// operand, the layout kernels take), from a named suite or from a file.
#ifndef ULPGATE_SUITES_INPUTS_H_
#define ULPGATE_SUITES_INPUTS_H_

#include <cstddef>
#include <cstdint>
#include <istream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ulpgate {

struct InputSet {
  std::vector<std::string> operand_names;   // e.g. {"grad", "t"}
  std::vector<std::vector<float>> columns;  // columns[k][i]: operand k of input i
  std::string source;                       // suite name, or "file:<path>"
  uint64_t seed = 0;

  size_t size() const { return columns.empty() ? 0 : columns[0].size(); }
};

// A bad input file, or a bad suite request: the message names the place.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SuiteInfo {
  std::string name;
  std::string description;
  size_t default_n;
};

// Input file format (docs/design.md "Inputs"): one tuple per line in the op's
// operand order, values as C99 hex floats or decimals (or inf/nan, or
// bits:0x...), separated by spaces, tabs or commas; '#' starts a comment;
// blank lines are skipped. `where` names the stream in messages.
InputSet ReadInputFile(std::istream& in, const std::vector<std::string>& operand_names,
                       const std::string& where);
InputSet ReadInputFile(const std::string& path, const std::vector<std::string>& operand_names);

// Writes inputs in the format ReadInputFile reads: `header` lines (each
// prefixed with "# "), a "# <operand names>" line, then one tuple per line as
// hex floats. Atomic (temporary file, then rename); throws InputError naming
// the path on failure.
void WriteInputFile(const std::string& path, const InputSet& inputs,
                    const std::vector<std::string>& header);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_INPUTS_H_
