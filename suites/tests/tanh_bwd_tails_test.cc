// Tails and misaligned starts: a kernel called on any length at any offset
// gives, for each element, the same bits as on an aligned full-vector run.
// Every lane holds a different input, so a lane or tail bug cannot hide
// behind a broadcast value.
#include <gtest/gtest.h>

#include <vector>

#include "suites/tests/tanh_bwd_kernels.h"
#include "hwy/aligned_allocator.h"
#include "kernels/ops/tanh_bwd/tanh_bwd_spec.h"
#include "oracles/float_text.h"
#include "suites/inputs/tanh_bwd_suites.h"
#include "suites/tests/test_targets.h"

namespace ulpgate {
namespace {

class TanhBwdTails : public PerTargetTest {};

TEST_P(TanhBwdTails, AnyLengthAnyOffsetMatchesFullVectors) {
  const TargetInfo* target = GetParam();
  const size_t lanes = target->f32_lanes;
  const size_t max_n = 2 * lanes + 1;
  constexpr size_t kMaxOffset = 3;
  const size_t total = max_n + kMaxOffset + 64;
  // Inputs from the domain and adversarial suites interleaved.
  const InputSet domain = GenerateTanhBwdSuite("domain", 5, total);
  const InputSet adversarial = GenerateTanhBwdSuite("adversarial", 5, total + 1000);
  auto grad = hwy::AllocateAligned<float>(total);
  auto t = hwy::AllocateAligned<float>(total);
  for (size_t i = 0; i < total; ++i) {
    const InputSet& s = (i % 3 == 0) ? adversarial : domain;
    const size_t j = (i % 3 == 0) ? 600 + i : i;  // past the catalogue's NaN rows
    grad[i] = s.columns[0][j];
    t[i] = s.columns[1][j];
  }
  for (const auto& variant : kTanhBwdVariants) {
    const TanhBwdKernel kernel = FindTanhBwdKernel(variant.name, target->bits);
    ASSERT_NE(kernel, nullptr);
    // Reference: the whole aligned array at once (full vectors plus one tail).
    auto expected = hwy::AllocateAligned<float>(total);
    kernel(grad.get(), t.get(), expected.get(), total);
    for (size_t offset = 0; offset <= kMaxOffset; ++offset) {
      for (size_t n = 0; n <= max_n; ++n) {
        // Guard elements around the output catch writes past the end.
        std::vector<float> out(n + 2, -123.0f);
        kernel(grad.get() + offset, t.get() + offset, out.data() + 1, n);
        EXPECT_EQ(out.front(), -123.0f) << variant.name << " wrote before the output";
        EXPECT_EQ(out.back(), -123.0f) << variant.name << " wrote past n = " << n;
        for (size_t i = 0; i < n; ++i) {
          ASSERT_TRUE(SameFloat(out[1 + i], expected[offset + i]))
              << variant.name << " on " << target->name << ", n = " << n << ", offset = "
              << offset << ", element " << i << ": " << HexFloat(out[1 + i]) << " vs "
              << HexFloat(expected[offset + i]);
        }
      }
    }
  }
}

ULPGATE_INSTANTIATE_PER_TARGET(TanhBwdTails);

}  // namespace
}  // namespace ulpgate
