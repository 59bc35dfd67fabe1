#include "suites/engine/engine.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>

#include "oracles/float_text.h"
#include "suites/engine/chunk_driver.h"
#include "suites/engine/digest.h"

namespace ulpgate {

const char* CaseKindName(CaseKind kind) {
  switch (kind) {
    case CaseKind::kKernel:
      return "kernel";
    case CaseKind::kModel:
      return "model";
    case CaseKind::kPeer:
      return "peer";
    case CaseKind::kOutputs:
      return "outputs";
  }
  return "?";
}

std::string Conformance::model() const {
  for (const auto& m : matching) {
    if (m == expected_model) return m;
  }
  return matching.empty() ? std::string() : matching.front();
}

std::string ElementTruth::Text() const {
  std::string text = numerator.ToHexExact();
  if (denominator != 1) text += "/" + std::to_string(denominator);
  return text;
}

namespace {

// What one unit contributes, per case.
struct UnitResult {
  std::vector<ErrorStatistics> stats;
  std::vector<BoundFractionStatistics> bound;
  std::vector<std::vector<uint64_t>> mismatches;  // [case][compared model]
  std::vector<std::vector<int64_t>> first_mismatch;
  std::vector<ErrorMap> maps;
  // The unit's output bits per case: its group's digest when the unit is the
  // whole group, else the outputs themselves, chained in unit order later.
  std::vector<uint64_t> digests;
  std::vector<std::vector<float>> group_part;
  // Per case: its kernel's fault in this unit, and whether the case was left
  // unmeasured here (faulted, or past a fault found in an earlier unit).
  std::vector<std::optional<KernelFault>> faults;
  std::vector<char> dropped;
  uint64_t mpfr_elements = 0;
};

// Per worker thread: the vectorized tier's tile and the measure's scratch.
struct VectorScratch {
  EngineVectorTile tile;
  SweepErrorTile errors;
  alignas(64) double fraction[kSweepTile];  // an estimate or the exact value (state)
  alignas(64) uint8_t state[kSweepTile];
};
enum FractionState : uint8_t { kNoFraction = 0, kEstimated = 1, kExactFraction = 2 };

VectorScratch& ThreadVectorScratch() {
  thread_local std::unique_ptr<VectorScratch> scratch;
  if (!scratch) scratch = std::make_unique<VectorScratch>();
  return *scratch;
}

// How far, relatively, an estimate of a bound fraction is taken to be from
// it: the tile's estimates are within 2^-40, with room for a wider one (an
// approximate exact value's own error).
constexpr double kEstimateMargin = 0x1p-32;

// The bin of a bound fraction from an estimate f > 0, or -1 where the
// estimate cannot settle it: f within kEstimateMargin of a power of two
// (every bound is one; below 2^20 or above 2^52 - 2^21 in the mantissa), a
// subnormal f or one above 2^kHigh.
// Strictly between 2^k and 2^(k+1), the fraction is at most a bound exactly
// when 2^(k+1) is.
int EstimatedFractionBin(double f) {
  constexpr int kLow = -64, kHigh = 64;  // 2^(k+1) for k + 1 in [kLow, kHigh]
  static const std::vector<int> bin_of_top = [] {
    std::vector<int> bins;
    const int above = BoundFractionBoundCount();
    for (int top = kLow; top <= kHigh; ++top) {
      int bin = above;
      for (int i = 1; i < above; ++i) {
        if (std::ldexp(1.0, top) <= BoundFractionBound(i)) {
          bin = i;
          break;
        }
      }
      bins.push_back(bin);
    }
    return bins;
  }();
  uint64_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  constexpr uint64_t kMantissa = (uint64_t{1} << 52) - 1;
  const uint64_t mantissa = bits & kMantissa;
  static_assert(kEstimateMargin == 0x1p-32, "the mantissa bounds below are 2^52 times it");
  const int biased = static_cast<int>(bits >> 52);  // f > 0: no sign bit
  const int top = biased - 1023 + 1;
  // Below 2^(kLow - 1), a normal f is far under every bound but 0 (the
  // margin cannot lift it to 2^kLow): the bin of the least.
  if (top < kLow) return biased > 0 ? bin_of_top[0] : -1;
  if (mantissa < (uint64_t{1} << 20) || mantissa > kMantissa - (uint64_t{1} << 21)) return -1;
  if (top > kHigh) return -1;
  return bin_of_top[top - kLow];
}

// One case's outputs over a unit through the vectorized tier: errors from
// SweepMeasure (the scalar tier and MPFR for the outputs it leaves), bound
// fractions from the tile's scale where the estimate settles the bin (the
// largest of them measured exactly), mismatches with the models compared.
// `known_max` holds the bits of an exact bound fraction some unit of the case
// has measured (0 at first; nonnegative doubles order as their bits): an
// estimate surely below it cannot be the run's largest, nor tie with it, so
// it is not measured exactly (MPFR, for most ops) only to be outranked.
// `digest`, where not null, gets the outputs' FNV-1a digest, computed in the
// loop over the elements: its chain of dependent multiplies (4 cycles a
// byte) then runs beside the loop's own work instead of after it.
template <class MeasureExact>
void MeasureVectorCase(const EngineProblem& problem, const EngineCase& cs, const float* y,
                       uint64_t begin, size_t count, int bound_count,
                       const MeasureExact& measure_exact, VectorScratch& v, ErrorStatistics& stats,
                       BoundFractionStatistics& bound, std::vector<uint64_t>& mismatches,
                       std::vector<int64_t>& first_mismatch, std::atomic<uint8_t>* differed,
                       std::atomic<uint64_t>& known_max, uint64_t* digest) {
  // Each output's error and bins; the statistics are kept here, in element
  // order (the tier's own totals are not asked for).
  SweepErrorSums sums;
  SweepMeasure(problem.format(), v.tile.exact, y, 0, /*key_low=*/nullptr, count, &v.errors, &sums,
               /*fine=*/nullptr, /*every_ulp=*/true, /*totals=*/false);
  stats.AddCounts(sums.correctly_rounded, sums.signed_zero_mismatch);
  if (sums.signed_zero_mismatch > 0 && stats.first_signed_zero_index() < 0) {
    // The first of them: a zero whose sign differs from x's (x0 holds it, or
    // for an undecided x MPFR's measure says), confirmed by the exact measure.
    for (size_t i = 0; i < count; ++i) {
      const uint64_t kind = v.tile.exact.kind[i];
      if (y[i] != 0 || kind == kSweepExactNaN || kind == kSweepExactInfinite ||
          (kind != kSweepExactUndecided &&
           std::signbit(y[i]) == std::signbit(v.tile.exact.x0[i]))) {
        continue;
      }
      if (measure_exact(i, y[i]).ulp.signed_zero_mismatch) {
        stats.OfferSignedZero(begin + i);
        break;
      }
    }
  }
  const bool bounded = problem.bounded();
  double floor_of_max = -1;  // no fraction in the unit is larger and below it
  auto take_exact = [&](size_t i, const BoundFraction& b) {
    if (b.overflow_exempt) {
      bound.AddOverflowExempt();
      v.state[i] = kNoFraction;
      return;
    }
    bound.AddBin(b.bin, begin + i);
    v.fraction[i] = b.fraction;
    v.state[i] = kExactFraction;
    floor_of_max = std::max(floor_of_max, b.fraction);
  };
  uint64_t h = kFnv1aOffset;
  for (size_t i = 0; i < count; ++i) {
    h = Fnv1a(y + i, sizeof(float), h);
    const uint64_t index = begin + i;
    uint64_t fine = v.errors.fine[i];
    const double e = v.errors.ulp[i];
    const uint64_t kind = v.tile.exact.kind[i];
    v.state[i] = kNoFraction;
    // A large error's fine bin rides in its flags (kSweepFineInFlags, a
    // quarter of the outputs of some ops, as random as the inputs): taken
    // with the plain outputs' without a branch; any other flag below.
    const bool see = fine == kSweepSeeFlags;
    const uint64_t raw_flags = v.errors.flags[i];  // read whether or not it is set
    const uint64_t flags = see ? raw_flags : 0;
    constexpr uint64_t kLargeWithFine = kSweepLargeError | kSweepFineInFlags;
    int bin;
    if (see && (flags & 0xffffffffu) != kLargeWithFine) {
      if (flags & (kSweepSpecialMismatch | kSweepUndecidedError)) {
        const auto m = measure_exact(i, y[i]);
        stats.Add(m.ulp, index);
        if (m.has_bound) take_exact(i, m.bound);
        continue;
      }
      // Counted by the tier but for its exact bin (kSweepAboveBound) or its
      // fine bin (kSweepFineBinExact).
      bin = SweepBinOfUlp(e, bound_count) + ((flags & kSweepAboveBound) ? 1 : 0);
      fine = e == 0 ? 0 : static_cast<uint64_t>(ErrorStatistics::FineBinOf(e));
    } else {
      fine = see ? flags >> 32 : fine;
      bin = SweepBinOfFine(fine, bound_count);
      // An error below every double against a tiny x: MeasureUlpError's bin 1.
      if (fine == 0 && kind == kSweepExactTiny && y[i] == 0) bin = 1;
    }
    stats.AddSorted(e, bin, static_cast<int>(fine), index);
    if (!bounded) continue;
    // Finite x and y only (a special's bound, if any, is MPFR's to say).
    const double per_ulp = v.tile.fraction_per_ulp[i];
    const bool estimable = per_ulp > 0 && std::isfinite(y[i]) &&
                           (kind == kSweepExactPair || kind == kSweepExactTriple ||
                            kind == kSweepExactApprox);
    if (estimable && bin == 0) {  // y == x: no error, fraction 0
      take_exact(i, BoundFraction{});
      continue;
    }
    const double f = e * per_ulp;
    const int fbin = estimable ? EstimatedFractionBin(f) : -1;
    if (fbin < 0) {
      const auto m = measure_exact(i, y[i]);
      if (m.has_bound) take_exact(i, m.bound);
      continue;
    }
    bound.AddBin(fbin, index);
    v.fraction[i] = f;
    v.state[i] = kEstimated;
    floor_of_max = std::max(floor_of_max, f * (1 - kEstimateMargin));
  }
  if (digest != nullptr) *digest = h;
  if (bounded) {
    // The largest fraction and the first element holding it, as Add in
    // element order keeps it: estimates that could reach the floor measured
    // exactly.
    double best = -1;
    int64_t best_at = -1;
    const uint64_t known_bits = known_max.load(std::memory_order_relaxed);
    double known;
    std::memcpy(&known, &known_bits, sizeof known);
    const double floor = std::max(floor_of_max, known);
    for (size_t i = 0; i < count; ++i) {
      double f;
      if (v.state[i] == kExactFraction) {
        f = v.fraction[i];
      } else if (v.state[i] == kEstimated && v.fraction[i] * (1 + kEstimateMargin) >= floor) {
        f = measure_exact(i, y[i]).bound.fraction;
      } else {
        continue;
      }
      if (best_at < 0 || f > best) {
        best = f;
        best_at = static_cast<int64_t>(i);
      }
    }
    if (best_at >= 0) {
      bound.OfferMax(best, begin + static_cast<uint64_t>(best_at));
      if (best > 0 && best <= std::numeric_limits<double>::max()) {
        uint64_t bits;
        std::memcpy(&bits, &best, sizeof bits);
        for (uint64_t seen = known_max.load(std::memory_order_relaxed);
             bits > seen && !known_max.compare_exchange_weak(seen, bits, std::memory_order_relaxed);) {
        }
      }
    }
  }
  for (size_t k = 0; k < cs.compared.size(); ++k) {
    // A model left out of the tile has differed already: its count stays
    // above 0, which is all a model other than the expected one reports.
    if (!v.tile.wanted[static_cast<size_t>(cs.compared[k])]) continue;
    int64_t first = -1;
    const uint64_t differ = SweepMismatches(y, v.tile.models[cs.compared[k]].data(), count, &first);
    if (differ == 0) continue;
    if (mismatches[k] == 0) first_mismatch[k] = static_cast<int64_t>(begin) + first;
    mismatches[k] += differ;
    differed[k].store(1, std::memory_order_relaxed);
  }
}

}  // namespace

EngineRun RunEngine(const EngineProblem& problem, const std::vector<EngineCase>& cases,
                    const EngineOptions& options) {
  const FloatFormat& format = problem.format();
  const size_t model_count = problem.model_names().size();
  const std::vector<EngineUnit> units = problem.Units();
  const uint64_t n = problem.size();
  const bool mpfr_only = options.mpfr_only || options.keep_details;
  auto whole_group = [&](size_t u) {
    const uint64_t g = units[u].group;
    return (u == 0 || units[u - 1].group != g) && (u + 1 == units.size() || units[u + 1].group != g);
  };

  EngineRun run;
  run.cases.resize(cases.size());
  if (options.keep_outputs) {
    for (auto& r : run.cases) r.outputs.resize(n);
  }
  if (options.keep_details) run.details.resize(n);
  std::vector<UnitResult> partial(units.size());
  // Per case, the lowest input at which its kernel faulted so far: units past
  // it are not run for the case (their outputs could not change the report).
  std::vector<std::atomic<int64_t>> fault_at(cases.size());
  for (auto& a : fault_at) a.store(std::numeric_limits<int64_t>::max());
  // Per case, an exact bound fraction found so far (MeasureVectorCase).
  std::vector<std::atomic<uint64_t>> known_max(cases.size());
  for (auto& a : known_max) a.store(0);

  const bool vector_tier = !mpfr_only && !options.map && problem.HasVectorTier();
  // Per case and model compared: whether an output has differed from the
  // model in any unit so far (the vectorized tier then stops computing a
  // model no case needs; the expected ones, and every model of a case
  // without one, always stay).
  std::vector<std::unique_ptr<std::atomic<uint8_t>[]>> differed(cases.size());
  for (size_t c = 0; c < cases.size(); ++c) {
    differed[c] = std::make_unique<std::atomic<uint8_t>[]>(cases[c].compared.size());
    for (size_t k = 0; k < cases[c].compared.size(); ++k) differed[c][k].store(0);
  }
  auto wanted_models = [&](std::vector<uint8_t>* wanted) {
    wanted->assign(model_count, 0);
    for (size_t c = 0; c < cases.size(); ++c) {
      const EngineCase& cs = cases[c];
      if (cs.expected >= 0) (*wanted)[static_cast<size_t>(cs.expected)] = 1;
      for (size_t k = 0; k < cs.compared.size(); ++k) {
        if (cs.expected < 0 || differed[c][k].load(std::memory_order_relaxed) == 0) {
          (*wanted)[static_cast<size_t>(cs.compared[k])] = 1;
        }
      }
    }
  };
  const int bound_count = HistogramBoundCount(format);

  auto run_unit = [&](size_t u) {
    const EngineUnit& unit = units[u];
    const size_t count = unit.count;
    const bool vector = vector_tier && count <= kSweepTile;
    UnitResult& out = partial[u];
    out.stats.assign(cases.size(), ErrorStatistics(format));
    out.bound.assign(cases.size(), BoundFractionStatistics());
    out.mismatches.resize(cases.size());
    out.first_mismatch.resize(cases.size());
    for (size_t c = 0; c < cases.size(); ++c) {
      out.mismatches[c].assign(cases[c].compared.size(), 0);
      out.first_mismatch[c].assign(cases[c].compared.size(), -1);
    }
    if (options.map) out.maps.assign(cases.size(), ErrorMap());
    out.faults.assign(cases.size(), std::nullopt);
    out.dropped.assign(cases.size(), 0);

    // Every element's models once, and its exact value unless a fast tier
    // stands in for it (then Truth runs only where that tier cannot decide);
    // then every case's outputs.
    // (unique_ptr: most elements never hold one.)
    std::vector<std::unique_ptr<ElementTruth>> truth(count);
    std::vector<float> models(vector ? 0 : count * model_count);
    VectorScratch* v = nullptr;
    if (vector) {
      v = &ThreadVectorScratch();
      wanted_models(&v->tile.wanted);
      problem.VectorTile(unit.begin, count, &v->tile);
    } else {
      for (size_t i = 0; i < count; ++i) {
        float* element_models = models.data() + i * model_count;
        if (mpfr_only || !problem.FastModels(unit.begin + i, element_models)) {
          truth[i] = std::make_unique<ElementTruth>(problem.Truth(unit.begin + i, element_models));
        }
      }
    }
    auto model_at = [&](size_t i, int m) {
      return vector ? v->tile.models[m][i] : models[i * model_count + m];
    };
    // The vectorized measure reads whole vectors: room past the last output.
    std::vector<std::vector<float>> outputs(cases.size(),
                                            std::vector<float>(count + kSweepVectorSlack));
    for (size_t c = 0; c < cases.size(); ++c) {
      if (cases[c].kind == CaseKind::kModel) {
        for (size_t i = 0; i < count; ++i) outputs[c][i] = model_at(i, cases[c].expected);
      } else if (static_cast<int64_t>(unit.begin) > fault_at[c].load()) {
        out.dropped[c] = 1;  // past a fault already found: not needed
        continue;
      } else {
        try {
          problem.Outputs(c, unit, outputs[c].data());
        } catch (const KernelFaultError& e) {
          KernelFault f = e.fault();
          const auto shift = static_cast<int64_t>(unit.begin);
          if (f.index >= 0) f.index += shift;
          f.first += shift;
          out.faults[c] = f;
          out.dropped[c] = 1;
          const int64_t at = f.index >= 0 ? f.index : f.first;
          for (int64_t seen = fault_at[c].load(); at < seen && !fault_at[c].compare_exchange_weak(seen, at);) {
          }
          continue;
        }
      }
      // A NaN's payload is part of no model and differs between targets.
      for (size_t i = 0; i < count; ++i) outputs[c][i] = CanonicalNan(outputs[c][i]);
      if (options.keep_outputs) {
        std::copy(outputs[c].begin(), outputs[c].begin() + count,
                  run.cases[c].outputs.begin() + unit.begin);
      }
    }
    // A case the vectorized measure takes gets its digest there.
    const auto measured_in_vectors = [&](size_t c) { return vector && !out.dropped[c]; };
    if (whole_group(u)) {
      out.digests.resize(cases.size());
      for (size_t c = 0; c < cases.size(); ++c) {
        if (!measured_in_vectors(c)) out.digests[c] = Fnv1a(outputs[c].data(), count * sizeof(float));
      }
    } else {
      out.group_part.resize(cases.size());
      for (size_t c = 0; c < cases.size(); ++c) {
        out.group_part[c].assign(outputs[c].begin(), outputs[c].begin() + count);
      }
    }

    // One output's error and bound fraction from the exact value: the scalar
    // fast tier where it decides, else MPFR's (once per element).
    struct Measured {
      UlpError ulp;
      BoundFraction bound;
      bool has_bound = false;
    };
    auto measure_exact = [&](size_t i, float y) {
      const uint64_t index = unit.begin + i;
      std::unique_ptr<ElementTruth>& exact = truth[i];
      Measured s{{}, {}, problem.bounded()};
      if (exact || !problem.FastMeasure(index, y, &s.ulp, &s.bound)) {
        if (!exact) exact = std::make_unique<ElementTruth>(problem.Truth(index, nullptr));
        s.ulp = MeasureUlpErrorOfQuotient(exact->numerator.get(), exact->denominator, y, format);
        s.has_bound = exact->bound.has_value();
        if (exact->bound) {
          s.bound = MeasureBoundFraction(exact->numerator.get(), exact->denominator, y,
                                         *exact->bound, format);
        }
      }
      return s;
    };

    if (vector) {
      for (size_t c = 0; c < cases.size(); ++c) {
        if (!out.dropped[c]) {
          MeasureVectorCase(problem, cases[c], outputs[c].data(), unit.begin, count, bound_count,
                            measure_exact, *v, out.stats[c], out.bound[c], out.mismatches[c],
                            out.first_mismatch[c], differed[c].get(), known_max[c],
                            out.digests.empty() ? nullptr : &out.digests[c]);
        }
      }
      for (size_t i = 0; i < count; ++i) {
        out.mpfr_elements += (truth[i] || v->tile.exact_from_mpfr[i] != 0) ? 1 : 0;
      }
      return;
    }

    // Each distinct output's error once per element: most cases agree bit for bit.
    struct Seen {
      uint32_t bits;
      Measured m;
    };
    std::vector<Seen> seen;
    for (size_t i = 0; i < count; ++i) {
      const uint64_t index = unit.begin + i;
      const float* element_models = models.data() + i * model_count;
      if (options.keep_details) {
        run.details[index].exact = truth[i]->Text();
        run.details[index].cases.resize(cases.size());
      }
      seen.clear();
      for (size_t c = 0; c < cases.size(); ++c) {
        if (out.dropped[c]) continue;
        const EngineCase& cs = cases[c];
        const float y = outputs[c][i];
        const uint32_t bits = FloatBits(y);
        auto it = std::find_if(seen.begin(), seen.end(), [&](const Seen& s) { return s.bits == bits; });
        if (it == seen.end()) {
          seen.push_back({bits, measure_exact(i, y)});
          it = seen.end() - 1;
        }
        const Measured& m = it->m;
        out.stats[c].Add(m.ulp, index);
        if (m.has_bound) out.bound[c].Add(m.bound, index);
        if (options.map) out.maps[c][BinadeBucket(problem.MapValue(index))].Add(m.ulp, index);
        bool conforms = true;
        for (size_t k = 0; k < cs.compared.size(); ++k) {
          if (!SameFloat(y, element_models[cs.compared[k]])) {
            if (out.mismatches[c][k]++ == 0) out.first_mismatch[c][k] = static_cast<int64_t>(index);
            if (cs.compared[k] == cs.expected) conforms = false;
          }
        }
        if (options.keep_details) run.details[index].cases[c] = {y, m.ulp, m.bound, conforms};
      }
      if (truth[i]) ++out.mpfr_elements;
    }
  };

  // Merged in unit order as units finish (a unit's result freed once
  // merged), so nothing depends on the thread count and memory stays that of
  // the units in flight.
  struct CaseMerge {
    std::vector<uint64_t> mismatches;
    std::vector<int64_t> first;
    uint64_t digest = kFnv1aOffset;
    uint64_t group_digest = kFnv1aOffset;
  };
  std::vector<CaseMerge> merged(cases.size());
  for (size_t c = 0; c < cases.size(); ++c) {
    merged[c].mismatches.assign(cases[c].compared.size(), 0);
    merged[c].first.assign(cases[c].compared.size(), -1);
    run.cases[c].stats = ErrorStatistics(format);
  }
  auto merge_unit = [&](size_t u) {
    UnitResult& p = partial[u];
    run.mpfr_elements += p.mpfr_elements;
    for (size_t c = 0; c < cases.size(); ++c) {
      CaseResult& r = run.cases[c];
      CaseMerge& m = merged[c];
      if (p.faults[c] && !r.fault) r.fault = p.faults[c];  // units in input order
      r.stats.Merge(p.stats[c]);
      r.bound.Merge(p.bound[c]);
      if (options.map) MergeErrorMap(r.error_map, p.maps[c]);
      for (size_t k = 0; k < cases[c].compared.size(); ++k) {
        m.mismatches[k] += p.mismatches[c][k];
        if (m.first[k] < 0) m.first[k] = p.first_mismatch[c][k];
      }
      if (!p.digests.empty()) {
        m.group_digest = p.digests[c];
      } else {
        m.group_digest = Fnv1a(p.group_part[c].data(), p.group_part[c].size() * sizeof(float),
                               m.group_digest);
      }
      if (u + 1 == units.size() || units[u + 1].group != units[u].group) {
        m.digest = Fnv1a(&m.group_digest, sizeof m.group_digest, m.digest);
        m.group_digest = kFnv1aOffset;
      }
    }
    p = UnitResult();
  };
  std::mutex merge_mutex;
  std::vector<char> finished(units.size(), 0);
  size_t next_merge = 0;
  auto run_and_merge = [&](size_t u) {
    run_unit(u);
    const std::lock_guard<std::mutex> lock(merge_mutex);
    finished[u] = 1;
    for (; next_merge < units.size() && finished[next_merge]; ++next_merge) merge_unit(next_merge);
  };
  const auto in_order = [&](size_t k) {
    run_and_merge(options.units_last_first ? units.size() - 1 - k : k);
  };
  RunUnits(
      units.size(), options.threads, in_order, [&](size_t u) { return units[u].count; },
      options.progress ? std::function<void(uint64_t, uint64_t)>(options.progress) : nullptr);

  for (size_t c = 0; c < cases.size(); ++c) {
    const EngineCase& cs = cases[c];
    CaseResult& r = run.cases[c];
    r.kind = cs.kind;
    r.n = n;
    const std::vector<uint64_t>& mismatches = merged[c].mismatches;
    const std::vector<int64_t>& first = merged[c].first;
    const uint64_t digest = merged[c].digest;
    r.bounded = problem.bounded();
    r.output_digest = digest;
    if (cs.expected >= 0) r.conformance.expected_model = problem.model_names()[cs.expected];
    for (size_t m = 0; m < cs.compared.size(); ++m) {
      if (cs.compared[m] == cs.expected) {
        r.conformance.mismatches = mismatches[m];
        r.conformance.first_mismatch_index = first[m];
      }
      if (mismatches[m] == 0) r.conformance.matching.push_back(problem.model_names()[cs.compared[m]]);
    }
  }
  return run;
}

}  // namespace ulpgate
