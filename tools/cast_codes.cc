// Prints ulpgate's cast model (CastCode) for every policy CastPolicies(from, to) lists, on
// source bit patterns read from stdin (hex, one a line): the first line names the
// policies, then one line of hex codes per input, a code per policy. The C++ side of
// exact_casts_cross_test.py, which computes the same codes in Python integers.
//
//   ulpgate_cast_codes f32 float8_e4m3fn < bits.txt
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "oracles/cast_policy.h"
#include "oracles/format.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s FROM TO < source bit patterns (hex, one a line)\n", argv[0]);
    return 2;
  }
  const ulpgate::FloatFormat* from = ulpgate::FindFormat(argv[1]);
  const ulpgate::FloatFormat* to = ulpgate::FindFormat(argv[2]);
  if (from == nullptr || to == nullptr) {
    std::fprintf(stderr, "unknown format %s\n", from == nullptr ? argv[1] : argv[2]);
    return 2;
  }
  const std::vector<ulpgate::CastPolicy> policies = ulpgate::CastPolicies(*from, *to);
  std::string line;
  for (const ulpgate::CastPolicy& p : policies) line += p.Name() + " ";
  std::cout << line << "\n";
  std::string text;
  while (std::cin >> text) {
    const uint64_t bits = std::stoull(text, nullptr, 16);
    const double x = ulpgate::DecodeBits(*from, bits);
    line.clear();
    for (const ulpgate::CastPolicy& p : policies) {
      char code[8];
      std::snprintf(code, sizeof code, "%02x ",
                    static_cast<unsigned>(ulpgate::CastCode(*from, *to, x, p)));
      line += code;
    }
    std::cout << line << "\n";
  }
  return 0;
}
