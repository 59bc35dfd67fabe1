// RunSweep (suites/sweep/sweep.h): the fast path over the vectorized exact tier and
// the reference path through the engine.
#include <algorithm>
#include <cfloat>
#include <array>
#include <atomic>
#include <limits>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <mutex>
#include <functional>

#include <fmt/format.h>

#include "kernels/narrow_formats.h"
#include "oracles/fast_ulp.h"
#include "oracles/float_text.h"
#include "oracles/ulp_metric.h"
#include "suites/engine/chunk_driver.h"
#include "suites/engine/guarded_buffer.h"
#include "suites/engine/kernel_fault.h"
#include "suites/inputs/inputs.h"
#include "suites/sweep/factor_columns.h"
#include "suites/sweep/sweep.h"
#include "suites/sweep/sweep_tier.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/elementwise_oracle.h"

namespace ulpgate {
namespace {

// ---- Statistics that merge in any order.

struct CaseTotals {
  CaseTotals(size_t bins, size_t models, bool with_fine = true)
      : fine(with_fine ? ErrorStatistics::FineBinCount() : 0, 0),
        adjust(bins, 0),
        mismatches(models, 0),
        first_mismatch(models, -1) {}
  std::vector<uint64_t> fine;
  std::vector<int64_t> adjust;  // histogram counts minus CoarseBinOfFine's
  uint64_t n = 0, special = 0, signed_zero = 0, correct = 0;
  double max_ulp = -1;
  int64_t max_index = -1, first_special = -1;
  SpecialCauseCounts causes{};
  int64_t first_signed_zero = -1;
  UlpSum sum;
  // Per model: the outputs that differ from it where it is the case's
  // expected model; elsewhere only whether any does.
  std::vector<uint64_t> mismatches;
  std::vector<int64_t> first_mismatch;
  uint64_t digest = 0;

  void Max(double ulp, int64_t index) {
    if (max_index < 0 || ulp > max_ulp || (ulp == max_ulp && index < max_index)) {
      max_ulp = ulp;
      max_index = index;
    }
  }
  static int64_t First(int64_t a, int64_t b) { return a < 0 ? b : b < 0 ? a : std::min(a, b); }

  // Everything but the fine histogram, which the callers add their way.
  void AddScalars(const CaseTotals& o) {
    for (size_t b = 0; b < adjust.size(); ++b) adjust[b] += o.adjust[b];
    n += o.n;
    special += o.special;
    signed_zero += o.signed_zero;
    correct += o.correct;
    if (o.max_index >= 0) Max(o.max_ulp, o.max_index);
    first_special = First(first_special, o.first_special);
    MergeSpecialCauses(causes, o.causes);
    first_signed_zero = First(first_signed_zero, o.first_signed_zero);
    sum.Add(o.sum);
    for (size_t m = 0; m < mismatches.size(); ++m) {
      mismatches[m] += o.mismatches[m];
      first_mismatch[m] = First(first_mismatch[m], o.first_mismatch[m]);
    }
    digest += o.digest;
  }
  void Add(const CaseTotals& o) {
    AddScalars(o);
    for (size_t f = 0; f < fine.size(); ++f) fine[f] += o.fine[f];
  }
};

// The cause of a special mismatch the tier flagged at element i of a tile
// (it flags only where x is NaN, infinite, or finite and decided: its kind
// not kSweepExactUndecided). x = x0 + x1 + x2 with x1 = RN53(x1 + x2) rounds
// to an infinity where |x| >= max + ulp/2 (ties go to the even infinity), a
// double T (OverflowThreshold): |x0| > T, or |x0| = T and x1 not against
// x0's sign.
double OverflowThreshold(const FloatFormat& format) {
  return std::ldexp(2.0 - std::ldexp(1.0, -format.precision), format.emax);
}
SpecialCause SpecialCauseOf(double threshold, const SweepExactTile& tile, size_t i, float y) {
  const uint64_t kind = tile.kind[i];
  const double x0 = tile.x0[i], x1 = tile.x1[i];
  const bool finite = kind != kSweepExactNaN && kind != kSweepExactInfinite;
  const bool rounds_infinite =
      finite && (std::fabs(x0) > threshold ||
                 (std::fabs(x0) == threshold && (x1 == 0 || std::signbit(x1) == std::signbit(x0))));
  return ClassifySpecialMismatch(kind == kSweepExactNaN, kind == kSweepExactInfinite,
                                 rounds_infinite, y);
}

// The first output of a tile the tier counted as a signed-zero mismatch (-1:
// none): y = +-0 against a decided x that rounds to the zero of the other
// sign, as MeasureGeneral has it. x rounds to zero where |x| < ulp/2 (scale
// is 2^-q, q x's ULP exponent: |x0| scale < 1/2), or |x| = ulp/2 exactly (a
// tie, to the even zero): |x0| scale = 1/2 and x1 not of x0's sign.
int64_t FirstSignedZero(const SweepExactTile& tile, const float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint64_t kind = tile.kind[i];
    if (y[i] != 0 || (kind != kSweepExactPair && kind != kSweepExactTriple &&
                      kind != kSweepExactApprox && kind != kSweepExactTiny)) {
      continue;
    }
    const double x0 = tile.x0[i], x1 = tile.x1[i];
    if (std::signbit(y[i]) == std::signbit(x0)) continue;
    const double half = std::fabs(x0) * tile.scale[i];
    if (half < 0.5 || (half == 0.5 && (x1 == 0 || std::signbit(x1) != std::signbit(x0)))) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

void CountCause(SpecialCause cause, int64_t index, CaseTotals& t) {
  SpecialCauseCount& c = t.causes[cause == SpecialCause::kNone ? 0 : SpecialCauseIndex(cause)];
  ++c.count;
  c.first_index = CaseTotals::First(c.first_index, index);
}

// One tile's statistics of one distinct output, its fine histogram as the
// bins it touched.
struct TileTotals {
  TileTotals(size_t bins, size_t models) : totals(bins, models, false) {}
  CaseTotals totals;  // its fine histogram empty
  std::vector<std::pair<uint32_t, uint32_t>> fine;

  // Back to nothing measured, keeping the storage.
  void Clear() {
    CaseTotals& t = totals;
    std::fill(t.adjust.begin(), t.adjust.end(), 0);
    t.n = t.special = t.signed_zero = t.correct = 0;
    t.max_ulp = -1;
    t.max_index = t.first_special = -1;
    t.causes = SpecialCauseCounts{};
    t.first_signed_zero = -1;
    t.sum = UlpSum();
    std::fill(t.mismatches.begin(), t.mismatches.end(), 0);
    std::fill(t.first_mismatch.begin(), t.first_mismatch.end(), -1);
    t.digest = 0;
    fine.clear();
  }

  void AddTo(CaseTotals& into) const {
    into.AddScalars(totals);
    for (const auto& [bin, count] : fine) into.fine[bin] += count;
  }
};

// ---- The 16-bit formats' patterns.

// Per pattern: its value (NaN canonical) and the pattern a kernel receives
// (a NaN as its sign's quiet NaN, as the engine encodes operands).
struct NarrowPatterns {
  explicit NarrowPatterns(const FloatFormat& format) : value(65536), canonical(65536) {
    for (uint32_t b = 0; b < 65536; ++b) {
      const double v = DecodeBits(format, b);
      value[b] = CanonicalNan(static_cast<float>(v));
      canonical[b] = static_cast<uint16_t>(EncodeBits(format, v));
    }
  }
  std::vector<float> value;
  std::vector<uint16_t> canonical;
};

// Per row of kNarrowFormats; throws for a format without a row.
const NarrowPatterns& PatternsOf(const FloatFormat& format) {
  static const auto tables = [] {
    std::vector<NarrowPatterns> all;
    for (const NarrowFormat& f : kNarrowFormats) all.emplace_back(*f.format);
    return all;
  }();
  return tables[NarrowRow(RequireNarrowFormat(format, "sweeps of all pairs"))];
}



// ---- A staged op's tables (ElementwiseOracle::ExactFactor, StageModelOutput).

// Per value of the second operand: the exact factor as the tier reads it,
// and every model's chain; kSweepVectorSlack entries of slack past the end.
struct StagedTables {
  std::vector<double> f0, f1, f2, sign, tiny_limit, f_error, path_error;
  std::vector<uint64_t> kind;
  std::vector<StagedColumns> models;  // ModelNames order
  std::vector<std::vector<MpfrNumber>> factors;  // per entry, for MPFR's lanes

  FactorSlots Slots() {
    return {f0.data(), f1.data(), f2.data(), sign.data(), tiny_limit.data(), f_error.data(),
            path_error.data(), kind.data()};
  }

  SweepFactorColumns At(size_t entry) const {
    return {f0.data() + entry,         f1.data() + entry,         f2.data() + entry,
            sign.data() + entry,       tiny_limit.data() + entry, kind.data() + entry,
            f_error.data() + entry,    path_error.data() + entry};
  }
};



// The tables over `values` (the second operand's values, a NaN as the
// pattern a kernel receives); nullopt where the op's definition or a model
// does not stage, or a model's chains differ between values.
std::optional<StagedTables> BuildStagedTables(const ElementwiseOpInfo& op, const FloatFormat& format,
                                              const std::vector<float>& values, unsigned threads) {
  const ElementwiseOracle& oracle = OracleOf(op);
  const size_t count = values.size();
  const size_t size = count + kSweepVectorSlack;
  const size_t model_count = ModelNames(op, format).size();
  StagedTables t;
  for (auto* v : {&t.f0, &t.f1, &t.f2, &t.sign, &t.tiny_limit, &t.f_error, &t.path_error}) {
    v->assign(size, 0.0);
  }
  t.kind.assign(size, kSweepFactorNaN);
  t.models.resize(model_count);
  t.factors.resize(count);
  std::vector<std::vector<std::optional<StagedChain>>> chains(model_count,
                                                              std::vector<std::optional<StagedChain>>(count));
  std::vector<uint8_t> staged(count, 1);
  constexpr size_t kUnit = 1024;
  RunUnitsByWorker((count + kUnit - 1) / kUnit, threads, [&](size_t u, unsigned) {
    for (size_t e = u * kUnit; e < std::min(count, (u + 1) * kUnit); ++e) {
      const float operands[2] = {1.0f, values[e]};
      bool products_exact = false;
      const auto f = oracle.ExactFactor(operands, &products_exact, &t.factors[e]);
      if (!f) {
        staged[e] = 0;
        continue;
      }
      SetFactor(*f, products_exact, format, t.Slots(), e);
      for (size_t m = 0; m < model_count; ++m) chains[m][e] = StageModelOutput(op, format, m, operands);
    }
  });
  if (std::find(staged.begin(), staged.end(), 0) != staged.end()) return std::nullopt;
  for (size_t m = 0; m < model_count; ++m) {
    StagedColumns& columns = t.models[m];
    for (size_t e = 0; e < count; ++e) {
      const std::optional<StagedChain>& chain = chains[m][e];
      if (!chain) return std::nullopt;
      if (e == 0) {
        columns.steps = chain->steps;
        columns.c.assign(chain->steps.size(), std::vector<double>(size, 0.0));
        columns.d.assign(chain->steps.size(), std::vector<double>(size, 0.0));
      } else if (chain->steps != columns.steps) {
        return std::nullopt;
      }
      for (size_t k = 0; k < chain->steps.size(); ++k) {
        columns.c[k][e] = chain->c[k];
        columns.d[k][e] = chain->d[k];
      }
    }
  }
  return t;
}

// The second operand's values a staged domain tabulates: every pattern of a
// 16-bit format (pairs), the fixed values of an over-grad domain; empty for
// a domain that sweeps the second operand over binary32 (too many values).
std::vector<float> StagedValues(const SweepDomain& domain) {
  if (domain.kind == SweepDomain::Kind::kPairs) {
    std::vector<float> v(65536);
    for (uint32_t b = 0; b < 65536; ++b) v[b] = static_cast<float>(DecodeBits(*domain.format, b));
    return v;
  }
  if (domain.kind == SweepDomain::Kind::kOverGrad) return domain.fixed;
  return {};
}

// SweepDigestKey(j) ^ SweepDigestKey(0) for j < 4096: with SweepDigestKey(i)
// = H(i >> 12) ^ L(i & 0xfff), this is L(j) ^ L(0), and SweepDigestKey(run +
// j) = SweepDigestKey(run) ^ L(0) ^ L(j) for a run that is a multiple of 4096.
// A partial last tile may start near the end of the run, and SweepMeasure
// reads whole vectors: the zeros past 4096 are that slack (their lanes are
// past n, masked out of the digest).
using DigestLowKeyTable = std::array<uint64_t, 4096 + kSweepVectorSlack>;
const DigestLowKeyTable& DigestLowKeys() {
  static const DigestLowKeyTable keys = [] {
    DigestLowKeyTable k{};
    for (uint64_t j = 0; j < 4096; ++j) k[j] = SweepDigestKey(j) ^ SweepDigestKey(0);
    return k;
  }();
  return keys;
}

// A buffer of kSweepTile floats, zeroed, 64-byte aligned.
struct alignas(64) TileFloats {
  float v[kSweepTile] = {};
};

// The inputs of [at, at + n) of a domain, within one block: values (NaN
// canonical) and, for the 16-bit pairs, the patterns a kernel receives.
void FillSweepTile(const SweepDomain& domain, uint64_t at, size_t n, float* grad, float* t,
                   uint16_t* grad_bits, uint16_t* t_bits) {
  if (domain.kind == SweepDomain::Kind::kPairs) {
    const NarrowPatterns& p = PatternsOf(*domain.format);
    const auto g = static_cast<uint16_t>(at >> 16);
    const size_t t0 = static_cast<size_t>(at & 0xffff);
    std::fill(grad, grad + n, p.value[g]);
    std::fill(grad_bits, grad_bits + n, p.canonical[g]);
    std::memcpy(t, p.value.data() + t0, n * sizeof(float));
    std::memcpy(t_bits, p.canonical.data() + t0, n * sizeof(uint16_t));
    return;
  }
  const float fixed = domain.fixed[at >> 32];
  float* swept = domain.kind == SweepDomain::Kind::kOverT ? t : grad;
  float* constant = domain.kind == SweepDomain::Kind::kOverT ? grad : t;
  const auto first = static_cast<uint32_t>(at);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t bits = first + static_cast<uint32_t>(i);
    std::memcpy(&swept[i], &bits, sizeof bits);
  }
  std::fill(constant, constant + n, fixed);
}

// One worker's buffers and totals.
struct Worker {
  Worker(size_t cases, size_t model_count, size_t bins)
      : models(model_count),
        outputs(cases),
        wanted(model_count, 0),
        totals(cases, CaseTotals(bins, model_count)) {}
  alignas(64) float grad[kSweepTile] = {};
  alignas(64) float t[kSweepTile] = {};
  alignas(64) uint16_t grad_bits[kSweepTile] = {};
  alignas(64) uint16_t t_bits[kSweepTile] = {};
  alignas(64) uint16_t out16[kSweepTile] = {};
  SweepExactTile exact = {};
  SweepErrorTile errors = {};
  std::vector<TileFloats> models;
  std::vector<float*> model_pointers;
  std::vector<TileFloats> outputs;
  SweepFineCounts fine_counts;
  // This tile's distinct outputs: the first `distinct` entries of `tiles`
  // (kept between tiles for their storage), and for each the case that
  // measured it.
  std::vector<TileTotals> tiles;
  size_t distinct = 0;
  std::vector<size_t> representative;
  std::vector<std::vector<size_t>> members;  // the cases whose outputs each entry has
  std::vector<uint8_t> wanted;               // per model: computed for this tile
  MpfrTanhBwdError mpfr;
  // A staged op's factor columns over a tile: an over-grad domain's one value
  // of the second operand repeated, or one per input where the second
  // operand is swept (FastFactor, MPFR where it cannot decide).
  std::unique_ptr<FactorColumnsBuffer> factor_buffers;
  // What MPFR computed: the exact factors of inputs FastFactor left to it,
  // and the errors of outputs the tier left to it.
  uint64_t mpfr_factors = 0, mpfr_errors = 0;
  std::vector<CaseTotals> totals;
  // A plugin's outputs over the whole block being swept (per case; empty for
  // the others): its kernel is called once a block, not once a tile, so
  // that one in another process (an IUT) pays its round trip per block.
  uint64_t block_begin = 0;
  std::vector<std::vector<float>> plugin_outputs;
  // The block's inputs and a 16-bit kernel's outputs, kept from block to block.
  std::vector<float> block_grad, block_t;
  std::vector<uint16_t> block_grad_bits, block_t_bits, block_out16;
  // Scale reuse (FastSweep::Derive): per tile of the grad being swept, the
  // last tile measured whole at a grad of the same sign and significand.
  struct ScaledBase {
    bool valid = false;
    float grad = 0;
    uint64_t at = 0;
    size_t n = 0;
    std::vector<std::vector<float>> outputs;  // per case
    std::vector<std::vector<float>> models;   // per model; empty where not computed
    std::vector<TileTotals> tiles;            // per distinct output
    std::vector<size_t> distinct_of;          // per case: its entry of tiles
  };
  std::vector<ScaledBase> bases;
  TileFloats scaled;  // a base's outputs scaled
  uint64_t derived_tiles = 0;
};

// Calls `call(operands, out, count)` over [0, n) as three calls into guarded
// buffers (suites/engine/guarded_buffer.h) placed `salt`-dependent elements
// past a 64-byte boundary: a short first piece at that misaligned start, the
// middle, and a short tail that ends where the buffers end. A kernel that
// writes before a misaligned start or past a tail (outside its output) or
// into its operands faults here as it does in `run` and `golden check`,
// although a sweep's tiles are whole and aligned; a right kernel's outputs
// are the same. Throws KernelFaultError, indices from 0.
template <class T, class Call>
void SplitGuardedCall(const T* a, const T* b, T* out, size_t n, uint64_t salt, const Call& call) {
  if (n == 0) return;
  thread_local BasicGuardedBuffer<T> ga(0, 0), gb(0, 0), gy(0, 0);
  const size_t misalign = 1 + salt % 15;
  ga.Place(n, misalign, /*elements=*/false);
  gb.Place(n, misalign, /*elements=*/false);
  gy.Place(n, misalign);
  std::copy(a, a + n, ga.data());
  std::copy(b, b + n, gb.data());
  const size_t head = std::min<size_t>(n, 1 + salt % 7);
  const size_t tail = std::min<size_t>(n - head, 1 + (salt / 7) % 13);
  const size_t pieces[3][2] = {{0, head}, {head, n - head - tail}, {n - tail, tail}};
  for (const auto& [first, count] : pieces) {
    if (count == 0) continue;
    const void* in[2] = {ga.data() + first, gb.data() + first};
    try {
      call(in, gy.data() + first, count);
    } catch (KernelFaultError& e) {  // from another process: indices in the piece
      if (e.fault().index >= 0) e.fault().index += static_cast<int64_t>(first);
      e.fault().first += static_cast<int64_t>(first);
      throw;
    }
    const bool output = gy.GuardsIntact(), operands = ga.GuardsIntact() && gb.GuardsIntact();
    if (!output || !operands) {
      KernelFault f;
      f.kind = KernelFaultKind::kOutOfBounds;
      f.detail = fmt::format(
          "the kernel wrote {} ({})", output ? "into its operands" : "outside its output",
          first == 0 ? fmt::format("a call of {} input{} starting {} elements past a 64-byte boundary",
                                   count, count == 1 ? "" : "s", misalign)
                     : fmt::format("a call of {} input{} ending its buffer", count, count == 1 ? "" : "s"));
      f.first = static_cast<int64_t>(first);
      f.count = static_cast<int64_t>(count);
      if (count == 1) f.index = f.first;
      throw KernelFaultError(std::move(f));
    }
  }
  std::copy(gy.data(), gy.data() + n, out);
}

class FastSweep {
 public:
  FastSweep(const SweepOptions& options, const ElementwiseCasePlan& plan,
            const StagedTables* staged = nullptr, const ElementwiseOracle* per_input = nullptr)
      : staged_(staged),
        per_input_(per_input),
        options_(options),
        domain_(options.domain),
        format_(*options.domain.format),
        plan_(plan),
        bound_count_(HistogramBoundCount(format_)),
        overflow_threshold_(OverflowThreshold(format_)),
        inside_low_(std::ldexp(1.0, format_.emin + 1)),
        inside_high_(std::ldexp(1.0, format_.emax)),
        builtin_models_(plan.model_names.size() - plan.extra_models.size()) {
    if (ErrorStatistics::FineBinCount() != kSweepFineBins) {
      throw std::logic_error("the sweep tier's fine bins are not ErrorStatistics's");
    }
    faults_.resize(plan.cases.size());
    fault_at_ = std::make_unique<std::atomic<int64_t>[]>(plan.cases.size());
    for (size_t c = 0; c < plan.cases.size(); ++c) fault_at_[c].store(std::numeric_limits<int64_t>::max());
  }

  // Per case, its kernel's fault at the lowest input (domain indices), if any.
  const std::vector<std::optional<KernelFault>>& faults() const { return faults_; }

  uint64_t mpfr_factors() const { return mpfr_factors_; }
  uint64_t mpfr_errors() const { return mpfr_errors_; }

  std::vector<CaseTotals> Run() {
    std::vector<std::pair<uint64_t, uint64_t>> blocks;
    for (uint64_t at = options_.begin; at < options_.end;) {
      const uint64_t stop = std::min(options_.end, (at / kSweepBlock + 1) * kSweepBlock);
      blocks.emplace_back(at, stop);
      at = stop;
    }
    // A unit of work: one block, or with scale reuse every block of the range
    // whose grad has one sign and significand, in the order of its exponent
    // (the statistics merge in any order).
    std::vector<std::pair<size_t, size_t>> units;  // [first, last) of blocks
    if (ScaleReuse()) {
      const uint64_t exponent = ExponentMask();
      std::stable_sort(blocks.begin(), blocks.end(), [&](const auto& a, const auto& b) {
        const uint64_t ga = a.first >> 16, gb = b.first >> 16;
        return std::make_pair(ga & ~exponent, ga & exponent) < std::make_pair(gb & ~exponent, gb & exponent);
      });
      for (size_t b = 0; b < blocks.size();) {
        size_t e = b + 1;
        while (e < blocks.size() && ((blocks[e].first >> 16) & ~exponent) == ((blocks[b].first >> 16) & ~exponent)) ++e;
        units.emplace_back(b, e);
        b = e;
      }
    } else {
      for (size_t b = 0; b < blocks.size(); ++b) units.emplace_back(b, b + 1);
    }
    const unsigned count = WorkerCount(options_.threads, units.size());
    workers_.resize(count);
    RunUnitsByWorker(
        units.size(), options_.threads,
        [&](size_t u, unsigned w) {
          if (!workers_[w]) {
            workers_[w] = std::make_unique<Worker>(plan_.cases.size(), plan_.model_names.size(),
                                                   static_cast<size_t>(bound_count_) + 1);
          }
          Worker& worker = *workers_[w];
          for (auto& base : worker.bases) base.valid = false;  // another significand
          for (size_t b = units[u].first; b < units[u].second; ++b) {
            PluginBlock(worker, blocks[b].first, blocks[b].second);
            for (uint64_t at = blocks[b].first; at < blocks[b].second;) {
              const uint64_t stop = std::min(blocks[b].second, (at / kSweepTile + 1) * kSweepTile);
              Tile(worker, at, static_cast<size_t>(stop - at));
              at = stop;
            }
          }
        },
        [&](size_t u) {
          uint64_t inputs = 0;
          for (size_t b = units[u].first; b < units[u].second; ++b) inputs += blocks[b].second - blocks[b].first;
          return inputs;
        },
        options_.progress ? std::function<void(uint64_t, uint64_t)>(options_.progress) : nullptr);
    std::vector<CaseTotals> totals(plan_.cases.size(),
                                   CaseTotals(static_cast<size_t>(bound_count_) + 1,
                                              plan_.model_names.size()));
    for (const auto& worker : workers_) {
      if (!worker) continue;
      for (size_t c = 0; c < totals.size(); ++c) totals[c].Add(worker->totals[c]);
      mpfr_factors_ += worker->mpfr_factors;
      mpfr_errors_ += worker->mpfr_errors;
      derived_tiles_ += worker->derived_tiles;
    }
    return totals;
  }
  uint64_t derived_tiles() const { return derived_tiles_; }

 private:
  // A case's kernel faulted at `f` (domain indices): the lowest fault is the
  // case's, whichever worker found it first, and blocks past it need not
  // call the kernel (as the engine's units past a fault), so the report does
  // not depend on the threads.
  void RecordFault(size_t c, KernelFault f) const {
    const int64_t at = f.index >= 0 ? f.index : f.first;
    std::lock_guard<std::mutex> lock(fault_mutex_);
    const std::optional<KernelFault>& known = faults_[c];
    if (known && (known->index >= 0 ? known->index : known->first) <= at) return;
    faults_[c] = std::move(f);
    fault_at_[c].store(at);
  }
  bool PastFault(size_t c, uint64_t at) const {
    return static_cast<int64_t>(at) > fault_at_[c].load(std::memory_order_relaxed);
  }
  // The first tile of each block calls its kernel by SplitGuardedCall, as
  // does a tile of a length no vector divides (the end of a range), which
  // only guarded buffers may take.
  bool GuardedTile(uint64_t at, size_t n) const {
    return at % kSweepBlock == 0 || at == options_.begin || n % 64 != 0;
  }

  void Fill(Worker& w, uint64_t at, size_t n) const {
    FillSweepTile(domain_, at, n, w.grad, w.t, w.grad_bits, w.t_bits);
  }

  // The plugins' outputs over block [begin, end) (one block holds one grad
  // of a pairs domain, or one fixed value of another), decoded to float as
  // the built-in kernels' are per tile. A fault's input becomes a domain index.
  void PluginBlock(Worker& w, uint64_t begin, uint64_t end) const {
    const size_t n = static_cast<size_t>(end - begin);
    w.block_begin = begin;
    w.plugin_outputs.resize(plan_.cases.size());
    std::vector<float>& grad = w.block_grad;
    std::vector<float>& t = w.block_t;
    std::vector<uint16_t>& grad_bits = w.block_grad_bits;
    std::vector<uint16_t>& t_bits = w.block_t_bits;
    std::vector<uint16_t>& out16 = w.block_out16;
    bool filled = false;
    for (size_t c = 0; c < plan_.cases.size(); ++c) {
      const PluginKernel* plugin = plan_.cases[c].plugin;
      if (plugin == nullptr) continue;
      if (!filled) {
        grad.resize(n), t.resize(n), grad_bits.resize(n), t_bits.resize(n);
        FillSweepTile(domain_, begin, n, grad.data(), t.data(), grad_bits.data(), t_bits.data());
        filled = true;
      }
      std::vector<float>& y = w.plugin_outputs[c];
      y.assign(n, 0.0f);
      if (PastFault(c, begin)) continue;  // not measured: its outputs are never read
      const auto call = [plugin](const void* const* in, auto* out, size_t count) {
        plugin->call(in, out, count);
      };
      try {
        if (IsBinary32(format_)) {
          SplitGuardedCall(grad.data(), t.data(), y.data(), n, begin / kSweepBlock, call);
          SweepCanonicalNans(y.data(), n);
        } else {
          out16.resize(n);
          SplitGuardedCall(grad_bits.data(), t_bits.data(), out16.data(), n, begin / kSweepBlock, call);
          SweepDecodeNarrow(format_, out16.data(), n, y.data());
        }
      } catch (KernelFaultError& e) {
        // The case's fault, in domain indices; the other cases go on.
        KernelFault f = e.fault();
        f.first += static_cast<int64_t>(begin);
        if (f.index >= 0) f.index += static_cast<int64_t>(begin);
        RecordFault(c, std::move(f));
        y.assign(n, 0.0f);
      }
    }
  }

  void Tile(Worker& w, uint64_t at, size_t n) const {
    Fill(w, at, n);
    // A staged op: the second operand's entry in the tables, the same over
    // the tile (over grad) or one per input (pairs).
    const bool broadcast = domain_.kind != SweepDomain::Kind::kPairs;
    const size_t entry = broadcast ? static_cast<size_t>(at >> 32) : static_cast<size_t>(at & 0xffff);
    // Scale reuse: this tile as the last one measured whole at a grad of the
    // same sign and significand, scaled (Derivable); else measured here.
    Worker::ScaledBase* base = Derivable(w, at, n);
    const auto exact_values = [&] {
      if (staged_ != nullptr) {
        SweepFactorColumns columns = staged_->At(entry);
        if (broadcast) {
          if (!w.factor_buffers) w.factor_buffers = std::make_unique<FactorColumnsBuffer>();
          FactorColumnsBuffer& b = *w.factor_buffers;
          std::fill_n(b.f0, n, columns.f0[0]);
          std::fill_n(b.f1, n, columns.f1[0]);
          std::fill_n(b.f2, n, columns.f2[0]);
          std::fill_n(b.sign, n, columns.sign[0]);
          std::fill_n(b.tiny_limit, n, columns.tiny_limit[0]);
          std::fill_n(b.kind, n, columns.kind[0]);
          std::fill_n(b.f_error, n, columns.f_error[0]);
          std::fill_n(b.path_error, n, columns.path_error[0]);
          columns = b.Columns();
        }
        SweepScaledExactValues(format_, w.grad, columns, n, &w.exact);
      } else if (per_input_ != nullptr) {
        if (!w.factor_buffers) w.factor_buffers = std::make_unique<FactorColumnsBuffer>();
        SweepScaledExactValues(format_, w.grad,
                               PerInputFactors(*per_input_, format_, w.grad, w.t, n,
                                               w.factor_buffers.get(), &w.mpfr_factors),
                               n, &w.exact);
      } else {
        SweepExactValues(format_, w.grad, w.t, n, &w.exact);
      }
    };
    if (base == nullptr) exact_values();

    // The models this tile needs: each case's expected one (its mismatches
    // are counted), and every other one that case has not yet left (only
    // whether it ever does is reported). A model left stays left, whichever
    // worker saw it, so the report is the same however the work was cut.
    const size_t model_count = plan_.model_names.size();
    std::fill(w.wanted.begin(), w.wanted.end(), 0);
    for (size_t c = 0; c < plan_.cases.size(); ++c) {
      for (size_t m = 0; m < model_count; ++m) {
        if (static_cast<int>(m) == plan_.cases[c].expected || w.totals[c].mismatches[m] == 0) {
          w.wanted[m] = 1;
        }
      }
    }
    std::vector<float*>& models = w.model_pointers;
    models.resize(model_count);
    for (size_t m = 0; m < model_count; ++m) models[m] = w.models[m].v;
    if (per_input_ != nullptr) {
      for (size_t m = 0; m < builtin_models_; ++m) {
        if (!w.wanted[m]) continue;
        for (size_t i = 0; i < n; ++i) {
          const float operands[2] = {w.grad[i], w.t[i]};
          models[m][i] = CanonicalNan(ModelOutput(*options_.op, format_, m, operands, /*native=*/true));
        }
      }
    } else if (staged_ != nullptr) {
      for (size_t m = 0; m < builtin_models_; ++m) {
        if (!w.wanted[m]) continue;
        if (base != nullptr && ScaledModel(*base, m, w.grad[0], n, models[m])) continue;
        ApplyStagedModel(*options_.op, format_, m, staged_->models[m], entry, broadcast, w.grad,
                         w.grad_bits, n, models[m]);
      }
    } else {
      SweepModelOutputs(format_, w.grad, w.t, w.grad_bits, w.t_bits, n, models.data(),
                        w.wanted.data());
    }
    for (size_t k = 0; k < plan_.extra_models.size(); ++k) {
      if (!w.wanted[builtin_models_ + k]) continue;
      for (size_t i = 0; i < n; ++i) {
        const double operands[2] = {w.grad[i], w.t[i]};
        models[builtin_models_ + k][i] =
            CanonicalNan(static_cast<float>(plan_.extra_models[k].Evaluate(operands)));
      }
    }

    // Every case's outputs, and the distinct ones among them: outputs equal
    // bit for bit to another case's over this tile have its statistics, every
    // one of them being a function of the inputs and the outputs alone.
    w.distinct = 0;
    w.representative.clear();
    for (size_t c = 0; c < plan_.cases.size(); ++c) {
      const ElementwiseCasePlan::Case& pc = plan_.cases[c];
      float* y = w.outputs[c].v;
      if (pc.kernel != nullptr && (PastFault(c, at) || GuardedTile(at, n))) {
        // Once a block: through guarded buffers, in three calls (a faulted
        // case's outputs are never read).
        std::fill_n(y, n, 0.0f);
        const auto call = [kernel = pc.kernel](const void* const* in, auto* out, size_t count) {
          kernel(in, out, count);
        };
        try {
          if (PastFault(c, at)) {
          } else if (IsBinary32(format_)) {
            SplitGuardedCall(w.grad, w.t, y, n, at / kSweepBlock, call);
            SweepCanonicalNans(y, n);
          } else {
            SplitGuardedCall(w.grad_bits, w.t_bits, w.out16, n, at / kSweepBlock, call);
            SweepDecodeNarrow(format_, w.out16, n, y);
          }
        } catch (KernelFaultError& e) {
          KernelFault f = e.fault();
          f.first += static_cast<int64_t>(at);
          if (f.index >= 0) f.index += static_cast<int64_t>(at);
          RecordFault(c, std::move(f));
          std::fill_n(y, n, 0.0f);
        }
      } else if (pc.kernel != nullptr && IsBinary32(format_)) {
        const void* in[2] = {w.grad, w.t};
        pc.kernel(in, y, n);
        SweepCanonicalNans(y, n);
      } else if (pc.kernel != nullptr) {
        const void* in[2] = {w.grad_bits, w.t_bits};
        pc.kernel(in, w.out16, n);
        SweepDecodeNarrow(format_, w.out16, n, y);
      } else if (pc.plugin != nullptr) {
        std::memcpy(y, w.plugin_outputs[c].data() + (at - w.block_begin), n * sizeof(float));
      } else {
        std::memcpy(y, models[pc.expected], n * sizeof(float));
      }
      size_t d = 0;
      while (d < w.distinct &&
             std::memcmp(w.outputs[w.representative[d]].v, y, n * sizeof(float)) != 0) {
        ++d;
      }
      if (d == w.distinct) {
        if (w.tiles.size() == d) {
          w.tiles.emplace_back(static_cast<size_t>(bound_count_) + 1, model_count);
          w.members.emplace_back();
        }
        w.representative.push_back(c);
        w.members[d].clear();
        ++w.distinct;
      }
      w.members[d].push_back(c);
    }
    bool derived = base != nullptr;
    for (size_t c = 0; derived && c < plan_.cases.size(); ++c) {
      derived = ScaledOutputs(base->outputs[c].data(), w.grad[0] / base->grad, w.outputs[c].v, n,
                              w.scaled.v);
    }
    if (base != nullptr && !derived) exact_values();
    if (derived) ++w.derived_tiles;
    for (size_t d = 0; d < w.distinct; ++d) {
      const float* y = w.outputs[w.representative[d]].v;
      TileTotals& tile = w.tiles[d];
      if (derived) {
        // The base's statistics, every one a function of the errors, which
        // scaling keeps; the indices moved with the grad, the digest and the
        // mismatches this tile's own.
        tile = base->tiles[base->distinct_of[w.representative[d]]];
        CaseTotals& t = tile.totals;
        const int64_t shift = static_cast<int64_t>(at) - static_cast<int64_t>(base->at);
        if (t.max_index >= 0) t.max_index += shift;
        if (t.first_special >= 0) t.first_special += shift;
        // Causes too: a derived tile's exact values stay within the format's
        // normal range (SweepFactorsScale), so no cause changes with the grad.
        for (SpecialCauseCount& cause : t.causes) {
          if (cause.first_index >= 0) cause.first_index += shift;
        }
        if (t.first_signed_zero >= 0) t.first_signed_zero += shift;
        std::fill(t.mismatches.begin(), t.mismatches.end(), 0);
        std::fill(t.first_mismatch.begin(), t.first_mismatch.end(), -1);
        t.digest = Digest(y, at, n);
      } else {
        Measure(w, y, at, n, &tile);
      }
      // Mismatches: counted against a model some member expects; against
      // another only whether there is one, and only while some member has
      // not yet left it.
      for (size_t m = 0; m < model_count; ++m) {
        bool expected = false, open = false;
        for (size_t c : w.members[d]) {
          expected = expected || plan_.cases[c].expected == static_cast<int>(m);
          open = open || w.totals[c].mismatches[m] == 0;
        }
        const bool same = std::memcmp(y, models[m], n * sizeof(float)) == 0;
        if (same || (!expected && !open)) continue;
        if (expected) {
          int64_t first = -1;
          tile.totals.mismatches[m] = SweepMismatches(y, models[m], n, &first);
          tile.totals.first_mismatch[m] = static_cast<int64_t>(at) + first;
        } else {
          tile.totals.mismatches[m] = 1;  // at least one; the count is not reported
        }
      }
      for (size_t c : w.members[d]) tile.AddTo(w.totals[c]);
    }
    if (ScaleReuse() && !derived) KeepBase(w, at, n);
  }

  // ---- Scale reuse over the pairs of a 16-bit format (a staged op).
  //
  // x = grad f(t) exactly: grad times 2^k makes x, its ULP and every error
  // measured against it 2^k times as large, as long as x stays a normal
  // value of the format at both grads; a kernel's output that is 2^k times
  // the one at the first grad, both normal (or zeros, infinities or NaNs,
  // unchanged), has then the same error in every field the statistics take:
  // the tile's statistics are the first's, their indices moved. A model whose chain is one
  // multiplication or division of grad (in binary32 or the format, rounded
  // once to the format) scales the same way where its outputs stay normal.
  bool ScaleReuse() const {
    return staged_ != nullptr && options_.scale_reuse && domain_.kind == SweepDomain::Kind::kPairs &&
           !IsBinary32(format_);
  }
  uint64_t ExponentMask() const {
    const int exponent_bits = format_.bits - format_.precision;
    return ((uint64_t{1} << exponent_bits) - 1) << (format_.precision - 1);
  }
  // |v| normal in the format with a binade to spare either side.
  bool Inside(double v) const {
    const double a = std::fabs(v);
    return a >= inside_low_ && a < inside_high_;
  }

  // The base this tile derives from, or nullptr: one of this tile's place
  // at a normal grad of the same sign and significand, and every input's
  // exact value normal at both grads.
  Worker::ScaledBase* Derivable(Worker& w, uint64_t at, size_t n) const {
    if (!ScaleReuse()) return nullptr;
    const size_t slot = static_cast<size_t>((at & 0xffff) / kSweepTile);
    if (w.bases.size() <= slot) w.bases.resize(0x10000 / kSweepTile);
    Worker::ScaledBase& base = w.bases[slot];
    if (!base.valid || base.n != n || (base.at & 0xffff) != (at & 0xffff)) return nullptr;
    const float grad = w.grad[0];
    if (!Inside(grad) || !Inside(base.grad)) return nullptr;
    // Each input's x: grad f normal at both grads, or NaN or infinite at
    // both (f NaN or infinite: every error a special mismatch or none).
    const size_t entry = static_cast<size_t>(at & 0xffff);
    const double a = std::fabs(static_cast<double>(grad)), b = std::fabs(static_cast<double>(base.grad));
    const bool scales = SweepFactorsScale(staged_->kind.data() + entry, staged_->f0.data() + entry, n,
                                          std::min(a, b), std::max(a, b), inside_low_, inside_high_);
    return scales ? &base : nullptr;
  }

  // Scaled by p (a power of two, the grads' ratio): v * p where v and that
  // are normal in the format; v itself (its bits) where it is NaN, and with
  // `specials` where it is zero or infinite. False where some v is neither
  // (a subnormal, say).
  bool Scaled(const float* v, float p, size_t n, bool specials, float* out) const {
    return SweepScaledFloats(v, p, n, specials, static_cast<float>(inside_low_),
                             static_cast<float>(inside_high_), out);
  }
  // y the base's outputs scaled, bit for bit: the same error as the base's
  // output at every input whose x is a normal value at both grads (a zero,
  // an infinity or a NaN output included: so is y) or a NaN or infinity at
  // both.
  bool ScaledOutputs(const float* base, float p, const float* y, size_t n, float* scratch) const {
    if (!Scaled(base, p, n, /*specials=*/true, scratch)) return false;
    return std::memcmp(scratch, y, n * sizeof(float)) == 0;
  }

  // Model m at this tile from the base's, where its chain is one product or
  // quotient of grad (rounded once to the format, or in it) and every output
  // scales (Scaled); false to compute it.
  bool ScaledModel(const Worker::ScaledBase& base, size_t m, float grad, size_t n, float* out) const {
    if (base.models[m].empty()) return false;
    const StagedColumns& chain = staged_->models[m];
    if (chain.steps.size() != 1 ||
        (chain.steps[0] != ChainStep::kMul && chain.steps[0] != ChainStep::kDiv)) {
      return false;
    }
    const NarrowModelInfo::Kind kind = NarrowModelInfos(*options_.op, format_).at(m).kind;
    if (kind != NarrowModelInfo::kOpmath && kind != NarrowModelInfo::kPerOp) return false;
    // A zero or an infinity may be the base grad's underflow or overflow,
    // which another grad need not meet: only NaNs (from the chain's
    // constant) are kept.
    return Scaled(base.models[m].data(), grad / base.grad, n, /*specials=*/false, out);
  }

  // The digest of a tile's outputs (SweepMeasure's).
  static uint64_t Digest(const float* y, uint64_t at, size_t n) {
    return SweepDigest(y, SweepDigestKey(at & ~uint64_t{0xfff}), DigestLowKeys().data() + (at & 0xfff), n);
  }

  // This tile, measured whole, as the base of the next ones at its place.
  void KeepBase(Worker& w, uint64_t at, size_t n) const {
    const size_t slot = static_cast<size_t>((at & 0xffff) / kSweepTile);
    if (w.bases.size() <= slot) w.bases.resize(0x10000 / kSweepTile);
    Worker::ScaledBase& base = w.bases[slot];
    base.valid = Inside(w.grad[0]);
    if (!base.valid) return;
    base.grad = w.grad[0];
    base.at = at;
    base.n = n;
    base.outputs.resize(plan_.cases.size());
    // Whole tiles: the vector helpers read whole vectors past n.
    for (size_t c = 0; c < plan_.cases.size(); ++c) {
      base.outputs[c].assign(w.outputs[c].v, w.outputs[c].v + kSweepTile);
    }
    base.models.resize(plan_.model_names.size());
    for (size_t m = 0; m < plan_.model_names.size(); ++m) {
      if (w.wanted[m] && m < builtin_models_) {
        base.models[m].assign(w.models[m].v, w.models[m].v + kSweepTile);
      } else {
        base.models[m].clear();
      }
    }
    base.tiles.assign(w.tiles.begin(), w.tiles.begin() + static_cast<std::ptrdiff_t>(w.distinct));
    base.distinct_of.assign(plan_.cases.size(), 0);
    for (size_t d = 0; d < w.distinct; ++d) {
      for (size_t c : w.members[d]) base.distinct_of[c] = d;
    }
  }

  // The fine bin of an error e whose histogram bin is `bin`, recording in
  // `adjust` where that bin is not the one of the fine bin's errors (an
  // error a hair above a bound, or FineBinOf's rounding next to a power of
  // two).
  size_t ExactFine(double e, int bin, CaseTotals& t) const {
    const auto f = static_cast<size_t>(ErrorStatistics::FineBinOf(e));
    const int derived = SweepBinOfFine(f, bound_count_);
    if (bin != derived) {
      ++t.adjust[bin];
      --t.adjust[derived];
    }
    return f;
  }

  void Measure(Worker& w, const float* y, uint64_t at, size_t n, TileTotals* result) const {
    TileTotals& tile = *result;
    tile.Clear();
    CaseTotals& t = tile.totals;
    SweepErrorSums sums;
    // SweepDigestKey(at + i) = SweepDigestKey(run) ^ low[(at + i) mod 4096]
    // (sweep.cc's tabulation form; a tile lies within one aligned run of 4096
    // indices, as kSweepTile divides 4096).
    static_assert(4096 % kSweepTile == 0, "a tile within one run of digest keys");
    SweepMeasure(format_, w.exact, y, SweepDigestKey(at & ~uint64_t{0xfff}),
                 DigestLowKeys().data() + (at & 0xfff), n, &w.errors, &sums, &w.fine_counts);
    t.n = n;
    t.correct = sums.correctly_rounded;
    t.signed_zero = sums.signed_zero_mismatch;
    if (t.signed_zero > 0) {
      const int64_t i = FirstSignedZero(w.exact, y, n);
      if (i >= 0) t.first_signed_zero = static_cast<int64_t>(at) + i;
    }
    // Errors that underflowed a double: e = 0, fine bin 0, histogram bin 1
    // (MeasureUlpError's: not an exact zero).
    t.adjust[1] += static_cast<int64_t>(sums.underflowed_errors);
    t.adjust[0] -= static_cast<int64_t>(sums.underflowed_errors);
    t.sum.AddUnits(static_cast<uint64_t>(sums.high), 1);
    t.sum.AddUnits(static_cast<uint64_t>(sums.high >> 64), 3);
    t.sum.AddUnits(sums.low, 0);
    t.digest = sums.digest;
    if (sums.max_at >= 0) t.Max(sums.max_ulp, static_cast<int64_t>(at) + sums.max_at);
    // The fine bins the tier counted, from its four copies, cleared for the
    // next tile.
    uint16_t* counts = w.fine_counts.counts;
    constexpr size_t kStride = SweepFineCounts::kStride;
    for (size_t f = sums.fine_low; f <= sums.fine_high && f < kSweepFineBins; ++f) {
      const uint32_t total = uint32_t{counts[f]} + counts[kStride + f] + counts[2 * kStride + f] +
                             counts[3 * kStride + f];
      if (total == 0) continue;
      tile.fine.emplace_back(static_cast<uint32_t>(f), total);
      counts[f] = counts[kStride + f] = counts[2 * kStride + f] = counts[3 * kStride + f] = 0;
    }
    for (size_t k = 0; k < 4; ++k) counts[k * kStride + SweepFineCounts::kNowhere] = 0;
    const auto count = [&](size_t f) { tile.fine.emplace_back(static_cast<uint32_t>(f), 1); };
    for (size_t j = 0; j < sums.slow_count; ++j) {
      const size_t i = w.errors.slow[j];
      const uint64_t flags = w.errors.flags[i];
      const double e = w.errors.ulp[i];
      const int64_t index = static_cast<int64_t>(at + i);
      if (flags & kSweepSpecialMismatch) {
        ++t.special;
        t.first_special = CaseTotals::First(t.first_special, index);
        CountCause(SpecialCauseOf(overflow_threshold_, w.exact, i, y[i]), index, t);
        continue;
      }
      if (flags & kSweepUndecidedError) {
        // MPFR: every field of this output's error, none of it in the sums.
        UlpError u;
        ++w.mpfr_errors;
        if (per_input_ != nullptr) {
          const float operands[2] = {w.grad[i], w.t[i]};
          u = MeasureUlpError(per_input_->Exact(operands).get(), y[i], format_);
        } else if (staged_ != nullptr) {
          const size_t entry_of_i = domain_.kind == SweepDomain::Kind::kPairs ? (at + i) & 0xffff
                                                                       : static_cast<size_t>(at >> 32);
          u = MeasureUlpError(
              OracleOf(*options_.op).ExactFromFactors(w.grad[i], staged_->factors[entry_of_i]).get(), y[i],
              format_);
        } else {
          w.mpfr.Set(w.grad[i], w.t[i]);
          u = w.mpfr.Measure(y[i], format_);
        }
        if (u.special_mismatch) {
          ++t.special;
          t.first_special = CaseTotals::First(t.first_special, index);
          CountCause(u.special_cause, index, t);
          continue;
        }
        t.correct += u.correctly_rounded;
        t.signed_zero += u.signed_zero_mismatch;
        if (u.signed_zero_mismatch) t.first_signed_zero = CaseTotals::First(t.first_signed_zero, index);
        t.sum.AddUlp(u.ulp);
        t.Max(u.ulp, index);
        if (u.ulp == 0 && u.bin != 0) {  // an error that underflowed a double
          ++t.adjust[u.bin];
          --t.adjust[0];
        }
        count(u.ulp == 0 ? 0 : ExactFine(u.ulp, u.bin, t));
        continue;
      }
      // Counted by the tier but for its exact bin (kSweepAboveBound), its fine
      // bin (kSweepFineBinExact) or its sum (kSweepLargeError).
      if (flags & kSweepLargeError) t.sum.AddUlp(e);
      const int bin = SweepBinOfUlp(e, bound_count_) + ((flags & kSweepAboveBound) ? 1 : 0);
      count(e == 0 ? 0 : ExactFine(e, bin, t));
    }
  }


  const StagedTables* staged_;  // a staged op's tables; nullptr for the op's own vector tier
  const ElementwiseOracle* per_input_;  // a staged op whose second operand is swept
  const SweepOptions& options_;
  const SweepDomain& domain_;
  const FloatFormat& format_;
  const ElementwiseCasePlan& plan_;
  int bound_count_;
  double overflow_threshold_;  // OverflowThreshold(format_)
  double inside_low_, inside_high_;  // Inside's range
  size_t builtin_models_;
  std::vector<std::unique_ptr<Worker>> workers_;
  uint64_t mpfr_factors_ = 0, mpfr_errors_ = 0, derived_tiles_ = 0;
  mutable std::mutex fault_mutex_;
  mutable std::vector<std::optional<KernelFault>> faults_;
  std::unique_ptr<std::atomic<int64_t>[]> fault_at_;
};

// A case of the plan with nothing measured yet.
SweepCase EmptyCase(const ElementwiseCasePlan& plan, size_t c, const FloatFormat& format) {
  const ElementwiseCasePlan::Case& p = plan.cases[c];
  SweepCase sc;
  sc.variant = p.variant;
  sc.target = p.target->name;
  sc.kind = CaseKindName(p.kind);
  sc.stats = ErrorStatistics(format);
  if (p.expected >= 0) sc.conformance.expected_model = plan.model_names[p.expected];  // else none claimed
  sc.conformance.matching = plan.model_names;
  return sc;
}

SweepCase FromTotals(const ElementwiseCasePlan& plan, size_t c, const FloatFormat& format,
                     const CaseTotals& totals) {
  SweepCase sc = EmptyCase(plan, c, format);
  const int bound_count = HistogramBoundCount(format);
  ErrorStatistics::State s = sc.stats.state();
  for (size_t f = 0; f < totals.fine.size(); ++f) {
    s.counts[SweepBinOfFine(f, bound_count)] += totals.fine[f];
  }
  for (size_t b = 0; b < s.counts.size(); ++b) {
    s.counts[b] = static_cast<uint64_t>(static_cast<int64_t>(s.counts[b]) + totals.adjust[b]);
  }
  s.fine = totals.fine;
  s.n = totals.n;
  s.special_mismatch = totals.special;
  s.signed_zero_mismatch = totals.signed_zero;
  s.correctly_rounded = totals.correct;
  s.max_ulp = totals.max_index >= 0 ? totals.max_ulp : 0;
  s.max_index = totals.max_index;
  s.first_special_index = totals.first_special;
  s.special_causes = totals.causes;
  s.first_signed_zero_index = totals.first_signed_zero;
  sc.stats = ErrorStatistics(format, s);
  sc.sum_ulp = totals.sum;
  sc.digest = totals.digest;
  Conformance& k = sc.conformance;
  if (plan.cases[c].expected >= 0) {
    const size_t expected = static_cast<size_t>(plan.cases[c].expected);
    k.mismatches = totals.mismatches[expected];
    k.first_mismatch_index = totals.first_mismatch[expected];
  }
  k.matching.clear();
  for (size_t m = 0; m < plan.model_names.size(); ++m) {
    if (totals.mismatches[m] == 0) k.matching.push_back(plan.model_names[m]);
  }
  return sc;
}

// The reference: each block through the engine (MPFR truth and emulated
// models for every element), its statistics moved to domain indices.
void ReferenceSweep(const SweepOptions& options, const ElementwiseCasePlan& plan, SweepResult* result) {
  const SweepDomain& domain = options.domain;
  const FloatFormat& format = *domain.format;
  InputSet inputs;
  inputs.operand_names = options.op->operand_names();
  inputs.source = "sweep";
  inputs.columns.resize(2);
  RunOptions run;
  run.format = domain.format;
  run.variants = options.variants;
  run.targets = options.targets;
  run.threads = options.threads;
  run.keep_outputs = true;
  run.faults_are_results = true;
  std::vector<ElementDetail> details;
  run.details = &details;
  for (uint64_t begin = options.begin; begin < options.end;) {
    const uint64_t end = std::min(options.end, (begin / kSweepBlock + 1) * kSweepBlock);
    for (auto& column : inputs.columns) column.resize(end - begin);
    domain.Inputs(begin, end - begin, inputs.columns[0].data(), inputs.columns[1].data());
    const std::vector<CaseResult> block = RunElementwise(*options.op, inputs, run);
    const auto shift = [&](int64_t index) {
      return index < 0 ? index : index + static_cast<int64_t>(begin);
    };
    for (size_t c = 0; c < block.size(); ++c) {
      const CaseResult& r = block[c];
      if (result->cases[c].fault) continue;  // blocks in order: its first fault is its report
      if (r.fault) {
        KernelFault f = *r.fault;
        f.index = shift(f.index);
        f.first += static_cast<int64_t>(begin);
        result->cases[c].fault = f;
        continue;
      }
      SweepCase part = EmptyCase(plan, c, format);
      ErrorStatistics::State s = r.stats.state();
      s.max_index = shift(s.max_index);
      s.first_special_index = shift(s.first_special_index);
      for (SpecialCauseCount& cause : s.special_causes) cause.first_index = shift(cause.first_index);
      s.first_signed_zero_index = shift(s.first_signed_zero_index);
      s.sum_ulp = 0;
      part.stats = ErrorStatistics(format, s);
      for (size_t i = 0; i < details.size(); ++i) {
        const UlpError& e = details[i].cases[c].ulp;
        if (!e.special_mismatch) part.sum_ulp.AddUlp(e.ulp);
        part.digest += SweepDigestTerm(SweepDigestKey(begin + i), FloatBits(r.outputs[i]));
      }
      part.conformance = r.conformance;
      part.conformance.first_mismatch_index = shift(r.conformance.first_mismatch_index);
      MergeSweepCase(format, result->cases[c], part);
    }
    begin = end;
    if (options.progress) options.progress(begin - options.begin, options.end - options.begin);
  }
}

}  // namespace

SweepResult RunSweep(const SweepOptions& options) {
  const SweepDomain& domain = options.domain;
  if (options.begin > options.end || options.end > domain.size()) {
    throw InputError(fmt::format("range {}:{} outside the domain of {} inputs", options.begin,
                                 options.end, domain.size()));
  }
  const FloatFormat& format = *domain.format;
  if (options.op == nullptr || options.op->arity() != 2) {
    throw InputError("a sweep takes an elementwise op of two operands");
  }
  const ElementwiseCasePlan plan =
      PlanElementwiseCases(*options.op, format, options.variants, options.targets, false);
  SweepResult result;
  result.op = options.op->name;
  result.domain = domain;
  result.begin = options.begin;
  result.end = options.end;
  // An op with the vector tier of its own (OwnTiers::vector_sweep): that
  // tier; another op: staged tables over the second operand's values where
  // its definition and models stage; else the engine.
  // A domain that sweeps the second operand over binary32: per input, from
  // the op's fast factor where it has one.
  const bool own_tier = options.op->own_tiers.vector_sweep;
  std::optional<StagedTables> staged;
  const ElementwiseOracle* per_input = nullptr;
  if (!options.reference && !own_tier) {
    const std::vector<float> values = StagedValues(domain);
    if (!values.empty()) {
      staged = BuildStagedTables(*options.op, format, values, options.threads);
    } else if (domain.kind == SweepDomain::Kind::kOverT && OracleOf(*options.op).HasFastFactor()) {
      per_input = &OracleOf(*options.op);
    }
  }
  const uint64_t inputs = options.end - options.begin;
  if (options.reference || (!own_tier && !staged && per_input == nullptr)) {
    for (size_t c = 0; c < plan.cases.size(); ++c) result.cases.push_back(EmptyCase(plan, c, format));
    ReferenceSweep(options, plan, &result);
    result.mpfr_exact_values = inputs;
    result.mpfr_errors = inputs * plan.cases.size();
    return result;
  }
  FastSweep sweep(options, plan, staged ? &*staged : nullptr, per_input);
  const std::vector<CaseTotals> totals = sweep.Run();
  result.mpfr_exact_values = sweep.mpfr_factors();
  result.mpfr_tables = staged ? staged->factors.size() : 0;
  result.mpfr_errors = sweep.mpfr_errors();
  result.scaled_tiles = sweep.derived_tiles();
  for (size_t c = 0; c < plan.cases.size(); ++c) {
    result.cases.push_back(FromTotals(plan, c, format, totals[c]));
    result.cases.back().fault = sweep.faults()[c];
  }
  return result;
}

namespace {

void CheckDigestOptions(const SweepDigestOptions& o) {
  if (o.op == nullptr || o.op->arity() != 2) {
    throw InputError("a sweep takes an elementwise op of two operands");
  }
  if (o.begin > o.end || o.end > o.domain.size()) {
    throw InputError(fmt::format("range {}:{} outside the domain of {} inputs", o.begin, o.end,
                                 o.domain.size()));
  }
}

// One tile's inputs and outputs.
struct DigestTile {
  alignas(64) float grad[kSweepTile] = {};
  alignas(64) float t[kSweepTile] = {};
  alignas(64) uint16_t grad_bits[kSweepTile] = {};
  alignas(64) uint16_t t_bits[kSweepTile] = {};
  alignas(64) uint16_t out16[kSweepTile] = {};
  alignas(64) float out[kSweepTile] = {};
  alignas(64) float spare[kSweepTile] = {};
};

// The kernel's outputs of tile [at, at + n), as RunSweep measures them.
void KernelTile(const SweepDomain& domain, ElementwiseKernel kernel, DigestTile& w, size_t n) {
  if (IsBinary32(*domain.format)) {
    const void* in[2] = {w.grad, w.t};
    kernel(in, w.out, n);
    SweepCanonicalNans(w.out, n);
  } else {
    const void* in[2] = {w.grad_bits, w.t_bits};
    kernel(in, w.out16, n);
    SweepDecodeNarrow(*domain.format, w.out16, n, w.out);
  }
}

float ModelAt(const SweepDigestOptions& o, size_t model, const DigestTile& w, size_t i) {
  const FloatFormat& format = *o.domain.format;
  // A 16-bit NaN as the pattern the kernel receives (its sign's quiet NaN):
  // Highway's software conversions turn it into a number, sign included.
  const float operands[2] = {
      IsBinary32(format) ? w.grad[i] : static_cast<float>(DecodeBits(format, w.grad_bits[i])),
      IsBinary32(format) ? w.t[i] : static_cast<float>(DecodeBits(format, w.t_bits[i]))};
  return CanonicalNan(ModelOutput(*o.op, *o.domain.format, model, operands, /*native=*/true));
}

// Calls visit(tile, at, n) for every tile of the range, blocks spread over
// threads (one DigestTile per worker); returns the sum of what visit returns.
uint64_t ForEachTile(const SweepDigestOptions& o,
                     const std::function<uint64_t(DigestTile&, uint64_t, size_t)>& visit) {
  std::vector<std::pair<uint64_t, uint64_t>> blocks;
  for (uint64_t at = o.begin; at < o.end;) {
    const uint64_t stop = std::min(o.end, (at / kSweepBlock + 1) * kSweepBlock);
    blocks.emplace_back(at, stop);
    at = stop;
  }
  std::vector<std::unique_ptr<DigestTile>> tiles(WorkerCount(o.threads, blocks.size()));
  std::vector<uint64_t> sums(blocks.size(), 0);
  RunUnitsByWorker(blocks.size(), o.threads, [&](size_t u, unsigned worker) {
    if (!tiles[worker]) tiles[worker] = std::make_unique<DigestTile>();
    DigestTile& w = *tiles[worker];
    for (uint64_t at = blocks[u].first; at < blocks[u].second;) {
      const uint64_t stop = std::min(blocks[u].second, (at / kSweepTile + 1) * kSweepTile);
      const auto n = static_cast<size_t>(stop - at);
      FillSweepTile(o.domain, at, n, w.grad, w.t, w.grad_bits, w.t_bits);
      sums[u] += visit(w, at, n);
      at = stop;
    }
  });
  uint64_t sum = 0;
  for (uint64_t s : sums) sum += s;  // mod 2^64, in any order
  return sum;
}

}  // namespace

uint64_t SweepKernelDigest(const SweepDigestOptions& options, ElementwiseKernel kernel) {
  CheckDigestOptions(options);
  return ForEachTile(options, [&](DigestTile& w, uint64_t at, size_t n) {
    KernelTile(options.domain, kernel, w, n);
    uint64_t digest = 0;
    for (size_t i = 0; i < n; ++i) digest += SweepDigestTerm(SweepDigestKey(at + i), FloatBits(w.out[i]));
    return digest;
  });
}

uint64_t SweepModelDigest(const SweepDigestOptions& options, size_t model) {
  CheckDigestOptions(options);
  if (options.op->own_tiers.vector_sweep) {
    // The vectorized tier's models: the same outputs, about 30 times faster.
    const size_t count = ModelNames(*options.op, *options.domain.format).size();
    return ForEachTile(options, [&](DigestTile& w, uint64_t at, size_t n) {
      std::vector<float*> models(count, w.spare);
      std::vector<uint8_t> wanted(count, 0);
      models.at(model) = w.out;
      wanted[model] = 1;
      SweepModelOutputs(*options.domain.format, w.grad, w.t, w.grad_bits, w.t_bits, n,
                        models.data(), wanted.data());
      uint64_t digest = 0;
      for (size_t i = 0; i < n; ++i) digest += SweepDigestTerm(SweepDigestKey(at + i), FloatBits(w.out[i]));
      return digest;
    });
  }
  return ForEachTile(options, [&](DigestTile& w, uint64_t at, size_t n) {
    uint64_t digest = 0;
    for (size_t i = 0; i < n; ++i) {
      digest += SweepDigestTerm(SweepDigestKey(at + i), FloatBits(ModelAt(options, model, w, i)));
    }
    return digest;
  });
}

std::optional<SweepDifference> FirstSweepDifference(const SweepDigestOptions& options,
                                                    ElementwiseKernel kernel, size_t model) {
  CheckDigestOptions(options);
  std::mutex mutex;
  std::optional<SweepDifference> first;
  ForEachTile(options, [&](DigestTile& w, uint64_t at, size_t n) -> uint64_t {
    {
      const std::lock_guard<std::mutex> lock(mutex);
      if (first && first->index < at) return 0;  // an earlier one is known
    }
    KernelTile(options.domain, kernel, w, n);
    for (size_t i = 0; i < n; ++i) {
      const float m = ModelAt(options, model, w, i);
      if (FloatBits(m) == FloatBits(w.out[i])) continue;
      const std::lock_guard<std::mutex> lock(mutex);
      if (!first || at + i < first->index) first = SweepDifference{at + i, w.out[i], m};
      break;
    }
    return 0;
  });
  return first;
}

}  // namespace ulpgate
