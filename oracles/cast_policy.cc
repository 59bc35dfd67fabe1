#include "oracles/cast_policy.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "oracles/format.h"

namespace ulpgate {
namespace {

constexpr const char* kRoundingNames[] = {"nearest_even", "nearest_away", "toward_zero",
                                          "up",           "down",         "stochastic"};
constexpr const char* kOverflowNames[] = {"saturate", "nan", "infinity"};
constexpr const char* kSubnormalNames[] = {"", "flush_input", "flush_output"};

// The formats a cast may go through first.
constexpr const FloatFormat* kRoutes[] = {&kBFloat16, &kBinary16, &kBinary32};

bool Wider(const FloatFormat& a, const FloatFormat& b) {  // a holds every value of b
  return a.precision >= b.precision && a.emax >= b.emax && a.emin <= b.emin &&
         (a.has_sign || !b.has_sign);
}

double Overflowed(const FloatFormat& to, bool negative, const CastPolicy& policy,
                  bool directed_inward) {
  const double largest = LargestFinite(to);
  const double sign = negative ? -1.0 : 1.0;
  switch (policy.overflow) {
    case CastOverflow::kSaturate:
      return sign * largest;
    case CastOverflow::kNan:
      return std::nan("");
    case CastOverflow::kInfinity:
      // IEEE: a rounding toward zero (or away from the overflow's direction)
      // stops at the largest finite value.
      return directed_inward ? sign * largest : sign * HUGE_VAL;
  }
  return std::nan("");
}

}  // namespace

std::string CastPolicy::Name() const {
  std::string name = kRoundingNames[static_cast<int>(rounding)];
  if (rounding == CastRounding::kStochastic) name += std::to_string(random_bits);
  name += ".";
  name += kOverflowNames[static_cast<int>(overflow)];
  if (subnormals != CastSubnormals::kKept) {
    name += ".";
    name += kSubnormalNames[static_cast<int>(subnormals)];
  }
  if (route != nullptr) name += fmt::format(".via_{}", route->name);
  return name;
}

std::optional<CastPolicy> ParseCastPolicy(std::string_view name) {
  CastPolicy p;
  std::vector<std::string_view> parts;
  while (!name.empty()) {
    const size_t dot = name.find('.');
    parts.push_back(name.substr(0, dot));
    name = dot == std::string_view::npos ? std::string_view() : name.substr(dot + 1);
  }
  if (parts.size() < 2 || parts.size() > 4) return std::nullopt;
  bool rounding = false;
  for (int r = 0; r < 6; ++r) {
    const std::string_view want = kRoundingNames[r];
    if (r == static_cast<int>(CastRounding::kStochastic)) {
      if (parts[0].substr(0, want.size()) != want || parts[0].size() == want.size()) continue;
      int k = 0;
      for (char c : parts[0].substr(want.size())) {
        if (c < '0' || c > '9' || k > 100) return std::nullopt;
        k = k * 10 + (c - '0');
      }
      if (k < 1 || k > 32) return std::nullopt;
      p.random_bits = k;
    } else if (parts[0] != want) {
      continue;
    }
    p.rounding = static_cast<CastRounding>(r);
    rounding = true;
  }
  if (!rounding) return std::nullopt;
  bool overflow = false;
  for (int o = 0; o < 3; ++o) {
    if (parts[1] == kOverflowNames[o]) {
      p.overflow = static_cast<CastOverflow>(o);
      overflow = true;
    }
  }
  if (!overflow) return std::nullopt;
  size_t i = 2;
  if (i < parts.size() && (parts[i] == "flush_input" || parts[i] == "flush_output")) {
    p.subnormals = parts[i] == "flush_input" ? CastSubnormals::kFlushInput
                                             : CastSubnormals::kFlushOutput;
    ++i;
  }
  if (i < parts.size() && parts[i].substr(0, 4) == "via_") {
    const std::string_view route = parts[i].substr(4);
    for (const FloatFormat* f : kRoutes) {
      if (route == f->name) p.route = f;
    }
    if (p.route == nullptr) return std::nullopt;
    ++i;
  }
  if (i != parts.size()) return std::nullopt;
  return p;
}

std::string CastPolicyProblem(const FloatFormat& from, const FloatFormat& to,
                              const CastPolicy& policy) {
  if (policy.overflow == CastOverflow::kInfinity && !to.has_infinity()) {
    return fmt::format("{} has no infinity to overflow to", to.name);
  }
  if (policy.overflow == CastOverflow::kNan && !to.has_nan()) {
    return fmt::format("{} has no NaN to overflow to", to.name);
  }
  if (policy.rounding == CastRounding::kStochastic &&
      (policy.random_bits < 1 || policy.random_bits > 32)) {
    return "stochastic rounding takes 1 to 32 random bits";
  }
  if (policy.route != nullptr) {
    if (!Wider(*policy.route, to) || policy.route == &to) {
      return fmt::format("{} is not wider than {}", policy.route->name, to.name);
    }
    if (!Wider(from, *policy.route) || policy.route == &from) {
      return fmt::format("{} is not narrower than {}", policy.route->name, from.name);
    }
  }
  return "";
}

std::vector<CastPolicy> CastPolicies(const FloatFormat& from, const FloatFormat& to) {
  std::vector<CastPolicy> out;
  const CastRounding roundings[] = {CastRounding::kNearestEven, CastRounding::kNearestAway,
                                    CastRounding::kTowardZero, CastRounding::kUp,
                                    CastRounding::kDown};
  const CastOverflow overflows[] = {CastOverflow::kSaturate, CastOverflow::kNan,
                                    CastOverflow::kInfinity};
  const CastSubnormals subnormals[] = {CastSubnormals::kKept, CastSubnormals::kFlushInput,
                                       CastSubnormals::kFlushOutput};
  std::vector<const FloatFormat*> routes = {nullptr};
  for (const FloatFormat* r : kRoutes) routes.push_back(r);
  for (const FloatFormat* route : routes) {
    for (CastSubnormals s : subnormals) {
      for (CastRounding r : roundings) {
        for (CastOverflow o : overflows) {
          const CastPolicy p{r, o, s, route, 0};
          if (CastPolicyProblem(from, to, p).empty()) out.push_back(p);
        }
      }
    }
  }
  return out;
}

double CastValue(const FloatFormat& from, const FloatFormat& to, double x,
                 const CastPolicy& policy, uint32_t random) {
  if (std::isnan(x)) return to.has_nan() ? x : -0.0;
  if (policy.subnormals == CastSubnormals::kFlushInput && x != 0 && from.has_subnormals &&
      std::fabs(x) < std::ldexp(1.0, from.emin)) {
    x = std::copysign(0.0, x);
  }
  if (policy.route != nullptr) x = RoundToFormat(*policy.route, x);
  if (std::isnan(x)) return to.has_nan() ? x : -0.0;
  const bool negative = std::signbit(x);
  if (!to.has_sign && (negative || x == 0)) return std::nan("");  // -0 too: no value there
  const double magnitude = std::fabs(x);
  const double largest = LargestFinite(to);
  // Rounding toward zero, or toward the infinity of the other sign: the
  // magnitude never rounds up.
  const bool inward = policy.rounding == CastRounding::kTowardZero ||
                      (policy.rounding == CastRounding::kUp && negative) ||
                      (policy.rounding == CastRounding::kDown && !negative);
  if (std::isinf(x)) {
    // An infinity is an overflow of every rounding (IEEE keeps it infinite
    // where the format has infinities, whatever the direction).
    if (policy.overflow == CastOverflow::kInfinity) return x;
    return Overflowed(to, negative, policy, false);
  }
  double result = 0;
  if (magnitude != 0) {
    // Far past the largest finite value: an overflow (also keeps the scaled
    // magnitude below in range for every double source).
    if (magnitude >= std::ldexp(1.0, to.emax + 2)) {
      return Overflowed(to, negative, policy, inward);
    }
    const int q = QuantumExponent(to, magnitude);
    const double scaled = std::ldexp(magnitude, -q);  // exact: a power of two, in range
    const double below = std::floor(scaled);          // < 2^(p+1): exact
    const double fraction = scaled - below;           // exact (Sterbenz)
    bool up = false;
    switch (policy.rounding) {
      case CastRounding::kNearestEven:
        up = fraction > 0.5 || (fraction == 0.5 && std::fmod(below, 2.0) != 0);
        break;
      case CastRounding::kNearestAway:
        up = fraction >= 0.5;
        break;
      case CastRounding::kTowardZero:
        break;
      case CastRounding::kUp:
        up = fraction > 0 && !negative;
        break;
      case CastRounding::kDown:
        up = fraction > 0 && negative;
        break;
      case CastRounding::kStochastic: {
        const int k = policy.random_bits;
        const double r = static_cast<double>(k >= 32 ? random : random & ((1u << k) - 1));
        // floor(f 2^k) is exact: f has at most 53 significant bits.
        up = std::floor(std::ldexp(fraction, k)) + r >= std::ldexp(1.0, k);
        break;
      }
    }
    result = std::ldexp(below + (up ? 1.0 : 0.0), q);
    if (result > largest) return Overflowed(to, negative, policy, inward);
    if (result == 0 && !to.has_zero()) result = SmallestPositive(to);
    if (policy.subnormals == CastSubnormals::kFlushOutput && result != 0 &&
        result < std::ldexp(1.0, to.emin)) {
      result = 0;
    }
  }
  if (result == 0 && !to.has_negative_zero()) return 0.0;
  return negative ? -result : result;
}

uint64_t CastCode(const FloatFormat& from, const FloatFormat& to, double x,
                  const CastPolicy& policy, uint32_t random) {
  const double y = CastValue(from, to, x, policy, random);
  return EncodeBits(to, y);
}

}  // namespace ulpgate
