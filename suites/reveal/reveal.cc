#include "suites/reveal/reveal.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

#include "oracles/format.h"
#include "suites/inputs/counter_rng.h"

namespace ulpgate {
namespace {

using Clock = std::chrono::steady_clock;

// The accumulation the cancellation probes are sized for: binary32, so M must
// swallow a count c of tinies t with c t below half an ulp of M, 2^-24 M.
constexpr int kAccumulatorBits = 24;

int SmallestExponent(const FloatFormat& f) {
  return f.has_subnormals ? f.emin - (f.precision - 1) : f.emin;
}

bool Holds(const FloatFormat& f, double x) { return RoundDouble(f, x) == x; }

// Operands a, b of the format with a * b = value, as balanced as the format
// allows; value = +-odd * 2^e with a small odd part.
std::optional<std::pair<double, double>> Factor(const FloatFormat& f, double value) {
  if (value == 0) return std::make_pair(0.0, 0.0);
  int e = 0;
  double odd = std::frexp(std::fabs(value), &e);
  while (odd != std::floor(odd)) {
    odd *= 2;
    --e;
  }
  const double sign = value < 0 ? -1 : 1;
  std::optional<std::pair<double, double>> best;
  int best_gap = INT32_MAX;
  for (int ea = -200; ea <= 200; ++ea) {
    const double a = sign * std::ldexp(odd, ea);
    const double b = std::ldexp(1.0, e - ea);
    if (!std::isfinite(a) || !std::isfinite(b) || !Holds(f, a) || !Holds(f, b)) continue;
    const int gap = std::abs(ea - (e - ea));
    if (gap < best_gap) {
      best_gap = gap;
      best = std::make_pair(a, b);
    }
  }
  return best;
}

std::pair<double, double> MustFactor(const FloatFormat& f, double value) {
  const auto factors = Factor(f, value);
  if (!factors) {
    throw std::runtime_error(fmt::format("reveal: {} is no product of two {} values", value, f.name));
  }
  return *factors;
}

// Terms `terms` as given, the terms (*background)[bg_begin .. bg_end) as
// bg_a * bg_b (unless `terms` names them), every other term zero.
struct Probe {
  std::vector<ProbeTerm> terms;
  double bg_a = 0, bg_b = 0;
  std::shared_ptr<const std::vector<uint32_t>> background;
  size_t bg_begin = 0, bg_end = 0;
};

std::shared_ptr<const std::vector<uint32_t>> TermRange(size_t begin, size_t end) {
  auto terms = std::make_shared<std::vector<uint32_t>>();
  for (size_t t = begin; t < end; ++t) terms->push_back(static_cast<uint32_t>(t));
  return terms;
}

// Runs independent probes, each in an output of its own: the diagonal outputs
// (r, r) of a call, A's row r and B's row r holding the probe and the other
// rows others' probes (off-diagonal outputs are not read).
class ProbeRunner {
 public:
  ProbeRunner(DotDoor& door, const DotShape& shape, size_t row, size_t col, bool batch,
              RevealCost* cost)
      : door_(door), shape_(shape), row_(row), col_(col), batch_(batch), cost_(cost) {}

  std::vector<double> Run(const std::vector<Probe>& probes) {
    std::vector<double> out(probes.size());
    const size_t k = shape_.k;
    const size_t per_call = batch_ ? std::min(shape_.m, shape_.n) : 1;
    for (size_t first = 0; first < probes.size(); first += per_call) {
      std::vector<float> a(shape_.m * k, 0.0f), b(shape_.n * k, 0.0f);
      const size_t count = std::min(per_call, probes.size() - first);
      for (size_t s = 0; s < count; ++s) {
        const Probe& p = probes[first + s];
        float* ar = a.data() + (batch_ ? s : row_) * k;
        float* br = b.data() + (batch_ ? s : col_) * k;
        for (size_t x = p.bg_begin; x < p.bg_end; ++x) {
          ar[(*p.background)[x]] = static_cast<float>(p.bg_a);
          br[(*p.background)[x]] = static_cast<float>(p.bg_b);
        }
        for (const ProbeTerm& term : p.terms) {
          ar[term.term] = static_cast<float>(term.a);
          br[term.term] = static_cast<float>(term.b);
        }
      }
      std::vector<float> c(shape_.m * shape_.n);
      Call(a, b, &c);
      for (size_t s = 0; s < count; ++s) {
        out[first + s] = batch_ ? c[s * shape_.n + s] : c[row_ * shape_.n + col_];
      }
    }
    cost_->probes += probes.size();
    return out;
  }

  void Call(const std::vector<float>& a, const std::vector<float>& b, std::vector<float>* c) {
    door_.Multiply(shape_, a.data(), b.data(), c->data());
    ++cost_->calls;
  }

  const DotShape& shape() const { return shape_; }
  size_t row() const { return row_; }
  size_t col() const { return col_; }
  bool batch() const { return batch_; }
  RevealCost* cost() { return cost_; }

 private:
  DotDoor& door_;
  DotShape shape_;
  size_t row_, col_;
  bool batch_;
  RevealCost* cost_;
};

// How the cancellation probes are built for a door's formats.
struct LcaPlan {
  bool cartesian = false;
  double big = 0;        // cartesian: A's M (B holds 1), and B's -M (A holds 1)
  std::pair<double, double> big_factors, tiny_factors;  // diagonal
  double tiny = 1;       // the tiny product
  size_t group = 0;      // tinies per probe
  std::string text;
};

LcaPlan PlanLca(const DotDoor& door, size_t k) {
  const FloatFormat& in = door.OperandFormat();
  const FloatFormat& out = door.OutputFormat();
  const size_t exact_counts = size_t{1} << std::min(out.precision, 40);
  LcaPlan plan;
  // One factor alone makes M: A's row r holds M at the pivot and 1
  // elsewhere, B's row c -M at term j and 1 elsewhere, so output (r, c) is
  // the probe (pivot r, term c). M = 2^100 swallows k < 2^40 ones even in a
  // binary64 accumulator; -M meets M only where both are meant to.
  if (in.emax >= 100 && k - 2 < exact_counts) {
    plan.cartesian = true;
    plan.big = std::ldexp(1.0, 100);
    plan.tiny = 1;
    plan.group = k;
    plan.text = "rows x columns: M = 2^100 in A's row, -M in B's row, tinies 1";
    return plan;
  }
  const int e_big = std::min(in.emax, 20);
  const int e_tiny = std::max(SmallestExponent(in), -20);
  const int ratio_bits = 2 * (e_big - e_tiny);
  if (ratio_bits <= kAccumulatorBits + 1) {
    throw std::runtime_error(fmt::format(
        "reveal: {} operands span too few binades for cancellation probes", in.name));
  }
  const size_t absorbed = ratio_bits - kAccumulatorBits - 1 >= 40
                              ? size_t{1} << 40
                              : size_t{1} << (ratio_bits - kAccumulatorBits - 1);
  plan.group = std::max<size_t>(1, std::min({absorbed, exact_counts, k}));
  plan.big_factors = {std::ldexp(1.0, e_big), std::ldexp(1.0, e_big)};
  plan.tiny_factors = {std::ldexp(1.0, e_tiny), std::ldexp(1.0, e_tiny)};
  plan.tiny = std::ldexp(1.0, 2 * e_tiny);
  plan.text = fmt::format("one per diagonal output: M = 2^{}, tinies 2^{}, {} tinies a probe",
                          2 * e_big, 2 * e_tiny, plan.group);
  return plan;
}

// The pivot against each of `others`. Diagonal probes put their tinies on
// `scope` only (null: every term), which must hold the pivot and the others:
// the size they give is that of the common ancestor's subtree within the
// scope.
struct LcaRequest {
  int64_t pivot;
  std::vector<int64_t> others;
  std::shared_ptr<const std::vector<uint32_t>> scope;
};

size_t CountFromOutput(double output, double tiny, size_t most, int64_t i, int64_t j) {
  const double count = output / tiny;
  if (!(count >= 0) || count > static_cast<double>(most) || count != std::floor(count)) {
    throw std::runtime_error(fmt::format(
        "reveal: probe lca {} {} gave {} ({:a}), not a count of tinies from 0 to {}: the output "
        "is not a tree of roundings whose partial sums swallow what M does not cancel",
        i, j, output, output, most));
  }
  return static_cast<size_t>(count);
}

// L(pivot, j) for every request, in the requests' order.
std::vector<std::vector<size_t>> LcaSizes(ProbeRunner& runner, const LcaPlan& plan,
                                          const std::vector<LcaRequest>& requests) {
  const size_t k = runner.shape().k;
  std::vector<std::vector<size_t>> sizes(requests.size());
  for (size_t r = 0; r < requests.size(); ++r) sizes[r].resize(requests[r].others.size());
  if (!plan.cartesian) {
    std::vector<Probe> probes;
    struct Where {
      size_t request, index, group_size;
    };
    std::vector<Where> where;
    for (size_t r = 0; r < requests.size(); ++r) {
      for (size_t x = 0; x < requests[r].others.size(); ++x) {
        const int64_t i = requests[r].pivot, j = requests[r].others[x];
        const auto scope = requests[r].scope ? requests[r].scope : TermRange(0, k);
        for (size_t g = 0; g < scope->size(); g += plan.group) {
          Probe p;
          p.bg_a = plan.tiny_factors.first;
          p.bg_b = plan.tiny_factors.second;
          p.background = scope;
          p.bg_begin = g;
          p.bg_end = std::min(scope->size(), g + plan.group);
          p.terms.push_back({static_cast<uint32_t>(i), plan.big_factors.first, plan.big_factors.second});
          p.terms.push_back({static_cast<uint32_t>(j), -plan.big_factors.first, plan.big_factors.second});
          size_t in_group = p.bg_end - p.bg_begin;
          for (size_t x2 = p.bg_begin; x2 < p.bg_end; ++x2) {
            const int64_t t = (*scope)[x2];
            if (t == i || t == j) --in_group;
          }
          probes.push_back(std::move(p));
          where.push_back({r, x, in_group});
        }
      }
    }
    const std::vector<double> out = runner.Run(probes);
    std::vector<std::vector<size_t>> outside(requests.size());
    for (size_t r = 0; r < requests.size(); ++r) outside[r].assign(requests[r].others.size(), 0);
    for (size_t q = 0; q < probes.size(); ++q) {
      const Where& w = where[q];
      outside[w.request][w.index] += CountFromOutput(
          out[q], plan.tiny, w.group_size, requests[w.request].pivot,
          requests[w.request].others[w.index]);
    }
    for (size_t r = 0; r < requests.size(); ++r) {
      const size_t total = requests[r].scope ? requests[r].scope->size() : k;
      for (size_t x = 0; x < outside[r].size(); ++x) sizes[r][x] = total - outside[r][x];
    }
    return sizes;
  }
  // Rows x columns: pack (pivot, a run of its terms) rows into calls of
  // shape.m rows and shape.n columns.
  const DotShape& shape = runner.shape();
  const size_t rows = runner.batch() ? shape.m : 1;
  const size_t cols = runner.batch() ? shape.n : 1;
  struct Row {
    size_t request, first, count;
  };
  std::vector<Row> pending;
  for (size_t r = 0; r < requests.size(); ++r) {
    for (size_t first = 0; first < requests[r].others.size(); first += cols) {
      pending.push_back({r, first, std::min(cols, requests[r].others.size() - first)});
    }
  }
  size_t next = 0;
  while (next < pending.size()) {
    std::vector<Row> call_rows;
    size_t used_cols = 0;
    while (next < pending.size() && call_rows.size() < rows &&
           used_cols + pending[next].count <= cols) {
      call_rows.push_back(pending[next]);
      used_cols += pending[next].count;
      ++next;
    }
    std::vector<float> a(shape.m * k, 0.0f), b(shape.n * k, 0.0f);
    std::vector<std::pair<size_t, size_t>> placed;  // (a row, first b row) per call row
    size_t col = 0;
    for (size_t x = 0; x < call_rows.size(); ++x) {
      const Row& row = call_rows[x];
      const size_t ar = runner.batch() ? x : runner.row();
      std::fill(a.begin() + ar * k, a.begin() + (ar + 1) * k, 1.0f);
      a[ar * k + requests[row.request].pivot] = static_cast<float>(plan.big);
      for (size_t y = 0; y < row.count; ++y) {
        const size_t br = runner.batch() ? col + y : runner.col();
        std::fill(b.begin() + br * k, b.begin() + (br + 1) * k, 1.0f);
        b[br * k + requests[row.request].others[row.first + y]] = static_cast<float>(-plan.big);
      }
      placed.push_back({ar, runner.batch() ? col : runner.col()});
      col += row.count;
    }
    std::vector<float> c(shape.m * shape.n);
    runner.Call(a, b, &c);
    runner.cost()->probes += used_cols;
    for (size_t x = 0; x < call_rows.size(); ++x) {
      const Row& row = call_rows[x];
      for (size_t y = 0; y < row.count; ++y) {
        const int64_t i = requests[row.request].pivot;
        const int64_t j = requests[row.request].others[row.first + y];
        const double out = c[placed[x].first * shape.n + placed[x].second + y];
        sizes[row.request][row.first + y] = k - CountFromOutput(out, plan.tiny, k - 2, i, j);
      }
    }
  }
  return sizes;
}

// The tree under construction: node 0 is a placeholder whose one child
// becomes the root.
struct Building {
  struct Node {
    int64_t term = -1;
    std::vector<size_t> children;
  };
  std::vector<Node> nodes{Node{}};

  size_t Add(int64_t term) {
    nodes.push_back(Node{term, {}});
    return nodes.size() - 1;
  }
  SumNode Convert(size_t index) const {
    SumNode node;
    node.term = nodes[index].term;
    for (size_t c : nodes[index].children) node.children.push_back(Convert(c));
    return node;
  }
};

// A set of terms that is one or more complete subtrees of `child_size` terms
// each, all children of the node `owner`; `outside` is a term of the owner's
// subtree that is not in the set (-1 for the whole tree).
struct Task {
  std::vector<int64_t> terms;  // ascending
  size_t child_size;
  size_t owner;
  int64_t outside;
};

[[noreturn]] void NotATree(const std::string& what) {
  throw std::runtime_error("reveal: the probes' sizes do not nest as a tree's subtrees: " + what);
}

}  // namespace

TreeReveal RevealTree(DotDoor& door, const DotShape& call_shape, size_t row, size_t col,
                      const RevealOptions& options) {
  const Clock::time_point start = Clock::now();
  const size_t k = call_shape.k;
  if (k == 0 || row >= call_shape.m || col >= call_shape.n) {
    throw std::invalid_argument(fmt::format("reveal: output ({}, {}) of a {} x {} x {} call", row,
                                            col, call_shape.m, call_shape.n, k));
  }
  TreeReveal result;
  ProbeRunner runner(door, call_shape, row, col, options.batch, &result.cost);
  const LcaPlan plan = PlanLca(door, k);
  result.probes = options.batch ? plan.text : plan.text + " (one probe per call, batch off)";
  Building building;
  std::vector<Task> tasks;
  {
    Task all{{}, k, 0, -1};
    for (size_t t = 0; t < k; ++t) all.terms.push_back(static_cast<int64_t>(t));
    tasks.push_back(std::move(all));
  }
  while (!tasks.empty()) {
    std::vector<LcaRequest> requests;
    std::vector<size_t> asking;
    for (size_t x = 0; x < tasks.size(); ++x) {
      if (tasks[x].terms.size() == 1) {
        const size_t leaf = building.Add(tasks[x].terms[0]);
        building.nodes[tasks[x].owner].children.push_back(leaf);
        continue;
      }
      // The smallest term as pivot: a chain that starts at term 0 is revealed
      // by one pivot's sizes.
      // Tinies on the set and one term outside it: a term in another child
      // of the owner then gives a size above the set's, one in the pivot's
      // child its subtree's size.
      LcaRequest request{tasks[x].terms[0], {tasks[x].terms.begin() + 1, tasks[x].terms.end()}, nullptr};
      if (tasks[x].outside >= 0) {
        auto scope = std::make_shared<std::vector<uint32_t>>(tasks[x].terms.begin(), tasks[x].terms.end());
        scope->push_back(static_cast<uint32_t>(tasks[x].outside));
        request.scope = std::move(scope);
      }
      requests.push_back(std::move(request));
      asking.push_back(x);
    }
    const std::vector<std::vector<size_t>> sizes = LcaSizes(runner, plan, requests);
    std::vector<Task> next;
    for (size_t q = 0; q < requests.size(); ++q) {
      const Task& task = tasks[asking[q]];
      // Where i and j meet in a node that adds its inputs exactly (a
      // multiway node), the tinies of its other inputs survive with the
      // outside ones: the size is that of the two inputs holding i and j,
      // which is the meeting node's size where nodes are binary. A term in
      // another child of the owner gives twice the child size; one in the
      // pivot's child at most the child size.
      const size_t child = task.child_size;
      std::map<size_t, std::vector<int64_t>> below;  // size -> terms
      std::vector<int64_t> rest;
      for (size_t x = 0; x < requests[q].others.size(); ++x) {
        const size_t s = sizes[q][x];
        if (s < 2 || s > k) {
          NotATree(fmt::format("L({}, {}) = {} outside 2..{}", requests[q].pivot,
                               requests[q].others[x], s, k));
        }
        (s > child ? rest : below[s]).push_back(requests[q].others[x]);
      }
      // Up the pivot's path: a node N_t's inputs are N_(t-1) and subtrees B,
      // each of whose terms gives |N_(t-1)| + |B|; those values lie above
      // |N_(t-1)| and at most |N_t|, so the levels come in order. A value
      // above the current node's size starts a new level when its terms fill
      // whole inputs of the size it implies (a chain of fused nodes), else it
      // is a larger input of the current node.
      size_t current = building.Add(requests[q].pivot);
      size_t below_current = 0;  // |N_(t-1)|
      size_t top = 1;            // |N_t| so far
      bool started = false;
      for (auto& [s, group] : below) {
        const bool new_level = !started || (s > top && group.size() % (s - top) == 0);
        if (new_level) {
          const size_t node = building.Add(-1);
          building.nodes[node].children.push_back(current);
          current = node;
          below_current = top;
          started = true;
        }
        if (s <= below_current || group.size() % (s - below_current) != 0) {
          NotATree(fmt::format("{} terms give L({}, .) = {} over a node of {} terms",
                               group.size(), requests[q].pivot, s, below_current));
        }
        top += group.size();
        next.push_back({std::move(group), s - below_current, current, requests[q].pivot});
      }
      if (top != child) {
        NotATree(fmt::format("term {}'s subtree holds {} terms, not {}", requests[q].pivot, top,
                             child));
      }
      building.nodes[task.owner].children.push_back(current);
      if (!rest.empty()) next.push_back({std::move(rest), child, task.owner, requests[q].pivot});
    }
    tasks = std::move(next);
  }
  if (building.nodes[0].children.size() != 1) NotATree("more than one root");
  result.tree = SummationTree(k, building.Convert(building.nodes[0].children[0]));
  result.tree.Canonicalize();
  result.cost.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

namespace {

// Each internal node with its path from the root (indices into children).
void CollectInternal(SumNode* node, std::vector<SumNode*>* out) {
  if (node->IsLeaf()) return;
  out->push_back(node);
  for (SumNode& c : node->children) CollectInternal(&c, out);
}

void CollectLeafParents(SumNode* node, std::vector<std::pair<SumNode*, size_t>>* out) {
  if (node->IsLeaf()) return;
  for (size_t x = 0; x < node->children.size(); ++x) {
    if (node->children[x].IsLeaf()) out->push_back({node, x});
    CollectLeafParents(&node->children[x], out);
  }
}

// Low-precision blocks: maximal subtrees of nodes without binary32's
// arithmetic, in term order.
void CollectLowBlocks(const SumNode& node, std::vector<std::pair<int64_t, size_t>>* out) {
  if (node.IsLeaf()) return;
  if (!node.arith.IsBinary32()) {
    out->push_back({MinTerm(node), Terms(node).size()});
    return;
  }
  for (const SumNode& c : node.children) CollectLowBlocks(c, out);
}

// A chain: one child at most is internal and a chain itself, the others are
// leaves; its terms are consecutive.
bool IsChain(const SumNode& node) {
  if (node.IsLeaf()) return true;
  size_t internal = 0;
  for (const SumNode& c : node.children) {
    if (!c.IsLeaf()) {
      if (++internal > 1 || !IsChain(c)) return false;
    }
  }
  return true;
}

void CollectParts(const SumNode& node, std::vector<std::pair<int64_t, size_t>>* out) {
  if (node.IsLeaf()) {
    out->push_back({node.term, 1});
    return;
  }
  if (IsChain(node)) {
    const std::vector<int64_t> terms = Terms(node);
    if (terms.back() - terms.front() + 1 == static_cast<int64_t>(terms.size())) {
      out->push_back({terms.front(), terms.size()});
      return;
    }
  }
  for (const SumNode& c : node.children) CollectParts(c, out);
}

struct ArithProbes {
  int e_big = 0;
  int j_max = 24;
};

ArithProbes PlanArith(const DotDoor& door) {
  const FloatFormat& in = door.OperandFormat();
  ArithProbes plan;
  plan.j_max = std::min(door.OutputFormat().precision + 1, 30);
  // big and big * 2^-(j_max + 2) must both be products of two operands.
  plan.e_big = std::max(0, 2 * SmallestExponent(in) + plan.j_max + 2);
  if (plan.e_big > 2 * in.emax - 2) {
    plan.j_max -= plan.e_big - (2 * in.emax - 2);
    plan.e_big = 2 * in.emax - 2;
  }
  return plan;
}

Probe TwoTermProbe(const FloatFormat& f, int64_t u, double pu, int64_t v, double pv) {
  Probe p;
  const auto fu = MustFactor(f, pu), fv = MustFactor(f, pv);
  p.terms.push_back({static_cast<uint32_t>(u), fu.first, fu.second});
  p.terms.push_back({static_cast<uint32_t>(v), fv.first, fv.second});
  return p;
}

}  // namespace

AccumulatorFingerprint RevealFingerprint(DotDoor& door, const DotShape& call_shape, size_t row,
                                         size_t col, const SummationTree& tree,
                                         const RevealOptions& options) {
  const Clock::time_point start = Clock::now();
  AccumulatorFingerprint fp;
  fp.model = tree;
  const FloatFormat& in = door.OperandFormat();
  ProbeRunner runner(door, call_shape, row, col, options.batch, &fp.cost);
  std::vector<SumNode*> nodes;
  CollectInternal(&fp.model.mutable_root(), &nodes);
  const ArithProbes plan = PlanArith(door);
  const double big = std::ldexp(1.0, plan.e_big);
  auto pair_of = [](const SumNode* n) {
    return std::make_pair(MinTerm(n->children[0]), MinTerm(n->children[1]));
  };
  // Bits kept: the largest j with big + big 2^-j intact, by bisection, all
  // nodes at once; kept(j) holds for every j below the node's bits and for
  // none from there (nearest-even drops the tie 2^-bits).
  std::vector<int> lo(nodes.size(), 0), hi(nodes.size(), plan.j_max + 1);
  for (;;) {
    std::vector<Probe> probes;
    std::vector<size_t> which;
    std::vector<int> mids;
    for (size_t x = 0; x < nodes.size(); ++x) {
      if (hi[x] - lo[x] <= 1) continue;
      const int mid = (lo[x] + hi[x]) / 2;
      const auto [u, v] = pair_of(nodes[x]);
      probes.push_back(TwoTermProbe(in, u, big, v, std::ldexp(big, -mid)));
      which.push_back(x);
      mids.push_back(mid);
    }
    if (probes.empty()) break;
    const std::vector<double> out = runner.Run(probes);
    for (size_t q = 0; q < probes.size(); ++q) {
      const bool kept = out[q] == big + std::ldexp(big, -mids[q]);
      (kept ? lo : hi)[which[q]] = mids[q];
    }
  }
  // Rounding and alignment, two probes a node: big + 0.75 q (q the quantum at
  // big: nearest gives big + q, truncation big) and big - 0.75 q/2 (aligned
  // inputs lose it whichever the rounding; one rounding of the exact sum
  // lands on big - q/2, the binade below having quantum q/2).
  {
    std::vector<Probe> probes;
    for (size_t x = 0; x < nodes.size(); ++x) {
      const int bits = hi[x];
      const auto [u, v] = pair_of(nodes[x]);
      probes.push_back(TwoTermProbe(in, u, big, v, 3 * std::ldexp(big, -bits - 1)));
      probes.push_back(TwoTermProbe(in, u, big, v, -3 * std::ldexp(big, -bits - 2)));
    }
    const std::vector<double> out = runner.Run(probes);
    for (size_t x = 0; x < nodes.size(); ++x) {
      const int bits = hi[x];
      const double q = std::ldexp(big, -bits + 1);
      NodeArith arith;
      arith.bits = bits;
      const double up = out[2 * x], down = out[2 * x + 1];
      if (up == big + q) {
        arith.rounding = NodeRounding::kNearestEven;
      } else if (up == big) {
        arith.rounding = NodeRounding::kTowardZero;
      } else {
        throw std::runtime_error(fmt::format(
            "reveal: node over terms {} and {}: big + 0.75 ulp gave {:a}, neither rounded to "
            "nearest nor truncated at {} bits",
            pair_of(nodes[x]).first, pair_of(nodes[x]).second, up, bits));
      }
      if (down == big) {
        arith.aligned = true;
      } else if (down == big - q / 2) {
        arith.aligned = false;
      } else {
        throw std::runtime_error(fmt::format(
            "reveal: node over terms {} and {}: big - 0.375 ulp gave {:a}, neither aligned nor "
            "rounded once at {} bits",
            pair_of(nodes[x]).first, pair_of(nodes[x]).second, down, bits));
      }
      nodes[x]->arith = arith;
    }
  }
  // Normalization of aligned nodes whose first input is itself a sum: that
  // input made 2^-3 big by cancellation (big - 7/8 big), then a term one
  // quantum below its own window at 2^-3 big: kept where the cancelled sum
  // is realigned at its leading bit, lost where the adder keeps big's window.
  {
    std::vector<Probe> probes;
    std::vector<size_t> which;
    for (size_t x = 0; x < nodes.size(); ++x) {
      SumNode* n = nodes[x];
      if (!n->arith.aligned || n->children[0].IsLeaf() || n->arith.bits < 5) continue;
      const SumNode& first = n->children[0];
      const int64_t u1 = MinTerm(first.children[0]), u2 = MinTerm(first.children[1]);
      const int64_t v = MinTerm(n->children[1]);
      const double small = std::ldexp(big, -3 - n->arith.bits + 1);
      if (!Factor(in, small)) continue;
      Probe p = TwoTermProbe(in, u1, big, u2, -7 * std::ldexp(big, -3));
      const auto fv = MustFactor(in, small);
      p.terms.push_back({static_cast<uint32_t>(v), fv.first, fv.second});
      probes.push_back(std::move(p));
      which.push_back(x);
    }
    const std::vector<double> out = runner.Run(probes);
    fp.normalization_probed = probes.size();
    for (size_t q = 0; q < probes.size(); ++q) {
      const SumNode* n = nodes[which[q]];
      const double expected = std::ldexp(big, -3) + std::ldexp(big, -3 - n->arith.bits + 1);
      if (out[q] != expected) ++fp.not_normalized;
    }
  }
  // Products: where two operands' product can need more than 24 bits, each
  // leaf with (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 against -1 from a sibling:
  // the node leaves 2^-11 + 2^-24 if the product came in exact, 2^-11 if it
  // was rounded to binary32 first.
  fp.products_can_round = 2 * in.precision > 24 && in.precision >= 13;
  if (fp.products_can_round) {
    std::vector<std::pair<SumNode*, size_t>> leaves;
    CollectLeafParents(&fp.model.mutable_root(), &leaves);
    std::vector<Probe> probes;
    std::vector<size_t> which;
    const double a = 1 + std::ldexp(1.0, -12);
    for (size_t x = 0; x < leaves.size(); ++x) {
      SumNode* parent = leaves[x].first;
      const size_t slot = leaves[x].second;
      if (parent->arith.aligned) {
        ++fp.unobservable_products;
        continue;
      }
      const int64_t sibling = MinTerm(parent->children[slot == 0 ? 1 : 0]);
      Probe p;
      p.terms.push_back({static_cast<uint32_t>(parent->children[slot].term), a, a});
      p.terms.push_back({static_cast<uint32_t>(sibling), -1.0, 1.0});
      probes.push_back(std::move(p));
      which.push_back(x);
    }
    const std::vector<double> out = runner.Run(probes);
    for (size_t q = 0; q < probes.size(); ++q) {
      SumNode& leaf = leaves[which[q]].first->children[leaves[which[q]].second];
      if (out[q] == std::ldexp(1.0, -11)) {
        leaf.rounded = true;
      } else if (out[q] != std::ldexp(1.0, -11) + std::ldexp(1.0, -24)) {
        throw std::runtime_error(fmt::format(
            "reveal: product {} as (1 + 2^-12)^2 against -1 gave {:a}, neither exact nor rounded",
            leaf.term, out[q]));
      }
    }
  }
  if (fp.model.k() == 1) fp.model.mutable_root().rounded = true;  // RN(p): one rounding
  fp.rounded_products = fp.model.RoundedLeaves();
  std::map<std::string, NodeClass> classes;
  for (const SumNode* n : nodes) {
    NodeClass& c = classes[ArithText(n->arith)];
    c.arith = n->arith;
    ++c.nodes;
  }
  for (auto& [text, c] : classes) fp.node_classes.push_back(c);
  std::sort(fp.node_classes.begin(), fp.node_classes.end(),
            [](const NodeClass& a, const NodeClass& b) { return a.nodes > b.nodes; });
  std::vector<std::pair<int64_t, size_t>> blocks;
  CollectLowBlocks(fp.model.root(), &blocks);
  std::sort(blocks.begin(), blocks.end());
  for (const auto& b : blocks) fp.low_precision_blocks.push_back(b.second);
  if (fp.low_precision_blocks.size() >= 2) {
    const size_t first = fp.low_precision_blocks[0];
    bool even = true;
    for (size_t x = 0; x + 1 < fp.low_precision_blocks.size(); ++x) {
      even = even && fp.low_precision_blocks[x] == first;
    }
    if (even && fp.low_precision_blocks.back() <= first) fp.promote_every = first;
  }
  std::vector<std::pair<int64_t, size_t>> parts;
  CollectParts(fp.model.root(), &parts);
  std::sort(parts.begin(), parts.end());
  bool long_parts = parts.size() >= 2;
  for (const auto& p : parts) long_parts = long_parts && p.second >= 3;
  if (long_parts) {
    for (const auto& p : parts) fp.parts.push_back(p.second);
  }
  fp.shape = KnownShapeName(fp.model);
  fp.cost.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return fp;
}

AccumulatorFingerprint RevealFingerprint(DotDoor& door, const DotShape& call_shape, size_t row,
                                         size_t col, const RevealOptions& options) {
  const TreeReveal revealed = RevealTree(door, call_shape, row, col, options);
  AccumulatorFingerprint fp =
      RevealFingerprint(door, call_shape, row, col, revealed.tree, options);
  fp.cost += revealed.cost;
  return fp;
}

std::vector<std::string> DescribeFingerprint(const AccumulatorFingerprint& fp) {
  std::vector<std::string> lines;
  const size_t k = fp.model.k();
  lines.push_back(fmt::format("tree: {} terms, {} nodes, depth {}, widest node {} inputs{}", k,
                              fp.model.InternalNodes(), fp.model.Depth(), fp.model.MaxFanIn(),
                              fp.shape.empty() ? "" : ": " + fp.shape));
  if (!fp.products_can_round) {
    lines.push_back("products: exact (a product of two operands fits binary32)");
  } else {
    lines.push_back(fmt::format("products: {} of {} rounded to binary32 before they are added{}",
                                fp.rounded_products, k,
                                fp.unobservable_products
                                    ? fmt::format(" ({} not observable: aligned nodes)",
                                                  fp.unobservable_products)
                                    : ""));
  }
  for (const NodeClass& c : fp.node_classes) {
    std::string what;
    if (c.arith.IsBinary32()) {
      what = "binary32: exact sum rounded once to nearest-even";
    } else if (c.arith.aligned) {
      what = fmt::format("{} bits kept after alignment, {}", c.arith.bits,
                         c.arith.rounding == NodeRounding::kTowardZero ? "truncated"
                                                                       : "rounded to nearest");
    } else {
      what = fmt::format("exact sum rounded once to {} bits, {}", c.arith.bits,
                         c.arith.rounding == NodeRounding::kTowardZero ? "toward zero"
                                                                       : "nearest-even");
    }
    lines.push_back(fmt::format("nodes: {} {}", c.nodes, what));
  }
  if (fp.normalization_probed) {
    lines.push_back(fmt::format("normalization: {} of {} aligned nodes probed realign a cancelled sum",
                                fp.normalization_probed - fp.not_normalized,
                                fp.normalization_probed));
  }
  if (fp.promote_every) {
    lines.push_back(fmt::format("promotion: low-precision sums of {} terms joined in binary32 "
                                "({} blocks)",
                                fp.promote_every, fp.low_precision_blocks.size()));
  } else if (!fp.low_precision_blocks.empty()) {
    lines.push_back(fmt::format("low-precision blocks: {}", fp.low_precision_blocks.size()));
  }
  if (!fp.parts.empty()) {
    std::string sizes;
    for (size_t p : fp.parts) sizes += (sizes.empty() ? "" : ", ") + std::to_string(p);
    lines.push_back(fmt::format("split: {} sequential parts of {} terms", fp.parts.size(), sizes));
  }
  return lines;
}

namespace {

// A random value of the format: sign, an exponent within 2^-6..2^6 of 1 and a
// full significand, so that sums cancel and round in every way.
double RandomOperand(const FloatFormat& f, CounterRng& rng) {
  for (;;) {
    const uint32_t bits = rng.Next32();
    const double significand = 1 + std::ldexp(static_cast<double>(rng.Next32() >> 8), -24);
    const int e = static_cast<int>(bits % 13) - 6;
    double v = std::ldexp(significand, e) * ((bits >> 8) & 1 ? -1 : 1);
    v = RoundDouble(f, v);
    if (std::isfinite(v)) return v;
  }
}

}  // namespace

ModelCheck CheckModel(DotDoor& door, const DotShape& call_shape, const SummationTree& model,
                      uint64_t outputs, uint64_t seed) {
  const Clock::time_point start = Clock::now();
  ModelCheck check;
  const size_t k = call_shape.k, m = call_shape.m, n = call_shape.n;
  if (model.k() != k) {
    throw std::invalid_argument(fmt::format("check: the model has {} terms, the call {}", model.k(), k));
  }
  const FloatFormat& in = door.OperandFormat();
  const FloatFormat& out = door.OutputFormat();
  for (uint64_t call = 0; check.outputs < outputs; ++call) {
    CounterRng rng(seed, StreamId("reveal model check"), call);
    std::vector<double> a(m * k), b(n * k);
    for (double& v : a) v = RandomOperand(in, rng);
    for (double& v : b) v = RandomOperand(in, rng);
    std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
    std::vector<float> c(m * n);
    door.Multiply(call_shape, af.data(), bf.data(), c.data());
    ++check.calls;
    for (size_t r = 0; r < m && check.outputs < outputs; ++r) {
      for (size_t x = 0; x < n && check.outputs < outputs; ++x) {
        const float expected = static_cast<float>(Evaluate(model, &a[r * k], &b[x * k], out));
        const float got = c[r * n + x];
        ++check.outputs;
        uint32_t eb, gb;
        std::memcpy(&eb, &expected, 4);
        std::memcpy(&gb, &got, 4);
        if (eb != gb) {
          if (check.mismatches == 0) {
            check.first_mismatch = fmt::format(
                "call {} (seed {}), output ({}, {}): kernel {:a} (0x{:08x}), model {:a} (0x{:08x})",
                call, seed, r, x, got, gb, expected, eb);
          }
          ++check.mismatches;
        }
      }
    }
  }
  check.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return check;
}

std::vector<GoldenProbe> GoldenProbes(const DotDoor& door, const SummationTree& model,
                                      size_t max_probes) {
  SummationTree copy = model;
  std::vector<SumNode*> nodes;
  CollectInternal(&copy.mutable_root(), &nodes);
  const LcaPlan plan = PlanLca(door, model.k());
  const ArithProbes arith = PlanArith(door);
  const FloatFormat& in = door.OperandFormat();
  const size_t k = model.k();
  // Half the probes pin the tree, half the arithmetic, over nodes spread
  // evenly through the tree.
  const size_t per_kind = std::max<size_t>(1, max_probes / 2);
  const size_t step = std::max<size_t>(1, (nodes.size() + per_kind - 1) / per_kind);
  std::vector<GoldenProbe> probes;
  const auto tiny = plan.cartesian ? std::make_pair(1.0, 1.0) : plan.tiny_factors;
  const auto big = plan.cartesian ? MustFactor(in, std::ldexp(1.0, 2 * std::min(in.emax, 20)))
                                  : plan.big_factors;
  const size_t group = plan.cartesian
                           ? std::min<size_t>(k, size_t{1} << std::max(0, 2 * std::min(in.emax, 20) - 26))
                           : plan.group;
  for (size_t x = 0; x < nodes.size(); x += step) {
    const int64_t u = MinTerm(nodes[x]->children[0]), v = MinTerm(nodes[x]->children[1]);
    GoldenProbe p;
    p.what = fmt::format("lca {} {}", u, v);
    const size_t centre = static_cast<size_t>(u);
    const size_t begin = centre > group / 2 ? std::min(centre - group / 2, k - group) : 0;
    p.background_a = tiny.first;
    p.background_b = tiny.second;
    p.background_begin = static_cast<uint32_t>(begin);
    p.background_end = static_cast<uint32_t>(begin + group);
    p.terms.push_back({static_cast<uint32_t>(u), big.first, big.second});
    p.terms.push_back({static_cast<uint32_t>(v), -big.first, big.second});
    probes.push_back(std::move(p));
  }
  const double big_value = std::ldexp(1.0, arith.e_big);
  for (size_t x = 0; x < nodes.size(); x += step) {
    const int64_t u = MinTerm(nodes[x]->children[0]), v = MinTerm(nodes[x]->children[1]);
    const int bits = nodes[x]->arith.bits;
    GoldenProbe p;
    p.what = fmt::format("arith {} {}", u, v);
    const auto fu = MustFactor(in, big_value);
    const auto fv = MustFactor(in, 3 * std::ldexp(big_value, -bits - 1));
    p.terms.push_back({static_cast<uint32_t>(u), fu.first, fu.second});
    p.terms.push_back({static_cast<uint32_t>(v), fv.first, fv.second});
    probes.push_back(std::move(p));
  }
  return probes;
}

void RunGoldenProbes(DotDoor& door, const DotShape& call_shape, std::vector<GoldenProbe>* probes,
                     RevealCost* cost) {
  ProbeRunner runner(door, call_shape, 0, 0, true, cost);
  std::vector<Probe> plain;
  for (const GoldenProbe& g : *probes) {
    Probe p;
    p.terms = g.terms;
    p.bg_a = g.background_a;
    p.bg_b = g.background_b;
    p.background = TermRange(g.background_begin, g.background_end);
    p.bg_begin = 0;
    p.bg_end = p.background->size();
    plain.push_back(std::move(p));
  }
  const std::vector<double> out = runner.Run(plain);
  for (size_t x = 0; x < probes->size(); ++x) (*probes)[x].output = out[x];
}

}  // namespace ulpgate
