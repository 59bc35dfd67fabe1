#include "suites/engine/error_map.h"

#include <cmath>

#include "oracles/float_text.h"

namespace ulpgate {
namespace {

// |x| ranks: 0 zero, 1 subnormal, 2..255 the normal binades 2^-126 .. 2^127,
// 256 infinity. Keys are rank + 1 with x's sign, so -0 and +0 stay apart and
// the order of keys is the order of the real line; NaN comes last.
constexpr int kNanBucket = 1000;
constexpr int kZeroRank = 0, kSubnormalRank = 1, kInfRank = 256;
constexpr int kNormalRankBase = 2 + 126;  // rank of binade e is e + 128

}  // namespace

void BucketStatistics::Add(const UlpError& error, uint64_t index) {
  ++n;
  if (error.correctly_rounded) ++correctly_rounded;
  if (error.special_mismatch) {
    ++special_mismatch;
    return;
  }
  if (error.ulp > 1) ++above_one_ulp;
  sum_ulp += error.ulp;
  if (max_index < 0 || error.ulp > max_ulp) {
    max_ulp = error.ulp;
    max_index = static_cast<int64_t>(index);
  }
}

void BucketStatistics::Merge(const BucketStatistics& later) {
  n += later.n;
  special_mismatch += later.special_mismatch;
  correctly_rounded += later.correctly_rounded;
  above_one_ulp += later.above_one_ulp;
  sum_ulp += later.sum_ulp;
  if (later.max_index >= 0 && (max_index < 0 || later.max_ulp > max_ulp)) {
    max_ulp = later.max_ulp;
    max_index = later.max_index;
  }
}

double BucketStatistics::mean_ulp() const {
  const uint64_t measured = n - special_mismatch;
  return measured == 0 ? 0.0 : sum_ulp / static_cast<double>(measured);
}

int BinadeBucket(float x) {
  if (std::isnan(x)) return kNanBucket;
  const uint32_t bits = FloatBits(x);
  const uint32_t exponent_field = (bits >> 23) & 0xff;
  int rank;
  if (std::isinf(x)) {
    rank = kInfRank;
  } else if (x == 0) {
    rank = kZeroRank;
  } else if (exponent_field == 0) {
    rank = kSubnormalRank;
  } else {
    rank = static_cast<int>(exponent_field) - 127 + kNormalRankBase;
  }
  return (bits >> 31) ? -(rank + 1) : rank + 1;
}

std::string BinadeLabel(int bucket) {
  if (bucket == kNanBucket) return "NaN";
  const bool negative = bucket < 0;
  const int rank = (negative ? -bucket : bucket) - 1;
  if (rank == kZeroRank) return negative ? "-0" : "+0";
  if (rank == kInfRank) return negative ? "-inf" : "+inf";
  if (rank == kSubnormalRank) return negative ? "(-2^-126, 0)" : "(0, 2^-126)";
  const int e = rank - kNormalRankBase;
  const std::string low = "2^" + std::to_string(e), high = "2^" + std::to_string(e + 1);
  return negative ? "(-" + high + ", -" + low + "]" : "[" + low + ", " + high + ")";
}

void MergeErrorMap(ErrorMap& map, const ErrorMap& later) {
  for (const auto& [bucket, stats] : later) map[bucket].Merge(stats);
}

}  // namespace ulpgate
