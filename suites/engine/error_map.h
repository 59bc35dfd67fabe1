// Error maps: the statistics of one (variant, target) broken down by the
// binary exponent and sign of one operand, so a table shows where in the
// input space the error lives (`ulpgate run --by OPERAND`: for tanh's
// backward op the binade [2^-1, 2^0) of |t|, next to 1, stands out).
//
// Buckets are binades of the operand, ordered along the real line: -inf, the
// negative binades from -2^128 up, negative subnormals, -0, +0, positive
// subnormals, the positive binades, +inf, then NaN. Each bucket keeps a light
// summary (no fine histogram: a random suite touches ~500 buckets per case),
// mergeable in input order like ErrorStatistics so maps do not depend on the
// thread count.
#ifndef ULPGATE_SUITES_ERROR_MAP_H_
#define ULPGATE_SUITES_ERROR_MAP_H_

#include <cstdint>
#include <map>
#include <string>

#include "oracles/ulp_metric.h"

namespace ulpgate {

struct BucketStatistics {
  uint64_t n = 0;
  uint64_t special_mismatch = 0;
  uint64_t correctly_rounded = 0;
  uint64_t above_one_ulp = 0;  // e > 1
  double max_ulp = 0;          // over non-special results
  int64_t max_index = -1;      // the input with max_ulp (the earliest on ties)
  double sum_ulp = 0;

  void Add(const UlpError& error, uint64_t index);
  // Appends the statistics of inputs that come after this one's.
  void Merge(const BucketStatistics& later);
  double mean_ulp() const;
};

// Bucket key of a binary32 value, ordered along the real line (see above).
int BinadeBucket(float x);
// "[2^-1, 2^0)", "(-2^0, -2^-1]", "+0", "-0", "(0, 2^-126)" (subnormal),
// "(-2^-126, 0)", "+inf", "-inf", "NaN".
std::string BinadeLabel(int bucket);

using ErrorMap = std::map<int, BucketStatistics>;

// Merges `later` (statistics of later inputs) into `map`, bucket by bucket.
void MergeErrorMap(ErrorMap& map, const ErrorMap& later);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_ERROR_MAP_H_
