// Aligned plain-text tables for people: columns sized to their widest cell,
// numbers right-aligned, text left-aligned.
#ifndef ULPGATE_TOOLS_TEXT_TABLE_H_
#define ULPGATE_TOOLS_TEXT_TABLE_H_

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

namespace ulpgate {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : rows_{std::move(header)} {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // Columns listed here are left-aligned; others right-aligned.
  void SetLeftAligned(std::vector<size_t> columns) { left_ = std::move(columns); }

  void Print(std::ostream& out, const std::string& indent = "") const {
    std::vector<size_t> width;
    for (const auto& row : rows_) {
      if (width.size() < row.size()) width.resize(row.size(), 0);
      for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    }
    for (size_t r = 0; r < rows_.size(); ++r) {
      std::string line = indent;
      for (size_t c = 0; c < rows_[r].size(); ++c) {
        const std::string& cell = rows_[r][c];
        const std::string pad(width[c] - cell.size(), ' ');
        const bool left = std::find(left_.begin(), left_.end(), c) != left_.end();
        line += left ? cell + pad : pad + cell;
        if (c + 1 < rows_[r].size()) line += "  ";
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out << line << '\n';
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
  std::vector<size_t> left_;
};

}  // namespace ulpgate

#endif  // ULPGATE_TOOLS_TEXT_TABLE_H_
