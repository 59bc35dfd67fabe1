// Batch invariance and determinism of a matrix product (`ulpgate
// invariance`): one probe row of A, computed alone and inside batches of other
// sizes, at other positions in the batch, with its operands at other
// alignments, with other thread counts and run to run; each call's outputs
// compared with a baseline that differs from it in that one dimension, by
// encoding (-0 is not +0, a NaN is its bits).
//
// A library that picks its kernel, its split-K or its reduction tree by shape
// gives the same row different bits in batches of different sizes; which
// dimension changes the bits, and from which batch size, is what this names.
#ifndef ULPGATE_SUITES_REVEAL_INVARIANCE_H_
#define ULPGATE_SUITES_REVEAL_INVARIANCE_H_

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "oracles/float_format.h"
#include "suites/reveal/dot_door.h"
#include "suites/reveal/summation_tree.h"

namespace ulpgate {

inline constexpr char kInvarianceFormat[] = "ulpgate-invariance-1";

struct InvarianceOptions {
  size_t k = 256;          // the reduced dimension
  size_t n = 32;           // outputs of the probe row (columns of C)
  size_t max_batch = 512;  // the largest batch tried (the door's MaxRows, if smaller)
  uint64_t seed = 1;       // operands are a pure function of (seed, row, index)
  size_t repeats = 3;      // calls of the same product, run to run
  std::vector<unsigned> threads = {1, 2, 4};  // where the door can set them
  // Batch sizes stop growing once this many seconds have passed (0: no limit);
  // the other dimensions then use the largest batch reached.
  double time_budget_seconds = 60;
};

// The batch sizes tried, ascending, up to max_batch: every size to 17, then
// around each power of two p from 32 on p - 1, p, p + 1 and 3p/2 (a kernel
// that tiles by powers of two changes at one of them).
std::vector<size_t> InvarianceBatchSizes(size_t max_batch);

// The value of operand element `index` of row `row` of one of the operands
// (A's filler rows, the probe row, B): exact in `format`, sign and significand
// random, magnitudes across 2^-3 .. 2^3 so that reordering the sum changes its
// rounding. A pure function of its arguments.
enum class InvarianceOperand { kProbe, kFiller, kB };
float InvarianceValue(const FloatFormat& format, uint64_t seed, InvarianceOperand operand,
                      size_t row, size_t index);

// How two outputs of one format differ: whether their encodings differ and by
// how many ULPs of the format (consecutive encodings of the same sign are 1
// apart; +0 and -0 are 0 apart but differ; infinity when one is a NaN).
bool SameEncoding(float a, float b);
double UlpDistance(const FloatFormat& format, float a, float b);

struct BitsDifference {
  size_t compared = 0;      // outputs compared
  size_t changed = 0;       // whose encodings differ
  size_t first_changed = 0; // index of the first (when changed > 0)
  double max_ulp = 0;       // over the changed ones
};
BitsDifference CompareOutputs(const FloatFormat& format, const float* baseline, const float* got,
                              size_t count);

enum class InvarianceDimension { kBatchSize, kPosition, kAlignment, kThreads, kRunToRun };
const char* InvarianceDimensionName(InvarianceDimension dimension);

// One call of the door, compared with its dimension's baseline.
struct InvarianceTrial {
  // "m=8", "m=64 row 63", "m=1 ABC+3" (A, B and C 3 floats off their 64-byte
  // boundary), "m=1 A+4", "m=512 t=2" (2 threads), "m=1 call 3".
  std::string what;
  DotShape shape;
  size_t row = 0;        // the probe's row in the batch
  BitsDifference diff;
};

struct InvarianceDimensionResult {
  InvarianceDimension dimension = InvarianceDimension::kBatchSize;
  bool varied = false;
  std::string not_varied;  // why, when not varied
  std::string baseline;    // what each trial is compared with
  std::string range;       // what was varied, in a few words
  std::vector<InvarianceTrial> trials;

  // The first trial whose bits changed; nullptr when none did.
  const InvarianceTrial* FirstChange() const;
  size_t Changes() const;  // trials whose bits changed
};

enum class InvarianceVerdict {
  kInvariant,         // no dimension changed any bits
  kNotBatchInvariant, // batch size or position changed bits
  kVariesWithLayout,  // only alignment or threads did
  kNondeterministic,  // the same call gave other bits
};

struct InvarianceReport {
  std::string door;
  const FloatFormat* operand_format = nullptr;
  const FloatFormat* output_format = nullptr;
  InvarianceOptions options;
  std::vector<size_t> batch_sizes;  // tried, ascending
  bool budget_cut = false;          // the time budget stopped the sizes early
  std::vector<InvarianceDimensionResult> dimensions;
  double seconds = 0;
  size_t calls = 0;

  const InvarianceDimensionResult& Dimension(InvarianceDimension d) const;
  InvarianceVerdict Verdict() const;
  // "batch-invariant", "not batch-invariant (first at m=8)", "not
  // batch-invariant (position: m=64 row 63)", "not invariant (alignment: m=1
  // A+1)", "nondeterministic (run to run)".
  std::string VerdictText() const;
  // The batch sizes around the first change of the batch-size dimension: the
  // largest size tried below it (whose bits are the probe alone's) and it; 0
  // and 0 when no size changed bits.
  size_t LastInvariantBatch() const;
  size_t FirstChangedBatch() const;
};

// The summation trees of the probe's first output where the batch size
// changes its bits: in a call of the last size whose bits are the probe
// alone's and of the first size that changes them (`reveal`'s probes,
// suites/reveal/reveal.h, in calls of those shapes).
struct BatchTrees {
  size_t before_m = 0, after_m = 0;
  SummationTree before, after;
  std::string error;  // why they could not be revealed; empty when they were
  size_t calls = 0;
  double seconds = 0;
};

// Reveals them for a report whose batch-size dimension changed bits and that
// is deterministic (a nondeterministic door answers probes at random);
// nullopt otherwise.
std::optional<BatchTrees> RevealBatchTrees(DotDoor& door, const InvarianceReport& report);

// A tree in a few words: the name of a known shape ("sequential chain,
// rounded products"), else its root's parts, e.g. "2 parts added: 0-127
// (chain), 128-255 (chain)".
std::string ShortTreeText(const SummationTree& tree);

// Runs every dimension on `door` (which it calls many times; SetThreads last,
// so the other dimensions run at the door's own thread count). `progress`, if
// given, is told each dimension's name as it starts. Throws DotDoorError when
// the door does, std::invalid_argument for options the door refuses (k over
// its MaxK).
InvarianceReport CheckInvariance(DotDoor& door, const InvarianceOptions& options,
                                 const std::function<void(const std::string&)>& progress = {});

// The report as JSON (no "format" member: a file of several doors holds a list
// of these under kInvarianceFormat).
// `trees`, when given, joins it as "trees": {before_m, after_m, before,
// after (the trees' text forms), short_before, short_after} or {error}.
nlohmann::ordered_json InvarianceJson(const InvarianceReport& report,
                                      const std::optional<BatchTrees>& trees = std::nullopt);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REVEAL_INVARIANCE_H_
