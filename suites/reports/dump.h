// --dump: JSON Lines, one record per evaluated case (one input tuple of
// an elementwise op, one problem instance of a reduction) with its inputs, every
// (variant, target)'s outputs, the exact values and every error, floats as C99
// hex floats, so that an independent program (tools/recheck_dump.py) can
// recompute every exact value and every error. The format is documented in
// docs/dump-format.md; kDumpFormat names its version.
#ifndef ULPGATE_SUITES_DUMP_H_
#define ULPGATE_SUITES_DUMP_H_

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "suites/engine/elementwise_cases.h"
#include "suites/inputs/inputs.h"
#include "suites/engine/reduction_cases.h"

namespace ulpgate {

inline constexpr const char* kDumpFormat = "ulpgate-dump-1";

// `results` must come from RunElementwise with RunOptions::keep_outputs.
void WriteElementwiseDump(std::ostream& out, const ElementwiseOpInfo& op, const InputSet& inputs,
                          const std::vector<CaseResult>& results);

// `run` must come from RunReduction with ReductionRunOptions::keep_details.
void WriteReductionDump(std::ostream& out, const ReductionInputSet& inputs,
                        const ReductionRun& run);

// Opens `path` for writing ("-" is stdout), calls `write`, and reports a
// failure as std::runtime_error naming the path.
void WriteDumpFile(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_DUMP_H_
