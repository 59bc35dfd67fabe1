// `ulpgate blockquant`: the block quantization kernels (MX, NVFP4) run on
// every target against their model, and outputs made elsewhere named by the
// scale rule and element policy they follow (docs/design.md "Block
// quantization").
#ifndef ULPGATE_TOOLS_CMD_BLOCKQUANT_H_
#define ULPGATE_TOOLS_CMD_BLOCKQUANT_H_

#include <CLI/CLI.hpp>

#include <ostream>
#include <string>

#include "tools/run_args.h"

namespace ulpgate {

void AddBlockQuantCommand(CLI::App& app);

// The block quantizers as ops (OpFamily::kBlockQuant): `run --op
// mx_quantize --dtype SPEC [--variant RULE]` (a seeded [n, 64] tensor, each
// target's kernel against the rule's model; --dump F.npz writes x, scales,
// codes), `check --op mx_quantize --dtype SPEC --inputs F.npz` (names the
// rules; --require-model RULE exits 1 where it is not one),
// `sweep --op mx_quantize` (every non-negative binary32 amax per rule and
// spec through each target's scale byte kernel), and their lines in `list`.
void RunBlockQuantOp(const RunArgs& args);
void CheckBlockQuantOp(const std::string& op, const std::string& dtype, const std::string& path,
                       const std::string& require);
void SweepBlockQuantOp(const std::string& op, const std::string& dtype, const std::string& variant,
                       const std::string& target, unsigned threads);
void PrintBlockQuantOps(std::ostream& out);

}  // namespace ulpgate

#endif  // ULPGATE_TOOLS_CMD_BLOCKQUANT_H_
