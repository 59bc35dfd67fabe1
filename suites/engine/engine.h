// The engine, one for every op family: cases (variant x target) -> outputs
// (a kernel, a model standing in for one, a peer library) -> exact value ->
// ULP error (and bound fraction) -> statistics and conformance to the models
// -> one typed record per case, CaseResult.
//
// An op family tells the engine only what differs (an EngineProblem): how
// many output elements, how they split into units of work, what one case's
// kernel outputs over a unit are, and each element's exact value and model
// outputs. suites/engine/elementwise_cases.h and suites/engine/reduction_cases.h are the two
// families; everything else (threads, statistics, conformance, digests, error
// maps, per-element details) is here, once.
#ifndef ULPGATE_SUITES_ENGINE_H_
#define ULPGATE_SUITES_ENGINE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "oracles/format.h"
#include "oracles/mpfr_number.h"
#include "oracles/reduction_bound.h"
#include "suites/engine/error_map.h"
#include "suites/engine/kernel_fault.h"
#include "suites/engine/statistics.h"
#include "suites/sweep/sweep_tier.h"

namespace ulpgate {

struct Conformance {
  std::string expected_model;            // what the target's kernel must follow
  uint64_t mismatches = 0;               // outputs that differ from expected_model's
  std::vector<std::string> matching;     // every model compared that matched on all inputs
  int64_t first_mismatch_index = -1;     // first input differing from expected_model
  // The model to report: the expected one when it matched, else the first that
  // matched, else empty (conforms to no model).
  std::string model() const;
};

// What produced a case's outputs: the target's kernel; the model the target's
// kernel must follow, evaluated in emulation (for a target this CPU cannot
// run, or when asked); a peer library (no model); or outputs made elsewhere
// and read from a file (`check`: compared with every model, none expected).
enum class CaseKind { kKernel, kModel, kPeer, kOutputs };
const char* CaseKindName(CaseKind kind);  // "kernel", "model", "peer", "outputs"

// The record of one case: what every report, dump, golden and gate reads.
struct CaseResult {
  std::string op, variant, target, dtype, suite;
  // Where a plugin's or an IUT's kernel comes from, as LoadPlugins takes it
  // (a library's path, or kIutSource + the IUT's command): what a replay
  // command loads (suites/reports/replay.h). Empty for a built-in kernel.
  std::string source;
  CaseKind kind = CaseKind::kKernel;
  uint64_t seed = 0;
  uint64_t n = 0;  // output elements measured
  // Reductions: the shape of one instance as --shape takes it ("B,IN,OUT",
  // "N") and how many (n = instances x the outputs of one); elementwise ops:
  // empty and 0.
  std::string shape;
  uint64_t instances = 0;
  ErrorStatistics stats;
  // Reductions: the fraction of the classical error bound every output used.
  bool bounded = false;
  BoundFractionStatistics bound;
  Conformance conformance;     // expected_model empty for a peer
  uint64_t output_digest = 0;  // FNV-1a over the digests of the op's output groups
  std::vector<float> outputs;  // every output, element order, with EngineOptions::keep_outputs
  // With EngineOptions::map: the statistics by the binade and sign of
  // map_operand (suites/engine/error_map.h).
  std::string map_operand;
  ErrorMap error_map;
  // Set when the case's kernel crashed, hung or broke a rule instead of
  // answering (suites/engine/kernel_fault.h): the fault at the lowest input,
  // and the statistics above are not the case's (the engine stops measuring
  // it there).
  std::optional<KernelFault> fault;
};

// The truth about one output element: its exact value numerator / denominator
// and, for reductions, the classical error bound.
struct ElementTruth {
  explicit ElementTruth(MpfrNumber value) : numerator(std::move(value)) {}
  MpfrNumber numerator;
  uint64_t denominator = 1;
  std::optional<ReductionBound> bound;
  // Exact hex, "/N" appended when N > 1.
  std::string Text() const;
};

// A range of output elements measured by one worker at a time. Outputs are
// digested by group (a chunk of inputs, an instance): the digest of a case is
// FNV-1a over the FNV-1a digests of its groups' output bits, so it depends on
// neither the thread count nor the unit size within a group.
struct EngineUnit {
  uint64_t begin = 0;
  uint64_t count = 0;
  uint64_t group = 0;  // units of a group are consecutive
};

struct EngineCase {
  CaseKind kind = CaseKind::kKernel;
  std::string variant;
  const TargetInfo* target = nullptr;  // nullptr for a peer
  int expected = -1;                   // index into the problem's models; -1 for a peer
  std::vector<int> compared;           // the models compared with (expected among them)
};

// What a problem's vectorized tier gives for a tile of up to kSweepTile
// consecutive elements (EngineProblem::VectorTile): the exact values as the
// sweep's tier holds them, every model's output, and per element the bound
// fraction of an error of one ULP (an output e ULP off has e times it), within
// a relative 2^-45 (0 where the problem has none: the engine then measures
// the fraction exactly). Arrays have kSweepVectorSlack entries past the tile.
struct EngineVectorTile {
  SweepExactTile exact;
  std::vector<std::vector<float>> models;  // [model][element], NaNs canonical
  // Per model, set by the engine before VectorTile: 0 where no case reads its
  // outputs any more (a model other than each comparing case's expected one,
  // already seen to differ from it; it cannot be among the matching), so that
  // a problem may leave its column unset.
  std::vector<uint8_t> wanted;
  alignas(64) double fraction_per_ulp[kSweepTile];
  // 1 where MPFR computed part of the element's exact value (an op's factor
  // its estimate declined): counted with the elements MPFR measured.
  alignas(64) uint8_t exact_from_mpfr[kSweepTile];
};

class EngineProblem {
 public:
  virtual ~EngineProblem() = default;
  virtual const FloatFormat& format() const = 0;
  virtual uint64_t size() const = 0;  // output elements
  // Cover [0, size()) in order.
  virtual std::vector<EngineUnit> Units() const = 0;
  virtual const std::vector<std::string>& model_names() const = 0;
  // Whether every element's truth carries an error bound (reductions).
  virtual bool bounded() const { return false; }
  // Case `c`'s outputs (a kernel or a peer) over a unit. Called from worker
  // threads, for different units at once.
  virtual void Outputs(size_t c, const EngineUnit& unit, float* out) const = 0;
  // Element i's exact value, and every model's output into models[0 ..)
  // (none where models is nullptr: the models' emulation can cost more than
  // the exact value).
  virtual ElementTruth Truth(uint64_t i, float* models) const = 0;
  // A fast exact tier, where a problem has one: every model's output as Truth
  // gives it, without the exact value (false: none; the engine calls Truth)...
  virtual bool FastModels(uint64_t /*i*/, float* /*models*/) const { return false; }
  // ... and an output's error (and, in a bounded problem, its bound
  // fraction), bit for bit what MeasureUlpErrorOfQuotient and
  // MeasureBoundFraction against Truth give, where it can be proved without
  // MPFR (false: the engine calls Truth and measures). In a bounded problem
  // it succeeds only where Truth has a bound.
  virtual bool FastMeasure(uint64_t /*i*/, float /*y*/, UlpError* /*error*/,
                           BoundFraction* /*bound*/) const {
    return false;
  }
  // The vectorized tier (suites/sweep/sweep_tier.h), where a problem has one:
  // every output's error decided in whole vectors, MPFR and the scalar tier
  // above left to what the vectors cannot decide. Units are then at most
  // kSweepTile elements. VectorTile fills elements [begin, begin + n), n
  // at most kSweepTile; called from worker threads.
  virtual bool HasVectorTier() const { return false; }
  virtual void VectorTile(uint64_t /*begin*/, size_t /*n*/, EngineVectorTile* /*tile*/) const {}
  // The operand error maps sort element i by (only with EngineOptions::map).
  virtual float MapValue(uint64_t /*i*/) const { return 0; }
};

struct EngineOptions {
  unsigned threads = 0;  // 0: hardware concurrency; results do not depend on it
  bool keep_outputs = false;
  bool map = false;       // fill error_map by MapValue
  bool keep_details = false;
  // Every exact value, error and model from MPFR, the fast tier left out:
  // the same report, slower (keep_details implies it).
  bool mpfr_only = false;
  // The units started from the last (on every thread): an order several
  // threads may take, for tests that it changes nothing.
  bool units_last_first = false;
  std::function<void(uint64_t, uint64_t)> progress;  // (elements done, total)
};

// The measurements of one output element of one case, for dumps.
struct ElementMeasure {
  float output = 0;
  UlpError ulp;
  BoundFraction bound;
  bool conforms = true;  // equals the case's expected model (true for a peer)
};
struct ElementDetail {
  std::string exact;                  // ElementTruth::Text
  std::vector<ElementMeasure> cases;  // per case
};

struct EngineRun {
  // Everything but the names (op, variant, target, dtype, suite, seed,
  // shape, instances), which the family fills in.
  std::vector<CaseResult> cases;
  std::vector<ElementDetail> details;  // per element, with keep_details
  // Elements whose exact value MPFR computed (the rest: the fast tier).
  uint64_t mpfr_elements = 0;
};

EngineRun RunEngine(const EngineProblem& problem, const std::vector<EngineCase>& cases,
                    const EngineOptions& options);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_ENGINE_H_
