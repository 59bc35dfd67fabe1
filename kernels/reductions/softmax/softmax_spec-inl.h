// Softmax's and log-softmax's op sequences, forward and backward, written
// once (see softmax_spec.h and kernels/reductions/row_schedules-inl.h for the
// vocabulary). No include guard and no namespace: included as
// ulpgate::softmax_spec by softmax_spec.h and per Highway target by
// kernels/reductions/row_kernels-inl.h.
//
// Forward, with M the row's maximum (RowMax) and S = sum_k RN(Exp(RN(x_k - M)))
// by the variant's schedule, or M and S from OnlineMaxSum:
//   softmax kDivide:     y_i = RN(Exp(RN(x_i - M)) / S)
//   softmax kReciprocal: y_i = RN(Exp(RN(x_i - M)) RN(1 / S))
//   log_softmax:         y_i = RN(RN(x_i - M) - Log(S))
// Backward:
//   softmax:     dx_i = RN(y_i RN(dy_i - D)), D = sum_k dy_k y_k (MulAdd)
//   log_softmax: dx_i = RN(dy_i - RN(Exp(y_i) G)), G = sum_k dy_k
// Exp and Log are Highway 1.0.3's (hwy/contrib/math), whose multiply-adds
// are the target's.

// RN(Exp(RN(x_k - M))), M the row's shift.
struct ExpTerm {
  template <class A, class R>
  static typename A::Value Rounded(A& a, const R& row, size_t k) {
    return a.Exp(a.Sub(row.X(a, k), row.Shift(a)));
  }
  template <class A, class R>
  static typename A::Value Accumulate(A& a, const R& row, size_t k,
                                      const typename A::Value& acc) {
    return a.Add(acc, Rounded(a, row, k));
  }
};

// dy_k y_k, accumulated by MulAdd.
struct GradOutputTerm {
  template <class A, class R>
  static typename A::Value Rounded(A& a, const R& row, size_t k) {
    return a.Mul(row.Dy(a, k), row.Y(a, k));
  }
  template <class A, class R>
  static typename A::Value Accumulate(A& a, const R& row, size_t k,
                                      const typename A::Value& acc) {
    return a.MulAdd(row.Dy(a, k), row.Y(a, k), acc);
  }
};

// dy_k.
struct GradTerm {
  template <class A, class R>
  static typename A::Value Rounded(A& a, const R& row, size_t k) {
    return row.Dy(a, k);
  }
  template <class A, class R>
  static typename A::Value Accumulate(A& a, const R& row, size_t k,
                                      const typename A::Value& acc) {
    return a.Add(acc, row.Dy(a, k));
  }
};

template <class V>
struct MaxAndSum {
  V max;
  V sum;
};

// One pass: m_0 = max(x_0, lowest) (+0 added, as RowMax does), s_0 =
// Exp(RN(x_0 - m_0)) (1, or 0 for a masked x_0 = -inf); then m_k =
// RN(Max(m_{k-1}, x_k) + 0) and s_k = MulAdd(s_{k-1}, Exp(RN(m_{k-1} - m_k)),
// Exp(RN(x_k - m_k))). Where the maximum does not change the rescaling is
// Exp(+0) = 1 exactly and the product exact. The running maximum starts at the
// lowest finite value, not at -inf: a row whose first elements are -inf
// (masked logits) would otherwise rescale by Exp(-inf - -inf) = Exp(NaN),
// which Highway 1.0.3 makes 0 on the SIMD targets and NaN on SCALAR. m_n is
// the row's maximum, as RowMax gives it, for every row with a finite element.
// M and S come back through references: SVE's vectors are sizeless and cannot
// be members of a struct.
template <class A, class R>
void OnlineMaxSum(A& a, const R& row, size_t n, typename A::Value& max,
                  typename A::Value& sum) {
  using V = typename A::Value;
  const V x0 = row.X(a, 0);
  V m = a.Add(a.Max(a.Const(std::numeric_limits<float>::lowest()), x0), a.Zero());
  V s = a.Exp(a.Sub(x0, m));
  for (size_t k = 1; k < n; ++k) {
    const V x = row.X(a, k);
    const V next = a.Add(a.Max(m, x), a.Zero());
    s = a.MulAdd(s, a.Exp(a.Sub(m, next)), a.Exp(a.Sub(x, next)));
    m = next;
  }
  max = m;
  sum = s;
}

// 1 / S for the reciprocal finish.
template <class A>
typename A::Value Reciprocal(A& a, const typename A::Value& sum) {
  return a.Div(a.Const(1.0f), sum);
}

// scale: S for kDivide, RN(1 / S) for kReciprocal.
template <RowFinish kFinish, class A>
typename A::Value SoftmaxElement(A& a, const typename A::Value& x, const typename A::Value& max,
                                 const typename A::Value& scale) {
  const typename A::Value e = a.Exp(a.Sub(x, max));
  if constexpr (kFinish == RowFinish::kReciprocal) {
    return a.Mul(e, scale);
  } else {
    static_assert(kFinish == RowFinish::kDivide, "softmax finishes by divide or reciprocal");
    return a.Div(e, scale);
  }
}

template <class A>
typename A::Value LogSoftmaxElement(A& a, const typename A::Value& x,
                                    const typename A::Value& max,
                                    const typename A::Value& log_sum) {
  return a.Sub(a.Sub(x, max), log_sum);
}

template <class A>
typename A::Value SoftmaxBackwardElement(A& a, const typename A::Value& dy,
                                         const typename A::Value& y,
                                         const typename A::Value& dot) {
  return a.Mul(y, a.Sub(dy, dot));
}

template <class A>
typename A::Value LogSoftmaxBackwardElement(A& a, const typename A::Value& dy,
                                            const typename A::Value& y,
                                            const typename A::Value& grad_sum) {
  return a.Sub(dy, a.Mul(a.Exp(y), grad_sum));
}
