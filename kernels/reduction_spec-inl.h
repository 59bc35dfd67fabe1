// The op sequences of the reductions (linear layer and MSE loss), written once
// (see reduction_spec.h).
//
// No include guard and no namespace on purpose, as an elementwise op's
// <op>_spec-inl.h (kernels/ops/elementwise_spec.h): this file is included as
// ulpgate::reduction_spec by reduction_spec.h (for the exact and
// binary32-emulated arithmetics) and as ulpgate::HWY_NAMESPACE::reduction_spec
// by kernels/reduction-inl.h once per Highway target, so that the templates
// carry the target's attributes.
//
// Vocabulary of the templates:
//   a, la  an arithmetic (see reduction_spec.h): Value, Zero(), Const(float),
//          Add, Sub, Mul, Div, MulAdd(a, b, c) = a*b + c (fused or not is the
//          arithmetic's business). A lane arithmetic `la` also has Lanes() and
//          ToScalars(v), which gives its lanes as an indexable buffer of the
//          scalar arithmetic's values.
//   terms  where operand k of the reduction comes from: terms.P(a, k) and
//          terms.Q(a, k) return a.Value. For the sequential and pairwise
//          schedules that is operand k (broadcast, or one output per lane);
//          for the lane-parallel schedule it is operands k .. k + Lanes() - 1,
//          with +0 past the end of the reduction.

// ---- What index k contributes -------------------------------------------

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

// (p_k - q_k)^2 with the difference rounded once, then squared: the MSE loss.
struct SquaredDifferenceTerm {
  template <class A, class T>
  static typename A::Value Rounded(A& a, const T& terms, size_t k) {
    const typename A::Value d = a.Sub(terms.P(a, k), terms.Q(a, k));
    return a.Mul(d, d);
  }
  template <class A, class T>
  static typename A::Value Accumulate(A& a, const T& terms, size_t k,
                                      const typename A::Value& acc) {
    const typename A::Value d = a.Sub(terms.P(a, k), terms.Q(a, k));
    return a.MulAdd(d, d, acc);
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

// ---- What the ops do around the reduction -----------------------------------

// linear_fwd: the dot product is rounded first, then the bias is added once,
// as BLAS-backed frameworks compute x W^T + b (a GEMM, then a broadcast add).
template <class A>
typename A::Value AddBias(A& a, const typename A::Value& dot, const typename A::Value& bias) {
  return a.Add(dot, bias);
}

// mse_fwd: mean = RN(sum / N). `count` is N as a binary32 value, exact because
// the kernels require N <= 2^24.
template <class A>
typename A::Value MeanByDivision(A& a, const typename A::Value& sum,
                                 const typename A::Value& count) {
  return a.Div(sum, count);
}

// mse_fwd: mean = RN(sum * RN(1/N)): two roundings, and RN(1/N) is exact only
// when N is a power of two.
template <class A>
typename A::Value MeanByReciprocal(A& a, const typename A::Value& sum,
                                   const typename A::Value& count) {
  return a.Mul(sum, a.Div(a.Const(1.0f), count));
}

// mse_bwd, in the framework's order: the scalar 2/N rounded once to binary32
// (N <= 2^24 is exact, so one correctly rounded division), then
// RN(RN(scale * RN(y - t)) * grad_out), multiplied left to right.
template <class A>
typename A::Value MseBwdScale(A& a, const typename A::Value& count) {
  return a.Div(a.Const(2.0f), count);
}

template <class A>
typename A::Value MseBwdElement(A& a, const typename A::Value& y,
                                const typename A::Value& target,
                                const typename A::Value& scale,
                                const typename A::Value& grad_out) {
  const typename A::Value d = a.Sub(y, target);
  const typename A::Value scaled = a.Mul(scale, d);
  return a.Mul(scaled, grad_out);
}
