// One measurement: an op over one suite (or a training-run scenario), every
// named variant on every named target, as report records. The common ground of
// `golden` (snapshots of the records) and `gate` (budgets over them), so both
// see the same numbers the `run` and `drift` reports show.
#ifndef ULPGATE_SUITES_MEASURE_H_
#define ULPGATE_SUITES_MEASURE_H_

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "suites/engine/op_table.h"

namespace ulpgate {

struct MeasureSpec {
  // An elementwise op, a reduction op ("linear_fwd", ...), "drift" or a cast
  // op ("cast_f32", dtype the destination).
  std::string op;
  std::string suite;  // a suite of the op; for "drift" a built-in scenario
  std::string dtype = "f32";  // one of MeasurableDtypes(op)
  uint64_t seed = 1;  // ignored by "drift" (a scenario carries its own seed)
  // Elementwise ops and casts: inputs (a cast's boundary suite: its whole
  // list, whatever n); reductions: instances; drift: epochs. 0: the default.
  uint64_t n = 0;
  // Reductions: "B,IN,OUT" (linear ops) or "N" (MSE ops); empty: the default.
  std::string shape;
  // Kernel variants; empty: every one (never the Eigen peer unless named).
  // For "drift": run specs as `ulpgate drift --variants` takes them; empty:
  // one run per variant of its tanh layer's op (kDriftTanhBwd).
  std::vector<std::string> variants;
  // Empty: all runnable. A target this CPU cannot run is measured on its
  // model (record "kind": "model"), as is every target with models_only.
  std::vector<const TargetInfo*> targets;
  bool models_only = false;
  unsigned threads = 0;                    // 0: every core; results do not depend on it
  bool keep_outputs = false;
};

struct MeasuredCase {
  // Elementwise ops: CaseJson; reductions: CaseJson; casts: CastCaseJson
  // (suites/engine/measure.cc); drift: the run's entry
  // of DriftJson plus "op", "suite" (scenario), "variant" (the run spec as
  // given), "dtype" and "epochs". Every record has op, variant, target, dtype
  // and suite.
  nlohmann::ordered_json record;
  // With keep_outputs: every output in input order (reductions: instance by
  // instance, element by element; drift: the loss of every epoch).
  std::vector<float> outputs;
  // Casts, with keep_outputs: the destination's codes, one a byte, in input
  // order (outputs stays empty).
  std::vector<uint8_t> codes;
};

struct Measurement {
  MeasureSpec spec;  // with defaults filled in (n, shape, variants, targets)
  std::vector<MeasuredCase> cases;  // variants in table order x targets narrowest first
  // The input behind output `index`: elementwise ops InputJson, reductions
  // ReductionElementJson, drift {"epoch": index}.
  std::function<nlohmann::ordered_json(uint64_t)> describe;
};

// The ops Measure takes, in a stable order (OpTable's): the elementwise ops,
// the reduction ops, drift, the casts.
std::vector<std::string> MeasurableOps();
// The suites of an op (drift: the built-in scenarios); throws InputError for
// an unknown op.
std::vector<std::string> MeasurableSuites(const std::string& op);
// The formats an op runs in: f32, bf16 and f16 (drift: its precisions,
// suites/drift/precision.h).
std::vector<std::string> MeasurableDtypes(const std::string& op);
// The kernel variants of an op in a format (drift: the variants of its tanh
// layer's op in the precision's compute format, as the default run specs
// "<op>=<variant>"); throws InputError for an unknown op or a format the op
// does not run in.
std::vector<std::string> MeasurableVariants(const std::string& op,
                                            const std::string& dtype = "f32");

// Throws InputError naming the problem for an unknown op, suite, variant or a
// malformed shape.
Measurement Measure(const MeasureSpec& spec,
                    const std::function<void(uint64_t, uint64_t)>& progress = nullptr);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_MEASURE_H_
