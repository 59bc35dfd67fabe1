// libFuzzer target: the input files of `ulpgate run --inputs` (suites/inputs/inputs.h).
// Malformed text must end in InputError; anything else (a crash, a sanitizer
// report, another exception, a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "suites/inputs/inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const ulpgate::InputSet inputs = ulpgate::ReadInputFile(in, {"grad", "t"}, "fuzz");
    if (inputs.columns.size() != 2 || inputs.columns[0].size() != inputs.columns[1].size()) {
      __builtin_trap();  // a parsed file must give one value per operand per line
    }
  } catch (const ulpgate::InputError&) {
  }
  return 0;
}
