#include "suites/investigate/diverge.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <stdexcept>

#include "oracles/float_text.h"
#include "oracles/ieee_emulation.h"
#include "oracles/mpfr_number.h"
#include "oracles/ulp_metric.h"
#include "suites/inputs/counter_rng.h"
#include "suites/engine/plugins.h"
#include "suites/engine/elementwise_oracle.h"
#include "kernels/plugins/ulpgate/plugin.h"

namespace ulpgate {

int64_t FloatKey(float x) {
  const uint32_t bits = FloatBits(x);
  const int64_t magnitude = bits & 0x7fffffff;
  return (bits >> 31) ? -magnitude : magnitude;
}

float KeyFloat(int64_t key) {
  return key >= 0 ? FloatFromBits(static_cast<uint32_t>(key))
                  : FloatFromBits(0x80000000u | static_cast<uint32_t>(-key));
}

uint64_t DivergeResult::FirstReaching(double threshold) const {
  for (const auto& [evaluation, best] : improvements) {
    if (best >= threshold) return evaluation;
  }
  return 0;
}

namespace {

// SplitMix64 (counter_rng.h's mixer) as a plain sequential stream: the search
// is sequential, so nothing needs random access to draws.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(Mix64(seed ^ 0x5851f42d4c957f2dULL)) {}
  uint64_t Next() { return Mix64(state_ += 0x9e3779b97f4a7c15ULL); }
  uint64_t Below(uint64_t bound) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * bound) >> 64);
  }
  int64_t Between(int64_t lo, int64_t hi) {  // inclusive
    return lo + static_cast<int64_t>(Below(static_cast<uint64_t>(hi - lo) + 1));
  }

 private:
  uint64_t state_;
};

using Keys = std::vector<int64_t>;

// An interval of keys per operand, with the largest disagreement seen inside.
struct Box {
  Keys lo, hi;
  double best = -1;
  Keys best_keys;
};

// Budget split. Exploration: uniform samples over the whole space, a tenth of
// the budget, so the climbs start from the best of thousands of points rather
// than from wherever one random draw lands (for tanh's backward op, |t| in
// [1/2, 2] is 1/128 of the key space, and outside it every form is within a
// few ULP).
constexpr uint64_t kExplorationDivisor = 10;
constexpr size_t kBatch = 16;            // neighbours per climbing step
constexpr int kClimbPatience = 8;        // steps without improvement before a climb stops
constexpr size_t kRefineSamples = 16;    // new samples per half of a refined box
constexpr size_t kMaxBoxes = 1024;
constexpr int kRandomRestartEvery = 4;   // every 4th climb starts from fresh random points

class Search {
 public:
  Search(size_t operand_count, const DivergeScorer& scorer, const DivergeOptions& options)
      : n_(operand_count), scorer_(scorer), options_(options), random_(options.seed) {}

  DivergeResult Run() {
    Box root{Keys(n_, -kMaxDivergeKey), Keys(n_, kMaxDivergeKey), -1, {}};
    const uint64_t exploration =
        std::max<uint64_t>(options_.evaluations / kExplorationDivisor, 64);
    std::vector<Keys> points;
    for (uint64_t i = 0; i < exploration; ++i) points.push_back(RandomIn(root));
    EvaluateInto(points, &root);
    boxes_.push_back(root);

    int climbs = 0;
    while (Remaining() > 0) {
      Refine();
      if (Remaining() == 0) break;
      Keys start;
      double score = -1;
      if (++climbs % kRandomRestartEvery == 0) {
        // Random restart: the best of a few fresh points anywhere.
        Box fresh{root.lo, root.hi, -1, {}};
        std::vector<Keys> draws;
        for (size_t i = 0; i < kBatch; ++i) draws.push_back(RandomIn(root));
        EvaluateInto(draws, &fresh);
        start = fresh.best_keys;
        score = fresh.best;
      } else if (!NextClimbStart(&start, &score)) {
        continue;
      }
      if (!start.empty()) Climb(start, score);
    }
    result_.evaluations = evaluations_;
    return result_;
  }

 private:
  uint64_t Remaining() const {
    return evaluations_ >= options_.evaluations ? 0 : options_.evaluations - evaluations_;
  }

  Keys RandomIn(const Box& box) {
    Keys k(n_);
    for (size_t d = 0; d < n_; ++d) k[d] = random_.Between(box.lo[d], box.hi[d]);
    return k;
  }

  // Evaluates as many of the points as the budget allows; results in order.
  std::vector<DivergeEvaluation> Evaluate(const std::vector<Keys>& points) {
    const size_t count = static_cast<size_t>(std::min<uint64_t>(points.size(), Remaining()));
    std::vector<std::vector<float>> columns(n_, std::vector<float>(count));
    for (size_t i = 0; i < count; ++i) {
      for (size_t d = 0; d < n_; ++d) columns[d][i] = KeyFloat(points[i][d]);
    }
    std::vector<DivergeEvaluation> results(count);
    if (count > 0) scorer_(columns, &results);
    for (size_t i = 0; i < count; ++i) Offer(points[i], results[i], ++evaluations_);
    return results;
  }

  // Evaluates and keeps the best of the points in `box`.
  void EvaluateInto(const std::vector<Keys>& points, Box* box) {
    const std::vector<DivergeEvaluation> results = Evaluate(points);
    for (size_t i = 0; i < results.size(); ++i) {
      const double s = Score(results[i]);
      if (s > box->best) {
        box->best = s;
        box->best_keys = points[i];
      }
    }
  }

  static double Score(const DivergeEvaluation& e) { return e.special ? -1 : e.ulp; }

  void Offer(const Keys& keys, const DivergeEvaluation& e, uint64_t index) {
    if (e.special) {
      if (result_.special_mismatches++ == 0) result_.first_special = Point(keys, e, index);
      return;
    }
    if (result_.improvements.empty() || e.ulp > result_.improvements.back().second) {
      result_.improvements.emplace_back(index, e.ulp);
    }
    auto& worst = result_.worst;
    if (worst.size() == options_.keep && e.ulp <= worst.back().evaluation.ulp) return;
    for (const DivergePoint& p : worst) {
      bool same = true;
      for (size_t d = 0; d < n_; ++d) same &= FloatKey(p.operands[d]) == keys[d];
      if (same) return;
    }
    const DivergePoint point = Point(keys, e, index);
    // Ties keep the earlier find first.
    auto at = std::upper_bound(worst.begin(), worst.end(), point,
                               [](const DivergePoint& x, const DivergePoint& y) {
                                 return x.evaluation.ulp > y.evaluation.ulp;
                               });
    worst.insert(at, point);
    if (worst.size() > options_.keep) worst.pop_back();
  }

  DivergePoint Point(const Keys& keys, const DivergeEvaluation& e, uint64_t index) const {
    DivergePoint p;
    for (int64_t k : keys) p.operands.push_back(KeyFloat(k));
    p.evaluation = e;
    p.found_at = index;
    return p;
  }

  // Interval refinement: split the box with the largest disagreement in two
  // along its widest operand and sample both halves, so sampling concentrates,
  // binade by binade, where the disagreement grows.
  void Refine() {
    size_t chosen = boxes_.size();
    for (size_t i = 0; i < boxes_.size(); ++i) {
      const Box& b = boxes_[i];
      bool splittable = false;
      for (size_t d = 0; d < n_; ++d) splittable |= b.hi[d] > b.lo[d];
      if (splittable && (chosen == boxes_.size() || b.best > boxes_[chosen].best)) chosen = i;
    }
    if (chosen == boxes_.size()) return;
    const Box parent = boxes_[chosen];
    boxes_.erase(boxes_.begin() + static_cast<std::ptrdiff_t>(chosen));
    size_t axis = 0;
    for (size_t d = 1; d < n_; ++d) {
      if (parent.hi[d] - parent.lo[d] > parent.hi[axis] - parent.lo[axis]) axis = d;
    }
    const int64_t mid = parent.lo[axis] + (parent.hi[axis] - parent.lo[axis]) / 2;
    for (int half = 0; half < 2; ++half) {
      Box child{parent.lo, parent.hi, -1, {}};
      (half == 0 ? child.hi : child.lo)[axis] = half == 0 ? mid : mid + 1;
      if (!parent.best_keys.empty() && parent.best_keys[axis] >= child.lo[axis] &&
          parent.best_keys[axis] <= child.hi[axis]) {
        child.best = parent.best;
        child.best_keys = parent.best_keys;
      }
      std::vector<Keys> points;
      for (size_t i = 0; i < kRefineSamples; ++i) points.push_back(RandomIn(child));
      EvaluateInto(points, &child);
      boxes_.push_back(child);
    }
    if (boxes_.size() > kMaxBoxes) {
      std::sort(boxes_.begin(), boxes_.end(),
                [](const Box& x, const Box& y) { return x.best > y.best; });
      boxes_.resize(kMaxBoxes);
    }
  }

  // The best point not climbed from yet: the current worst-case list first,
  // then the boxes' best points.
  bool NextClimbStart(Keys* start, double* score) {
    auto try_point = [&](const Keys& keys, double s) {
      if (keys.empty() || s <= 0) return false;
      if (climbed_.count(keys) != 0) return false;
      *start = keys;
      *score = s;
      return true;
    };
    for (const DivergePoint& p : result_.worst) {
      Keys keys;
      for (float x : p.operands) keys.push_back(FloatKey(x));
      if (try_point(keys, p.evaluation.ulp)) return true;
    }
    const Box* best = nullptr;
    for (const Box& b : boxes_) {
      if (climbed_.count(b.best_keys) == 0 &&
          b.best > 0 && (best == nullptr || b.best > best->best)) {
        best = &b;
      }
    }
    return best != nullptr && try_point(best->best_keys, best->best);
  }

  // A neighbour of `keys`: one operand moved by a random offset whose size is
  // log-uniform over 1 .. 2^31 keys (every scale of "nearby", from the next
  // float to another binade), or one bit of its pattern flipped.
  Keys Neighbour(const Keys& keys) {
    Keys k = keys;
    const size_t d = static_cast<size_t>(random_.Below(n_));
    if (random_.Below(4) == 0) {
      const uint32_t bit = static_cast<uint32_t>(random_.Below(31));  // sign bit excluded
      const float flipped = FloatFromBits(FloatBits(KeyFloat(k[d])) ^ (1u << bit));
      if (std::isfinite(flipped)) {
        k[d] = FloatKey(flipped);
        return k;
      }
    }
    const int scale = static_cast<int>(random_.Below(32));
    const int64_t offset = 1 + static_cast<int64_t>(random_.Below(uint64_t{1} << scale));
    k[d] += (random_.Next() & 1) ? offset : -offset;
    k[d] = std::clamp<int64_t>(k[d], -kMaxDivergeKey, kMaxDivergeKey);
    return k;
  }

  // Hill climbing: move to the best of a batch of neighbours while it improves;
  // stop after kClimbPatience batches without improvement (a local maximum).
  void Climb(Keys current, double score) {
    climbed_.insert(current);
    int patience = kClimbPatience;
    while (patience > 0 && Remaining() > 0) {
      std::vector<Keys> batch;
      for (size_t i = 0; i < kBatch; ++i) batch.push_back(Neighbour(current));
      const std::vector<DivergeEvaluation> results = Evaluate(batch);
      size_t best = results.size();
      for (size_t i = 0; i < results.size(); ++i) {
        if (Score(results[i]) > score && (best == results.size() || Score(results[i]) > Score(results[best]))) {
          best = i;
        }
      }
      if (best < results.size()) {
        current = batch[best];
        score = Score(results[best]);
        patience = kClimbPatience;
      } else {
        --patience;
      }
    }
    climbed_.insert(current);
  }

  size_t n_;
  const DivergeScorer& scorer_;
  DivergeOptions options_;
  Random random_;
  uint64_t evaluations_ = 0;
  std::vector<Box> boxes_;
  std::set<Keys> climbed_;  // climbs' start and end points, not to climb again
  DivergeResult result_;
};

}  // namespace

DivergeResult SearchDivergence(size_t operand_count, const DivergeScorer& scorer,
                               const DivergeOptions& options) {
  if (operand_count == 0) throw std::invalid_argument("diverge: an op needs operands");
  if (options.keep == 0) throw std::invalid_argument("diverge: keep at least one input");
  return Search(operand_count, scorer, options).Run();
}

std::string DivergeSide::Label() const {
  if (exact()) return "exact";
  return variant + "@" + (target ? target->name : std::string("?"));
}

DivergeScorer ElementwiseDivergeScorer(const ElementwiseOpInfo& op, const DivergeSide& a,
                                       const DivergeSide& b) {
  using ColumnsKernel = std::function<void(const std::vector<std::vector<float>>&, float*)>;
  const std::string op_name(op.name);
  auto kernel_of = [&](const DivergeSide& side) -> ColumnsKernel {
    if (side.target == nullptr) throw std::invalid_argument(side.variant + ": no target");
    if (const LoadedPlugin* plugin = PluginOf(*side.target)) {
      const PluginKernel* k = plugin->Find(side.variant, "f32", op_name);
      if (!plugin->GivesOp(op_name)) {
        throw std::invalid_argument("plugin " + plugin->target.name + " (" + plugin->path +
                                    ") gives " + plugin->OpsText() + " kernels, not " + op_name);
      }
      if (k == nullptr) {
        throw std::invalid_argument("plugin " + plugin->target.name + " has no " + op_name +
                                    " kernel '" + side.variant + "'");
      }
      return [call = k->call](const std::vector<std::vector<float>>& c, float* out) {
        std::vector<const void*> in;
        for (const auto& column : c) in.push_back(column.data());
        call(in.data(), out, c[0].size());
      };
    }
    const ElementwiseKernel k = FindElementwiseKernel(op.name, "f32", side.variant, side.target->bits);
    if (k == nullptr) {
      throw std::invalid_argument("no " + op_name + " kernel '" + side.variant + "' for " +
                                  side.target->name);
    }
    return [k](const std::vector<std::vector<float>>& c, float* out) {
      std::vector<const void*> in;
      for (const auto& column : c) in.push_back(column.data());
      k(in.data(), out, c[0].size());
    };
  };
  if (a.exact()) throw std::invalid_argument("diverge: the a side must be a kernel, not exact");
  const ColumnsKernel kernel_a = kernel_of(a);
  const ColumnsKernel kernel_b = b.exact() ? nullptr : kernel_of(b);
  const ElementwiseOracle& oracle = OracleOf(op);
  return [kernel_a, kernel_b, &oracle](const std::vector<std::vector<float>>& columns,
                                       std::vector<DivergeEvaluation>* results) {
    const size_t n = columns[0].size();
    std::vector<float> ya(n), yb(n);
    kernel_a(columns, ya.data());
    if (kernel_b) kernel_b(columns, yb.data());
    MpfrNumber reference(24);
    std::vector<float> x(columns.size());
    for (size_t i = 0; i < n; ++i) {
      UlpError e;
      if (kernel_b) {
        mpfr_set_flt(reference.get(), yb[i], MPFR_RNDN);  // exact: 24 bits
        e = MeasureUlpError(reference.get(), ya[i]);
      } else {
        for (size_t k = 0; k < columns.size(); ++k) x[k] = columns[k][i];
        const MpfrNumber exact = oracle.Exact(x.data());
        e = MeasureUlpError(exact.get(), ya[i]);
        yb[i] = RoundToBinary32(exact.get());
      }
      (*results)[i] = {e.special_mismatch ? 0 : e.ulp, ya[i], yb[i], e.special_mismatch};
    }
  };
}

DivergeResult DivergeElementwise(const ElementwiseOpInfo& op, const DivergeSide& a,
                                 const DivergeSide& b, const DivergeOptions& options) {
  return SearchDivergence(op.arity(), ElementwiseDivergeScorer(op, a, b), options);
}

std::string DivergeInputFileText(const DivergeResult& result,
                                 const std::vector<std::string>& operand_names,
                                 const std::vector<std::string>& header_lines) {
  std::string text;
  for (const std::string& line : header_lines) text += "# " + line + "\n";
  std::string columns;
  for (const std::string& name : operand_names) columns += (columns.empty() ? "" : " ") + name;
  text += "# columns: " + columns + "   (after '#': disagreement in ULPs of b, a, b)\n";
  for (const DivergePoint& p : result.worst) {
    std::string line;
    for (float x : p.operands) line += (line.empty() ? "" : " ") + HexFloat(x);
    char note[160];
    std::snprintf(note, sizeof note, "  # %.17g ULP, a = %s, b = %s\n", p.evaluation.ulp,
                  HexFloat(p.evaluation.a).c_str(), HexFloat(p.evaluation.b).c_str());
    text += line + note;
  }
  return text;
}

}  // namespace ulpgate
