#include "suites/reports/format_list.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "suites/engine/op_table.h"

namespace ulpgate {
namespace {

// 2^k for a power of two, else the shortest decimal that reads back.
std::string PowerOfTwoText(double v) {
  int e = 0;
  if (std::frexp(v, &e) == 0.5) return fmt::format("2^{}", e - 1);
  return fmt::format("{}", v);
}

}  // namespace

std::vector<std::string> OpsIn(const FloatFormat& format) {
  std::vector<std::string> ops;
  for (const OpInfo& op : OpTable()) {
    if (std::find(op.dtypes.begin(), op.dtypes.end(), format.name) != op.dtypes.end()) {
      ops.push_back(op.name);
    }
  }
  return ops;
}

std::vector<std::string> FormatColumns() {
  return {"format", "bits", "p", "emin", "emax", "bias", "encoding", "largest", "smallest", "storage",
          "ops"};
}

// What runs in a format, in a few words: "all" (or how many) of the ops
// that compute in it, and whether casts start or end in it.
std::string OpsText(const FloatFormat& f) {
  size_t computing = 0, in_format = 0;
  bool cast_to = false;
  for (const OpInfo& op : OpTable()) {
    const bool in = std::find(op.dtypes.begin(), op.dtypes.end(), f.name) != op.dtypes.end();
    if (op.family == OpFamily::kCast) {
      cast_to = cast_to || in;
      continue;
    }
    // A block quantizer's dtypes are block specs (mxfp8_e4m3), not formats.
    if (op.family == OpFamily::kBlockQuant) continue;
    ++computing;
    if (in) ++in_format;
  }
  std::vector<std::string> parts;
  if (in_format > 0) parts.push_back(in_format == computing ? "all" : std::to_string(in_format));
  if (FindOp(std::string("cast_") + f.name) != nullptr) parts.push_back("cast from");
  if (cast_to) parts.push_back("cast to");
  std::string text;
  for (const std::string& p : parts) text += (text.empty() ? "" : ", ") + p;
  return text.empty() ? "none" : text;
}

std::vector<std::string> FormatRow(const FloatFormat& f) {
  return {f.name,
          std::to_string(f.bits),
          std::to_string(f.precision),
          std::to_string(f.emin),
          std::to_string(f.emax),
          std::to_string(f.bias()),
          EncodingName(f),
          fmt::format("{:g}", LargestFinite(f)),
          PowerOfTwoText(SmallestPositive(f)),
          StorageText(f),
          OpsText(f)};
}

nlohmann::ordered_json FormatJson(const FloatFormat& f) {
  return {{"name", f.name},
          {"description", f.description},
          {"bits", f.bits},
          {"precision", f.precision},
          {"exponent_bits", f.exponent_bits()},
          {"emin", f.emin},
          {"emax", f.emax},
          {"bias", f.bias()},
          {"encoding", EncodingName(f)},
          {"signed", f.has_sign},
          {"subnormals", f.has_subnormals},
          {"infinity", f.has_infinity()},
          {"nan", f.has_nan()},
          {"negative_zero", f.has_negative_zero()},
          {"largest_finite", LargestFinite(f)},
          {"smallest_positive", SmallestPositive(f)},
          {"storage_bytes", f.storage_bytes()},
          {"packing", f.packing == Packing::kNibblePairs ? "nibble_pairs" : "one_per_unit"},
          {"ops", OpsIn(f)}};
}

}  // namespace ulpgate
