// Plain text for people: aligned tables and wrapped prose that fit the width
// of a terminal (kTextWidth columns). Table columns are sized to their widest
// cell, numbers right-aligned, text left-aligned; a table wider than the
// width wraps its widest text columns onto continuation lines.
#ifndef ULPGATE_TOOLS_TEXT_TABLE_H_
#define ULPGATE_TOOLS_TEXT_TABLE_H_

#include <CLI/CLI.hpp>

#include <algorithm>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace ulpgate {

inline constexpr size_t kTextWidth = 120;

// Splits `text` into lines of at most `width` characters, breaking at spaces
// (and after ", " or ";" inside long words); a run of non-space characters
// longer than `width` is cut. Existing newlines are kept.
inline std::vector<std::string> WrapText(const std::string& text, size_t width) {
  width = std::max<size_t>(width, 8);
  std::vector<std::string> lines;
  std::istringstream paragraphs(text);
  for (std::string paragraph; std::getline(paragraphs, paragraph);) {
    std::string line;
    size_t at = 0;
    while (at < paragraph.size()) {
      size_t end = paragraph.find(' ', at);
      if (end == std::string::npos) end = paragraph.size();
      std::string word = paragraph.substr(at, end - at);
      at = end + 1;
      while (word.size() > width) {  // a word longer than a line: cut it
        if (!line.empty()) {
          lines.push_back(line);
          line.clear();
        }
        size_t cut = word.find_last_of(",;=", width - 1);
        cut = cut == std::string::npos || cut < width / 2 ? width : cut + 1;
        lines.push_back(word.substr(0, cut));
        word = word.substr(cut);
      }
      if (line.empty()) {
        line = word;
      } else if (line.size() + 1 + word.size() <= width) {
        line += " " + word;
      } else {
        lines.push_back(line);
        line = word;
      }
    }
    lines.push_back(line);
  }
  if (lines.empty()) lines.emplace_back();
  return lines;
}

// Prints `text` wrapped to the width, each line after the first indented by
// `indent` spaces (the first line starts where the cursor is).
inline void PrintWrapped(std::ostream& out, const std::string& text, size_t indent = 0,
                         size_t first_column = 0) {
  const size_t width = kTextWidth > indent + 20 ? kTextWidth - indent : 20;
  std::vector<std::string> lines =
      WrapText(text, first_column < kTextWidth - 20 ? kTextWidth - first_column : 20);
  // Re-wrap everything after the first line at the indented width.
  std::string rest;
  for (size_t i = 1; i < lines.size(); ++i) rest += (rest.empty() ? "" : " ") + lines[i];
  out << lines.front() << '\n';
  if (!rest.empty()) {
    for (const std::string& l : WrapText(rest, width)) out << std::string(indent, ' ') << l << '\n';
  }
}

// A shell command that fits the width: broken at spaces, each continued line
// ending in " \\" and the next indented by `indent` spaces; `first_column` is
// where the command starts on its first line.
inline std::string WrappedCommand(const std::string& command, size_t first_column,
                                  size_t indent) {
  std::string out, line;
  size_t column = first_column;
  std::istringstream words(command);
  for (std::string word; words >> word;) {
    if (!line.empty() && column + line.size() + 1 + word.size() + 2 > kTextWidth) {
      out += line + " \\\n" + std::string(indent, ' ');
      line.clear();
      column = indent;
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : rows_{std::move(header)} {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // A line of its own before the rows that follow (a group's name): printed
  // at the table's indent, taking no part in the column widths.
  void AddSection(std::string title) { sections_[rows_.size()].push_back(std::move(title)); }
  // Columns listed here are left-aligned (and may wrap); others right-aligned.
  void SetLeftAligned(std::vector<size_t> columns) { left_ = std::move(columns); }

  void Print(std::ostream& out, const std::string& indent = "") const {
    std::vector<size_t> width;
    for (const auto& row : rows_) {
      if (width.size() < row.size()) width.resize(row.size(), 0);
      for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    }
    auto total = [&] {
      size_t t = indent.size();
      for (size_t w : width) t += w + 2;
      return t - 2;
    };
    // Too wide: first break the header cells at '_' ("correctly_" over
    // "rounded"), then narrow the widest text columns (not below 10).
    bool split_header = false;
    if (total() > kTextWidth && !rows_.empty()) {
      split_header = true;
      for (size_t c = 0; c < width.size(); ++c) {
        size_t w = 0;
        for (size_t r = 1; r < rows_.size(); ++r) {
          if (c < rows_[r].size()) w = std::max(w, rows_[r][c].size());
        }
        if (c < rows_[0].size()) {
          for (std::string piece : HeaderPieces(rows_[0][c])) {
            while (!piece.empty() && piece.back() == ' ') piece.pop_back();
            w = std::max(w, piece.size());
          }
        }
        width[c] = w;
      }
    }
    // Narrowing stops first at each column's longest word, so that cells
    // wrap between words ("mac_unfused" never becomes "mac_unfus" / "ed");
    // only a table that cannot fit so is narrowed further, cutting words.
    std::vector<size_t> longest_word(width.size(), 10);
    for (size_t r = 1; r < rows_.size(); ++r) {
      for (size_t c = 0; c < rows_[r].size(); ++c) {
        std::istringstream words(rows_[r][c]);
        for (std::string word; words >> word;) {
          longest_word[c] = std::max(longest_word[c], std::min<size_t>(word.size(), 40));
        }
      }
    }
    for (const bool keep_words : {true, false}) {
      while (total() > kTextWidth) {
        size_t widest = width.size();
        for (size_t c : left_) {
          const size_t floor = keep_words ? longest_word[c] : 10;
          if (c < width.size() && width[c] > floor &&
              (widest == width.size() || width[c] > width[widest])) {
            widest = c;
          }
        }
        if (widest == width.size()) break;  // nothing left to narrow
        const size_t floor = keep_words ? longest_word[widest] : 10;
        width[widest] -= std::min(width[widest] - floor, total() - kTextWidth);
      }
    }
    for (size_t r = 0; r < rows_.size(); ++r) {
      if (const auto it = sections_.find(r); it != sections_.end()) {
        for (const std::string& title : it->second) out << indent << title << '\n';
      }
      const auto& row = rows_[r];
      std::vector<std::vector<std::string>> cells(row.size());
      size_t height = 1;
      for (size_t c = 0; c < row.size(); ++c) {
        if (row[c].size() <= width[c]) {
          cells[c] = {row[c]};
        } else if (r == 0 && split_header) {
          cells[c] = HeaderLines(row[c], width[c]);
        } else {
          cells[c] = WrapText(row[c], width[c]);
        }
        height = std::max(height, cells[c].size());
      }
      for (size_t h = 0; h < height; ++h) {
        std::string line = indent;
        for (size_t c = 0; c < row.size(); ++c) {
          const std::string cell = h < cells[c].size() ? cells[c][h] : "";
          const std::string pad(width[c] > cell.size() ? width[c] - cell.size() : 0, ' ');
          const bool left = std::find(left_.begin(), left_.end(), c) != left_.end();
          line += left ? cell + pad : pad + cell;
          if (c + 1 < row.size()) line += "  ";
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out << line << '\n';
      }
    }
  }

 private:
  // "correctly_rounded" -> "correctly_", "rounded".
  static std::vector<std::string> HeaderPieces(const std::string& header) {
    std::vector<std::string> pieces;
    size_t at = 0;
    while (at < header.size()) {
      const size_t end = header.find_first_of("_ ", at);
      if (end == std::string::npos) {
        pieces.push_back(header.substr(at));
        break;
      }
      pieces.push_back(header.substr(at, end + 1 - at));
      at = end + 1;
    }
    return pieces;
  }
  // The pieces joined again as far as they fit the width.
  static std::vector<std::string> HeaderLines(const std::string& header, size_t width) {
    std::vector<std::string> lines;
    for (const std::string& piece : HeaderPieces(header)) {
      std::string joined = lines.empty() ? "" : lines.back() + piece;
      while (!joined.empty() && joined.back() == ' ') joined.pop_back();
      if (!lines.empty() && joined.size() <= width) {
        lines.back() += piece;
      } else {
        lines.push_back(piece);
      }
    }
    for (std::string& line : lines) {
      while (!line.empty() && line.back() == ' ') line.pop_back();
    }
    return lines;
  }

  std::map<size_t, std::vector<std::string>> sections_;  // by the row they precede
  std::vector<std::vector<std::string>> rows_;
  std::vector<size_t> left_;
};

// CLI11's help, wrapped to the width: option and subcommand descriptions
// continue under their column, the command's description wraps at the width.
class WrappingHelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_desc(const CLI::Option* opt) const override {
    return Wrapped(CLI::Formatter::make_option_desc(opt));
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true), Wrapped(sub->get_description()),
                             column_width_);
    return out.str();
  }
  std::string make_description(const CLI::App* app) const override {
    const std::string d = CLI::Formatter::make_description(app);
    std::string out;
    for (const std::string& line : WrapText(d, kTextWidth)) out += line + "\n";
    while (out.size() > 1 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n') out.pop_back();
    return out;
  }

 private:
  std::string Wrapped(const std::string& text) const {
    const size_t width = kTextWidth > column_width_ + 20 ? kTextWidth - column_width_ : 20;
    std::string out;
    for (const std::string& line : WrapText(text, width)) out += (out.empty() ? "" : "\n") + line;
    return out;
  }
};

}  // namespace ulpgate

#endif  // ULPGATE_TOOLS_TEXT_TABLE_H_
