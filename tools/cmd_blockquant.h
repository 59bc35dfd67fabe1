// `ulpgate blockquant`: the block quantization kernels (MX, NVFP4) run on
// every target against their model, and outputs made elsewhere named by the
// scale rule and element policy they follow (docs/design.md "Block
// quantization").
#ifndef ULPGATE_TOOLS_CMD_BLOCKQUANT_H_
#define ULPGATE_TOOLS_CMD_BLOCKQUANT_H_

#include <CLI/CLI.hpp>

namespace ulpgate {

void AddBlockQuantCommand(CLI::App& app);

}  // namespace ulpgate

#endif  // ULPGATE_TOOLS_CMD_BLOCKQUANT_H_
