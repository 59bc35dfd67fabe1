// Sampled tier: how results differ between targets, and that they differ
// exactly as the models say.
//   - lane_parallel gives different bits on 128-, 256- and 512-bit targets
//     (4, 8, 16 lanes); where two runnable targets' kernels differ is exactly
//     where their models differ. The 512-bit (16-lane) model is evaluated even
//     where AVX3 cannot run, and must differ from the 8-lane one.
//   - sequential_fma matches the fused model exactly where MulAdd is an FMA.
//   - sequential_unfused and pairwise give the same bits on every target.
// Covers the linear ops and mse_fwd (the reductions with a lane-parallel variant).
#include <gtest/gtest.h>

#include <iostream>
#include <map>

#include "suites/tests/reduction_test_support.h"

namespace ulpgate {
namespace {

using testing_support::DescribeElement;

// Every op with a lane-parallel variant.
std::vector<const ReductionOpInfo*> OpsWithLanes() {
  std::vector<const ReductionOpInfo*> ops;
  for (const ReductionOpInfo& op : ReductionOps()) {
    // The linear and MSE ops; the row reductions hold their lane-parallel
    // variants to every target's model in row_reductions_test.
    if (op.family != "linear" && op.family != "mse") continue;
    if (ReductionVariantIndex(op, "lane_parallel") >= 0) ops.push_back(&op);
  }
  return ops;
}

}  // namespace

// Test names and ctest names show the op's name, not a pointer.
void PrintTo(const ReductionOpInfo* op, std::ostream* out) { *out << op->name; }

namespace {

std::string OpName(const ::testing::TestParamInfo<const ReductionOpInfo*>& info) {
  return std::string(info.param->name);
}

ReductionInputSet CancellationInputs(const ReductionOpInfo* op) {
  ReductionShape shape;
  size_t instances = 2;
  if (op->name == "mse_fwd") {
    shape = {{37, 1, 1, 1}, 1};  // one output per instance: take many
    instances = 200;
  } else {
    // Reductions of 37 or 10 terms: every op has one longer than 16 (with 16
    // terms or fewer the 8- and 16-lane trees of a plain sum coincide), with
    // tails for 4, 8 and 16 lanes.
    shape = LinearShape{37, 37, 10}.Extents();
    instances = op->name == "linear_bwd_bias" ? 20 : 2;
  }
  return GenerateReductionSuite(*op, shape, "cancellation", 21, instances);
}

const ReductionVariantInfo& Variant(const ReductionOpInfo& op, std::string_view name) {
  return op.variants.at(ReductionVariantIndex(op, name));
}

class LaneWidthTest : public ::testing::TestWithParam<const ReductionOpInfo*> {};

TEST_P(LaneWidthTest, LaneParallelDiffersBetweenWidthsExactlyAsModelsPredict) {
  const ReductionOpInfo& op = *GetParam();
  const ReductionInputSet inputs = CancellationInputs(GetParam());
  const ReductionVariantInfo& lane_parallel = Variant(op, "lane_parallel");
  // Every compiled target's expected lane-parallel model, runnable or not.
  std::vector<const TargetInfo*> targets;
  std::vector<ReductionModel> models;
  for (const TargetInfo& t : CompiledTargets()) {
    targets.push_back(&t);
    models.push_back(ExpectedReductionModel(op, lane_parallel, t.f32_lanes, t.fused_muladd));
  }
  const size_t per_instance = inputs.outputs_per_instance();
  // model_out[t][global], kernel_out[t][global] (runnable targets only).
  std::vector<std::vector<float>> model_out(targets.size()), kernel_out(targets.size());
  for (size_t i = 0; i < inputs.instances.size(); ++i) {
    for (size_t t = 0; t < targets.size(); ++t) {
      if (targets[t]->supported) {
        const std::vector<float> y = RunReductionKernel(op, "lane_parallel", *targets[t],
                                                        inputs.shape, inputs.instances[i]);
        kernel_out[t].insert(kernel_out[t].end(), y.begin(), y.end());
      }
    }
    for (size_t e = 0; e < per_instance; ++e) {
      const ElementTerms terms = GatherElementTerms(*inputs.op, inputs.shape, inputs.instances[i], e);
      for (size_t t = 0; t < targets.size(); ++t) {
        model_out[t].push_back(ReductionModelOutput(op, models[t], terms));
      }
    }
  }
  const size_t n = model_out[0].size();
  auto differences = [&](const std::vector<float>& a, const std::vector<float>& b) {
    size_t count = 0;
    for (size_t k = 0; k < n; ++k) count += SameFloat(a[k], b[k]) ? 0 : 1;
    return count;
  };
  std::map<size_t, size_t> first_of_width;  // lanes -> a target with that many
  for (size_t t = 0; t < targets.size(); ++t) first_of_width.emplace(targets[t]->f32_lanes, t);
  std::cout << op.name << " lane_parallel, cancellation suite, shape "
            << ShapeText(*inputs.op, inputs.shape) << ", " << n << " outputs:\n";
  // Consecutive widths (1 -> 4 -> 8 -> 16 lanes) give different results on
  // some outputs: the lane count is part of the op sequence.
  for (auto it = first_of_width.begin(); std::next(it) != first_of_width.end(); ++it) {
    const size_t a = it->second, b = std::next(it)->second;
    const size_t count = differences(model_out[a], model_out[b]);
    std::cout << "  model " << models[a].Name(op) << " (" << targets[a]->name << ") vs "
              << models[b].Name(op) << " (" << targets[b]->name << "): " << count
              << " outputs differ\n";
    if (it->first >= 4) {
      EXPECT_GT(count, 0u) << "the " << it->first << "- and " << std::next(it)->first
                           << "-lane models never differ: the lane count is not reaching them";
    }
  }
  // Runnable targets: kernels differ from each other exactly where their
  // models do (and each equals its model).
  for (size_t a = 0; a < targets.size(); ++a) {
    if (!targets[a]->supported) continue;
    for (size_t k = 0; k < n; ++k) {
      if (!SameFloat(kernel_out[a][k], model_out[a][k])) {
        ADD_FAILURE() << "lane_parallel on " << targets[a]->name << " differs from model "
                      << models[a].Name(op) << " at output " << k << ": "
                      << HexFloat(kernel_out[a][k]) << " vs " << HexFloat(model_out[a][k]);
        break;
      }
    }
    for (size_t b = a + 1; b < targets.size(); ++b) {
      if (!targets[b]->supported) continue;
      size_t predicted = 0, mispredicted = 0;
      for (size_t k = 0; k < n; ++k) {
        const bool kernels_differ = !SameFloat(kernel_out[a][k], kernel_out[b][k]);
        const bool models_differ = !SameFloat(model_out[a][k], model_out[b][k]);
        predicted += models_differ ? 1 : 0;
        mispredicted += kernels_differ != models_differ ? 1 : 0;
      }
      EXPECT_EQ(mispredicted, 0u) << targets[a]->name << " vs " << targets[b]->name;
      if (targets[a]->f32_lanes != targets[b]->f32_lanes) {
        std::cout << "  measured: kernels on " << targets[a]->name << " ("
                  << targets[a]->f32_lanes * 32 << "-bit) and " << targets[b]->name << " ("
                  << targets[b]->f32_lanes * 32 << "-bit) differ on " << predicted
                  << " outputs, exactly where their models differ\n";
      }
    }
  }
  for (size_t t = 0; t < targets.size(); ++t) {
    if (!targets[t]->supported) {
      std::cout << "  " << targets[t]->name << " (" << targets[t]->f32_lanes * 32
                << "-bit) cannot run here: its model " << models[t].Name(op)
                << " was evaluated instead\n";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sampled, LaneWidthTest, ::testing::ValuesIn(OpsWithLanes()), OpName);

class FusionTest : public ::testing::TestWithParam<const ReductionOpInfo*> {};

TEST_P(FusionTest, SequentialFmaIsFusedExactlyWhereMulAddIs) {
  const ReductionOpInfo& op = *GetParam();
  const ReductionInputSet inputs = CancellationInputs(GetParam());
  ReductionRunOptions options;
  options.variants = {"sequential_fma"};
  options.threads = 1;
  const ReductionRun run = RunReduction(inputs, options);
  for (size_t c = 0; c < run.cases.size(); ++c) {
    const CaseResult& r = run.cases[c];
    const bool fused = FindTarget(r.target)->fused_muladd;
    const auto& m = r.conformance.matching;
    auto matches = [&](const char* name) { return std::find(m.begin(), m.end(), name) != m.end(); };
    std::string list;
    for (const auto& name : m) list += name + " ";
    std::cout << "  " << op.name << " sequential_fma on " << r.target << " matches: " << list
              << '\n';
    EXPECT_EQ(matches("sequential_fused"), fused) << r.target << " matches: " << list;
    EXPECT_EQ(matches("sequential_unfused"), !fused)
        << r.target << " matches: " << list
        << " (on this suite the fused and unfused sums must differ somewhere)\n"
        << DescribeElement(inputs, run, c, r.conformance.first_mismatch_index);
  }
}

INSTANTIATE_TEST_SUITE_P(Sampled, FusionTest,
                         ::testing::Values(&testing_support::Reduction("linear_fwd"), &testing_support::Reduction("linear_bwd_input"),
                                           &testing_support::Reduction("linear_bwd_weight"), &testing_support::Reduction("mse_fwd")),
                         OpName);

TEST(TargetIndependence, UnfusedAndPairwiseGiveTheSameBitsOnEveryTarget) {
  for (const ReductionOpInfo* op_id : OpsWithLanes()) {
    const ReductionOpInfo& op = *op_id;
    const ReductionInputSet inputs = CancellationInputs(op_id);
    for (const auto& variant : op.variants) {
      const bool independent = variant.schedule == ReductionSchedule::kPairwise ||
                               variant.schedule == ReductionSchedule::kSequentialUnfused ||
                               (!op.fused_matters &&
                                variant.schedule == ReductionSchedule::kSequentialFused);
      if (!independent) continue;
      const TargetInfo* reference = nullptr;
      std::vector<float> expected;
      for (const TargetInfo& t : CompiledTargets()) {
        if (!t.supported) continue;
        std::vector<float> y;
        for (const auto& instance : inputs.instances) {
          const auto out = RunReductionKernel(op, variant.name, t, inputs.shape, instance);
          y.insert(y.end(), out.begin(), out.end());
        }
        if (!reference) {
          reference = &t;
          expected = y;
          continue;
        }
        for (size_t k = 0; k < y.size(); ++k) {
          if (!SameFloat(y[k], expected[k])) {
            ADD_FAILURE() << op.name << " " << variant.name << ": " << t.name << " gives "
                          << HexFloat(y[k]) << " at output " << k << ", " << reference->name
                          << " " << HexFloat(expected[k]);
            break;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace ulpgate
