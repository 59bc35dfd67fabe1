// Drivers that run the schedules of a sum of terms (sum_of_terms-inl.h) over
// Highway vectors, shared by the reductions that are such sums (the kernels of
// kernels/reductions/linear/ and kernels/reductions/mse/).
//
// Two ways to put a reduction into vectors:
//   - across outputs (sequential and pairwise schedules): each lane computes a
//     different output, following the scalar schedule exactly, so the lanes
//     never meet and the result cannot depend on the vector width;
//   - lane-parallel: the lanes split one output's terms (one accumulator per
//     lane) and ReduceLanes joins them in the spec's fixed order, so the result
//     depends on the lane count, exactly as the model with that lane count says.
// Tails are never computed differently from the body: a partial group of
// outputs or of terms goes through one full vector whose padding lanes hold +0.

#if defined(ULPGATE_KERNELS_REDUCTIONS_SUM_OF_TERMS_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_REDUCTIONS_SUM_OF_TERMS_KERNELS_INL_H_
#undef ULPGATE_KERNELS_REDUCTIONS_SUM_OF_TERMS_KERNELS_INL_H_
#else
#define ULPGATE_KERNELS_REDUCTIONS_SUM_OF_TERMS_KERNELS_INL_H_
#endif

#include <vector>

#include "hwy/highway.h"
#include "kernels/reductions/reduction_spec.h"
#include "oracles/lane_array.h"
#include "kernels/vector_arith-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

// The schedules, compiled for this target (see sum_of_terms-inl.h).
namespace sum_of_terms {
#include "kernels/reductions/sum_of_terms-inl.h"
}  // namespace sum_of_terms

namespace impl {

// A schedule chosen at compile time, run on any arithmetic.
template <ReductionSchedule kSchedule, class Term>
struct Schedule {
  template <class A, class T>
  HWY_INLINE typename A::Value operator()(A& a, const T& terms, size_t n) const {
    if constexpr (kSchedule == ReductionSchedule::kSequentialFused) {
      return sum_of_terms::SequentialFused<Term>(a, terms, n);
    } else if constexpr (kSchedule == ReductionSchedule::kSequentialUnfused) {
      return sum_of_terms::SequentialUnfused<Term>(a, terms, n);
    } else {
      static_assert(kSchedule == ReductionSchedule::kPairwise, "not an across-outputs schedule");
      return sum_of_terms::Pairwise<Term>(a, terms, n);
    }
  }
};

// Lanes p[0 .. count-1] and +0 above.
template <class D>
HWY_INLINE hn::Vec<D> LoadPadded(D d, const float* HWY_RESTRICT p, size_t count) {
  if (count >= hn::Lanes(d)) return hn::LoadU(d, p);
  HWY_ALIGN float buffer[hn::MaxLanes(d)] = {};
  for (size_t j = 0; j < count; ++j) buffer[j] = p[j];
  return hn::Load(d, buffer);
}

// Across outputs, for products: P(k) = p[k * p_step] in every lane (the input
// the lane's outputs share), Q(k) = lanes q[k * q_step + 0 .. L-1] (one output
// per lane).
template <class D>
struct BroadcastRowTerms {
  D d;
  const float* p;
  size_t p_step;
  const float* q;
  size_t q_step;
  template <class A>
  HWY_INLINE hn::Vec<D> P(const A&, size_t k) const {
    return hn::Set(d, p[k * p_step]);
  }
  template <class A>
  HWY_INLINE hn::Vec<D> Q(const A&, size_t k) const {
    return hn::LoadU(d, q + k * q_step);
  }
};

// Across outputs, for plain sums: P(k) = lanes p[k * p_step + 0 .. L-1].
template <class D>
struct RowTerms {
  D d;
  const float* p;
  size_t p_step;
  template <class A>
  HWY_INLINE hn::Vec<D> P(const A&, size_t k) const {
    return hn::LoadU(d, p + k * p_step);
  }
};

// Lane-parallel: P(k), Q(k) = lanes k .. k+L-1 of two contiguous arrays of n
// terms, +0 past n (q is unused, and may be null, for plain sums).
template <class D>
struct ChunkTerms {
  D d;
  const float* p;
  const float* q;
  size_t n;
  template <class A>
  HWY_INLINE hn::Vec<D> P(const A&, size_t k) const {
    return LoadPadded(d, p + k, n - k);
  }
  template <class A>
  HWY_INLINE hn::Vec<D> Q(const A&, size_t k) const {
    return LoadPadded(d, q + k, n - k);
  }
};

// [rows, cols] row-major -> [cols, rows] row-major. Copies values, no
// arithmetic: the lane-parallel schedule wants each output's terms contiguous.
inline std::vector<float> Transposed(const float* a, size_t rows, size_t cols) {
  std::vector<float> t(rows * cols);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) t[c * rows + r] = a[r * cols + c];
  }
  return t;
}

// out[m * out_step + j] = epilogue(arith, j0, count, reduce(arith, terms, n))
// for every row m < rows and column j < cols, one output per lane, in groups
// of L columns starting at j0 (count = valid lanes of the group).
// make_terms(m, r_columns, r_step) builds the terms of row m for the group
// whose row-loaded operand starts at r_columns: R(k, j) = r[k * r_step + j]
// read in place for full groups; the last, partial group reads a zero-padded
// copy of its columns, so its lanes run the body's instructions.
template <class D, class MakeTerms, class Reduce, class Epilogue>
HWY_INLINE void AcrossOutputs(D d, size_t rows, size_t cols, size_t n,
                              const float* r, size_t r_step, float* out, size_t out_step,
                              const MakeTerms& make_terms, const Reduce& reduce,
                              const Epilogue& epilogue) {
  const VectorArith<D> arith{d};
  const size_t lanes = hn::Lanes(d);
  size_t j0 = 0;
  for (; j0 + lanes <= cols; j0 += lanes) {
    for (size_t m = 0; m < rows; ++m) {
      const auto terms = make_terms(m, r + j0, r_step);
      hn::StoreU(epilogue(arith, j0, lanes, reduce(arith, terms, n)), d, out + m * out_step + j0);
    }
  }
  if (j0 == cols) return;
  const size_t rest = cols - j0;
  std::vector<float> tail(n * lanes + 1, 0.0f);  // +1: never empty
  for (size_t k = 0; k < n; ++k) {
    for (size_t j = 0; j < rest; ++j) tail[k * lanes + j] = r[k * r_step + j0 + j];
  }
  HWY_ALIGN float result[hn::MaxLanes(d)];
  for (size_t m = 0; m < rows; ++m) {
    const auto terms = make_terms(m, tail.data(), lanes);
    hn::Store(epilogue(arith, j0, rest, reduce(arith, terms, n)), d, result);
    for (size_t j = 0; j < rest; ++j) out[m * out_step + j0 + j] = result[j];
  }
}

// out[m * out_step + j] = epilogue(scalar, j, LaneParallel(row m of p, row j
// of q)) for m < rows, j < cols; rows of p and q hold n contiguous terms.
template <class Term, class D, class Epilogue>
HWY_INLINE void LaneParallelOutputs(D d, size_t rows, size_t cols, size_t n,
                                    const float* p, size_t p_step, const float* q,
                                    size_t q_step, float* out, size_t out_step,
                                    const Epilogue& epilogue) {
  const VectorArith<D> arith{d};
  const ScalarArith scalar;
  for (size_t m = 0; m < rows; ++m) {
    for (size_t j = 0; j < cols; ++j) {
      const ChunkTerms<D> terms{d, p + m * p_step, q ? q + j * q_step : nullptr, n};
      out[m * out_step + j] =
          epilogue(scalar, j, sum_of_terms::LaneParallel<Term>(arith, scalar, terms, n));
    }
  }
}

}  // namespace impl
}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_REDUCTIONS_SUM_OF_TERMS_KERNELS_INL_H_
