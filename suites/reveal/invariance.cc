#include "suites/reveal/invariance.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>

#include "oracles/format.h"
#include "suites/inputs/counter_rng.h"
#include "suites/reveal/reveal.h"

namespace ulpgate {
namespace {

// Operands start at a 64-byte boundary (a cache line, an AVX-512 vector)
// plus an offset of up to 15 floats, so that every alignment a SIMD kernel
// can see is reachable.
constexpr size_t kAlignFloats = 16;
constexpr size_t kMaxOffset = kAlignFloats - 1;

class AlignedFloats {
 public:
  explicit AlignedFloats(size_t count) : storage_(count + 2 * kAlignFloats) {}
  float* At(size_t offset) {
    const uintptr_t address = reinterpret_cast<uintptr_t>(storage_.data());
    const size_t skip = (64 - address % 64) % 64 / sizeof(float);
    return storage_.data() + skip + offset;
  }

 private:
  std::vector<float> storage_;
};

uint64_t OperandStream(InvarianceOperand operand) {
  switch (operand) {
    case InvarianceOperand::kProbe:
      return StreamId("invariance probe row");
    case InvarianceOperand::kFiller:
      return StreamId("invariance filler rows");
    case InvarianceOperand::kB:
      return StreamId("invariance B");
  }
  return 0;
}

uint32_t FloatBits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

// Consecutive encodings of one sign are consecutive integers; the other sign
// counts down from zero, so that -0 and +0 are both 0.
int64_t Ordinal(uint64_t bits, int width, bool has_sign) {
  if (!has_sign) return static_cast<int64_t>(bits);
  const uint64_t sign = uint64_t{1} << (width - 1);
  const int64_t magnitude = static_cast<int64_t>(bits & (sign - 1));
  return bits & sign ? -magnitude : magnitude;
}

}  // namespace

std::vector<size_t> InvarianceBatchSizes(size_t max_batch) {
  std::vector<size_t> sizes;
  for (size_t m = 1; m <= std::min<size_t>(17, max_batch); ++m) sizes.push_back(m);
  for (size_t p = 32; p - 1 <= max_batch && p != 0; p *= 2) {
    for (size_t m : {p - 1, p, p + 1, p + p / 2}) {
      if (m <= max_batch) sizes.push_back(m);
    }
  }
  if (max_batch > 17 && sizes.back() != max_batch) sizes.push_back(max_batch);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

float InvarianceValue(const FloatFormat& format, uint64_t seed, InvarianceOperand operand,
                      size_t row, size_t index) {
  CounterRng rng(seed, OperandStream(operand), (static_cast<uint64_t>(row) << 32) ^ index);
  const double significand = 1.0 + rng.Unit();
  const int exponent = static_cast<int>(rng.Below(7)) - 3;
  const double value = std::ldexp(significand, exponent) * (rng.Below(2) ? -1.0 : 1.0);
  // One rounding into the format: the value the operand holds exactly.
  return static_cast<float>(RoundDouble(format, value));
}

bool SameEncoding(float a, float b) { return FloatBits(a) == FloatBits(b); }

double UlpDistance(const FloatFormat& format, float a, float b) {
  if (std::isnan(a) || std::isnan(b)) {
    return std::isnan(a) && std::isnan(b) ? 0.0 : std::numeric_limits<double>::infinity();
  }
  int64_t oa, ob;
  if (IsRepresentable(format, a) && IsRepresentable(format, b)) {
    oa = Ordinal(EncodeBits(format, a), format.bits, format.has_sign);
    ob = Ordinal(EncodeBits(format, b), format.bits, format.has_sign);
  } else {
    // Not values of the output format (a door that widened wrongly): ULPs
    // of binary32, in which they came back.
    oa = Ordinal(FloatBits(a), 32, true);
    ob = Ordinal(FloatBits(b), 32, true);
  }
  return static_cast<double>(oa > ob ? oa - ob : ob - oa);
}

BitsDifference CompareOutputs(const FloatFormat& format, const float* baseline, const float* got,
                              size_t count) {
  BitsDifference d;
  d.compared = count;
  for (size_t i = 0; i < count; ++i) {
    if (SameEncoding(baseline[i], got[i])) continue;
    if (d.changed++ == 0) d.first_changed = i;
    d.max_ulp = std::max(d.max_ulp, UlpDistance(format, baseline[i], got[i]));
  }
  return d;
}

const char* InvarianceDimensionName(InvarianceDimension dimension) {
  switch (dimension) {
    case InvarianceDimension::kBatchSize:
      return "batch size";
    case InvarianceDimension::kPosition:
      return "position";
    case InvarianceDimension::kAlignment:
      return "alignment";
    case InvarianceDimension::kThreads:
      return "threads";
    case InvarianceDimension::kRunToRun:
      return "run to run";
  }
  return "?";
}

const InvarianceTrial* InvarianceDimensionResult::FirstChange() const {
  for (const InvarianceTrial& t : trials) {
    if (t.diff.changed > 0) return &t;
  }
  return nullptr;
}

size_t InvarianceDimensionResult::Changes() const {
  return static_cast<size_t>(std::count_if(trials.begin(), trials.end(),
                                           [](const InvarianceTrial& t) { return t.diff.changed > 0; }));
}

const InvarianceDimensionResult& InvarianceReport::Dimension(InvarianceDimension d) const {
  for (const InvarianceDimensionResult& r : dimensions) {
    if (r.dimension == d) return r;
  }
  throw std::logic_error("invariance report without its dimension");
}

InvarianceVerdict InvarianceReport::Verdict() const {
  auto changed = [this](InvarianceDimension d) { return Dimension(d).FirstChange() != nullptr; };
  if (changed(InvarianceDimension::kRunToRun)) return InvarianceVerdict::kNondeterministic;
  if (changed(InvarianceDimension::kBatchSize) || changed(InvarianceDimension::kPosition)) {
    return InvarianceVerdict::kNotBatchInvariant;
  }
  if (changed(InvarianceDimension::kAlignment) || changed(InvarianceDimension::kThreads)) {
    return InvarianceVerdict::kVariesWithLayout;
  }
  return InvarianceVerdict::kInvariant;
}

std::string InvarianceReport::VerdictText() const {
  auto first = [this](InvarianceDimension d) { return Dimension(d).FirstChange(); };
  switch (Verdict()) {
    case InvarianceVerdict::kInvariant:
      return "batch-invariant";
    case InvarianceVerdict::kNondeterministic:
      return "nondeterministic (run to run)";
    case InvarianceVerdict::kNotBatchInvariant:
      if (first(InvarianceDimension::kBatchSize)) {
        return fmt::format("not batch-invariant (first at m={})", FirstChangedBatch());
      }
      return "not batch-invariant (position: " + first(InvarianceDimension::kPosition)->what + ")";
    case InvarianceVerdict::kVariesWithLayout:
      for (InvarianceDimension d : {InvarianceDimension::kAlignment, InvarianceDimension::kThreads}) {
        if (const InvarianceTrial* t = first(d)) {
          return fmt::format("not invariant ({}: {})", InvarianceDimensionName(d), t->what);
        }
      }
      break;
  }
  return "?";
}

size_t InvarianceReport::FirstChangedBatch() const {
  const InvarianceTrial* t = Dimension(InvarianceDimension::kBatchSize).FirstChange();
  return t ? t->shape.m : 0;
}

size_t InvarianceReport::LastInvariantBatch() const {
  const size_t first = FirstChangedBatch();
  if (first == 0) return 0;
  // Sizes are tried in ascending order and m = 1 is the baseline itself.
  size_t last = 1;
  for (const InvarianceTrial& t : Dimension(InvarianceDimension::kBatchSize).trials) {
    if (t.shape.m < first && t.diff.changed == 0) last = std::max(last, t.shape.m);
  }
  return last;
}

namespace {

// A signaling NaN with a payload no arithmetic produces (arithmetic quiets
// NaNs), in C before each call: left there, the call wrote nothing.
constexpr uint32_t kUnwritten = 0x7fbadbadu;

// Where A, B and C start, in floats past a 64-byte boundary.
struct Offsets {
  size_t a = 0, b = 0, c = 0;
};

// Calls the door on batches holding the probe row, with operands placed at
// chosen offsets from a 64-byte boundary.
class ProbeRunner {
 public:
  ProbeRunner(DotDoor& door, const InvarianceOptions& options, size_t max_rows)
      : door_(door), options_(options),
        format_(door.OperandFormat()),
        a_(max_rows * options.k + kMaxOffset),
        b_(options.n * options.k + kMaxOffset),
        c_(max_rows * options.n + kMaxOffset) {
    for (size_t k = 0; k < options.k; ++k) {
      probe_.push_back(InvarianceValue(format_, options.seed, InvarianceOperand::kProbe, 0, k));
    }
    for (size_t j = 0; j < max_rows * options.k; ++j) {
      filler_.push_back(InvarianceValue(format_, options.seed, InvarianceOperand::kFiller,
                                        j / options.k, j % options.k));
    }
    for (size_t j = 0; j < options.n * options.k; ++j) {
      b_values_.push_back(InvarianceValue(format_, options.seed, InvarianceOperand::kB,
                                          j / options.k, j % options.k));
    }
  }

  // All m * n outputs of a batch of m rows with the probe at `row`.
  std::vector<float> Run(size_t m, size_t row, Offsets offsets = {}) {
    const size_t k = options_.k, n = options_.n;
    float* a = a_.At(offsets.a);
    for (size_t r = 0; r < m; ++r) {
      for (size_t i = 0; i < k; ++i) {
        a[r * k + i] = r == row ? probe_[i] : filler_[r * k + i];
      }
    }
    float* b = b_.At(offsets.b);
    std::copy(b_values_.begin(), b_values_.end(), b);
    float* c = c_.At(offsets.c);
    // A door that writes nothing must not pass for one that wrote the last
    // call's bits: a NaN pattern no kernel computes.
    const float poison = [] {
      float v;
      const uint32_t bits = kUnwritten;
      std::memcpy(&v, &bits, sizeof v);
      return v;
    }();
    std::fill(c, c + m * n, poison);
    DotShape shape;
    shape.m = m;
    shape.n = n;
    shape.k = k;
    door_.Multiply(shape, a, b, c);
    ++calls_;
    for (size_t i = 0; i < m * n; ++i) {
      if (FloatBits(c[i]) == kUnwritten) {
        throw DotDoorError(fmt::format("{} left C[{}][{}] unwritten (m = {}, n = {}, k = {})",
                                       door_.Name(), i / n, i % n, m, n, k));
      }
    }
    return std::vector<float>(c, c + m * n);
  }

  std::vector<float> ProbeRow(size_t m, size_t row, Offsets offsets = {}) {
    const std::vector<float> all = Run(m, row, offsets);
    return std::vector<float>(all.begin() + row * options_.n, all.begin() + (row + 1) * options_.n);
  }

  size_t calls() const { return calls_; }

 private:
  DotDoor& door_;
  const InvarianceOptions& options_;
  const FloatFormat& format_;
  AlignedFloats a_, b_, c_;
  std::vector<float> probe_, filler_, b_values_;
  size_t calls_ = 0;
};

InvarianceTrial Trial(std::string what, size_t m, size_t row, size_t n, BitsDifference diff) {
  InvarianceTrial t;
  t.what = std::move(what);
  t.shape.m = m;
  t.shape.n = n;
  t.row = row;
  t.diff = diff;
  return t;
}

}  // namespace

InvarianceReport CheckInvariance(DotDoor& door, const InvarianceOptions& options,
                                 const std::function<void(const std::string&)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  if (options.k == 0 || options.n == 0 || options.max_batch == 0 || options.repeats < 2) {
    throw std::invalid_argument("invariance needs k, n and the largest batch >= 1, and 2 calls or more");
  }
  if (door.MaxK() != 0 && options.k > door.MaxK()) {
    throw std::invalid_argument(fmt::format("{} takes k up to {}, not {}", door.Name(), door.MaxK(),
                                            options.k));
  }
  if (door.MaxRows() != 0 && options.n > door.MaxRows()) {
    throw std::invalid_argument(fmt::format("{} takes n up to {}, not {}", door.Name(),
                                            door.MaxRows(), options.n));
  }
  InvarianceReport report;
  report.door = door.Name();
  report.operand_format = &door.OperandFormat();
  report.output_format = &door.OutputFormat();
  report.options = options;
  const FloatFormat& out = door.OutputFormat();
  const size_t n = options.n;
  size_t max_batch = options.max_batch;
  if (door.MaxRows() != 0) max_batch = std::min(max_batch, door.MaxRows());
  ProbeRunner runner(door, options, max_batch);
  auto tell = [&progress](InvarianceDimension d) {
    if (progress) progress(InvarianceDimensionName(d));
  };
  auto compare = [&out, n](const std::vector<float>& base, const std::vector<float>& got) {
    return CompareOutputs(out, base.data(), got.data(), std::min(base.size(), got.size()));
  };

  // Batch size: the probe first in batches of every size, against it alone.
  tell(InvarianceDimension::kBatchSize);
  InvarianceDimensionResult batch;
  batch.dimension = InvarianceDimension::kBatchSize;
  batch.varied = true;
  batch.baseline = "the probe alone (m=1)";
  std::map<size_t, std::vector<float>> first_row;  // m -> the probe's outputs at row 0
  first_row[1] = runner.ProbeRow(1, 0);
  report.batch_sizes.push_back(1);
  for (size_t m : InvarianceBatchSizes(max_batch)) {
    if (m == 1) continue;
    if (options.time_budget_seconds > 0 && elapsed() > options.time_budget_seconds) {
      report.budget_cut = true;
      break;
    }
    first_row[m] = runner.ProbeRow(m, 0);
    report.batch_sizes.push_back(m);
    batch.trials.push_back(Trial(fmt::format("m={}", m), m, 0, n, compare(first_row[1], first_row[m])));
  }
  const size_t largest = report.batch_sizes.back();
  // The dimensions other than the batch's own try the probe alone and in the
  // largest batch.
  std::vector<size_t> ends = {1};
  if (largest > 1) ends.push_back(largest);
  batch.range = fmt::format("{} sizes, m = 1 to {}", report.batch_sizes.size(), largest);

  // Position: the probe in the middle and last, against it first in the same batch.
  tell(InvarianceDimension::kPosition);
  InvarianceDimensionResult position;
  position.dimension = InvarianceDimension::kPosition;
  position.baseline = "the probe first, same m";
  std::vector<size_t> position_sizes;
  for (size_t m : {size_t{2}, size_t{3}, size_t{8}, size_t{17}, size_t{64}, largest}) {
    if (first_row.count(m) &&
        std::find(position_sizes.begin(), position_sizes.end(), m) == position_sizes.end()) {
      position_sizes.push_back(m);
    }
  }
  for (size_t m : position_sizes) {
    std::vector<size_t> rows = {m / 2, m - 1};
    if (rows[0] == 0 || rows[0] == rows[1]) rows.erase(rows.begin());
    for (size_t row : rows) {
      position.trials.push_back(Trial(fmt::format("m={} row {}", m, row), m, row, n,
                                      compare(first_row[m], runner.ProbeRow(m, row))));
    }
  }
  position.varied = !position.trials.empty();
  if (position.varied) {
    std::string sizes;
    for (size_t m : position_sizes) sizes += (sizes.empty() ? "" : ", ") + std::to_string(m);
    position.range = "middle and last row, m = " + sizes;
  } else {
    position.not_varied = "no batch of 2 rows or more";
  }

  // Alignment: every operand moved off its 64-byte boundary by 1 to 15
  // floats together, then each alone by 1, 4 and 8.
  tell(InvarianceDimension::kAlignment);
  InvarianceDimensionResult alignment;
  alignment.dimension = InvarianceDimension::kAlignment;
  alignment.varied = true;
  alignment.baseline = "A, B, C 64-byte aligned, same m";
  alignment.range = fmt::format("A, B, C together +1..{} floats (ABC+o), each alone +1, +4, +8 (A+o); m = 1{}",
                                kMaxOffset, largest > 1 ? fmt::format(" and {}", largest) : "");
  for (size_t m : ends) {
    for (size_t o = 1; o <= kMaxOffset; ++o) {
      alignment.trials.push_back(Trial(fmt::format("m={} ABC+{}", m, o), m, 0, n,
                                       compare(first_row[m], runner.ProbeRow(m, 0, {o, o, o}))));
    }
    for (size_t o : {size_t{1}, size_t{4}, size_t{8}}) {
      const Offsets each[] = {{o, 0, 0}, {0, o, 0}, {0, 0, o}};
      const char* names[] = {"A", "B", "C"};
      for (size_t i = 0; i < 3; ++i) {
        alignment.trials.push_back(Trial(fmt::format("m={} {}+{}", m, names[i], o), m, 0, n,
                                         compare(first_row[m], runner.ProbeRow(m, 0, each[i]))));
      }
    }
  }

  // Run to run: the same call repeated, every output of it compared.
  tell(InvarianceDimension::kRunToRun);
  InvarianceDimensionResult rerun;
  rerun.dimension = InvarianceDimension::kRunToRun;
  rerun.varied = true;
  rerun.baseline = "the first of the calls, every output";
  rerun.range = fmt::format("{} calls at m = 1{}", options.repeats,
                            largest > 1 ? fmt::format(" and {}", largest) : "");
  for (size_t m : ends) {
    const std::vector<float> base = runner.Run(m, 0);
    for (size_t call = 2; call <= options.repeats; ++call) {
      const std::vector<float> again = runner.Run(m, 0);
      InvarianceTrial t = Trial(fmt::format("m={} call {}", m, call), m, 0, n, compare(base, again));
      rerun.trials.push_back(t);
    }
  }

  // Threads: last, since the door keeps the count it was given.
  tell(InvarianceDimension::kThreads);
  InvarianceDimensionResult threads;
  threads.dimension = InvarianceDimension::kThreads;
  if (options.threads.size() < 2) {
    threads.not_varied = "one thread count given";
  } else if (!door.SetThreads(options.threads.front())) {
    threads.not_varied = "the door cannot set its threads";
  } else {
    threads.varied = true;
    threads.baseline = fmt::format("{} thread{}, same m", options.threads.front(),
                                   options.threads.front() == 1 ? "" : "s");
    std::string counts;
    for (unsigned t : options.threads) counts += (counts.empty() ? "" : ", ") + std::to_string(t);
    threads.range = fmt::format("{} threads at m = 1{}", counts,
                                largest > 1 ? fmt::format(" and {}", largest) : "");
    const std::vector<size_t>& sizes = ends;
    std::vector<std::vector<float>> base;
    for (size_t m : sizes) base.push_back(runner.ProbeRow(m, 0));
    for (size_t i = 1; i < options.threads.size(); ++i) {
      const unsigned count = options.threads[i];
      if (!door.SetThreads(count)) {
        throw DotDoorError(fmt::format("{} took {} threads, then refused {}", door.Name(),
                                       options.threads.front(), count));
      }
      for (size_t s = 0; s < sizes.size(); ++s) {
        threads.trials.push_back(Trial(fmt::format("m={} t={}", sizes[s], count), sizes[s], 0,
                                       n, compare(base[s], runner.ProbeRow(sizes[s], 0))));
      }
    }
  }

  report.dimensions = {batch, position, alignment, threads, rerun};
  report.seconds = elapsed();
  report.calls = runner.calls();
  return report;
}

namespace {

// A chain: every internal node adds one leaf to what came before.
bool IsChain(const SumNode& node) {
  if (node.IsLeaf()) return true;
  if (node.children.size() != 2) return false;
  const SumNode& a = node.children[0];
  const SumNode& b = node.children[1];
  return (a.IsLeaf() && IsChain(b)) || (b.IsLeaf() && IsChain(a));
}

std::string PartText(const SumNode& node) {
  const std::vector<int64_t> terms = Terms(node);
  const bool contiguous = terms.back() - terms.front() + 1 == static_cast<int64_t>(terms.size());
  const std::string range = terms.size() == 1 ? std::to_string(terms.front())
                            : contiguous ? fmt::format("{}-{}", terms.front(), terms.back())
                                         : fmt::format("{} terms from {}", terms.size(), terms.front());
  if (node.IsLeaf()) return range;
  return range + (IsChain(node) ? " (chain)" : " (tree)");
}

// The tree without its leaves' rounding: RevealTree gives the order only.
void ClearRounding(SumNode* node) {
  node->rounded = false;
  for (SumNode& child : node->children) ClearRounding(&child);
}

SummationTree OrderOnly(SummationTree tree) {
  ClearRounding(&tree.mutable_root());
  tree.Canonicalize();
  return tree;
}

}  // namespace

std::string ShortTreeText(const SummationTree& tree) {
  const std::string known = KnownShapeName(tree);
  if (!known.empty()) return known;
  const SummationTree canonical = OrderOnly(tree);
  const size_t k = canonical.k();
  if (IsChain(canonical.root())) return "sequential chain";
  if (canonical == OrderOnly(PairwiseTree(k))) return "pairwise cascade";
  for (size_t lanes : {2, 4, 8, 16, 32, 64}) {
    if (lanes >= k) break;
    if (canonical == OrderOnly(LaneParallelTree(k, lanes, false))) {
      return fmt::format("{} strided chains + halving tree", lanes);
    }
  }
  // A chain over parts (part0 + part1) + part2 ...: the parts in order.
  std::vector<const SumNode*> parts;
  const SumNode* node = &canonical.root();
  while (!node->IsLeaf() && node->children.size() == 2 && !node->children[1].IsLeaf()) {
    parts.push_back(&node->children[1]);
    node = &node->children[0];
  }
  parts.push_back(node);
  std::reverse(parts.begin(), parts.end());
  if (parts.size() == 1) {
    parts.clear();
    for (const SumNode& child : canonical.root().children) parts.push_back(&child);
  }
  constexpr size_t kShown = 6;
  std::string text = fmt::format("{} parts added:", parts.size());
  for (size_t i = 0; i < parts.size() && i < kShown; ++i) {
    text += (i == 0 ? " " : ", ") + PartText(*parts[i]);
  }
  if (parts.size() > kShown) text += ", ...";
  return text;
}

std::optional<BatchTrees> RevealBatchTrees(DotDoor& door, const InvarianceReport& report) {
  if (report.Verdict() == InvarianceVerdict::kNondeterministic || report.FirstChangedBatch() == 0) {
    return std::nullopt;
  }
  const auto start = std::chrono::steady_clock::now();
  BatchTrees trees;
  trees.before_m = report.LastInvariantBatch();
  trees.after_m = report.FirstChangedBatch();
  DotShape shape;
  shape.n = report.options.n;
  shape.k = report.options.k;
  try {
    shape.m = trees.before_m;
    TreeReveal before = RevealTree(door, shape, 0, 0);
    shape.m = trees.after_m;
    TreeReveal after = RevealTree(door, shape, 0, 0);
    before.tree.Canonicalize();
    after.tree.Canonicalize();
    trees.before = before.tree;
    trees.after = after.tree;
    trees.calls = before.cost.calls + after.cost.calls;
  } catch (const std::runtime_error& e) {
    // DotDoorError included: the door answered invariance's calls, so a
    // fault on a probe is reported beside the verdict, not instead of it.
    trees.error = e.what();
  }
  trees.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return trees;
}

nlohmann::ordered_json InvarianceJson(const InvarianceReport& r, const std::optional<BatchTrees>& trees) {
  auto ulp = [](double v) -> nlohmann::ordered_json {
    if (std::isinf(v)) return nullptr;  // a NaN met a number
    return v;
  };
  auto trial = [&ulp](const InvarianceTrial& t) {
    return nlohmann::ordered_json{{"what", t.what},     {"m", t.shape.m},
                                  {"row", t.row},       {"compared", t.diff.compared},
                                  {"changed", t.diff.changed}, {"max_ulp", ulp(t.diff.max_ulp)}};
  };
  nlohmann::ordered_json j;
  j["door"] = r.door;
  j["operand_format"] = r.operand_format->name;
  j["output_format"] = r.output_format->name;
  j["k"] = r.options.k;
  j["n"] = r.options.n;
  j["seed"] = r.options.seed;
  j["max_batch"] = r.options.max_batch;
  j["batch_sizes"] = r.batch_sizes;
  j["budget_cut"] = r.budget_cut;
  j["verdict"] = r.VerdictText();
  j["invariant"] = r.Verdict() == InvarianceVerdict::kInvariant;
  j["deterministic"] = r.Verdict() != InvarianceVerdict::kNondeterministic;
  j["last_invariant_batch"] = r.LastInvariantBatch();
  j["first_changed_batch"] = r.FirstChangedBatch();
  j["seconds"] = r.seconds;
  j["calls"] = r.calls;
  j["dimensions"] = nlohmann::ordered_json::array();
  for (const InvarianceDimensionResult& d : r.dimensions) {
    nlohmann::ordered_json dj;
    dj["dimension"] = InvarianceDimensionName(d.dimension);
    dj["varied"] = d.varied;
    if (!d.varied) dj["not_varied"] = d.not_varied;
    dj["baseline"] = d.baseline;
    dj["range"] = d.range;
    dj["bits_changed"] = d.FirstChange() != nullptr;
    dj["first_change"] = d.FirstChange() ? trial(*d.FirstChange()) : nlohmann::ordered_json();
    dj["trials"] = nlohmann::ordered_json::array();
    for (const InvarianceTrial& t : d.trials) dj["trials"].push_back(trial(t));
    j["dimensions"].push_back(dj);
  }
  if (trees) {
    nlohmann::ordered_json tj;
    tj["before_m"] = trees->before_m;
    tj["after_m"] = trees->after_m;
    if (!trees->error.empty()) {
      tj["error"] = trees->error;
    } else {
      tj["before"] = trees->before.Text();
      tj["after"] = trees->after.Text();
      tj["short_before"] = ShortTreeText(trees->before);
      tj["short_after"] = ShortTreeText(trees->after);
      tj["same"] = trees->before == trees->after;
    }
    tj["calls"] = trees->calls;
    tj["seconds"] = trees->seconds;
    j["trees"] = tj;
  }
  return j;
}

}  // namespace ulpgate
