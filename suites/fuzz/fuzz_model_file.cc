// libFuzzer target: a models file (`ulpgate check --models FILE`: one
// 'NAME: statements' per line, '#' comments), read as check reads it
// (suites/inputs/check_files.h CheckModels, which parses each line with the
// model language, oracles/model_expr.h), for the default op (the first
// registered; the corpus writes its operands, grad and t) in one of the
// formats it runs in, picked by the file's first byte: the input is the file
// itself, so any file a user writes replays as it is. Every model that
// parsed is evaluated on tuples of the format's special values. Malformed
// text must end in InputError (a ModelSyntaxError is one by then); anything
// else (a crash, a sanitizer report, another exception, a hang, a result
// that is not a value of the format) is a finding.
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/elementwise_ops.h"
#include "oracles/format.h"
#include "oracles/model_expr.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/inputs/check_files.h"
#include "suites/inputs/inputs.h"
#include "suites/investigate/check_models.h"

namespace {

// CheckModels reads a path, as check does: the input goes to a file of this
// process's own, removed at exit.
class ScratchFile {
 public:
  ScratchFile() {
    const std::string pattern =
        (std::filesystem::temp_directory_path() / "ulpgate_fuzz_models_XXXXXX").string();
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    const int fd = mkstemp(name.data());
    if (fd < 0) std::abort();
    close(fd);
    path_ = name.data();
  }
  ~ScratchFile() { std::remove(path_.c_str()); }
  const std::string& Write(const uint8_t* data, size_t size) const {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (f == nullptr || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0) std::abort();
    return path_;
  }

 private:
  std::string path_;
};

// The format's values where roundings and special cases turn: signed zeros,
// one, the smallest and largest subnormals, the smallest normal, the
// largest below 2 (every significand bit set: its square and sums round),
// the largest finite, infinities and a NaN.
std::vector<double> SpecialValues(const ulpgate::FloatFormat& f) {
  const double largest = std::ldexp(2.0 - std::ldexp(1.0, 1 - f.precision), f.emax);
  const double tiny = std::ldexp(1.0, f.emin - f.precision + 1);
  const double infinity = HUGE_VAL;
  return {0.0,
          -0.0,
          1.0,
          -1.0,
          tiny,
          -(std::ldexp(1.0, f.emin) - tiny),
          std::ldexp(1.0, f.emin),
          2.0 - std::ldexp(1.0, 1 - f.precision),
          -largest,
          largest,
          infinity,
          -infinity,
          std::nan("")};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ScratchFile scratch;
  if (size == 0) return 0;
  const ulpgate::ElementwiseOpInfo& op = ulpgate::DefaultElementwiseOp();
  const std::vector<std::string> dtypes = ulpgate::ElementwiseDtypes(op);
  const std::string& dtype = dtypes[data[0] % dtypes.size()];
  const ulpgate::FloatFormat& format = ulpgate::CheckFormat(std::string(op.name), dtype);
  std::vector<ulpgate::ModelProgram> models;
  std::vector<bool> user;
  std::vector<int> builtin;
  try {
    models = ulpgate::CheckModels(op, {}, scratch.Write(data, size), format, &user, &builtin);
  } catch (const ulpgate::InputError&) {
    return 0;
  }
  const std::vector<double> values = SpecialValues(format);
  std::vector<double> operands(op.arity());
  for (size_t m = 0; m < models.size(); ++m) {
    if (!user[m]) continue;
    // Every value in the first operand's place against every one in the
    // others' (each a different one where there are several).
    for (size_t i = 0; i < values.size(); ++i) {
      for (size_t j = 0; j < values.size(); ++j) {
        for (size_t k = 0; k < operands.size(); ++k) {
          operands[k] = values[k == 0 ? i : (j + k - 1) % values.size()];
        }
        const double out = models[m].Evaluate(operands.data());
        if (!ulpgate::IsRepresentable(format, out)) __builtin_trap();  // rounded to storage
      }
    }
  }
  return 0;
}
