// Target parameterization for tests: one test instance per compiled target,
// with the target's name in the test name (e.g. .../AVX2); those not runnable
// here are skipped, saying why. Instantiating every compiled target keeps the
// list of tests, which ctest reads once at build time, the same whatever
// ULPGATE_CPU_TARGETS says when the tests run: a restricted run reports the
// left-out targets as skipped instead of running a filter that matches nothing.
#ifndef ULPGATE_SUITES_TESTS_TEST_TARGETS_H_
#define ULPGATE_SUITES_TESTS_TEST_TARGETS_H_

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "kernels/registry.h"

namespace ulpgate {

inline std::vector<const TargetInfo*> CompiledTestTargets() {
  std::vector<const TargetInfo*> targets;
  for (const TargetInfo& t : CompiledTargets()) targets.push_back(&t);
  return targets;
}

// The fixture of per-target tests.
class PerTargetTest : public testing::TestWithParam<const TargetInfo*> {
 protected:
  void SetUp() override {
    if (!GetParam()->supported) {
      GTEST_SKIP() << GetParam()->name << " is " << NotRunnableReason(*GetParam());
    }
  }
};

// Test parameters print as the target's name (ctest shows "GetParam() = AVX2"),
// not as an address that changes from one build to the next.
inline void PrintTo(const TargetInfo* target, std::ostream* out) { *out << target->name; }

struct TargetName {
  std::string operator()(const testing::TestParamInfo<const TargetInfo*>& info) const {
    return info.param->name;
  }
};

}  // namespace ulpgate

#define ULPGATE_INSTANTIATE_PER_TARGET(suite) \
  INSTANTIATE_TEST_SUITE_P(PerTarget, suite,  \
                           testing::ValuesIn(::ulpgate::CompiledTestTargets()), \
                           ::ulpgate::TargetName())

#endif  // ULPGATE_SUITES_TESTS_TEST_TARGETS_H_
