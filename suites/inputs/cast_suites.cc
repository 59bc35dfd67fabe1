#include "suites/inputs/cast_suites.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "oracles/format.h"
#include "suites/inputs/counter_rng.h"
#include "suites/inputs/inputs.h"

namespace ulpgate {
namespace {

uint32_t PatternOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// The boundary values of `to` as binary32 values, positive (NaNs apart).
std::vector<float> PositiveBoundaries(const FloatFormat& to) {
  std::set<double> values;
  for (uint64_t c = 0; c < (uint64_t{1} << to.bits); ++c) {
    const double v = DecodeBits(to, c);
    if (std::isfinite(v) && v >= 0) values.insert(v);
  }
  std::vector<double> grid(values.begin(), values.end());
  const double largest = grid.back();
  // Where the grid would go on past the largest value: the midpoint is the
  // saturation threshold of rounding to nearest.
  grid.push_back(largest +
                 std::ldexp(1.0, std::max(std::ilogb(largest), to.emin) - (to.precision - 1)));
  grid.push_back(std::ldexp(1.0, to.emax + 1));
  std::vector<float> out;
  const auto add = [&](double v) {
    if (v > std::numeric_limits<float>::max()) return;
    const float f = static_cast<float>(v);
    out.push_back(f);
    out.push_back(std::nextafter(f, 0.0f));
    out.push_back(std::nextafter(f, std::numeric_limits<float>::infinity()));
  };
  for (size_t i = 0; i < grid.size(); ++i) {
    add(grid[i]);
    if (i + 1 < grid.size()) {
      const double gap = grid[i + 1] - grid[i];
      add(grid[i] + gap / 2);
      add(grid[i] + gap / 4);
      add(grid[i] + 3 * gap / 4);
    }
  }
  const double smallest = grid[grid[0] == 0 ? 1 : 0];
  add(smallest / 2);
  add(smallest / 4);
  add(static_cast<double>(std::numeric_limits<float>::min()));
  add(static_cast<double>(std::numeric_limits<float>::denorm_min()));
  add(static_cast<double>(std::numeric_limits<float>::max()));
  add(1.0);
  out.push_back(0.0f);
  out.push_back(std::numeric_limits<float>::infinity());
  return out;
}

}  // namespace

double CastSourceValue(const FloatFormat& from, uint32_t bits) {
  if (IsBinary32(from)) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return static_cast<double>(f);
  }
  return DecodeBits(from, bits);
}

std::vector<uint32_t> GenerateCastSuite(const FloatFormat& from, const FloatFormat& to,
                                        const std::string& suite, uint64_t seed, uint64_t n) {
  const bool binary32 = IsBinary32(from);
  const uint32_t sign = uint32_t{1} << (from.bits - 1);
  std::vector<uint32_t> out;
  if (suite == "boundary") {
    std::vector<uint32_t> patterns;
    for (float x : PositiveBoundaries(to)) {
      if (binary32) {
        patterns.push_back(PatternOf(x));
        continue;
      }
      // The source's values nearest the boundary, and their neighbours.
      const uint32_t p =
          static_cast<uint32_t>(EncodeBits(from, RoundDouble(from, static_cast<double>(x))));
      patterns.push_back(p);
      if (p > 0) patterns.push_back(p - 1);
      if (p + 1 < sign) patterns.push_back(p + 1);
    }
    std::set<uint32_t> seen;
    const uint32_t magnitude_mask = sign - 1;
    const uint32_t infinity = static_cast<uint32_t>(EncodeBits(from, HUGE_VAL));
    for (uint32_t p : patterns) {
      if ((p & magnitude_mask) > infinity) continue;  // a NaN: the list below has them
      for (uint32_t s : {p, p | sign}) {
        if (seen.insert(s).second) out.push_back(s);
      }
    }
    const uint32_t m = static_cast<uint32_t>(from.mantissa_bits());
    // NaNs: quiet of both signs, the lowest and highest payloads.
    for (uint32_t payload : {uint32_t{1} << (m - 1), uint32_t{1}, (uint32_t{1} << m) - 1}) {
      out.push_back(infinity | payload);
      out.push_back(infinity | payload | sign);
    }
    return out;
  }
  const uint64_t stream = StreamId("cast_" + suite);
  if (suite == "random") {
    for (uint64_t i = 0; i < n; ++i) {
      CounterRng rng(seed, stream, i);
      out.push_back(binary32 ? rng.Next32() : static_cast<uint32_t>(rng.Next32() >> 16));
    }
    return out;
  }
  if (suite == "scaled") {
    const int lo = to.emin - to.precision - 2, hi = to.emax + 2;
    for (uint64_t i = 0; i < n; ++i) {
      CounterRng rng(seed, stream, i);
      const int e = lo + static_cast<int>(rng.Below(static_cast<uint64_t>(hi - lo + 1)));
      const double significand = 1.0 + rng.Unit();
      double x = std::ldexp(significand, e);
      if ((rng.Next() & 1) != 0) x = -x;
      // Exactly a value of the source: rounded to it (toward zero: it stays
      // in the binade drawn).
      const double v = RoundDouble(from, x, true);
      out.push_back(binary32 ? PatternOf(static_cast<float>(v))
                             : static_cast<uint32_t>(EncodeBits(from, v)));
    }
    return out;
  }
  std::string known;
  for (const std::string& s : CastSuiteNames()) known += (known.empty() ? "" : ", ") + s;
  throw InputError("unknown suite '" + suite + "' of a cast (" + known + ")");
}

}  // namespace ulpgate
