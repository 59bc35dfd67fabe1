// Why outputs were special mismatches, as run, check and sweep print it: per
// group of cases with the same causes, each cause (oracles/ulp_metric.h
// SpecialCause) with its count, its first input and a command that replays it.
#ifndef ULPGATE_TOOLS_SPECIAL_CAUSES_TEXT_H_
#define ULPGATE_TOOLS_SPECIAL_CAUSES_TEXT_H_

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "oracles/ulp_metric.h"
#include "suites/engine/statistics.h"
#include "tools/text_table.h"

namespace ulpgate {

struct CaseCauses {
  std::string name;  // "mulsub_opmath@AVX2"
  const ErrorStatistics* stats = nullptr;
  std::function<std::string(uint64_t)> input;   // "input #12: grad = ..., t = ..."
  std::function<std::string(uint64_t)> replay;  // the command that shows the case there
};

// Then zeros of the wrong sign (no special mismatch: their error is 0), with
// the first. Cases without either print nothing; cases whose causes agree
// (counts and first inputs) print once, under all their names.
inline void PrintSpecialCauses(std::ostream& out, const std::vector<CaseCauses>& cases,
                               size_t indent = 2) {
  const auto same = [](const SpecialCauseCounts& a, const SpecialCauseCounts& b) {
    for (size_t k = 0; k < a.size(); ++k) {
      if (a[k].count != b[k].count || a[k].first_index != b[k].first_index) return false;
    }
    return true;
  };
  const auto same_zeros = [](const ErrorStatistics& a, const ErrorStatistics& b) {
    return a.signed_zero_mismatch() == b.signed_zero_mismatch() &&
           a.first_signed_zero_index() == b.first_signed_zero_index();
  };
  std::vector<bool> done(cases.size(), false);
  const std::string pad(indent, ' ');
  for (size_t c = 0; c < cases.size(); ++c) {
    const ErrorStatistics& s = *cases[c].stats;
    const bool zeros = s.first_signed_zero_index() >= 0;
    if (done[c] || (s.special_mismatch() == 0 && !zeros)) continue;
    std::string names = cases[c].name;
    for (size_t o = c + 1; o < cases.size(); ++o) {
      if (!done[o] && same(s.special_causes(), cases[o].stats->special_causes()) &&
          same_zeros(s, *cases[o].stats)) {
        names += ", " + cases[o].name;
        done[o] = true;
      }
    }
    out << pad;
    PrintWrapped(out,
                 s.special_mismatch() > 0
                     ? fmt::format("special mismatches of {}: {}, by cause:", names, s.special_mismatch())
                     : fmt::format("zeros of the wrong sign from {}:", names),
                 indent + 4, indent);
    for (int k = 0; k < kSpecialCauseCount; ++k) {
      const SpecialCauseCount& cause = s.special_causes()[k];
      if (cause.count == 0) continue;
      out << pad << "  ";
      PrintWrapped(out,
                   fmt::format("{}: {}; the first at {}", SpecialCauseText(SpecialCauseAt(k)),
                               cause.count, cases[c].input(static_cast<uint64_t>(cause.first_index))),
                   indent + 6, indent + 2);
      out << pad << "    replay: "
          << WrappedCommand(cases[c].replay(static_cast<uint64_t>(cause.first_index)), indent + 12,
                            indent + 8)
          << '\n';
    }
    if (zeros) {
      const uint64_t first = static_cast<uint64_t>(s.first_signed_zero_index());
      out << pad << "  ";
      PrintWrapped(out,
                   fmt::format("signed zero (a zero of the wrong sign, 0 ULP, not a special mismatch): {}; "
                               "the first at {}",
                               s.signed_zero_mismatch(), cases[c].input(first)),
                   indent + 6, indent + 2);
      out << pad << "    replay: " << WrappedCommand(cases[c].replay(first), indent + 12, indent + 8)
          << '\n';
    }
  }
}

}  // namespace ulpgate

#endif  // ULPGATE_TOOLS_SPECIAL_CAUSES_TEXT_H_
