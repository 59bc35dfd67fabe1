// Block formats as values, without MPFR: the MX scale rules' names, the
// block specs (element format, scale format, block size) and where blocks
// lie, which the kernels (kernels/block_quant.h) take as the oracle
// (oracles/block_scale.h) does. The rules' definitions: block_scale.h.
#ifndef ULPGATE_ORACLES_BLOCK_FORMAT_H_
#define ULPGATE_ORACLES_BLOCK_FORMAT_H_

#include <cstdint>

#include "oracles/float_format.h"

namespace ulpgate {

enum class ScaleRule : uint8_t { kOcpFloor, kCeil, kEven, kRceil, kReciprocal };
inline constexpr ScaleRule kScaleRules[] = {ScaleRule::kOcpFloor, ScaleRule::kCeil,
                                            ScaleRule::kEven, ScaleRule::kRceil,
                                            ScaleRule::kReciprocal};

inline constexpr uint8_t kE8M0Nan = 0xff;

// A block format: its elements, its scale format and its block size.
struct BlockSpec {
  const char* name;  // "mxfp8_e4m3", ..., "nvfp4"
  const FloatFormat* element;
  const FloatFormat* scale;  // E8M0 for MX, E4M3FN for NVFP4
  int block_size;
  bool tensor_scale;  // NVFP4: a per-tensor binary32 scale beside the blocks'
};

inline constexpr BlockSpec kMxfp8E4M3{"mxfp8_e4m3", &kFloat8E4M3FN, &kFloat8E8M0FNU, 32, false};
inline constexpr BlockSpec kMxfp8E5M2{"mxfp8_e5m2", &kFloat8E5M2, &kFloat8E8M0FNU, 32, false};
inline constexpr BlockSpec kMxfp6E2M3{"mxfp6_e2m3", &kFloat6E2M3FN, &kFloat8E8M0FNU, 32, false};
inline constexpr BlockSpec kMxfp6E3M2{"mxfp6_e3m2", &kFloat6E3M2FN, &kFloat8E8M0FNU, 32, false};
inline constexpr BlockSpec kMxfp4{"mxfp4", &kFloat4E2M1FN, &kFloat8E8M0FNU, 32, false};
inline constexpr BlockSpec kNvfp4{"nvfp4", &kFloat4E2M1FN, &kFloat8E4M3FN, 16, true};

// Where blocks lie in a row-major [rows, cols] tensor: kRows, block_size
// consecutive elements of a row (cols a multiple of it), scale (r, c /
// block_size) of a [rows, cols / block_size] scale tensor; kColumns,
// block_size consecutive rows of a column (rows a multiple of it), scale
// (r / block_size, c) of a [rows / block_size, cols] one.
enum class BlockAxis : uint8_t { kRows, kColumns };

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_BLOCK_FORMAT_H_
