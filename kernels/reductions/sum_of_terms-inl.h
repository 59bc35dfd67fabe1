// The schedules of a sum of terms (a dot product, a plain sum, a sum of
// squares): the order in which the n terms of one output are combined,
// written once over an arithmetic. A reduction whose op is such a sum (the
// linear and MSE folders) instantiates them with its Term; an op that is not
// one (a norm, a softmax) need not use them.
//
// No include guard and no namespace on purpose, as a spec's -inl.h: this
// file is included as ulpgate::sum_of_terms by sum_of_terms.h (the exact and
// binary32-emulated arithmetics) and as ulpgate::HWY_NAMESPACE::sum_of_terms
// by sum_of_terms_kernels-inl.h once per Highway target, so that the
// templates carry the target's attributes.
//
// Vocabulary of the templates:
//   a, la  an arithmetic: Value, Zero(), Const(float), Add, Sub, Mul, Div,
//          MulAdd(a, b, c) = a*b + c (fused or not is the arithmetic's
//          business). A lane arithmetic `la` also has Lanes() and
//          ToScalars(v), which gives its lanes as an indexable buffer of the
//          scalar arithmetic's values.
//   terms  where operand k of the reduction comes from: terms.P(a, k) and
//          terms.Q(a, k) return a.Value. For the sequential and pairwise
//          schedules that is operand k (broadcast, or one output per lane);
//          for the lane-parallel schedule it is operands k .. k + Lanes() - 1,
//          with +0 past the end of the reduction.
//   Term   what index k contributes: Rounded(a, terms, k), its value rounded
//          once; Accumulate(a, terms, k, acc), acc plus it with the term's
//          fused accumulation (MulAdd for a product).

// ---- Terms every sum of products uses --------------------------------------

// p_k * q_k: the dot products of the linear layer.
struct ProductTerm {
  template <class A, class T>
  static typename A::Value Rounded(A& a, const T& terms, size_t k) {
    return a.Mul(terms.P(a, k), terms.Q(a, k));
  }
  template <class A, class T>
  static typename A::Value Accumulate(A& a, const T& terms, size_t k,
                                      const typename A::Value& acc) {
    return a.MulAdd(terms.P(a, k), terms.Q(a, k), acc);
  }
};

// p_k alone: the column sums of the bias gradient. There is no product, so the
// fused and unfused sequential schedules are the same sequence of additions.
struct PlainTerm {
  template <class A, class T>
  static typename A::Value Rounded(A& a, const T& terms, size_t k) {
    return terms.P(a, k);
  }
  template <class A, class T>
  static typename A::Value Accumulate(A& a, const T& terms, size_t k,
                                      const typename A::Value& acc) {
    return a.Add(acc, terms.P(a, k));
  }
};

// ---- Schedules: the order in which the n terms are combined ----------------

// acc = +0; acc = MulAdd(p_k, q_k, acc) for k = 0, 1, ..., n-1.
template <class Term, class A, class T>
typename A::Value SequentialFused(A& a, const T& terms, size_t n) {
  typename A::Value acc = a.Zero();
  for (size_t k = 0; k < n; ++k) acc = Term::Accumulate(a, terms, k, acc);
  return acc;
}

// acc = +0; acc = acc + RN(p_k * q_k) for k = 0, 1, ..., n-1.
template <class Term, class A, class T>
typename A::Value SequentialUnfused(A& a, const T& terms, size_t n) {
  typename A::Value acc = a.Zero();
  for (size_t k = 0; k < n; ++k) acc = a.Add(acc, Term::Rounded(a, terms, k));
  return acc;
}

// Pairwise (cascade) summation of the rounded terms: the left part is the
// largest power of two below n, so every left subtree is a perfect binary tree.
// This is the same tree as adding adjacent pairs level by level with an odd
// element carried up, and its depth is ceil(log2 n).
template <class Term, class A, class T>
typename A::Value PairwiseRange(A& a, const T& terms, size_t begin, size_t n) {
  if (n == 1) return Term::Rounded(a, terms, begin);
  size_t left = 1;
  while (left * 2 < n) left *= 2;
  const typename A::Value l = PairwiseRange<Term>(a, terms, begin, left);
  const typename A::Value r = PairwiseRange<Term>(a, terms, begin + left, n - left);
  return a.Add(l, r);
}

template <class Term, class A, class T>
typename A::Value Pairwise(A& a, const T& terms, size_t n) {
  if (n == 0) return a.Zero();
  return PairwiseRange<Term>(a, terms, 0, n);
}

// The fixed horizontal reduction of a lane-parallel schedule: a halving tree,
// lane[j] = lane[j] + lane[j + w] for w = lanes/2, lanes/4, ..., 1, written
// here rather than taken from Highway's SumOfLanes, whose order differs between
// targets. `lanes` must be a power of two (1, 4, 8 and 16 on x86).
template <class SA, class Buffer>
typename SA::Value ReduceLanes(SA& sa, Buffer& lane, size_t lanes) {
  for (size_t w = lanes / 2; w >= 1; w /= 2) {
    for (size_t j = 0; j < w; ++j) lane[j] = sa.Add(lane[j], lane[j + w]);
  }
  return lane[0];
}

// One accumulator per lane: lane j takes terms j, j + L, j + 2L, ... (L =
// la.Lanes()) with the term's fused accumulation; the last, partial chunk is
// padded with +0 operands, whose terms are +0 (so a -0 accumulator becomes +0
// there, in kernel and model alike). Then ReduceLanes. The result therefore
// depends on L: 4 on 128-bit targets, 8 on 256-bit, 16 on 512-bit.
template <class Term, class LA, class SA, class T>
typename SA::Value LaneParallel(LA& la, SA& sa, const T& terms, size_t n) {
  typename LA::Value acc = la.Zero();
  for (size_t k = 0; k < n; k += la.Lanes()) acc = Term::Accumulate(la, terms, k, acc);
  auto lane = la.ToScalars(acc);
  return ReduceLanes(sa, lane, la.Lanes());
}

// ---- The models' side: one element's terms in arrays ------------------------

// Operands as `terms` for one output: one term per index for the sequential
// and pairwise schedules ...
struct ArrayTerms {
  const float* p;
  const float* q;
  template <class A>
  typename A::Value P(A& a, size_t k) const {
    return a.Const(p[k]);
  }
  template <class A>
  typename A::Value Q(A& a, size_t k) const {
    return a.Const(q[k]);
  }
};

// ... and lanes k .. k+L-1, +0 past n, for the lane-parallel schedule (a lane
// arithmetic with FromFloats, oracles/lane_array.h).
struct ArrayChunkTerms {
  const float* p;
  const float* q;
  size_t n;
  template <class LA>
  typename LA::Value P(LA& la, size_t k) const {
    return la.FromFloats(p + k, n - k);
  }
  template <class LA>
  typename LA::Value Q(LA& la, size_t k) const {
    return la.FromFloats(q + k, n - k);
  }
};

// The sum of n terms p[0..n), q[0..n) (q may be null for a plain sum) with a
// model's schedule over a scalar arithmetic `a`; `lanes` is used by the
// lane-parallel schedule only, which runs on LaneArrayArith<A>. An
// elementwise schedule has no sum: +0.
template <class Term, class A>
typename A::Value RunSchedule(::ulpgate::ReductionSchedule schedule, A& a, size_t lanes,
                              const float* p, const float* q, size_t n) {
  const ArrayTerms scalar_terms{p, q};
  switch (schedule) {
    case ::ulpgate::ReductionSchedule::kSequentialFused:
      return SequentialFused<Term>(a, scalar_terms, n);
    case ::ulpgate::ReductionSchedule::kSequentialUnfused:
      return SequentialUnfused<Term>(a, scalar_terms, n);
    case ::ulpgate::ReductionSchedule::kPairwise:
      return Pairwise<Term>(a, scalar_terms, n);
    case ::ulpgate::ReductionSchedule::kLaneParallel: {
      ::ulpgate::LaneArrayArith<A> lane_arith(a, lanes);
      const ArrayChunkTerms chunk_terms{p, q, n};
      return LaneParallel<Term>(lane_arith, a, chunk_terms, n);
    }
    case ::ulpgate::ReductionSchedule::kElementwise:
      break;
  }
  return a.Zero();
}
