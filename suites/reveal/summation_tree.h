// How a dot product of k terms adds up, as data: a summation tree over the
// term indices 0..k-1 whose nodes are the units that add (two or more inputs,
// one rounding each), with the arithmetic of every node and whether each
// product is rounded before it is added. `reveal` recovers one from a
// kernel's outputs (suites/reveal/reveal.h); Evaluate runs it exactly, so the
// revealed tree is a model checked bit for bit against the kernel.
//
// Text form, one line, parsed back by ParseSummationTree:
//   leaf       `7`, or `7r` when product 7 is rounded to binary32 before it
//              meets any other term (an unfused multiply, or the first product
//              of a fused chain, fma(a, b, +0))
//   binary     `(x+y)`: the exact sum of two inputs rounded once
//   multiway   `fused4[x,y,z,w]`: a unit adding four inputs with one rounding
//              (a tensor core's fused dot-add)
//   arithmetic a node whose rounding is not binary32's nearest-even of the
//              exact sum ends in `@t14` (each input truncated after alignment
//              to 14 bits below the largest input's leading bit) or `@n14`
//              (rounded to nearest-even there)
// e.g. `((0r+1)+2)` is a fused chain of three products, and
// `(((0+1)@t14+2)@t14+((3+4)@t14+5)@t14)` two blocks of a 14-bit truncating
// accumulator joined by a binary32 addition.
#ifndef ULPGATE_SUITES_REVEAL_SUMMATION_TREE_H_
#define ULPGATE_SUITES_REVEAL_SUMMATION_TREE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "oracles/float_format.h"

namespace ulpgate {

enum class NodeRounding : uint8_t { kNearestEven, kTowardZero };

// A node's arithmetic. Inputs are binary32 values or exact products.
//   aligned == false: the exact sum of the inputs rounded once to `bits`
//     significant bits with binary32's exponent range (bits = 24: IEEE
//     binary32 addition, an FMA, or a fused multiway add);
//   aligned == true: each input is rounded (`rounding`) to a multiple of
//     2^(e - bits + 1), e the exponent of the largest input's leading bit (the
//     bits shifted out of a `bits`-wide adder are dropped or rounded), the
//     aligned inputs are added exactly and the sum, normalized, is held as a
//     binary32 value.
struct NodeArith {
  int bits = 24;
  NodeRounding rounding = NodeRounding::kNearestEven;
  bool aligned = false;
  bool operator==(const NodeArith& o) const {
    return bits == o.bits && rounding == o.rounding && aligned == o.aligned;
  }
  bool operator!=(const NodeArith& o) const { return !(*this == o); }
  bool IsBinary32() const { return !aligned && bits == 24 && rounding == NodeRounding::kNearestEven; }
};

// "" for binary32's arithmetic, else "t14", "n14" (aligned), "r20", "z20" (one
// rounding to 20 bits, nearest or toward zero).
std::string ArithText(const NodeArith& arith);

struct SumNode {
  int64_t term = -1;      // >= 0: a leaf, product `term`
  bool rounded = false;   // leaf: the product rounded to binary32 before it is added
  NodeArith arith;        // internal node
  std::vector<SumNode> children;  // internal node: two or more

  bool IsLeaf() const { return term >= 0; }
  bool operator==(const SumNode& o) const;
  bool operator!=(const SumNode& o) const { return !(*this == o); }
};

class SummationTree {
 public:
  SummationTree() = default;
  // Throws std::invalid_argument unless `root` covers 0..k-1 once each.
  SummationTree(size_t k, SumNode root);

  size_t k() const { return k_; }
  const SumNode& root() const { return root_; }
  SumNode& mutable_root() { return root_; }

  // Children of every node ordered by their smallest term, so that two trees
  // that add the same way compare equal and print alike.
  void Canonicalize();
  bool operator==(const SummationTree& o) const { return k_ == o.k_ && root_ == o.root_; }
  bool operator!=(const SummationTree& o) const { return !(*this == o); }

  std::string Text() const;
  nlohmann::json Json() const;

  // Internal nodes, leaves that are rounded, the depth (edges on the longest
  // root-to-leaf path) and the widest node.
  size_t InternalNodes() const;
  size_t RoundedLeaves() const;
  size_t Depth() const;
  size_t MaxFanIn() const;

 private:
  size_t k_ = 0;
  SumNode root_;
};

// Throws std::invalid_argument naming the position of the first error.
SummationTree ParseSummationTree(std::string_view text);
SummationTree SummationTreeFromJson(const nlohmann::json& json);

// The smallest term under a node.
int64_t MinTerm(const SumNode& node);
// Terms under a node, ascending.
std::vector<int64_t> Terms(const SumNode& node);

// The value the tree computes for products a[t] * b[t] (operands of any
// format, held exactly in doubles; their product must be exact in a double,
// as products of binary32 or narrower values are), rounded at the end to the
// output format (nearest-even). Exact emulation, no host rounding in between.
double Evaluate(const SummationTree& tree, const double* a, const double* b,
                const FloatFormat& output);

// The trees of ulpgate's own schedules (kernels/reduction_spec-inl.h), built
// from their definitions, for the tests and for `reveal` to name what it found.
// fused: the chain's products enter by FMA (only the first is rounded);
// otherwise every product is rounded.
SummationTree SequentialTree(size_t k, bool fused);
// Lane j accumulates terms j, j+L, j+2L, ... (a chain as above), then the
// halving tree lane[j] += lane[j + w], w = L/2, ..., 1; empty lanes drop out.
SummationTree LaneParallelTree(size_t k, size_t lanes, bool fused);
// Cascade: left part the largest power of two below n, every product rounded.
SummationTree PairwiseTree(size_t k);

// A name for a tree that one of the builders above gives, such as
// "sequential chain, fused products" or "8 strided chains + halving tree";
// empty when none does.
std::string KnownShapeName(const SummationTree& tree);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REVEAL_SUMMATION_TREE_H_
