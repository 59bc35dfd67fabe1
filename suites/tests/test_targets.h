// Target parameterization for tests: one test instance per target this CPU can
// run, with the target's name in the test name (e.g. .../AVX2).
#ifndef ULPGATE_SUITES_TESTS_TEST_TARGETS_H_
#define ULPGATE_SUITES_TESTS_TEST_TARGETS_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/registry.h"

namespace ulpgate {

inline std::vector<const TargetInfo*> SupportedTestTargets() {
  std::vector<const TargetInfo*> targets;
  for (const TargetInfo& t : CompiledTargets()) {
    if (t.supported) targets.push_back(&t);
  }
  return targets;
}

struct TargetName {
  std::string operator()(const testing::TestParamInfo<const TargetInfo*>& info) const {
    return info.param->name;
  }
};

}  // namespace ulpgate

#define ULPGATE_INSTANTIATE_PER_TARGET(suite) \
  INSTANTIATE_TEST_SUITE_P(PerTarget, suite,  \
                           testing::ValuesIn(::ulpgate::SupportedTestTargets()), \
                           ::ulpgate::TargetName())

#endif  // ULPGATE_SUITES_TESTS_TEST_TARGETS_H_
