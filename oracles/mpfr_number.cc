#include "oracles/mpfr_number.h"

#include <gmp.h>

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

std::string MpfrNumber::ToHexExact() const {
  if (IsNan()) return "nan";
  const bool negative = mpfr_signbit(value_) != 0;
  const std::string sign = negative ? "-" : "";
  if (IsInf()) return sign + "inf";
  if (IsZero()) return sign + "0x0p+0";
  // |x| = m * 2^e with m an integer; strip m's trailing zero bits, then
  // |x| = 1.f * 2^(e + bits - 1) with bits - 1 fraction bits, padded to whole
  // hex digits.
  mpz_t m;
  mpz_init(m);
  long e = static_cast<long>(mpfr_get_z_2exp(m, value_));
  mpz_abs(m, m);
  const mp_bitcnt_t zeros = mpz_scan1(m, 0);
  mpz_fdiv_q_2exp(m, m, zeros);
  e += static_cast<long>(zeros);
  const long bits = static_cast<long>(mpz_sizeinbase(m, 2));
  const long exponent = e + bits - 1;
  const long fraction_bits = bits - 1;
  const long pad = (4 - fraction_bits % 4) % 4;
  mpz_mul_2exp(m, m, static_cast<mp_bitcnt_t>(pad));
  // m now is 1 followed by the fraction's hex digits.
  char* digits = mpz_get_str(nullptr, 16, m);
  std::string text(digits);
  void (*free_function)(void*, size_t);
  mp_get_memory_functions(nullptr, nullptr, &free_function);
  free_function(digits, text.size() + 1);
  mpz_clear(m);
  std::string result = sign + "0x1";
  if (text.size() > 1) result += "." + text.substr(1);
  char exponent_text[32];
  std::snprintf(exponent_text, sizeof exponent_text, "p%+ld", exponent);
  return result + exponent_text;
}

}  // namespace ulpgate
