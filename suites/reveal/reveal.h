// How a matrix product adds up, from its outputs alone: the summation tree of
// an output (FPRev's cancellation probes, Xie et al., USENIX ATC 2025), the
// arithmetic of every node and leaf (the accumulator fingerprint), and the
// check of the resulting model bit for bit against the kernel.
//
// The probes. Term i carries +M and term j -M, every other term a tiny t (or
// zero): each partial sum that holds i or j is +-M and swallows the tinies it
// meets, M - M cancels exactly where i and j meet (their lowest common
// ancestor), and the tinies outside that node's subtree arrive intact; so the
// output is t times the number of terms outside the subtree, which gives the
// subtree's size L(i, j). The sizes L(pivot, j) for every j of a set sort the
// set by where each j joins the pivot's root path, which builds the tree level
// by level (RevealTree). M/t must exceed 2^(24 + 1) times the count of tinies
// (binary32 accumulation) and the counts must be exact in the output format:
// operands with a wide exponent range (f32, bf16) take M in A's row and -M in
// B's row, so that a call of m x n outputs answers m pivots against n terms;
// narrow operands (FP8, f16) cannot make M/t large enough from one factor and
// take one probe per diagonal output, the tinies spread over several probes
// when their count would not be absorbed.
#ifndef ULPGATE_SUITES_REVEAL_REVEAL_H_
#define ULPGATE_SUITES_REVEAL_REVEAL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "suites/reveal/dot_door.h"
#include "suites/reveal/summation_tree.h"

namespace ulpgate {

struct RevealOptions {
  // true: every output of a call carries a probe of its own, so one call
  // answers many; this takes every output of a call of `call_shape` to add up
  // as the output (row, col) does (the model check tests that). false: one
  // probe per call, at (row, col), every other operand zero.
  bool batch = true;
};

// What revealing cost: kernel calls, probes answered and wall seconds.
struct RevealCost {
  uint64_t calls = 0;
  uint64_t probes = 0;
  double seconds = 0;
  RevealCost& operator+=(const RevealCost& o) {
    calls += o.calls;
    probes += o.probes;
    seconds += o.seconds;
    return *this;
  }
};

struct TreeReveal {
  SummationTree tree;  // structure only: leaves exact, nodes binary32
  RevealCost cost;
  std::string probes;  // "rows x columns" or "one per output", and M, t
};

// The summation tree of output (row, col) of calls of `call_shape` (its k is
// the number of terms). Throws DotDoorError when the kernel faults and
// std::runtime_error when the outputs are not those of a tree of roundings
// (a count that is not whole, sizes that do not nest), naming the probe.
TreeReveal RevealTree(DotDoor& door, const DotShape& call_shape, size_t row, size_t col,
                      const RevealOptions& options = {});

struct NodeClass {
  NodeArith arith;
  size_t nodes = 0;
};

struct AccumulatorFingerprint {
  // The tree with each leaf's rounding and each node's arithmetic: the model.
  SummationTree model;
  // Whether a product of two operand values can need more than binary32's 24
  // bits (f32 operands); if not, rounding products changes nothing and no
  // leaf is probed.
  bool products_can_round = false;
  size_t rounded_products = 0;
  // Leaves whose rounding no probe can see: their node keeps fewer bits than
  // the extra bits of the probe's product.
  size_t unobservable_products = 0;
  std::vector<NodeClass> node_classes;  // most frequent first
  // Aligned nodes probed for normalization (a cancelled partial sum realigned
  // at its own leading bit) and how many were not normalized.
  size_t normalization_probed = 0;
  size_t not_normalized = 0;
  // Maximal subtrees of low-precision nodes (any arithmetic but binary32's),
  // in term order; promote_every: their common size where every block but the
  // last has it (partial sums promoted to binary32 every that many terms).
  std::vector<size_t> low_precision_blocks;
  size_t promote_every = 0;
  // Sequential parts (chains over consecutive terms, three or more) when they
  // cover every term and there are two or more: split-K.
  std::vector<size_t> parts;
  std::string shape;  // KnownShapeName of the model, or empty
  RevealCost cost;
};

// The fingerprint of output (row, col) over a tree already revealed.
AccumulatorFingerprint RevealFingerprint(DotDoor& door, const DotShape& call_shape, size_t row,
                                         size_t col, const SummationTree& tree,
                                         const RevealOptions& options = {});
// Reveals the tree first (its cost included).
AccumulatorFingerprint RevealFingerprint(DotDoor& door, const DotShape& call_shape, size_t row,
                                         size_t col, const RevealOptions& options = {});

// Lines describing a fingerprint, for the CLI and reports.
std::vector<std::string> DescribeFingerprint(const AccumulatorFingerprint& fingerprint);

struct ModelCheck {
  uint64_t outputs = 0;
  uint64_t mismatches = 0;
  std::string first_mismatch;  // the output, operands' seed and both values
  uint64_t calls = 0;
  double seconds = 0;
};

// The model evaluated exactly (Evaluate) against the kernel, bit for bit, on
// at least `outputs` outputs of calls of `call_shape` whose operands are
// random values of the operand format (seeded; every output of a call is
// compared, each against the model).
ModelCheck CheckModel(DotDoor& door, const DotShape& call_shape, const SummationTree& model,
                      uint64_t outputs, uint64_t seed);

// Probe vectors of a golden file: inputs whose outputs pin the tree and the
// arithmetic down (one per internal node: its two subtrees' leftmost terms at
// +M and -M over a background of tinies, and one per node of a big and a small
// term), and the outputs the kernel gave.
struct ProbeTerm {
  uint32_t term = 0;
  double a = 0, b = 0;
};
struct GoldenProbe {
  std::string what;  // "lca 0 5" or "arith 0 7"
  // Terms [background_begin, background_end) are background_a *
  // background_b, then `terms` override theirs; every other term is zero.
  std::vector<ProbeTerm> terms;
  double background_a = 0, background_b = 0;
  uint32_t background_begin = 0, background_end = 0;
  double output = 0;
};
std::vector<GoldenProbe> GoldenProbes(const DotDoor& door, const SummationTree& model,
                                      size_t max_probes);
// Runs the probes on the door in calls of `call_shape` (one per diagonal
// output) and fills their outputs.
void RunGoldenProbes(DotDoor& door, const DotShape& call_shape, std::vector<GoldenProbe>* probes,
                     RevealCost* cost);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REVEAL_REVEAL_H_
