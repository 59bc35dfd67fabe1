#include "suites/reveal/summation_tree.h"

#include <fmt/format.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "oracles/format.h"

namespace ulpgate {

std::string ArithText(const NodeArith& arith) {
  if (arith.IsBinary32()) return "";
  const char letter = arith.aligned ? (arith.rounding == NodeRounding::kTowardZero ? 't' : 'n')
                                    : (arith.rounding == NodeRounding::kTowardZero ? 'z' : 'r');
  return fmt::format("{}{}", letter, arith.bits);
}

bool SumNode::operator==(const SumNode& o) const {
  if (term != o.term) return false;
  if (IsLeaf()) return rounded == o.rounded;
  return arith == o.arith && children == o.children;
}

int64_t MinTerm(const SumNode& node) {
  if (node.IsLeaf()) return node.term;
  int64_t least = INT64_MAX;
  for (const SumNode& c : node.children) least = std::min(least, MinTerm(c));
  return least;
}

namespace {

void CollectTerms(const SumNode& node, std::vector<int64_t>* out) {
  if (node.IsLeaf()) {
    out->push_back(node.term);
    return;
  }
  for (const SumNode& c : node.children) CollectTerms(c, out);
}

void CanonicalizeNode(SumNode* node) {
  if (node->IsLeaf()) return;
  for (SumNode& c : node->children) CanonicalizeNode(&c);
  std::sort(node->children.begin(), node->children.end(),
            [](const SumNode& a, const SumNode& b) { return MinTerm(a) < MinTerm(b); });
}

void AppendText(const SumNode& node, std::string* out) {
  if (node.IsLeaf()) {
    *out += std::to_string(node.term);
    if (node.rounded) *out += 'r';
    return;
  }
  const bool binary = node.children.size() == 2;
  *out += binary ? "(" : fmt::format("fused{}[", node.children.size());
  for (size_t i = 0; i < node.children.size(); ++i) {
    if (i) *out += binary ? '+' : ',';
    AppendText(node.children[i], out);
  }
  *out += binary ? ')' : ']';
  const std::string arith = ArithText(node.arith);
  if (!arith.empty()) *out += '@' + arith;
}

nlohmann::json NodeJson(const SumNode& node) {
  nlohmann::json j;
  if (node.IsLeaf()) {
    j["term"] = node.term;
    if (node.rounded) j["rounded"] = true;
    return j;
  }
  j["add"] = nlohmann::json::array();
  for (const SumNode& c : node.children) j["add"].push_back(NodeJson(c));
  const std::string arith = ArithText(node.arith);
  if (!arith.empty()) j["arith"] = arith;
  return j;
}

NodeArith ParseArith(std::string_view text, const std::string& where) {
  NodeArith arith;
  if (text.size() < 2) throw std::invalid_argument(where + ": expected an arithmetic such as t14");
  const char letter = text[0];
  if (letter != 't' && letter != 'n' && letter != 'r' && letter != 'z') {
    throw std::invalid_argument(where + ": the arithmetic starts with t, n, r or z, got '" +
                                std::string(text) + "'");
  }
  int bits = 0;
  for (size_t i = 1; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9' || bits > 100) {
      throw std::invalid_argument(where + ": bad bit count in '" + std::string(text) + "'");
    }
    bits = bits * 10 + (text[i] - '0');
  }
  if (bits < 1 || bits > 52) {
    throw std::invalid_argument(where + ": bits from 1 to 52, got '" + std::string(text) + "'");
  }
  arith.bits = bits;
  arith.aligned = letter == 't' || letter == 'n';
  arith.rounding = letter == 't' || letter == 'z' ? NodeRounding::kTowardZero
                                                  : NodeRounding::kNearestEven;
  return arith;
}

class TextParser {
 public:
  explicit TextParser(std::string_view text) : text_(text) {}

  SumNode Parse() {
    SumNode root = Node();
    if (pos_ != text_.size()) Fail("unexpected text after the tree");
    return root;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw std::invalid_argument(fmt::format("summation tree, at character {}: {}", pos_, what));
  }
  bool Peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  void Expect(char c) {
    if (!Peek(c)) Fail(fmt::format("expected '{}'", c));
    ++pos_;
  }
  int64_t Number() {
    const size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      if (value > (int64_t{1} << 40)) Fail("number too large");
      value = value * 10 + (text_[pos_++] - '0');
    }
    if (pos_ == start) Fail("expected a term index, '(' or 'fused'");
    return value;
  }
  void Arith(SumNode* node) {
    if (!Peek('@')) return;
    ++pos_;
    const size_t start = pos_;
    while (pos_ < text_.size() && std::isalnum(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    node->arith = ParseArith(text_.substr(start, pos_ - start),
                             fmt::format("summation tree, at character {}", start));
  }
  SumNode Node() {
    SumNode node;
    if (Peek('(')) {
      ++pos_;
      node.children.push_back(Node());
      Expect('+');
      node.children.push_back(Node());
      Expect(')');
      Arith(&node);
      return node;
    }
    if (text_.substr(pos_, 5) == "fused") {
      pos_ += 5;
      const int64_t count = Number();
      Expect('[');
      node.children.push_back(Node());
      while (Peek(',')) {
        ++pos_;
        node.children.push_back(Node());
      }
      Expect(']');
      if (static_cast<int64_t>(node.children.size()) != count || count < 2) {
        Fail(fmt::format("fused{} has {} inputs", count, node.children.size()));
      }
      Arith(&node);
      return node;
    }
    node.term = Number();
    if (Peek('r')) {
      ++pos_;
      node.rounded = true;
    }
    return node;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

SumNode NodeFromJson(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw std::invalid_argument(where + ": expected an object");
  SumNode node;
  if (j.contains("term")) {
    if (!j["term"].is_number_integer() || j["term"].get<int64_t>() < 0) throw std::invalid_argument(where + ".term: expected an index");
    node.term = j["term"].get<int64_t>();
    node.rounded = j.value("rounded", false);
    return node;
  }
  if (!j.contains("add") || !j["add"].is_array() || j["add"].size() < 2) {
    throw std::invalid_argument(where + ": expected \"term\" or \"add\" with two or more inputs");
  }
  for (size_t i = 0; i < j["add"].size(); ++i) {
    node.children.push_back(NodeFromJson(j["add"][i], fmt::format("{}.add[{}]", where, i)));
  }
  if (j.contains("arith")) node.arith = ParseArith(j["arith"].get<std::string>(), where + ".arith");
  return node;
}

size_t CountInternal(const SumNode& n) {
  if (n.IsLeaf()) return 0;
  size_t count = 1;
  for (const SumNode& c : n.children) count += CountInternal(c);
  return count;
}
size_t CountRounded(const SumNode& n) {
  if (n.IsLeaf()) return n.rounded ? 1 : 0;
  size_t count = 0;
  for (const SumNode& c : n.children) count += CountRounded(c);
  return count;
}
size_t NodeDepth(const SumNode& n) {
  if (n.IsLeaf()) return 0;
  size_t depth = 0;
  for (const SumNode& c : n.children) depth = std::max(depth, NodeDepth(c) + 1);
  return depth;
}
size_t FanIn(const SumNode& n) {
  if (n.IsLeaf()) return 0;
  size_t widest = n.children.size();
  for (const SumNode& c : n.children) widest = std::max(widest, FanIn(c));
  return widest;
}

// ---- Exact evaluation ---------------------------------------------------

// A format with binary32's exponent range and `bits` significant bits: what a
// node that rounds once to fewer (or as many) bits rounds to.
FloatFormat AccumulatorFormat(int bits) {
  FloatFormat f = kBinary32;
  f.precision = bits;
  return f;
}

// One rounding of x + y (doubles, exact): the double sum s and its error e
// (TwoSum) give the exact value s + e with |e| <= ulp(s)/2; a format of at
// most 24 bits has no rounding boundary strictly between s and its neighbour
// toward e (its boundaries are 2^28 ulps of s apart or more), so rounding that
// neighbour when e != 0 rounds the exact sum.
double RoundSumOfTwo(const FloatFormat& f, double x, double y, bool toward_zero) {
  const double s = x + y;
  const double bp = s - x;
  const double e = (x - (s - bp)) + (y - bp);
  if (e == 0) return RoundDouble(f, s, toward_zero);
  return RoundDouble(f, std::nextafter(s, e > 0 ? INFINITY : -INFINITY), toward_zero);
}

double RoundSumOfMany(const FloatFormat& f, const std::vector<double>& values, bool toward_zero) {
  // Inputs are binary32 values or exact products of binary32 values: they
  // lie between 2^-300 and 2^256, so 600 bits hold their sum exactly.
  std::vector<mpfr_t> terms(values.size());
  std::vector<mpfr_ptr> pointers(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    mpfr_init2(terms[i], 53);
    mpfr_set_d(terms[i], values[i], MPFR_RNDN);
    pointers[i] = terms[i];
  }
  mpfr_t sum;
  mpfr_init2(sum, 600);
  mpfr_sum(sum, pointers.data(), values.size(), MPFR_RNDN);
  const double r = toward_zero ? TruncateToFormat(f, sum) : RoundToFormat(f, sum);
  mpfr_clear(sum);
  for (mpfr_t& t : terms) mpfr_clear(t);
  return r;
}

double EvaluateNode(const SumNode& node, const double* a, const double* b) {
  if (node.IsLeaf()) {
    const double product = a[node.term] * b[node.term];  // exact (see Evaluate)
    return node.rounded ? RoundDouble(kBinary32, product) : product;
  }
  std::vector<double> inputs;
  inputs.reserve(node.children.size());
  for (const SumNode& c : node.children) inputs.push_back(EvaluateNode(c, a, b));
  const bool toward_zero = node.arith.rounding == NodeRounding::kTowardZero;
  if (!node.arith.aligned) {
    const FloatFormat f = AccumulatorFormat(node.arith.bits);
    if (inputs.size() == 2) return RoundSumOfTwo(f, inputs[0], inputs[1], toward_zero);
    return RoundSumOfMany(f, inputs, toward_zero);
  }
  int top = INT32_MIN;
  for (double v : inputs) {
    if (v != 0) top = std::max(top, std::ilogb(v));
  }
  if (top == INT32_MIN) return 0.0;
  // Every aligned input is a multiple of 2^(top - bits + 1) below 2^(top + 1):
  // bits + log2(inputs) <= 53 bits, so the double sum is exact.
  const int shift = top - node.arith.bits + 1;
  double sum = 0;
  for (double v : inputs) {
    const double scaled = std::ldexp(v, -shift);
    sum += std::ldexp(toward_zero ? std::trunc(scaled) : std::nearbyint(scaled), shift);
  }
  return RoundDouble(kBinary32, sum);
}

SumNode Leaf(size_t term, bool rounded) {
  SumNode leaf;
  leaf.term = static_cast<int64_t>(term);
  leaf.rounded = rounded;
  return leaf;
}

SumNode Join(SumNode a, SumNode b) {
  SumNode node;
  node.children.push_back(std::move(a));
  node.children.push_back(std::move(b));
  return node;
}

// acc = +0; acc = acc + p_t over `terms` in order: fused, fma(a, b, +0)
// rounds the first product and takes the others exactly.
SumNode Chain(const std::vector<size_t>& terms, bool fused) {
  SumNode acc = Leaf(terms[0], true);
  for (size_t i = 1; i < terms.size(); ++i) acc = Join(std::move(acc), Leaf(terms[i], !fused));
  return acc;
}

SumNode PairwiseNode(size_t begin, size_t n) {
  if (n == 1) return Leaf(begin, true);
  size_t left = 1;
  while (left * 2 < n) left *= 2;
  return Join(PairwiseNode(begin, left), PairwiseNode(begin + left, n - left));
}

}  // namespace

SummationTree::SummationTree(size_t k, SumNode root) : k_(k), root_(std::move(root)) {
  std::vector<int64_t> terms;
  CollectTerms(root_, &terms);
  std::sort(terms.begin(), terms.end());
  bool ok = terms.size() == k;
  for (size_t i = 0; ok && i < k; ++i) ok = terms[i] == static_cast<int64_t>(i);
  if (!ok) {
    throw std::invalid_argument(fmt::format(
        "summation tree: its {} leaves are not the terms 0..{} once each", terms.size(), k - 1));
  }
}

void SummationTree::Canonicalize() { CanonicalizeNode(&root_); }

std::string SummationTree::Text() const {
  std::string out;
  AppendText(root_, &out);
  return out;
}

nlohmann::json SummationTree::Json() const {
  return nlohmann::json{{"k", k_}, {"root", NodeJson(root_)}};
}

size_t SummationTree::InternalNodes() const { return CountInternal(root_); }
size_t SummationTree::RoundedLeaves() const { return CountRounded(root_); }
size_t SummationTree::Depth() const { return NodeDepth(root_); }
size_t SummationTree::MaxFanIn() const { return FanIn(root_); }

std::vector<int64_t> Terms(const SumNode& node) {
  std::vector<int64_t> out;
  CollectTerms(node, &out);
  std::sort(out.begin(), out.end());
  return out;
}

SummationTree ParseSummationTree(std::string_view text) {
  SumNode root = TextParser(text).Parse();
  const size_t k = Terms(root).size();
  SummationTree tree(k, std::move(root));
  return tree;
}

SummationTree SummationTreeFromJson(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("k") || !json["k"].is_number_unsigned() ||
      !json.contains("root")) {
    throw std::invalid_argument("summation tree: expected {\"k\": N, \"root\": {...}}");
  }
  return SummationTree(json["k"].get<size_t>(), NodeFromJson(json["root"], "root"));
}

double Evaluate(const SummationTree& tree, const double* a, const double* b,
                const FloatFormat& output) {
  // Products of two values of at most 24 significant bits have at most 48:
  // exact in a double, as EvaluateNode takes them.
  return RoundDouble(output, EvaluateNode(tree.root(), a, b));
}

SummationTree SequentialTree(size_t k, bool fused) {
  std::vector<size_t> terms(k);
  for (size_t t = 0; t < k; ++t) terms[t] = t;
  return SummationTree(k, Chain(terms, fused));
}

SummationTree LaneParallelTree(size_t k, size_t lanes, bool fused) {
  std::vector<std::optional<SumNode>> lane(lanes);
  for (size_t j = 0; j < lanes && j < k; ++j) {
    std::vector<size_t> terms;
    for (size_t t = j; t < k; t += lanes) terms.push_back(t);
    lane[j] = Chain(terms, fused);
  }
  for (size_t w = lanes / 2; w >= 1; w /= 2) {
    for (size_t j = 0; j < w; ++j) {
      // An empty lane holds +0: adding it changes nothing, so no node.
      if (lane[j] && lane[j + w]) {
        lane[j] = Join(std::move(*lane[j]), std::move(*lane[j + w]));
      } else if (lane[j + w]) {
        lane[j] = std::move(lane[j + w]);
      }
      lane[j + w].reset();
    }
  }
  return SummationTree(k, std::move(*lane[0]));
}

SummationTree PairwiseTree(size_t k) { return SummationTree(k, PairwiseNode(0, k)); }

std::string KnownShapeName(const SummationTree& tree) {
  const size_t k = tree.k();
  SummationTree canonical = tree;
  canonical.Canonicalize();
  for (bool fused : {true, false}) {
    if (canonical == SequentialTree(k, fused)) {
      return fused ? "sequential chain, fused products (FMA)"
                   : "sequential chain, rounded products";
    }
  }
  if (canonical == PairwiseTree(k)) return "pairwise cascade, rounded products";
  for (size_t lanes : {2, 4, 8, 16, 32, 64}) {
    if (lanes >= k) break;
    for (bool fused : {true, false}) {
      SummationTree candidate = LaneParallelTree(k, lanes, fused);
      candidate.Canonicalize();
      if (canonical == candidate) {
        return fmt::format("{} strided chains + halving tree, {} products", lanes,
                           fused ? "fused" : "rounded");
      }
    }
  }
  return "";
}

}  // namespace ulpgate
