#include "suites/reveal/planted_invariance.h"

#include <cstdint>

namespace ulpgate {
namespace {

enum class Planted { kSequential, kSplitByBatch, kSplitByThreads, kPeelToAlignment, kOrderByCall };

struct PlantedName {
  Planted kind;
  const char* name;
};

constexpr PlantedName kPlantedNames[] = {
    {Planted::kSequential, "sequential"},
    {Planted::kSplitByBatch, "split_by_batch"},
    {Planted::kSplitByThreads, "split_by_threads"},
    {Planted::kPeelToAlignment, "peel_to_alignment"},
    {Planted::kOrderByCall, "order_by_call"},
};

// sum_{k in [begin, end)} RN(a[k] b[k]), one accumulator, in increasing k.
float SumForward(const float* a, const float* b, size_t begin, size_t end) {
  float acc = 0.0f;
  for (size_t i = begin; i < end; ++i) acc += a[i] * b[i];
  return acc;
}

float SumBackward(const float* a, const float* b, size_t k) {
  float acc = 0.0f;
  for (size_t i = k; i-- > 0;) acc += a[i] * b[i];
  return acc;
}

// Elements before the first 32-byte-aligned address at or after `row`.
size_t HeadLength(const float* row, size_t k) {
  const uintptr_t misalignment = reinterpret_cast<uintptr_t>(row) % 32;
  const size_t head = misalignment == 0 ? 0 : (32 - misalignment) / sizeof(float);
  return head < k ? head : k;
}

float SumPeeled(const float* a, const float* b, size_t k) {
  const size_t head = HeadLength(a, k);
  const float head_sum = SumForward(a, b, 0, head);
  float lanes[8] = {};
  size_t i = head;
  for (; i + 8 <= k; i += 8) {
    for (size_t l = 0; l < 8; ++l) lanes[l] += a[i + l] * b[i + l];
  }
  const float tail = SumForward(a, b, i, k);
  const float body = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
                     ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  return (body + tail) + head_sum;
}

class PlantedDoor : public DotDoor {
 public:
  PlantedDoor(Planted kind, std::string name) : kind_(kind), name_(std::move(name)) {}

  std::string Name() const override { return kPlantedPrefix + name_; }
  const FloatFormat& OperandFormat() const override { return kBinary32; }
  const FloatFormat& OutputFormat() const override { return kBinary32; }
  bool SetThreads(unsigned threads) override {
    if (kind_ != Planted::kSplitByThreads || threads == 0) return false;
    threads_ = threads;
    return true;
  }

  void Multiply(const DotShape& shape, const float* a, const float* b, float* c) override {
    const bool backward = kind_ == Planted::kOrderByCall && calls_++ % 2 == 1;
    for (size_t m = 0; m < shape.m; ++m) {
      for (size_t n = 0; n < shape.n; ++n) {
        const float* row = a + m * shape.k;
        const float* col = b + n * shape.k;
        c[m * shape.n + n] = backward ? SumBackward(row, col, shape.k) : Dot(shape, row, col);
      }
    }
  }

 private:
  float Dot(const DotShape& shape, const float* row, const float* col) const {
    const size_t k = shape.k;
    switch (kind_) {
      case Planted::kSplitByBatch:
        if (shape.m >= kPlantedSplitBatch) {
          return SumForward(row, col, 0, k / 2) + SumForward(row, col, k / 2, k);
        }
        return SumForward(row, col, 0, k);
      case Planted::kSplitByThreads: {
        float total = 0.0f;
        for (size_t part = 0; part < threads_; ++part) {
          total += SumForward(row, col, k * part / threads_, k * (part + 1) / threads_);
        }
        return total;
      }
      case Planted::kPeelToAlignment:
        return SumPeeled(row, col, k);
      case Planted::kSequential:
      case Planted::kOrderByCall:
        break;
    }
    return SumForward(row, col, 0, k);
  }

  Planted kind_;
  std::string name_;
  size_t threads_ = 1;
  uint64_t calls_ = 0;
};

}  // namespace

std::vector<std::string> InvariancePlantedNames() {
  std::vector<std::string> names;
  for (const PlantedName& p : kPlantedNames) names.emplace_back(p.name);
  return names;
}

std::unique_ptr<DotDoor> MakeInvariancePlantedDoor(std::string_view name) {
  if (name.substr(0, sizeof(kPlantedPrefix) - 1) == kPlantedPrefix) {
    name.remove_prefix(sizeof(kPlantedPrefix) - 1);
  }
  for (const PlantedName& p : kPlantedNames) {
    if (name == p.name) return std::make_unique<PlantedDoor>(p.kind, p.name);
  }
  return nullptr;
}

}  // namespace ulpgate
