// A counter-based generator: every draw is a pure function of (seed, stream,
// index, draw number), so any input of any suite can be regenerated from its
// index alone, suites shard without coordination and results do not depend on
// the number of threads. The mixer is SplitMix64's finalizer (Steele, Lea and
// Flood, "Fast splittable pseudorandom number generators", 2014) applied to a
// keyed combination of the counters; floats are made from raw bits, never via
// std::*_distribution, whose output differs between standard libraries.
#ifndef ULPGATE_SUITES_COUNTER_RNG_H_
#define ULPGATE_SUITES_COUNTER_RNG_H_

#include <cstdint>
#include <string_view>

namespace ulpgate {

inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// FNV-1a of a name, to turn a suite name into a stream number.
inline uint64_t StreamId(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// The draws of one input: Next() returns draw 0, 1, 2, ... of (seed, stream, index).
class CounterRng {
 public:
  CounterRng(uint64_t seed, uint64_t stream, uint64_t index)
      : key_(Mix64(Mix64(seed ^ 0x9e3779b97f4a7c15ULL) ^ stream) ^ Mix64(index + 0x632be59bd9b4e019ULL)) {}

  uint64_t Next() { return Mix64(key_ + 0x9e3779b97f4a7c15ULL * ++counter_); }
  uint32_t Next32() { return static_cast<uint32_t>(Next() >> 32); }
  // Uniform in [0, bound), bound > 0 (Lemire's multiply-shift, 64-bit draw).
  uint64_t Below(uint64_t bound) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * bound) >> 64);
  }
  // Uniform on the grid k * 2^-53 in [0, 1), exact in double.
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1p-53; }

 private:
  uint64_t key_;
  uint64_t counter_ = 0;
};

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_COUNTER_RNG_H_
