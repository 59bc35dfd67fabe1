// The input suites of the registered reductions, drawn from what each op's
// spec says of its operands (OperandKind, TermRole, the reduction axis) and
// its adversarial families (by name). Every tensor
// element is a pure function of (suite, seed, instance, tensor, position), from
// the counter-based generator (counter_rng.h), so any instance can be
// regenerated from its index alone.
#ifndef ULPGATE_SUITES_REDUCTION_SUITES_H_
#define ULPGATE_SUITES_REDUCTION_SUITES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "suites/inputs/inputs.h"
#include "suites/inputs/reduction_problem.h"

namespace ulpgate {

// well_conditioned, cancellation, training, adversarial, exact.
// default_n is the number of instances a run generates.
const std::vector<SuiteInfo>& ReductionSuites();
bool IsReductionSuite(std::string_view suite);

// The adversarial suite cycles through the op's families (its spec's
// kAdversarialFamilies): instance i uses family i % size(). The linear ops:
// huge_range, cancel_to_zero, subnormal_products, overflowing_partials,
// cancel_leaving_tiny; the MSE ops their analogues.
const std::vector<std::string>& AdversarialFamilies(const ReductionOpInfo& op);

// Instance `index` of a suite in a format: every operand a value of it (f32,
// bf16 or f16; each format places the adversarial families in its own
// range). Throws InputError for an unknown suite.
ReductionInstance GenerateReductionInstance(const ReductionOpInfo& op, const ReductionShape& shape,
                                            std::string_view suite, uint64_t seed,
                                            uint64_t index,
                                            const FloatFormat& format = kBinary32);

// Instances 0 .. count-1.
ReductionInputSet GenerateReductionSuite(const ReductionOpInfo& op, const ReductionShape& shape,
                                         std::string_view suite, uint64_t seed, size_t count,
                                         const FloatFormat& format = kBinary32);

// The shapes the tests name: every extent an odd size s up to twice the
// widest vector (s = 1, 3, ..., 31: tails of every lane count), and the
// training model's (the spec's kTrainingShapes: the linear layers 8x4 -> 4,
// 8x4 -> 2; the MSE's N = 16). The large shape (256x256x256) is for the CLI
// only.
std::vector<ReductionShape> TailShapes(const ReductionOpInfo& op);
std::vector<ReductionShape> TrainingShapes(const ReductionOpInfo& op);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_REDUCTION_SUITES_H_
