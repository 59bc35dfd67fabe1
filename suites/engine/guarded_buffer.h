// A buffer whose data starts `misalign` floats past a 64-byte boundary, with
// guard floats on both sides that a kernel must not touch. Where the data
// starts depends on `misalign` only, never on where malloc put the storage,
// so a run that places its operands this way is reproducible from its seed.
#ifndef ULPGATE_SUITES_GUARDED_BUFFER_H_
#define ULPGATE_SUITES_GUARDED_BUFFER_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "oracles/float_text.h"

namespace ulpgate {

// T is float (guard: a NaN nobody computes), uint16_t, the bit patterns of
// a 16-bit format (guard: an f16 NaN with a payload, a bf16 number near
// 2^123, neither of which the kernels produce), or uint8_t, a cast's codes
// (guard 0xa5: no code of a 4- or 6-bit format, whose high bits are zero;
// an 8-bit format's code, so that there the guard shows a write of any
// other byte); `misalign` counts elements.
template <class T>
class BasicGuardedBuffer {
 public:
  static constexpr size_t kGuard = 64 / sizeof(T) * 2;  // two 512-bit vectors

  BasicGuardedBuffer(size_t size, size_t misalign) { Place(size, misalign); }
  // The buffer made anew for `size` elements at `misalign`, as the
  // constructor makes it (every element the guard value), keeping its
  // allocation where it is large enough: for a caller that places one
  // buffer call after call.
  // With `elements` false, only the guards are set: for a caller that writes
  // every element next (an operand copied in).
  // After a GuardsIntact() that held, every element but the last placement's
  // own still holds the guard: only those are set again (a kernel's calls are
  // mostly a few elements long, its guards four vectors).
  void Place(size_t size, size_t misalign, bool elements = true) {
    const size_t total = size + 2 * kGuard + misalign + 64 / sizeof(T);
    if (clean_) {
      std::fill(storage_.data() + offset_, storage_.data() + offset_ + size_, GuardValue());
      storage_.resize(total, GuardValue());
    } else if (elements) {
      storage_.assign(total, GuardValue());
    } else {
      storage_.resize(total);
    }
    size_ = size;
    const auto address = reinterpret_cast<uintptr_t>(storage_.data() + kGuard);
    const size_t skip = ((64 - address % 64) % 64) / sizeof(T);
    offset_ = kGuard + skip + misalign;
    data_ = storage_.data() + offset_;
    if (!clean_ && !elements) Reset(false);
    clean_ = false;
  }
  // The guards back to the guard value; with `elements`, the buffer's own
  // elements too.
  void Reset(bool elements) {
    if (elements) {
      std::fill(storage_.begin(), storage_.end(), GuardValue());
      return;
    }
    std::fill(storage_.data(), data_, GuardValue());
    std::fill(data_ + size_, storage_.data() + storage_.size(), GuardValue());
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  // True when every element outside [data, data + size) still holds the guard.
  // Until the next Place, the caller writes nothing outside the elements.
  bool GuardsIntact() const {
    clean_ = AllGuards(storage_.data(), data_) && AllGuards(data_ + size_, storage_.data() + storage_.size());
    return clean_;
  }

 private:
  static T GuardValue() {
    if constexpr (sizeof(T) == 4) {
      return FloatFromBits(0x7fa11ed0);
    } else if constexpr (sizeof(T) == 1) {
      return T{0xa5};
    } else {
      return T{0x7e1d};
    }
  }
  // Every element's bits against the guard's, or-ed, with no early exit: a
  // loop the compiler vectorizes (the check runs after every call of a
  // kernel, most of them a few elements long).
  static bool AllGuards(const T* begin, const T* end) {
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t,
                                    std::conditional_t<sizeof(T) == 2, uint16_t, uint8_t>>;
    static_assert(sizeof(Bits) == sizeof(T), "a guard's bits");
    const T guard_value = GuardValue();
    Bits guard;
    std::memcpy(&guard, &guard_value, sizeof guard);
    Bits differ = 0;
    for (; begin < end; ++begin) {
      Bits bits;
      std::memcpy(&bits, begin, sizeof bits);
      differ = static_cast<Bits>(differ | (bits ^ guard));
    }
    return differ == 0;
  }

  std::vector<T> storage_;
  size_t size_ = 0;
  size_t offset_ = 0;  // of data_ in storage_
  T* data_ = nullptr;
  mutable bool clean_ = false;  // the last GuardsIntact() held
};

using GuardedBuffer = BasicGuardedBuffer<float>;

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_GUARDED_BUFFER_H_
