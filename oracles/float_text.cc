#include "oracles/float_text.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ulpgate {

std::string HexFloat(float x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  char buffer[48];
  // float -> double is exact, and %a of a double is exact.
  std::snprintf(buffer, sizeof buffer, "%a", static_cast<double>(x));
  return buffer;
}

std::string BitsHex(float x) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "0x%08x", FloatBits(x));
  return buffer;
}

std::string DecimalFloat(float x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.9g", static_cast<double>(x));
  return buffer;
}

std::optional<float> ParseFloat(std::string_view text, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<float> {
    if (error) *error = why;
    return std::nullopt;
  };
  if (text.empty()) return fail("empty value");
  const std::string s(text);
  if (s.rfind("bits:", 0) == 0) {
    const std::string digits = s.substr(5);
    char* end = nullptr;
    errno = 0;
    const unsigned long long bits = std::strtoull(digits.c_str(), &end, 16);
    if (digits.empty() || *end != '\0' || errno != 0 || bits > 0xffffffffULL) {
      return fail("'" + s + "' is not a 32-bit pattern");
    }
    return FloatFromBits(static_cast<uint32_t>(bits));
  }
  // strtod, then round to float once: strtod is exact for hex floats and
  // correctly rounded for decimals, and a decimal's double rounding through
  // binary64 is avoided below by re-parsing with strtof.
  char* end = nullptr;
  errno = 0;
  const double as_double = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') {
    return fail("'" + s + "' is not a number (hex float, decimal, inf or nan)");
  }
  const bool is_hex = s.find("0x") != std::string::npos || s.find("0X") != std::string::npos;
  if (is_hex) {
    const float f = static_cast<float>(as_double);
    if (!std::isnan(as_double) && static_cast<double>(f) != as_double) {
      return fail("hex float '" + s + "' is not exactly representable in binary32");
    }
    return f;
  }
  errno = 0;
  const float f = std::strtof(s.c_str(), &end);  // correctly rounded
  return f;
}

}  // namespace ulpgate
