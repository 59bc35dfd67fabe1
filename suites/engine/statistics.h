// Statistics of a stream of ULP errors: the histogram of docs/design.md "Numerics", counts of
// special and signed-zero mismatches, the maximum with the input that made it,
// the mean, and percentiles read from a fine log-scale histogram.
//
// Mergeable: the engine fills one per chunk of inputs and merges them in chunk
// order, so the result does not depend on how many threads ran.
#ifndef ULPGATE_SUITES_STATISTICS_H_
#define ULPGATE_SUITES_STATISTICS_H_

#include <array>
#include <cstdint>
#include <vector>

#include "oracles/reduction_bound.h"
#include "oracles/ulp_metric.h"

namespace ulpgate {

// Special mismatches of one cause (oracles/ulp_metric.h SpecialCause): how
// many, and the first input with one (-1: none).
struct SpecialCauseCount {
  uint64_t count = 0;
  int64_t first_index = -1;
};
// Indexed by SpecialCauseIndex; the counts add up to the special mismatches.
using SpecialCauseCounts = std::array<SpecialCauseCount, kSpecialCauseCount>;
// Adds `later`'s counts into `into`, keeping the lower first index.
void MergeSpecialCauses(SpecialCauseCounts& into, const SpecialCauseCounts& later);

class ErrorStatistics {
 public:
  explicit ErrorStatistics(const FloatFormat& format = kBinary32);

  // Everything it holds, as plain data: for statistics that outlive the
  // process (a shard of a sweep, merged later). sum_ulp is the double sum Add
  // and Merge made; fine is the percentiles' histogram.
  struct State {
    std::vector<uint64_t> counts, fine;
    uint64_t n = 0, special_mismatch = 0, signed_zero_mismatch = 0, correctly_rounded = 0;
    double max_ulp = 0, sum_ulp = 0;
    int64_t max_index = -1, first_special_index = -1;
    SpecialCauseCounts special_causes{};
    int64_t first_signed_zero_index = -1;
  };
  State state() const;
  // Throws std::invalid_argument when the histograms' sizes are not the
  // format's.
  ErrorStatistics(const FloatFormat& format, const State& state);
  static size_t FineBinCount();
  // The fine bin Add puts an error in (0: e == 0; then 16 per binade from
  // 2^-64), computed as Add computes it, through std::log2.
  static int FineBinOf(double ulp) { return FineBin(ulp); }

  void Add(const UlpError& error, uint64_t index);
  // A special mismatch of a cause its measure found itself (the sweep's
  // vectorized tier), as Add counts it.
  void AddSpecial(SpecialCause cause, uint64_t index);
  // Add's work for an error already sorted into its bins (no special
  // mismatch; ulp, bin and fine bin exactly as Add would take and compute
  // them), and the counts of correctly rounded outputs and signed-zero
  // mismatches among such errors, given apart: what a vectorized measure
  // (suites/sweep/sweep_tier.h) knows per output and per tile.
  void AddSorted(double ulp, int bin, int fine, uint64_t index) {
    ++n_;
    ++counts_[bin];
    ++fine_[fine];
    sum_ulp_ += ulp;
    if (max_index_ < 0 || ulp > max_ulp_) {
      max_ulp_ = ulp;
      max_index_ = static_cast<int64_t>(index);
    }
  }
  void AddCounts(uint64_t correctly_rounded, uint64_t signed_zero_mismatch);
  // The first signed-zero mismatch's input, where AddCounts counted it: offered
  // in index order, the first offer kept.
  void OfferSignedZero(uint64_t index) {
    if (first_signed_zero_index_ < 0) first_signed_zero_index_ = static_cast<int64_t>(index);
  }
  // Appends the statistics of inputs that come after this one's.
  void Merge(const ErrorStatistics& later);

  uint64_t n() const { return n_; }
  const std::vector<double>& bounds() const { return bounds_; }
  const std::vector<uint64_t>& counts() const { return counts_; }
  uint64_t special_mismatch() const { return special_mismatch_; }
  // The special mismatches by cause, with the first input of each.
  const SpecialCauseCounts& special_causes() const { return special_causes_; }
  // The first input with a zero of the wrong sign (-1: none).
  int64_t first_signed_zero_index() const { return first_signed_zero_index_; }
  uint64_t signed_zero_mismatch() const { return signed_zero_mismatch_; }
  uint64_t correctly_rounded() const { return correctly_rounded_; }
  // Over results that are not special mismatches; -1 index when there are none.
  double max_ulp() const { return max_ulp_; }
  int64_t max_index() const { return max_index_; }
  int64_t first_special_index() const { return first_special_index_; }
  double mean_ulp() const;
  // The p-th percentile (0 < p < 100) of the error over results that are not
  // special mismatches: the upper edge of the fine bin it falls in, so within
  // a factor 2^(1/16) above the true value; 0 when it falls on e == 0.
  double Percentile(double p) const;

 private:
  static int FineBin(double ulp);

  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;
  std::vector<uint64_t> fine_;  // [0]: e == 0; then 2^(1/16)-wide bins
  uint64_t n_ = 0;
  uint64_t special_mismatch_ = 0;
  uint64_t signed_zero_mismatch_ = 0;
  uint64_t correctly_rounded_ = 0;
  double max_ulp_ = 0;
  int64_t max_index_ = -1;
  int64_t first_special_index_ = -1;
  SpecialCauseCounts special_causes_{};
  int64_t first_signed_zero_index_ = -1;
  double sum_ulp_ = 0;
};

// Statistics of a stream of bound fractions (oracles/reduction_bound.h): the
// histogram on BoundFractionBound's bounds (0, 2^-10, ..., 1/2, 1, above 1),
// the maximum with its index, the count above 1 (bugs) with the first, and the
// non-finite results the bound does not apply to (legitimate overflow).
// Mergeable like ErrorStatistics.
class BoundFractionStatistics {
 public:
  BoundFractionStatistics();

  void Add(const BoundFraction& fraction, uint64_t index);
  // Add in two parts, for a measure that knows a fraction's bin before its
  // value: each fraction's bin (what Add counts of it), then the largest
  // fraction of a run of them with the first index holding it, offered in
  // index order after the run's bins.
  void AddBin(int bin, uint64_t index) {
    ++n_;
    ++counts_[bin];
    if (bin + 1 == static_cast<int>(counts_.size()) && first_above_one_index_ < 0) {
      first_above_one_index_ = static_cast<int64_t>(index);
    }
  }
  void AddOverflowExempt();
  void OfferMax(double fraction, uint64_t index);
  void Merge(const BoundFractionStatistics& later);

  uint64_t n() const { return n_; }
  const std::vector<double>& bounds() const { return bounds_; }
  // counts[0]: fraction == 0; counts[i]: bounds[i-1] < f <= bounds[i]; the
  // last: f > 1. Overflow-exempt results are counted apart.
  const std::vector<uint64_t>& counts() const { return counts_; }
  uint64_t above_one() const { return counts_.back(); }
  uint64_t overflow_exempt() const { return overflow_exempt_; }
  double max_fraction() const { return max_fraction_; }
  int64_t max_index() const { return max_index_; }
  int64_t first_above_one_index() const { return first_above_one_index_; }

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;
  uint64_t n_ = 0;
  uint64_t overflow_exempt_ = 0;
  double max_fraction_ = 0;
  int64_t max_index_ = -1;
  int64_t first_above_one_index_ = -1;
};

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_STATISTICS_H_
