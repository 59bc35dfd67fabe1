#include "suites/engine/statistics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace ulpgate {
namespace {
// Fine bins: 16 per binade over (2^-64, 2^192]. A finite binary32 error is at
// most |y - x| / 2^-149 < 2^(129+149), far below 2^192 in practice (the largest
// y - x relative to ulp(x) is about 2^152); the end bins absorb the rest.
constexpr int kFinePerBinade = 16;
constexpr int kFineMinExp = -64;
constexpr int kFineMaxExp = 192;
constexpr int kFineBins = 1 + (kFineMaxExp - kFineMinExp) * kFinePerBinade;
}  // namespace

void MergeSpecialCauses(SpecialCauseCounts& into, const SpecialCauseCounts& later) {
  for (size_t i = 0; i < into.size(); ++i) {
    into[i].count += later[i].count;
    const int64_t a = into[i].first_index, b = later[i].first_index;
    into[i].first_index = a < 0 ? b : b < 0 ? a : std::min(a, b);
  }
}

ErrorStatistics::ErrorStatistics(const FloatFormat& format)
    : fine_(kFineBins, 0) {
  const int bound_count = HistogramBoundCount(format);
  for (int i = 0; i < bound_count; ++i) bounds_.push_back(HistogramBound(i));
  counts_.assign(bound_count + 1, 0);
}

ErrorStatistics::ErrorStatistics(const FloatFormat& format, const State& state)
    : ErrorStatistics(format) {
  if (state.counts.size() != counts_.size() || state.fine.size() != fine_.size()) {
    throw std::invalid_argument("statistics of another format (histogram sizes differ)");
  }
  counts_ = state.counts;
  fine_ = state.fine;
  n_ = state.n;
  special_mismatch_ = state.special_mismatch;
  signed_zero_mismatch_ = state.signed_zero_mismatch;
  correctly_rounded_ = state.correctly_rounded;
  max_ulp_ = state.max_ulp;
  sum_ulp_ = state.sum_ulp;
  max_index_ = state.max_index;
  first_special_index_ = state.first_special_index;
  special_causes_ = state.special_causes;
  first_signed_zero_index_ = state.first_signed_zero_index;
}

ErrorStatistics::State ErrorStatistics::state() const {
  return {counts_,  fine_,    n_,         special_mismatch_,   signed_zero_mismatch_,
          correctly_rounded_, max_ulp_, sum_ulp_, max_index_, first_special_index_,
          special_causes_, first_signed_zero_index_};
}

size_t ErrorStatistics::FineBinCount() { return kFineBins; }

int ErrorStatistics::FineBin(double ulp) {
  if (ulp == 0) return 0;
  // Without log2 where the bits settle it (the sweep tier's FineBin, one
  // value): for ulp = m 2^E, 1 < m < 2, the position is 16 (E + 64) +
  // ceil(16 log2 m), and 16 log2 m is never an integer, so its ceil is the
  // exponent of m^16 plus one. m^16 by four squarings is within 2^-48 of it,
  // log2 below within 2^-38 of the position: both give the same bin unless
  // m^16 is within 2^-30 of a power of two, which is left to log2. On (2^-63,
  // 2^191) the clamp below never binds.
  if (ulp > 0x1p-63 && ulp < 0x1p191) {
    constexpr uint64_t kFraction = (uint64_t{1} << 52) - 1;
    uint64_t bits;
    std::memcpy(&bits, &ulp, sizeof bits);
    const int binade = kFinePerBinade * (static_cast<int>(bits >> 52) - 1023 - kFineMinExp);
    const uint64_t fraction = bits & kFraction;
    if (fraction == 0) return binade;  // a power of two: log2 is exact
    const uint64_t m_bits = fraction | (uint64_t{1023} << 52);
    double m;
    std::memcpy(&m, &m_bits, sizeof m);
    const double m2 = m * m, m4 = m2 * m2, m8 = m4 * m4, m16 = m8 * m8;
    uint64_t m16_bits;
    std::memcpy(&m16_bits, &m16, sizeof m16_bits);
    const uint64_t m16_fraction = m16_bits & kFraction;
    constexpr uint64_t kNear = uint64_t{1} << 22;
    if (m16_fraction >= kNear && m16_fraction <= kFraction + 1 - kNear) {
      return binade + static_cast<int>(m16_bits >> 52) - 1023 + 1;
    }
  }
  const double position = std::ceil((std::log2(ulp) - kFineMinExp) * kFinePerBinade);
  return 1 + static_cast<int>(std::clamp(position - 1, 0.0, double(kFineBins - 2)));
}

void ErrorStatistics::Add(const UlpError& error, uint64_t index) {
  if (error.special_mismatch) {  // neither correctly rounded nor a signed zero
    AddSpecial(error.special_cause, index);
    return;
  }
  ++n_;
  if (error.correctly_rounded) ++correctly_rounded_;
  if (error.signed_zero_mismatch) {
    ++signed_zero_mismatch_;
    OfferSignedZero(index);
  }
  ++counts_[error.bin];
  ++fine_[FineBin(error.ulp)];
  sum_ulp_ += error.ulp;
  if (max_index_ < 0 || error.ulp > max_ulp_) {
    max_ulp_ = error.ulp;
    max_index_ = static_cast<int64_t>(index);
  }
}

void ErrorStatistics::AddSpecial(SpecialCause cause, uint64_t index) {
  ++n_;
  ++special_mismatch_;
  if (first_special_index_ < 0) first_special_index_ = static_cast<int64_t>(index);
  // Every special mismatch has a cause; kNone (a measure that set none) would
  // be a defect, counted as the first cause rather than dropped from the sum.
  const int at = cause == SpecialCause::kNone ? 0 : SpecialCauseIndex(cause);
  SpecialCauseCount& c = special_causes_[at];
  ++c.count;
  if (c.first_index < 0) c.first_index = static_cast<int64_t>(index);
}

void ErrorStatistics::AddCounts(uint64_t correctly_rounded, uint64_t signed_zero_mismatch) {
  correctly_rounded_ += correctly_rounded;
  signed_zero_mismatch_ += signed_zero_mismatch;
}

void ErrorStatistics::Merge(const ErrorStatistics& later) {
  n_ += later.n_;
  special_mismatch_ += later.special_mismatch_;
  signed_zero_mismatch_ += later.signed_zero_mismatch_;
  correctly_rounded_ += later.correctly_rounded_;
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += later.counts_[i];
  for (size_t i = 0; i < fine_.size(); ++i) fine_[i] += later.fine_[i];
  sum_ulp_ += later.sum_ulp_;
  // Ties keep the earlier input, as Add does.
  if (later.max_index_ >= 0 && (max_index_ < 0 || later.max_ulp_ > max_ulp_)) {
    max_ulp_ = later.max_ulp_;
    max_index_ = later.max_index_;
  }
  if (first_special_index_ < 0) first_special_index_ = later.first_special_index_;
  MergeSpecialCauses(special_causes_, later.special_causes_);
  if (first_signed_zero_index_ < 0) first_signed_zero_index_ = later.first_signed_zero_index_;
}

double ErrorStatistics::mean_ulp() const {
  const uint64_t measured = n_ - special_mismatch_;
  return measured == 0 ? 0.0 : sum_ulp_ / static_cast<double>(measured);
}

double ErrorStatistics::Percentile(double p) const {
  const uint64_t measured = n_ - special_mismatch_;
  if (measured == 0) return 0.0;
  const double rank = std::ceil(p / 100.0 * static_cast<double>(measured));
  uint64_t cumulative = 0;
  for (int i = 0; i < kFineBins; ++i) {
    cumulative += fine_[i];
    if (static_cast<double>(cumulative) >= rank) {
      if (i == 0) return 0.0;
      const double upper = kFineMinExp + static_cast<double>(i) / kFinePerBinade;
      return std::min(std::exp2(upper), max_ulp_);
    }
  }
  return max_ulp_;
}

BoundFractionStatistics::BoundFractionStatistics() {
  for (int i = 0; i < BoundFractionBoundCount(); ++i) bounds_.push_back(BoundFractionBound(i));
  counts_.assign(bounds_.size() + 1, 0);
}

void BoundFractionStatistics::Add(const BoundFraction& fraction, uint64_t index) {
  ++n_;
  if (fraction.overflow_exempt) {
    ++overflow_exempt_;
    return;
  }
  ++counts_[fraction.bin];
  if (fraction.above_one && first_above_one_index_ < 0) {
    first_above_one_index_ = static_cast<int64_t>(index);
  }
  if (max_index_ < 0 || fraction.fraction > max_fraction_) {
    max_fraction_ = fraction.fraction;
    max_index_ = static_cast<int64_t>(index);
  }
}

void BoundFractionStatistics::AddOverflowExempt() {
  ++n_;
  ++overflow_exempt_;
}

void BoundFractionStatistics::OfferMax(double fraction, uint64_t index) {
  if (max_index_ < 0 || fraction > max_fraction_) {
    max_fraction_ = fraction;
    max_index_ = static_cast<int64_t>(index);
  }
}

void BoundFractionStatistics::Merge(const BoundFractionStatistics& later) {
  n_ += later.n_;
  overflow_exempt_ += later.overflow_exempt_;
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += later.counts_[i];
  if (later.max_index_ >= 0 && (max_index_ < 0 || later.max_fraction_ > max_fraction_)) {
    max_fraction_ = later.max_fraction_;
    max_index_ = later.max_index_;
  }
  if (first_above_one_index_ < 0) first_above_one_index_ = later.first_above_one_index_;
}

}  // namespace ulpgate
