#include "suites/engine/reductions/sum_orders.h"

#include <stdexcept>

#include <fmt/format.h>

namespace ulpgate {

namespace {

struct Order {
  enum Kind { kSequential, kAccumulators, kPairwise, kBinary64 } kind = kSequential;
  size_t lanes = 1;
  size_t groups = 1;  // 1: no grouping
  bool halving = false;
};

bool PowerOfTwo(size_t v) { return v >= 2 && (v & (v - 1)) == 0; }

// "accumulators_16_groups_4_halving" -> {kAccumulators, 16, 4, true}; false
// where the name is not an order.
bool Parse(std::string_view name, Order* out) {
  Order o;
  if (name == "sequential") {
    *out = o;
    return true;
  }
  if (name == "numpy_pairwise") {
    o.kind = Order::kPairwise;
    *out = o;
    return true;
  }
  if (name == "binary64_rounded_once") {
    o.kind = Order::kBinary64;
    *out = o;
    return true;
  }
  constexpr std::string_view kPrefix = "accumulators_";
  if (name.substr(0, kPrefix.size()) != kPrefix) return false;
  std::string_view rest = name.substr(kPrefix.size());
  auto number = [&](size_t* v) {
    size_t k = 0;
    *v = 0;
    while (k < rest.size() && rest[k] >= '0' && rest[k] <= '9' && k < 9) *v = *v * 10 + static_cast<size_t>(rest[k++] - '0');
    if (k == 0 || (rest.size() > k && rest[k] >= '0' && rest[k] <= '9')) return false;
    rest = rest.substr(k);
    return true;
  };
  o.kind = Order::kAccumulators;
  if (!number(&o.lanes) || !PowerOfTwo(o.lanes)) return false;
  constexpr std::string_view kGroups = "_groups_";
  if (rest.substr(0, kGroups.size()) == kGroups) {
    rest = rest.substr(kGroups.size());
    if (!number(&o.groups) || (o.groups != 2 && o.groups != 4)) return false;
  }
  if (rest == "_in_turn") {
    o.halving = false;
  } else if (rest == "_halving") {
    o.halving = true;
  } else {
    return false;
  }
  *out = o;
  return true;
}

float Pairwise(const float* a, size_t n) {
  if (n < 8) {
    float r = 0.0f;
    for (size_t i = 0; i < n; ++i) r += a[i];
    return r;
  }
  if (n <= 128) {
    float r[8];
    for (size_t k = 0; k < 8; ++k) r[k] = a[k];
    size_t i = 8;
    for (; i < n - n % 8; i += 8) {
      for (size_t k = 0; k < 8; ++k) r[k] += a[i + k];
    }
    float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return Pairwise(a, n2) + Pairwise(a + n2, n - n2);
}

}  // namespace

std::vector<std::string> SumOrderNames(size_t terms) {
  std::vector<std::string> names = {"sequential"};
  for (size_t lanes = 2; lanes <= terms; lanes *= 2) {
    names.push_back(fmt::format("accumulators_{}_in_turn", lanes));
    names.push_back(fmt::format("accumulators_{}_halving", lanes));
  }
  for (size_t lanes = 2; lanes <= terms; lanes *= 2) {
    for (const size_t groups : {2, 4}) {
      if (terms % (lanes * groups) != 0) continue;
      names.push_back(fmt::format("accumulators_{}_groups_{}_in_turn", lanes, groups));
      names.push_back(fmt::format("accumulators_{}_groups_{}_halving", lanes, groups));
    }
  }
  names.push_back("numpy_pairwise");
  names.push_back("binary64_rounded_once");
  return names;
}

bool IsSumOrder(std::string_view order) {
  Order o;
  return Parse(order, &o);
}

float SumInOrder(std::string_view order, const float* terms, size_t n) {
  Order o;
  if (!Parse(order, &o)) throw std::invalid_argument("'" + std::string(order) + "' is not a summation order");
  switch (o.kind) {
    case Order::kBinary64: {
      double sum = 0;
      for (size_t k = 0; k < n; ++k) sum += terms[k];
      return static_cast<float>(sum);
    }
    case Order::kPairwise:
      return Pairwise(terms, n);
    case Order::kSequential: {
      float sum = 0.0f;
      for (size_t k = 0; k < n; ++k) sum += terms[k];
      return sum;
    }
    case Order::kAccumulators:
      break;
  }
  std::vector<float> acc(o.lanes, 0.0f);
  if (o.groups == 1) {
    for (size_t k = 0; k < n; ++k) acc[k % o.lanes] += terms[k];
  } else {
    // Each group's lanes summed in turn, then added to the accumulators.
    const size_t span = o.lanes * o.groups;
    for (size_t start = 0; start < n; start += span) {
      std::vector<float> group(o.lanes, 0.0f);
      for (size_t k = start; k < n && k < start + span; ++k) group[k % o.lanes] += terms[k];
      for (size_t j = 0; j < o.lanes; ++j) acc[j] += group[j];
    }
  }
  if (o.halving) {
    for (size_t width = o.lanes / 2; width >= 1; width /= 2) {
      for (size_t j = 0; j < width; ++j) acc[j] += acc[j + width];
    }
    return acc[0];
  }
  float sum = acc[0];
  for (size_t j = 1; j < o.lanes; ++j) sum += acc[j];
  return sum;
}

}  // namespace ulpgate
