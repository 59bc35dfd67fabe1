#include "oracles/cast_reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>

#include "oracles/format.h"

namespace ulpgate {
namespace {

constexpr uint32_t kInfinity = 0x7f800000u;
constexpr uint32_t kSmallestNormal = 0x00800000u;

uint32_t PatternOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// A positive pattern (at most infinity's) rounded to nearest even to bf16, as
// a binary32 pattern: add 0x7fff plus the kept half's last bit, clear the
// dropped half (a carry out of the largest bf16 number gives infinity's
// pattern).
uint32_t RoundPatternToBf16(uint32_t a) {
  if (a >= kInfinity) return a;
  return (a + 0x7fffu + ((a >> 16) & 1u)) & 0xffff0000u;
}

}  // namespace

Binary32CastReference::Binary32CastReference(const FloatFormat& to, const CastPolicy& policy)
    : to_(to), flush_input_(policy.subnormals == CastSubnormals::kFlushInput) {
  const bool nearest = policy.rounding == CastRounding::kNearestEven ||
                       policy.rounding == CastRounding::kNearestAway;
  if ((!nearest && policy.rounding != CastRounding::kTowardZero) ||
      (policy.overflow != CastOverflow::kSaturate && policy.overflow != CastOverflow::kNan) ||
      policy.subnormals == CastSubnormals::kFlushOutput ||
      (policy.route != nullptr && policy.route != &kBFloat16) || to.bits > 8 ||
      (policy.overflow == CastOverflow::kNan && !to.has_nan())) {
    throw std::invalid_argument(
        fmt::format("Binary32CastReference: no reference for {} under {}", to.name, policy.Name()));
  }
  // The positive values (and +0) with their codes, ascending.
  std::map<double, uint8_t> values;
  for (uint32_t c = 0; c < (1u << to.bits); ++c) {
    const double v = DecodeBits(to, c);
    if (std::isfinite(v) && !std::signbit(v)) values.emplace(v, static_cast<uint8_t>(c));
  }
  if (to.has_nan()) {
    nan_positive_ = static_cast<uint8_t>(EncodeBits(to, std::numeric_limits<double>::quiet_NaN()));
    nan_negative_ =
        static_cast<uint8_t>(EncodeBits(to, -std::numeric_limits<double>::quiet_NaN()));
  } else {
    // No NaN: the sign bit alone, the pattern of -0.
    nan_positive_ = nan_negative_ = static_cast<uint8_t>(1u << (to.bits - 1));
  }
  std::vector<std::pair<double, uint8_t>> steps(values.begin(), values.end());
  const int m = to.precision - 1;
  // The first pattern from which the cast gives hi rather than lo.
  const auto start_of = [&](double lo, double hi) -> uint32_t {
    if (!nearest) {
      return hi > std::numeric_limits<float>::max() ? kInfinity
                                                     : PatternOf(static_cast<float>(hi));
    }
    const double mid = (lo + hi) / 2;
    const float mid_f = static_cast<float>(mid);
    if (static_cast<double>(mid_f) != mid) {
      throw std::invalid_argument(fmt::format(
          "Binary32CastReference: {}'s midpoint {} is not a binary32 value", to.name, mid));
    }
    bool tie_up = true;
    if (policy.rounding == CastRounding::kNearestEven && lo > 0) {
      // lo's significand at the tie's quantum (lo and the midpoint share a binade).
      const int q = std::max(std::ilogb(lo), to.emin) - m;
      tie_up = std::fmod(std::ldexp(lo, -q), 2.0) != 0;
    } else if (policy.rounding == CastRounding::kNearestEven) {
      tie_up = false;  // lo = 0: an even significand
    }
    return PatternOf(mid_f) + (tie_up ? 0 : 1);
  };
  starts_.push_back(0);
  codes_.push_back(steps[0].second);
  for (size_t k = 1; k < steps.size(); ++k) {
    starts_.push_back(start_of(steps[k - 1].first, steps[k].first));
    codes_.push_back(steps[k].second);
  }
  if (policy.overflow == CastOverflow::kNan) {
    // The value the grid would have next: where rounding leaves the range.
    const double largest = steps.back().first;
    const double next = largest + std::ldexp(1.0, std::max(std::ilogb(largest), to.emin) - m);
    starts_.push_back(std::min(start_of(largest, next), kInfinity));
    codes_.push_back(nan_positive_);
  }
  if (policy.route != nullptr) {
    // The first pattern whose bf16 rounding reaches each start.
    for (uint32_t& s : starts_) {
      uint32_t lo = 0, hi = kInfinity + 1;  // the answer is in [lo, hi]
      while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (RoundPatternToBf16(mid) >= s) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      s = lo;
    }
  }
  for (size_t k = 1; k < starts_.size(); ++k) {
    if (starts_[k] < starts_[k - 1]) {
      throw std::logic_error("Binary32CastReference: steps out of order");
    }
  }
}

uint8_t Binary32CastReference::Signed(uint8_t magnitude_code, bool negative) const {
  // An overflow to NaN: the model's NaN has no sign of the source's (a NaN
  // source's has, and Fill and Code set it apart).
  if (magnitude_code == nan_positive_) return nan_positive_;
  if (!to_.has_sign) return negative ? nan_positive_ : magnitude_code;
  if (!negative) return magnitude_code;
  if (magnitude_code == 0 && !to_.has_negative_zero()) return 0;
  return static_cast<uint8_t>(magnitude_code | (1u << (to_.bits - 1)));
}

uint8_t Binary32CastReference::Code(uint32_t bits) const {
  if ((bits & 0x7fffffffu) > kInfinity) return (bits >> 31) != 0 ? nan_negative_ : nan_positive_;
  uint8_t c;
  FillPositive(bits & 0x7fffffffu, 1, &c);
  return Signed(c, (bits >> 31) != 0);
}

void Binary32CastReference::FillPositive(uint32_t first, size_t n, uint8_t* out) const {
  size_t i = 0;
  // The step holding `first`.
  size_t k = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), first) -
                                 starts_.begin()) - 1;
  while (i < n) {
    const uint64_t u = uint64_t{first} + i;
    if (u > kInfinity) {  // NaN patterns
      std::memset(out + i, nan_positive_, n - i);
      break;
    }
    while (k + 1 < starts_.size() && starts_[k + 1] <= u) ++k;
    const uint64_t end = k + 1 < starts_.size() ? starts_[k + 1] : uint64_t{kInfinity} + 1;
    const size_t run = static_cast<size_t>(std::min<uint64_t>(end - u, n - i));
    std::memset(out + i, codes_[k], run);
    i += run;
  }
  // Unsigned without zero: a zero source has no value; flushed on input, a
  // binary32 subnormal is a zero.
  const uint64_t zeros_end = flush_input_ ? kSmallestNormal : 1;
  if (first < zeros_end && n > 0) {
    const uint8_t zero = to_.has_zero() ? codes_[0] : nan_positive_;
    std::memset(out, zero, static_cast<size_t>(std::min<uint64_t>(zeros_end - first, n)));
  }
}

void Binary32CastReference::Fill(uint32_t first, size_t n, uint8_t* out) const {
  size_t i = 0;
  while (i < n) {
    const uint32_t u = static_cast<uint32_t>(first + i);
    const bool negative = (u >> 31) != 0;
    const size_t run = static_cast<size_t>(
        std::min<uint64_t>(n - i, (negative ? uint64_t{1} << 32 : uint64_t{1} << 31) - u));
    FillPositive(u & 0x7fffffffu, run, out + i);
    if (negative) {
      uint8_t table[256];
      for (int c = 0; c < 256; ++c) table[c] = Signed(static_cast<uint8_t>(c), true);
      for (size_t j = 0; j < run; ++j) out[i + j] = table[out[i + j]];
      // The negative NaN patterns, 0xff800001 up: the NaN of their sign.
      const uint64_t nan_from = std::max<uint64_t>(u, 0xff800001u);
      const uint64_t end = uint64_t{u} + run;
      if (nan_from < end) {
        std::memset(out + i + (nan_from - u), nan_negative_, static_cast<size_t>(end - nan_from));
      }
    }
    i += run;
  }
}

}  // namespace ulpgate
