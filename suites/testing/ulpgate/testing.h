// GoogleTest helpers for kernels written anywhere: `#include <ulpgate/testing.h>`
// and link `ulpgate::testing` (find_package(ulpgate)).
//
//   ULPGATE_EXPECT_WITHIN_ULP(op, ulpgate::kBinary32, {a, b}, got, 1.0);
//   ULPGATE_EXPECT_CORRECTLY_ROUNDED(op, ulpgate::kBFloat16, {a, b}, got);
//   ULPGATE_EXPECT_FOLLOWS_MODEL(op, ulpgate::kBinary32, {a_array, b_array},
//                                outputs, model);   // a built-in model's name, or
//   ... "mine: r = b*b; s = 1 - r; out = a*s"        // a model expression
//   ULPGATE_EXPECT_ULP_HISTOGRAM(op, ulpgate::kBinary32, {a_array, b_array},
//                                outputs, ulpgate::testing::UlpBudget{2.0, 0.01});
//
// `op` is a registered elementwise op's name and `model` one of its models,
// as `ulpgate list` shows them; docs/cpp-tests.md and examples/consumer show
// the helpers on real ops.
//
// Each is an EXPECT_TRUE/ASSERT_TRUE (the ASSERT_ forms stop the test) over a
// ::testing::AssertionResult whose failure message is built once, in one
// string, so parallel tests do not interleave: the op, the inputs (hex float
// and bits), the result (hex float and bits), the exact value (decimal), the
// correctly rounded value, the ULP error, the models the result matches, and
// the `ulpgate check` command that replays it. Formats: ulpgate::kBinary32,
// kBFloat16, kBinary16 (oracles/format.h); values of bf16/f16 are passed as
// floats holding them. Ops: every registered elementwise op (`ulpgate list`
// names them), its operands in the order the list gives them, as many as the
// op has.
// A wrong op name, operand count or a value the format cannot hold fails the
// assertion with a message saying so.
#ifndef ULPGATE_TESTING_H_
#define ULPGATE_TESTING_H_

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "oracles/format.h"

namespace ulpgate {
namespace testing {

// The result `got` of `op` on `operands` is within `max_ulp` ULPs of the exact
// value (and is no NaN or infinity where the exact value is none).
::testing::AssertionResult WithinUlp(std::string_view op, const FloatFormat& format,
                                     const std::vector<float>& operands, float got,
                                     double max_ulp);
// `got` is the exact value rounded to nearest even in `format`, bit for bit
// (a zero matches a zero).
::testing::AssertionResult CorrectlyRounded(std::string_view op, const FloatFormat& format,
                                            const std::vector<float>& operands, float got);

// Every output equals the model's bit for bit (a NaN matches a NaN): a
// built-in model's name (`ulpgate list`) or "NAME: statements" in the model
// language (docs/models.md). `operands` holds one array per operand.
::testing::AssertionResult FollowsModel(std::string_view op, const FloatFormat& format,
                                        const std::vector<std::vector<float>>& operands,
                                        const std::vector<float>& outputs,
                                        std::string_view model);

// The ULP-error histogram of the outputs stays within a budget.
struct UlpBudget {
  double max_ulp = 0.5;                  // every output, special mismatches failing
  double max_fraction_above_1_ulp = 0;   // outputs above 1 ULP / all outputs
};
::testing::AssertionResult UlpHistogramWithin(std::string_view op, const FloatFormat& format,
                                              const std::vector<std::vector<float>>& operands,
                                              const std::vector<float>& outputs,
                                              const UlpBudget& budget);

}  // namespace testing
}  // namespace ulpgate

// Variadic, so that a braced list of operands ({grad, t}) passes through.
#define ULPGATE_EXPECT_WITHIN_ULP(...) EXPECT_TRUE(::ulpgate::testing::WithinUlp(__VA_ARGS__))
#define ULPGATE_ASSERT_WITHIN_ULP(...) ASSERT_TRUE(::ulpgate::testing::WithinUlp(__VA_ARGS__))
#define ULPGATE_EXPECT_CORRECTLY_ROUNDED(...) \
  EXPECT_TRUE(::ulpgate::testing::CorrectlyRounded(__VA_ARGS__))
#define ULPGATE_ASSERT_CORRECTLY_ROUNDED(...) \
  ASSERT_TRUE(::ulpgate::testing::CorrectlyRounded(__VA_ARGS__))
#define ULPGATE_EXPECT_FOLLOWS_MODEL(...) EXPECT_TRUE(::ulpgate::testing::FollowsModel(__VA_ARGS__))
#define ULPGATE_ASSERT_FOLLOWS_MODEL(...) ASSERT_TRUE(::ulpgate::testing::FollowsModel(__VA_ARGS__))
#define ULPGATE_EXPECT_ULP_HISTOGRAM(...) \
  EXPECT_TRUE(::ulpgate::testing::UlpHistogramWithin(__VA_ARGS__))
#define ULPGATE_ASSERT_ULP_HISTOGRAM(...) \
  ASSERT_TRUE(::ulpgate::testing::UlpHistogramWithin(__VA_ARGS__))

#endif  // ULPGATE_TESTING_H_
