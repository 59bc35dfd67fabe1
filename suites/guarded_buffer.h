// A buffer whose data starts `misalign` floats past a 64-byte boundary, with
// guard floats on both sides that a kernel must not touch. Where the data
// starts depends on `misalign` only, never on where malloc put the storage,
// so a run that places its operands this way is reproducible from its seed.
#ifndef ULPGATE_SUITES_GUARDED_BUFFER_H_
#define ULPGATE_SUITES_GUARDED_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "oracles/float_text.h"

namespace ulpgate {

class GuardedBuffer {
 public:
  static constexpr size_t kGuard = 32;  // floats, two 512-bit vectors
  static constexpr uint32_t kGuardBits = 0x7fa11ed0;  // a NaN nobody computes

  GuardedBuffer(size_t size, size_t misalign)
      : storage_(size + 2 * kGuard + misalign + 16, FloatFromBits(kGuardBits)), size_(size) {
    const auto address = reinterpret_cast<uintptr_t>(storage_.data() + kGuard);
    const size_t skip = ((64 - address % 64) % 64) / sizeof(float);
    data_ = storage_.data() + kGuard + skip + misalign;
  }
  float* data() { return data_; }
  const float* data() const { return data_; }
  size_t size() const { return size_; }
  // True when every float outside [data, data + size) still holds the guard.
  bool GuardsIntact() const {
    for (const float* p = storage_.data(); p < storage_.data() + storage_.size(); ++p) {
      if (p >= data_ && p < data_ + size_) continue;
      if (FloatBits(*p) != kGuardBits) return false;
    }
    return true;
  }

 private:
  std::vector<float> storage_;
  size_t size_;
  float* data_;
};

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_GUARDED_BUFFER_H_
