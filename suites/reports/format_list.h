// The registered formats as `ulpgate list` and the Python package show them:
// one row of traits per format of the registry (oracles/format.h Formats()),
// read from its FloatFormat, so that a newly registered format is listed
// without a line here.
#ifndef ULPGATE_SUITES_REPORTS_FORMAT_LIST_H_
#define ULPGATE_SUITES_REPORTS_FORMAT_LIST_H_

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "oracles/format.h"

namespace ulpgate {

// The ops of the op table that run in the format (by its name among each
// op's formats; drift's precisions included): empty for a format used only
// by decode, round, cast, the ULP metric and files.
std::vector<std::string> OpsIn(const FloatFormat& format);

// The columns of FormatRow: format, bits, p, emin, emax, bias, encoding,
// largest, smallest, storage, ops.
std::vector<std::string> FormatColumns();
// One format's row: numbers in decimal, the smallest positive value as 2^k,
// the largest finite one to 6 digits, ops "all", "none" or how many.
std::vector<std::string> FormatRow(const FloatFormat& format);
// One format's traits exactly (`list --json`'s "formats" entries).
nlohmann::ordered_json FormatJson(const FloatFormat& format);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REPORTS_FORMAT_LIST_H_
