#include "oracles/block_scale_steps.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "oracles/float_text.h"
#include "oracles/format.h"

namespace ulpgate {
namespace {

constexpr uint32_t kInfinity = 0x7f800000u;

uint32_t PowerOfTwoPattern(int k) {  // 2^k, -149 <= k <= 127
  return k >= -126 ? static_cast<uint32_t>(k + 127) << 23 : uint32_t{1} << (k + 149);
}

// The least binary32 pattern whose value is above v (v >= 0, a double);
// infinity's when none is.
uint32_t FirstAbove(double v) {
  if (v >= std::numeric_limits<float>::max()) return kInfinity;
  float f = static_cast<float>(v);
  if (static_cast<double>(f) <= v) f = std::nextafter(f, HUGE_VALF);
  return FloatBits(f);
}

// RN32(q) > 2^j, for j >= -127, holds exactly when q exceeds the midpoint
// of 2^j and the next binary32 above it: the tie rounds to 2^j, whose
// pattern is even (mantissa 0, or 0x400000 for 2^-127).
double MidpointAbove(int j) {
  const double step = j >= -126 ? std::ldexp(1.0, j - 23) : 0x1p-149;
  return std::ldexp(1.0, j) + step / 2;
}

// T[b], b = 1..255: the least pattern whose byte is at least b (infinity's
// where no finite amax reaches b); T[0] = 0.
std::vector<uint32_t> Thresholds(ScaleRule rule, const FloatFormat& f) {
  std::vector<uint32_t> t(256, kInfinity);
  t[0] = 0;
  const double m = LargestFinite(f);
  // RN32(1/M): a double quotient rounded to binary32 (innocuous double
  // rounding: 53 >= 2*24 + 2).
  const double reciprocal = static_cast<float>(1.0 / m);
  for (int b = 1; b <= 254; ++b) {
    switch (rule) {
      case ScaleRule::kOcpFloor: {  // floor(log2 a) >= b - 127 + emax
        const int k = b - 127 + f.emax;
        if (k <= 127) t[b] = PowerOfTwoPattern(k);
        break;
      }
      case ScaleRule::kCeil: {  // a > 2^(b - 128 + emax)
        const int k = b - 128 + f.emax;
        if (k <= 127) t[b] = PowerOfTwoPattern(k) + 1;
        break;
      }
      case ScaleRule::kEven: {
        // R(a) >= 2^(k+1), k = b - 128 + emax: a at or above 2^(k+1) less
        // half a unit of p bits in binade k, 2^(k-p).
        const int k = b - 128 + f.emax;
        if (k + 1 <= 127) {
          const double carry = std::ldexp(1.0, k + 1) - std::ldexp(1.0, k - f.precision);
          t[b] = FloatBits(static_cast<float>(carry));  // exact: p + 1 bits
        }
        break;
      }
      case ScaleRule::kRceil:  // RN32(a / M) > 2^(b - 128): a > M mid (exact in double)
        t[b] = FirstAbove(m * MidpointAbove(b - 128));
        break;
      case ScaleRule::kReciprocal: {  // RN32(a r) > 2^(b - 128): a r > mid, a r exact in double
        const double mid = MidpointAbove(b - 128);
        uint32_t p = FirstAbove(mid / reciprocal);
        const auto above = [&](uint32_t a) {
          return static_cast<double>(FloatFromBits(a)) * reciprocal > mid;
        };
        while (p > 0 && p < kInfinity && above(p - 1)) --p;
        while (p < kInfinity && !above(p)) ++p;
        t[b] = p;
        break;
      }
    }
  }
  // 0xff: infinity and NaN, and EVEN's carry to 2^128 from 2^128 - 2^(127-p).
  t[255] = rule == ScaleRule::kEven
               ? FloatBits(static_cast<float>(0x1p128 - std::ldexp(1.0, 127 - f.precision)))
               : kInfinity;
  return t;
}

}  // namespace

// byte(p) = max{b : T[b] <= p}.
std::vector<std::pair<uint32_t, uint8_t>> ScaleByteSteps(ScaleRule rule, const FloatFormat& f) {
  const std::vector<uint32_t> t = Thresholds(rule, f);
  std::vector<uint32_t> starts(t.begin(), t.end());
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  std::vector<std::pair<uint32_t, uint8_t>> steps;
  for (uint32_t s : starts) {
    int byte = 0;
    for (int b = 0; b < 256; ++b) {
      if (t[static_cast<size_t>(b)] <= s) byte = b;
    }
    if (steps.empty() || steps.back().second != byte) {
      steps.emplace_back(s, static_cast<uint8_t>(byte));
    }
  }
  return steps;
}

}  // namespace ulpgate
