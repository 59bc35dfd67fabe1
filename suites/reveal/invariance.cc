#include "suites/reveal/invariance.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>

#include "oracles/float_text.h"
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
    case InvarianceDimension::kRowStride:
      return "row stride";
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
  return static_cast<size_t>(std::count_if(
      trials.begin(), trials.end(), [](const InvarianceTrial& t) { return t.diff.changed > 0; }));
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
  if (changed(InvarianceDimension::kAlignment) || changed(InvarianceDimension::kRowStride) ||
      changed(InvarianceDimension::kThreads)) {
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
      for (InvarianceDimension d :
           {InvarianceDimension::kAlignment, InvarianceDimension::kRowStride,
            InvarianceDimension::kThreads}) {
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

// Where A, B and C start, in floats past a 64-byte boundary, and how many
// elements pad each row (0: dense; else the rows are k + pad, k + pad and
// n + pad elements apart).
struct Layout {
  size_t a = 0, b = 0, c = 0;
  size_t pad = 0;
};

// The row paddings tried: 1 to 4 elements (misaligning every row after the
// first), 8 and 16 (whole vectors).
constexpr size_t kPads[] = {1, 2, 3, 4, 8, 16};
constexpr size_t kMaxPad = 16;

// A quiet NaN whose payload marks the padding of rows.
constexpr uint32_t kPadding = 0x7fc0deadu;

// Calls the door on batches holding the probe row, with operands placed at
// chosen offsets from a 64-byte boundary.
class ProbeRunner {
 public:
  ProbeRunner(DotDoor& door, const InvarianceOptions& options, size_t max_rows)
      : door_(door),
        options_(options),
        format_(door.OperandFormat()),
        a_(max_rows * (options.k + kMaxPad) + kMaxOffset),
        b_(options.n * (options.k + kMaxPad) + kMaxOffset),
        c_(max_rows * (options.n + kMaxPad) + kMaxOffset) {
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

  // All m * n outputs of a batch of m rows with the probe at `row`, the
  // operands placed as `layout` says; nullopt when the layout pads rows and
  // the door takes dense operands only.
  std::optional<std::vector<float>> TryRun(size_t m, size_t row, const Layout& layout) {
    const size_t k = options_.k, n = options_.n;
    const size_t lda = k + layout.pad, ldb = k + layout.pad, ldc = n + layout.pad;
    // Padding holds a NaN of its own: a kernel that reads it shows it.
    const float padding = FloatFromBits(kPadding);
    float* a = a_.At(layout.a);
    for (size_t r = 0; r < m; ++r) {
      for (size_t i = 0; i < lda; ++i) {
        a[r * lda + i] = i >= k ? padding : r == row ? probe_[i] : filler_[r * k + i];
      }
    }
    float* b = b_.At(layout.b);
    for (size_t j = 0; j < n; ++j) {
      std::copy(b_values_.begin() + j * k, b_values_.begin() + (j + 1) * k, b + j * ldb);
      std::fill(b + j * ldb + k, b + (j + 1) * ldb, padding);
    }
    // A door that writes nothing must not pass for one that wrote the last
    // call's bits: C starts as a NaN pattern no kernel computes.
    float* c = c_.At(layout.c);
    for (size_t r = 0; r < m; ++r) {
      std::fill(c + r * ldc, c + r * ldc + n, FloatFromBits(kUnwritten));
      std::fill(c + r * ldc + n, c + (r + 1) * ldc, padding);
    }
    DotShape shape;
    shape.m = m;
    shape.n = n;
    shape.k = k;
    if (layout.pad == 0) {
      door_.Multiply(shape, a, b, c);
    } else if (!door_.MultiplyStrided(shape, a, lda, b, ldb, c, ldc)) {
      return std::nullopt;
    }
    ++calls_;
    std::vector<float> out(m * n);
    for (size_t r = 0; r < m; ++r) {
      for (size_t j = 0; j < ldc; ++j) {
        const uint32_t bits = FloatBits(c[r * ldc + j]);
        if (j < n && bits == kUnwritten) {
          throw DotDoorError(fmt::format("{} left C[{}][{}] unwritten (m = {}, n = {}, k = {})",
                                         door_.Name(), r, j, m, n, k));
        }
        if (j >= n && bits != kPadding) {
          throw DotDoorError(
              fmt::format("{} wrote into C's row padding, row {} column {} (m = {}, "
                          "n = {}, k = {}, ldc = {})",
                          door_.Name(), r, j, m, n, k, ldc));
        }
        if (j < n) out[r * n + j] = c[r * ldc + j];
      }
    }
    return out;
  }

  std::vector<float> Run(size_t m, size_t row, const Layout& layout = {}) {
    std::optional<std::vector<float>> out = TryRun(m, row, layout);
    if (!out) throw std::logic_error("a dense call refused");
    return *std::move(out);
  }

  std::optional<std::vector<float>> TryProbeRow(size_t m, size_t row, const Layout& layout) {
    std::optional<std::vector<float>> all = TryRun(m, row, layout);
    if (!all) return std::nullopt;
    return std::vector<float>(all->begin() + row * options_.n,
                              all->begin() + (row + 1) * options_.n);
  }

  std::vector<float> ProbeRow(size_t m, size_t row, const Layout& layout = {}) {
    const std::vector<float> all = Run(m, row, layout);
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

// The dimensions, one method each, over one runner; each returns its result.
class Dimensions {
 public:
  Dimensions(DotDoor& door, const InvarianceOptions& options, size_t max_batch)
      : door_(door), options_(options), max_batch_(max_batch), runner_(door, options, max_batch) {}

  // Batch size: the probe first in batches of every size, against it alone.
  // Fixes the sizes the other dimensions use.
  InvarianceDimensionResult BatchSize(InvarianceReport* report,
                                      const std::function<double()>& elapsed) {
    InvarianceDimensionResult d = Start(InvarianceDimension::kBatchSize, "the probe alone (m=1)");
    first_row_[1] = runner_.ProbeRow(1, 0);
    report->batch_sizes.push_back(1);
    for (size_t m : InvarianceBatchSizes(max_batch_)) {
      if (m == 1) continue;
      if (options_.time_budget_seconds > 0 && elapsed() > options_.time_budget_seconds) {
        report->budget_cut = true;
        break;
      }
      first_row_[m] = runner_.ProbeRow(m, 0);
      report->batch_sizes.push_back(m);
      d.trials.push_back(
          Trial(fmt::format("m={}", m), m, 0, Compare(first_row_[1], first_row_[m])));
    }
    largest_ = report->batch_sizes.back();
    // The dimensions but this one and the position try the probe alone and
    // in the largest batch.
    ends_ = {1};
    if (largest_ > 1) ends_.push_back(largest_);
    d.varied = true;
    d.range = fmt::format("{} sizes, m = 1 to {}", report->batch_sizes.size(), largest_);
    return d;
  }

  // Position: the probe in the middle and last, against it first in the
  // same batch.
  InvarianceDimensionResult Position() {
    InvarianceDimensionResult d = Start(InvarianceDimension::kPosition, "the probe first, same m");
    std::vector<size_t> sizes;
    for (size_t m : {size_t{2}, size_t{3}, size_t{8}, size_t{17}, size_t{64}, largest_}) {
      if (m >= 2 && first_row_.count(m) &&
          std::find(sizes.begin(), sizes.end(), m) == sizes.end()) {
        sizes.push_back(m);
      }
    }
    for (size_t m : sizes) {
      std::vector<size_t> rows = {m / 2, m - 1};
      if (rows[0] == 0 || rows[0] == rows[1]) rows.erase(rows.begin());
      for (size_t row : rows) {
        d.trials.push_back(Trial(fmt::format("m={} row {}", m, row), m, row,
                                 Compare(first_row_[m], runner_.ProbeRow(m, row))));
      }
    }
    d.varied = !d.trials.empty();
    if (d.varied) {
      std::string text;
      for (size_t m : sizes) text += (text.empty() ? "" : ", ") + std::to_string(m);
      d.range = "middle and last row, m = " + text;
    } else {
      d.not_varied = "no batch of 2 rows or more";
    }
    return d;
  }

  // Alignment: every operand moved off its 64-byte boundary by 1 to 15
  // floats together, then each alone by 1, 4 and 8.
  InvarianceDimensionResult Alignment() {
    InvarianceDimensionResult d =
        Start(InvarianceDimension::kAlignment, "A, B, C 64-byte aligned, same m");
    d.varied = true;
    d.range = fmt::format("A, B, C together +1..{} floats (ABC+o), each alone +1, +4, +8 (A+o); {}",
                          kMaxOffset, EndsText());
    for (size_t m : ends_) {
      for (size_t o = 1; o <= kMaxOffset; ++o) {
        d.trials.push_back(Trial(fmt::format("m={} ABC+{}", m, o), m, 0,
                                 Compare(first_row_[m], runner_.ProbeRow(m, 0, {o, o, o, 0}))));
      }
      for (size_t o : {size_t{1}, size_t{4}, size_t{8}}) {
        const Layout each[] = {{o, 0, 0, 0}, {0, o, 0, 0}, {0, 0, o, 0}};
        const char* names[] = {"A", "B", "C"};
        for (size_t i = 0; i < 3; ++i) {
          d.trials.push_back(Trial(fmt::format("m={} {}+{}", m, names[i], o), m, 0,
                                   Compare(first_row_[m], runner_.ProbeRow(m, 0, each[i]))));
        }
      }
    }
    return d;
  }

  // Row stride: rows of A, B and C padded, against the dense call. The probe
  // is the last row, which padding moves furthest.
  InvarianceDimensionResult RowStride() {
    InvarianceDimensionResult d =
        Start(InvarianceDimension::kRowStride, "dense rows, the probe last, same m");
    for (size_t m : ends_) {
      const std::vector<float> dense = runner_.ProbeRow(m, m - 1);
      for (size_t pad : kPads) {
        Layout layout;
        layout.pad = pad;
        const std::optional<std::vector<float>> row = runner_.TryProbeRow(m, m - 1, layout);
        if (!row) break;
        d.trials.push_back(
            Trial(fmt::format("m={} ld+{}", m, pad), m, m - 1, Compare(dense, *row)));
      }
    }
    d.varied = !d.trials.empty();
    if (d.varied) {
      d.range = "rows of A, B, C padded by 1, 2, 3, 4, 8, 16 elements (ld+p); " + EndsText();
    } else {
      d.not_varied = "the door takes dense operands only";
    }
    return d;
  }

  // Run to run: the same call repeated, every output of it compared.
  InvarianceDimensionResult RunToRun() {
    InvarianceDimensionResult d =
        Start(InvarianceDimension::kRunToRun, "the first of the calls, every output");
    d.varied = true;
    d.range = fmt::format("{} calls at {}", options_.repeats, EndsText());
    for (size_t m : ends_) {
      const std::vector<float> base = runner_.Run(m, 0);
      for (size_t call = 2; call <= options_.repeats; ++call) {
        d.trials.push_back(
            Trial(fmt::format("m={} call {}", m, call), m, 0, Compare(base, runner_.Run(m, 0))));
      }
    }
    return d;
  }

  // Threads: last, since the door keeps the count it was given.
  InvarianceDimensionResult Threads() {
    const std::vector<unsigned>& counts = options_.threads;
    InvarianceDimensionResult d = Start(
        InvarianceDimension::kThreads,
        counts.empty()
            ? ""
            : fmt::format("{} thread{}, same m", counts.front(), counts.front() == 1 ? "" : "s"));
    if (counts.size() < 2) {
      d.not_varied = "one thread count given";
      return d;
    }
    if (!door_.SetThreads(counts.front())) {
      d.not_varied = "the door cannot set its threads";
      return d;
    }
    d.varied = true;
    std::string text;
    for (unsigned t : counts) text += (text.empty() ? "" : ", ") + std::to_string(t);
    d.range = fmt::format("{} threads at {}", text, EndsText());
    std::vector<std::vector<float>> base;
    for (size_t m : ends_) base.push_back(runner_.ProbeRow(m, 0));
    for (size_t i = 1; i < counts.size(); ++i) {
      if (!door_.SetThreads(counts[i])) {
        throw DotDoorError(fmt::format("{} took {} threads, then refused {}", door_.Name(),
                                       counts.front(), counts[i]));
      }
      for (size_t s = 0; s < ends_.size(); ++s) {
        d.trials.push_back(Trial(fmt::format("m={} t={}", ends_[s], counts[i]), ends_[s], 0,
                                 Compare(base[s], runner_.ProbeRow(ends_[s], 0))));
      }
    }
    return d;
  }

  size_t calls() const { return runner_.calls(); }

 private:
  static InvarianceDimensionResult Start(InvarianceDimension dimension, std::string baseline) {
    InvarianceDimensionResult d;
    d.dimension = dimension;
    d.baseline = std::move(baseline);
    return d;
  }

  InvarianceTrial Trial(std::string what, size_t m, size_t row, BitsDifference diff) const {
    InvarianceTrial t;
    t.what = std::move(what);
    t.shape.m = m;
    t.shape.n = options_.n;
    t.shape.k = options_.k;
    t.row = row;
    t.diff = diff;
    return t;
  }

  BitsDifference Compare(const std::vector<float>& base, const std::vector<float>& got) const {
    return CompareOutputs(door_.OutputFormat(), base.data(), got.data(),
                          std::min(base.size(), got.size()));
  }

  std::string EndsText() const {
    return largest_ > 1 ? fmt::format("m = 1 and {}", largest_) : "m = 1";
  }

  DotDoor& door_;
  const InvarianceOptions& options_;
  size_t max_batch_;
  ProbeRunner runner_;
  std::map<size_t, std::vector<float>> first_row_;  // m -> the probe's outputs at row 0
  size_t largest_ = 1;
  std::vector<size_t> ends_ = {1};
};

}  // namespace

InvarianceReport CheckInvariance(DotDoor& door, const InvarianceOptions& options,
                                 const std::function<void(const std::string&)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  if (options.k == 0 || options.n == 0 || options.max_batch == 0 || options.repeats < 2) {
    throw std::invalid_argument(
        "invariance needs k, n and the largest batch >= 1, and 2 calls or more");
  }
  if (door.MaxK() != 0 && options.k > door.MaxK()) {
    throw std::invalid_argument(
        fmt::format("{} takes k up to {}, not {}", door.Name(), door.MaxK(), options.k));
  }
  if (door.MaxRows() != 0 && options.n > door.MaxRows()) {
    throw std::invalid_argument(
        fmt::format("{} takes n up to {}, not {}", door.Name(), door.MaxRows(), options.n));
  }
  InvarianceReport report;
  report.door = door.Name();
  report.operand_format = &door.OperandFormat();
  report.output_format = &door.OutputFormat();
  report.options = options;
  const size_t max_batch =
      door.MaxRows() != 0 ? std::min(options.max_batch, door.MaxRows()) : options.max_batch;
  Dimensions dimensions(door, options, max_batch);
  auto tell = [&progress](InvarianceDimension d) {
    if (progress) progress(InvarianceDimensionName(d));
  };
  tell(InvarianceDimension::kBatchSize);
  InvarianceDimensionResult batch = dimensions.BatchSize(&report, elapsed);
  tell(InvarianceDimension::kPosition);
  InvarianceDimensionResult position = dimensions.Position();
  tell(InvarianceDimension::kAlignment);
  InvarianceDimensionResult alignment = dimensions.Alignment();
  tell(InvarianceDimension::kRowStride);
  InvarianceDimensionResult stride = dimensions.RowStride();
  tell(InvarianceDimension::kRunToRun);
  InvarianceDimensionResult rerun = dimensions.RunToRun();
  tell(InvarianceDimension::kThreads);
  InvarianceDimensionResult threads = dimensions.Threads();
  // kInvarianceDimensions' order.
  report.dimensions = {batch, position, alignment, stride, threads, rerun};
  report.seconds = elapsed();
  report.calls = dimensions.calls();
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
                            : contiguous
                                ? fmt::format("{}-{}", terms.front(), terms.back())
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

nlohmann::ordered_json InvarianceJson(const InvarianceReport& r,
                                      const std::optional<BatchTrees>& trees) {
  auto ulp = [](double v) -> nlohmann::ordered_json {
    if (std::isinf(v)) return nullptr;  // a NaN met a number
    return v;
  };
  auto trial = [&ulp](const InvarianceTrial& t) {
    return nlohmann::ordered_json{{"what", t.what},
                                  {"m", t.shape.m},
                                  {"row", t.row},
                                  {"compared", t.diff.compared},
                                  {"changed", t.diff.changed},
                                  {"max_ulp", ulp(t.diff.max_ulp)}};
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
