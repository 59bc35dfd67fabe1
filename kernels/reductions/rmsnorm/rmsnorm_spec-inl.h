// RMSNorm's op sequences, forward and backward, written once (see
// rmsnorm_spec.h and kernels/reductions/row_schedules-inl.h for the
// vocabulary). No include guard and no namespace: included as
// ulpgate::rmsnorm_spec by rmsnorm_spec.h and per Highway target by
// kernels/reductions/row_kernels-inl.h.
//
// With v = RN(mean + eps) (mean = RN(sum / n) of a summed statistic, or the
// Welford mean itself):
//   forward, kRsqrt:      r = RN(1 / RN(sqrt v)),  y_i = RN(RN(x_i r) g_i)
//   forward, kSqrtDivide: s = RN(sqrt v),          y_i = RN(RN(x_i / s) g_i)
//     (PyTorch's x * torch.rsqrt(v) then * weight, and x / sqrt(v) * weight)
//   backward, with c the row's mean of g dy x:
//     kRsqrt:      k = RN(RN(RN(r r) r) c), dx_i = MulAdd(-k, x_i, RN(RN(g_i dy_i) r))
//     kSqrtDivide: k = RN(c / RN(RN(s s) s)), dx_i = MulAdd(-k, x_i, RN(RN(g_i dy_i) / s))
//     (-k exact; MulAdd the target's: fused on AVX2/AVX3/AVX3_DL).

// x_k^2: the mean square.
struct SquareTerm {
  template <class A, class R>
  static typename A::Value Rounded(A& a, const R& row, size_t k) {
    const typename A::Value x = row.X(a, k);
    return a.Mul(x, x);
  }
  template <class A, class R>
  static typename A::Value Accumulate(A& a, const R& row, size_t k,
                                      const typename A::Value& acc) {
    const typename A::Value x = row.X(a, k);
    return a.MulAdd(x, x, acc);
  }
};

// RN(g_k dy_k) x_k: the backward pass's mean.
struct WeightedGradTerm {
  template <class A, class R>
  static typename A::Value Rounded(A& a, const R& row, size_t k) {
    return a.Mul(a.Mul(row.G(a, k), row.Dy(a, k)), row.X(a, k));
  }
  template <class A, class R>
  static typename A::Value Accumulate(A& a, const R& row, size_t k,
                                      const typename A::Value& acc) {
    return a.MulAdd(a.Mul(row.G(a, k), row.Dy(a, k)), row.X(a, k), acc);
  }
};

// m_0 = +0, m_k = RN(m_{k-1} + RN(RN(t_k - m_{k-1}) / k)): the running mean
// of the rounded terms, k exact in binary32 (n <= kMaxRowLength).
template <class Term, class A, class R>
typename A::Value WelfordMean(A& a, const R& row, size_t n) {
  typename A::Value m = a.Zero();
  for (size_t k = 0; k < n; ++k) {
    const typename A::Value t = Term::Rounded(a, row, k);
    m = a.Add(m, a.Div(a.Sub(t, m), a.Const(static_cast<float>(k + 1))));
  }
  return m;
}

// RN(sum / n), n exact.
template <class A>
typename A::Value MeanOfSum(A& a, const typename A::Value& sum, size_t n) {
  return a.Div(sum, a.Const(static_cast<float>(n)));
}

// The row's scale from v = RN(mean + eps): r or s.
template <RowFinish kFinish, class A>
typename A::Value RowScale(A& a, const typename A::Value& mean, const typename A::Value& eps) {
  const typename A::Value v = a.Add(mean, eps);
  if constexpr (kFinish == RowFinish::kRsqrt) {
    return a.Div(a.Const(1.0f), a.Sqrt(v));
  } else {
    static_assert(kFinish == RowFinish::kSqrtDivide, "RMSNorm finishes by rsqrt or divide");
    return a.Sqrt(v);
  }
}

template <RowFinish kFinish, class A>
typename A::Value ForwardElement(A& a, const typename A::Value& x, const typename A::Value& g,
                                 const typename A::Value& scale) {
  if constexpr (kFinish == RowFinish::kRsqrt) {
    return a.Mul(a.Mul(x, scale), g);
  } else {
    return a.Mul(a.Div(x, scale), g);
  }
}

// -k of the backward pass (the negation exact).
template <RowFinish kFinish, class A>
typename A::Value BackwardNegCoefficient(A& a, const typename A::Value& scale,
                                         const typename A::Value& mean_dot) {
  const typename A::Value cube = a.Mul(a.Mul(scale, scale), scale);
  const typename A::Value k =
      kFinish == RowFinish::kRsqrt ? a.Mul(cube, mean_dot) : a.Div(mean_dot, cube);
  return a.Mul(a.Const(-1.0f), k);
}

template <RowFinish kFinish, class A>
typename A::Value BackwardElement(A& a, const typename A::Value& dy, const typename A::Value& x,
                                  const typename A::Value& g, const typename A::Value& scale,
                                  const typename A::Value& neg_k) {
  const typename A::Value gdy = a.Mul(g, dy);
  const typename A::Value first =
      kFinish == RowFinish::kRsqrt ? a.Mul(gdy, scale) : a.Div(gdy, scale);
  return a.MulAdd(neg_k, x, first);
}
