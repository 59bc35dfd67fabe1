// Named orders in which a binary32 sum adds its terms: what `compare` tries
// where a side follows none of ulpgate's schedules, to name its order from
// its outputs (a plain sum's terms, a row reduction's exponentials or
// squares). Each addition is one binary32 addition, rounded to nearest.
//
//   sequential                      ((t0 + t1) + t2) + ...
//   accumulators_L_in_turn          L accumulators, accumulator j taking terms
//                                   j, j + L, ... in turn (starting at 0),
//                                   then joined in turn: a0 + a1 + ... + a(L-1)
//   accumulators_L_halving          the same accumulators joined by a halving
//                                   tree: a_j += a_(j + w) for w = L/2, ..., 1
//   accumulators_L_groups_G_in_turn and accumulators_L_groups_G_halving
//                                   blocks of L terms, block b lane j term
//                                   bL + j; groups of G blocks summed lane by
//                                   lane in turn, the groups' sums added lane
//                                   by lane in turn, then the lanes joined (a
//                                   vector loop unrolled G times, YNNPACK's)
//   numpy_pairwise                  NumPy's pairwise_sum: under 8 terms in
//                                   turn from 0; up to 128, 8 accumulators
//                                   over the blocks of 8, joined as
//                                   ((a0+a1)+(a2+a3))+((a4+a5)+(a6+a7)), the
//                                   remainder added in turn; past 128, the two
//                                   halves (the first n/2 rounded down to a
//                                   multiple of 8) summed so and added
//   binary64_rounded_once           the binary64 sum in turn, rounded once
//                                   (a wider accumulator, not an order)
//
// L is a power of two from 2 up to the count of terms, G 2 or 4.
#ifndef ULPGATE_SUITES_ENGINE_REDUCTIONS_SUM_ORDERS_H_
#define ULPGATE_SUITES_ENGINE_REDUCTIONS_SUM_ORDERS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ulpgate {

// Every order above for `terms` terms: sequential; the accumulators for each
// L; the grouped ones where L G divides the count; numpy_pairwise;
// binary64_rounded_once last.
std::vector<std::string> SumOrderNames(size_t terms);

// Whether `order` is one of the grammar's names (any L a power of two, G 2
// or 4), for any count of terms.
bool IsSumOrder(std::string_view order);

// The sum of terms[0 .. n) in `order`. Throws std::invalid_argument for a
// name that is not an order.
float SumInOrder(std::string_view order, const float* terms, size_t n);
inline float SumInOrder(std::string_view order, const std::vector<float>& terms) {
  return SumInOrder(order, terms.data(), terms.size());
}

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_ENGINE_REDUCTIONS_SUM_ORDERS_H_
