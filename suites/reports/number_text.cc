#include "suites/reports/number_text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ulpgate {

std::string FormatUlp(double value) {
  if (std::isnan(value)) return "n/a";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return "0";
  const double magnitude = std::fabs(value);
  // The nearest 4-digit decimal m * 10^(exponent - 3), then one step up
  // where it lies below the value: read back (strtod rounds to nearest, which
  // is monotone), a decimal below the value reads below it unless it is the
  // value's own shortest decimal, which reads as the value.
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3e", magnitude);
  long mantissa = (buffer[0] - '0') * 1000 + (buffer[2] - '0') * 100 + (buffer[3] - '0') * 10 +
                  (buffer[4] - '0');
  int exponent = std::atoi(buffer + 6);
  if (std::strtod(buffer, nullptr) < magnitude) {
    if (++mantissa == 10000) {
      mantissa = 1000;
      ++exponent;
    }
  }
  const std::string digits = std::to_string(mantissa);  // 4 digits, d.ddd x 10^exponent
  std::string text;
  if (exponent < -3 || exponent > 3) {
    std::snprintf(buffer, sizeof buffer, "%c.%se%c%02d", digits[0], digits.substr(1).c_str(),
                  exponent < 0 ? '-' : '+', std::abs(exponent));
    text = buffer;
  } else {
    if (exponent >= 0) {
      text = digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
    } else {
      text = "0." + std::string(-exponent - 1, '0') + digits;
    }
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return value < 0 ? "-" + text : text;
}

}  // namespace ulpgate
