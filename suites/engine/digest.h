// FNV-1a, 64-bit: the digests of outputs and parameters in reports and goldens
// (a fixed, documented function, so an independent program can recompute one).
#ifndef ULPGATE_SUITES_DIGEST_H_
#define ULPGATE_SUITES_DIGEST_H_

#include <cstddef>
#include <cstdint>

namespace ulpgate {

inline constexpr uint64_t kFnv1aOffset = 0xcbf29ce484222325ULL;

// Continues digest h over `bytes` bytes of data.
inline uint64_t Fnv1a(const void* data, size_t bytes, uint64_t h = kFnv1aOffset) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_DIGEST_H_
