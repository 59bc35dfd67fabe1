#include "oracles/mpfr_number.h"

#include <cstdio>

namespace ulpgate {

std::string MpfrNumber::ToDecimal(int digits) const {
  if (IsNan()) return "nan";
  if (IsInf()) return mpfr_signbit(value_) ? "-inf" : "inf";
  char* text = nullptr;
  const int length = mpfr_asprintf(&text, "%.*Re", digits - 1, value_);
  std::string result = length >= 0 ? std::string(text, length) : std::string("?");
  mpfr_free_str(text);
  return result;
}

}  // namespace ulpgate
