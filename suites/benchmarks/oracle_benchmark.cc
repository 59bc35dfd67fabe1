// Throughput of the MPFR oracle path, per input: the exact value, the four
// binary32 models, one ULP measurement, and the whole engine (every variant on
// every supported target). Compare ratios within one run: the machines are
// shared and noisy.
#include <benchmark/benchmark.h>

#include "oracles/ulp_metric.h"
#include "suites/tanh_bwd_cases.h"
#include "suites/tanh_bwd_oracle.h"
#include "suites/tanh_bwd_suites.h"

namespace ulpgate {
namespace {

const InputSet& Inputs() {
  static const InputSet inputs = GenerateTanhBwdSuite("domain", 1, 1 << 16);
  return inputs;
}

void BM_TanhBwdExact(benchmark::State& state) {
  const InputSet& in = Inputs();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(TanhBwdExact(in.columns[0][i], in.columns[1][i]));
    i = (i + 1) % in.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TanhBwdExact);

void BM_TanhBwdFourModels(benchmark::State& state) {
  const InputSet& in = Inputs();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(TanhBwdModels(in.columns[0][i], in.columns[1][i]));
    i = (i + 1) % in.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TanhBwdFourModels);

void BM_MeasureUlpError(benchmark::State& state) {
  const InputSet& in = Inputs();
  std::vector<MpfrNumber> exact;
  std::vector<float> y;
  for (size_t i = 0; i < 4096; ++i) {
    exact.push_back(TanhBwdExact(in.columns[0][i], in.columns[1][i]));
    y.push_back(TanhBwdModel("mac_unfused", in.columns[0][i], in.columns[1][i]));
  }
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(MeasureUlpError(exact[i].get(), y[i]));
    i = (i + 1) % exact.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MeasureUlpError);

// Inputs per second through the engine: all variants on all supported
// targets, one thread and every core.
void BM_EngineAllCases(benchmark::State& state) {
  const InputSet& in = Inputs();
  RunOptions options;
  options.threads = static_cast<unsigned>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(RunTanhBwd(in, options));
  state.SetItemsProcessed(state.iterations() * in.size());
}
BENCHMARK(BM_EngineAllCases)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ulpgate

BENCHMARK_MAIN();
