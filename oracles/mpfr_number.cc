#include "oracles/mpfr_number.h"

#include <cstdio>
#include <cstring>

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

std::string MpfrNumber::ToExactHex() const {
  if (IsNan()) return "nan";
  const bool negative = mpfr_signbit(value_) != 0;
  if (IsInf()) return negative ? "-inf" : "inf";
  if (IsZero()) return negative ? "-0x0p+0" : "0x0p+0";
  mpz_t significand;
  mpz_init(significand);
  // value = significand * 2^exponent exactly (mpfr_get_z_2exp never rounds).
  long exponent = mpfr_get_z_2exp(significand, value_);
  mpz_abs(significand, significand);
  const mp_bitcnt_t zeros = mpz_scan1(significand, 0);
  mpz_tdiv_q_2exp(significand, significand, zeros);
  exponent += static_cast<long>(zeros);
  char* digits = mpz_get_str(nullptr, 16, significand);
  std::string text = std::string(negative ? "-" : "") + "0x" + digits + "p" +
                     (exponent >= 0 ? "+" : "") + std::to_string(exponent);
  void (*free_function)(void*, size_t);
  mp_get_memory_functions(nullptr, nullptr, &free_function);
  free_function(digits, std::strlen(digits) + 1);
  mpz_clear(significand);
  return text;
}

}  // namespace ulpgate
