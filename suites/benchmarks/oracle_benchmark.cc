// Throughput of the MPFR oracle path, per input: the exact value, the four
// binary32 models, one ULP measurement, and the whole engine (every variant on
// every supported target). Compare ratios within one run: the machines are
// shared and noisy.
#include <benchmark/benchmark.h>

#include <optional>

#include "oracles/fast_ulp.h"
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

// Per input, the error of one output (the mac_unfused model's) three ways:
// the MPFR tier (the exact value, then MeasureUlpError), a plain MPFR loop that
// computes grad * (1 - t^2) at 128 bits and subtracts the output (the least an
// MPFR oracle can do), and the fast tier of oracles/fast_ulp.h (with its
// MPFR fallback where it defers).
std::vector<float> MacUnfusedOutputs() {
  const InputSet& in = Inputs();
  std::vector<float> y(in.size());
  for (size_t i = 0; i < y.size(); ++i) y[i] = TanhBwdModelsNative(in.columns[0][i], in.columns[1][i])[1];
  return y;
}

void BM_ErrorMpfrTier(benchmark::State& state) {
  const InputSet& in = Inputs();
  const std::vector<float> y = MacUnfusedOutputs();
  size_t i = 0;
  for (auto _ : state) {
    const MpfrNumber exact = TanhBwdExact(in.columns[0][i], in.columns[1][i]);
    benchmark::DoNotOptimize(MeasureUlpError(exact.get(), y[i]));
    i = (i + 1) % in.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ErrorMpfrTier);

void BM_ErrorPlainMpfrLoop(benchmark::State& state) {
  const InputSet& in = Inputs();
  const std::vector<float> y = MacUnfusedOutputs();
  mpfr_t g, t, x, d;
  mpfr_inits2(128, g, t, x, d, static_cast<mpfr_ptr>(nullptr));
  size_t i = 0;
  for (auto _ : state) {
    mpfr_set_flt(g, in.columns[0][i], MPFR_RNDN);
    mpfr_set_flt(t, in.columns[1][i], MPFR_RNDN);
    mpfr_sqr(x, t, MPFR_RNDN);
    mpfr_ui_sub(x, 1, x, MPFR_RNDN);
    mpfr_mul(x, x, g, MPFR_RNDN);
    mpfr_set_flt(d, y[i], MPFR_RNDN);
    mpfr_sub(d, d, x, MPFR_RNDN);
    benchmark::DoNotOptimize(mpfr_get_d(d, MPFR_RNDN));
    i = (i + 1) % in.size();
  }
  mpfr_clears(g, t, x, d, static_cast<mpfr_ptr>(nullptr));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ErrorPlainMpfrLoop);

void BM_ErrorFastTier(benchmark::State& state) {
  const InputSet& in = Inputs();
  const std::vector<float> y = MacUnfusedOutputs();
  size_t i = 0, deferred = 0;
  for (auto _ : state) {
    const float grad = in.columns[0][i], t = in.columns[1][i];
    const auto x = FastTanhBwdExactValue(grad, t, kBinary32);
    std::optional<UlpError> e;
    if (x) e = FastUlpError(*x, y[i], kBinary32);
    if (!e) {
      ++deferred;
      const MpfrNumber exact = TanhBwdExact(grad, t);
      e = MeasureUlpError(exact.get(), y[i]);
    }
    benchmark::DoNotOptimize(e);
    i = (i + 1) % in.size();
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["deferred"] = static_cast<double>(deferred) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_ErrorFastTier);

void BM_TanhBwdFourModelsNative(benchmark::State& state) {
  const InputSet& in = Inputs();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(TanhBwdModelsNative(in.columns[0][i], in.columns[1][i]));
    i = (i + 1) % in.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TanhBwdFourModelsNative);

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
