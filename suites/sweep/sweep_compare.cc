#include "suites/sweep/sweep_compare.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "suites/engine/chunk_driver.h"

namespace ulpgate {

namespace {

constexpr uint64_t kTile = 4096;

// One block's part: what merges exactly in index order.
struct Part {
  CompareResult counts;
  std::vector<uint64_t> first;
  std::vector<float> first_a, first_b;
};

}  // namespace

CompareSweepResult RunCompareSweep(const CompareSweepRequest& r) {
  const FloatFormat& format = *r.domain.format;
  if (format.storage_bytes() != 2 || r.domain.kind != SweepDomain::Kind::kPairs) {
    throw InputError("compare --sweep: the pairs of a 16-bit format");
  }
  if (r.begin >= r.end || r.end > r.domain.size()) throw InputError("compare --sweep: an empty range");
  const uint64_t first_block = r.begin / kSweepBlock;
  const uint64_t blocks = (r.end - 1) / kSweepBlock - first_block + 1;
  std::vector<Part> parts(blocks);
  constexpr size_t kBins = std::size(kCompareBins) + 2;
  RunUnits(
      blocks, r.threads,
      [&](size_t u) {
        Part& part = parts[u];
        part.counts.histogram.assign(kBins, 0);
        const uint64_t lo = std::max(r.begin, (first_block + u) * kSweepBlock);
        const uint64_t hi = std::min(r.end, (first_block + u + 1) * kSweepBlock);
        std::array<std::vector<uint16_t>, 2> in{std::vector<uint16_t>(kTile), std::vector<uint16_t>(kTile)};
        std::vector<uint16_t> ya(kTile), yb(kTile);
        for (uint64_t at = lo; at < hi; at += kTile) {
          const uint64_t count = std::min(kTile, hi - at);
          // A pair's index is its operands' patterns, grad's high: the kernels
          // receive the patterns themselves, NaN payloads included.
          for (uint64_t i = 0; i < count; ++i) {
            in[0][i] = static_cast<uint16_t>((at + i) >> 16);
            in[1][i] = static_cast<uint16_t>((at + i) & 0xffff);
          }
          const void* operands[2] = {in[0].data(), in[1].data()};
          r.a(operands, ya.data(), count);
          r.b(operands, yb.data(), count);
          std::vector<float> a(count), b(count);
          for (uint64_t i = 0; i < count; ++i) {
            a[i] = static_cast<float>(DecodeBits(format, ya[i]));
            b[i] = static_cast<float>(DecodeBits(format, yb[i]));
          }
          // Encodings compared as the kernels wrote them.
          for (uint64_t i = 0; i < count; ++i) {
            if (ya[i] == yb[i]) continue;
            CompareResult& c = part.counts;
            ++c.differing;
            const double apart = UlpsApart(format, a[i], b[i]);
            if (a[i] == 0 && b[i] == 0) ++c.signed_zero;
            if (std::isnan(a[i]) && std::isnan(b[i])) ++c.nan_payload;
            size_t bin = kBins - 1;
            if (std::isinf(apart)) {
              ++c.special;
            } else {
              bin = std::size(kCompareBins);
              for (size_t k = 0; k < std::size(kCompareBins); ++k) {
                if (apart <= kCompareBins[k]) {
                  bin = k;
                  break;
                }
              }
              if (c.max_index < 0 || apart > c.max_apart) {
                c.max_apart = apart;
                c.max_index = static_cast<int64_t>(at + i);
              }
            }
            ++c.histogram[bin];
            if (part.first.size() < r.keep) {
              part.first.push_back(at + i);
              part.first_a.push_back(a[i]);
              part.first_b.push_back(b[i]);
            }
          }
          part.counts.n += count;
        }
      },
      [&](size_t u) {
        const uint64_t lo = std::max(r.begin, (first_block + u) * kSweepBlock);
        const uint64_t hi = std::min(r.end, (first_block + u + 1) * kSweepBlock);
        return hi - lo;
      },
      r.progress);
  // Merged in index order: the first differing inputs and the first of equal
  // maxima are the lowest indices, whichever thread ran which block.
  CompareSweepResult out;
  CompareResult& c = out.counts;
  c.histogram.assign(kBins, 0);
  for (const Part& p : parts) {
    c.n += p.counts.n;
    c.differing += p.counts.differing;
    c.special += p.counts.special;
    c.signed_zero += p.counts.signed_zero;
    c.nan_payload += p.counts.nan_payload;
    for (size_t k = 0; k < kBins; ++k) c.histogram[k] += p.counts.histogram[k];
    if (p.counts.max_index >= 0 && (c.max_index < 0 || p.counts.max_apart > c.max_apart)) {
      c.max_apart = p.counts.max_apart;
      c.max_index = p.counts.max_index;
    }
    for (size_t k = 0; k < p.first.size() && out.first.size() < r.keep; ++k) {
      out.first.push_back(p.first[k]);
      out.first_a.push_back(p.first_a[k]);
      out.first_b.push_back(p.first_b[k]);
    }
  }
  return out;
}

}  // namespace ulpgate
