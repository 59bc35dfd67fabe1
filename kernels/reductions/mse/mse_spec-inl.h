// The op sequences of the MSE loss, written once (see mse_spec.h).
//
// No include guard and no namespace on purpose: included as ulpgate::mse_spec
// by mse_spec.h and as ulpgate::HWY_NAMESPACE::mse_spec by mse-inl.h once per
// Highway target (see kernels/reductions/linear/linear_spec-inl.h for what
// the structs' templates are).

// (p_k - q_k)^2 with the difference rounded once, then squared.
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

// The mean of a variant's form (ReductionVariantInfo::form).
template <int kForm, class A>
typename A::Value Mean(A& a, const typename A::Value& sum, const typename A::Value& count) {
  if constexpr (kForm == ::ulpgate::kMeanByReciprocal) {
    return MeanByReciprocal(a, sum, count);
  } else {
    static_assert(kForm == ::ulpgate::kMeanByDivision, "an unknown form of the mean");
    return MeanByDivision(a, sum, count);
  }
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

// The loss: vectors {y, target}, count N.
struct MseFwd {
  static ::ulpgate::ElementTerms Gather(const std::vector<std::vector<float>>& a,
                                        const ::ulpgate::ReductionShape& s, size_t) {
    ::ulpgate::ElementTerms t;
    t.vectors = {a[0], a[1]};
    t.count = s[0];
    return t;
  }
  template <class A>
  static typename A::Value Model(A& a, const ::ulpgate::ReductionModel& m,
                                 const ::ulpgate::ElementTerms& t) {
    const std::vector<float>& y = t.vectors[0];
    const typename A::Value sum = sum_of_terms::RunSchedule<SquaredDifferenceTerm>(
        m.schedule, a, m.lanes, y.data(), t.vectors[1].data(), y.size());
    const typename A::Value count = a.Const(static_cast<float>(t.count));  // exact: N <= 2^24
    return m.form == ::ulpgate::kMeanByReciprocal ? MeanByReciprocal(a, sum, count)
                                                  : MeanByDivision(a, sum, count);
  }
  // x = S / N with S = sum_i (y_i - t_i)^2 exact. The terms are >= 0, so
  // A' = S. Roundings: the difference (twice, as it is squared), the n-term
  // sum, and at most two for the mean (RN(1/N), then the product): n + 4
  // covers every variant. Underflow: n squares and the final scaling.
  template <class E>
  static ::ulpgate::ReductionExactParts<typename E::Value> Exact(E& e,
                                                                 const ::ulpgate::ElementTerms& t) {
    const std::vector<float>& y = t.vectors[0];
    const std::vector<float>& target = t.vectors[1];
    ::ulpgate::ReductionExactParts<typename E::Value> r{e.Zero(), 1, e.Zero(), 0, e.Zero(),
                                                        e.Zero()};
    for (size_t k = 0; k < y.size(); ++k) {
      const typename E::Value d = e.Sub(e.Const(y[k]), e.Const(target[k]));
      r.numerator = e.Add(r.numerator, e.Mul(d, d));
    }
    r.denominator = t.count;
    r.abs_sum = r.numerator;
    r.roundings = y.size() + 4;
    r.underflow = e.Mul(e.Const(static_cast<float>(y.size() + 1)), e.Const(0x1p-149f));
    r.peak = r.numerator;
    return r;
  }
};

// dy[i]: vectors {{y[i]}, {target[i]}}, scalars {grad_out}, count N.
struct MseBwd {
  static ::ulpgate::ElementTerms Gather(const std::vector<std::vector<float>>& a,
                                        const ::ulpgate::ReductionShape& s, size_t element) {
    ::ulpgate::ElementTerms t;
    t.vectors = {{a[0][element]}, {a[1][element]}};
    t.scalars = {a[2][0]};
    t.count = s[0];
    t.position = element;
    return t;
  }
  template <class A>
  static typename A::Value Model(A& a, const ::ulpgate::ReductionModel&,
                                 const ::ulpgate::ElementTerms& t) {
    const typename A::Value scale = MseBwdScale(a, a.Const(static_cast<float>(t.count)));
    return MseBwdElement(a, a.Const(t.vectors[0][0]), a.Const(t.vectors[1][0]), scale,
                         a.Const(t.scalars[0]));
  }
  // x = 2 (y - t) g / N. Roundings: RN(2/N), RN(y - t), two products: 4.
  // Underflow: RN(s d) may lose 2^-150, which the product with g scales by at
  // most |g| (1 + u) < 2 |g|; the last product may lose 2^-150 itself:
  // U = 2^-150 + |g| 2^-149 covers both. Intermediates: |y - t|,
  // |RN(2/N) (y - t)| <= 2 |y - t| (1 + u)^2, and the result; 2|y - t| + |x N|
  // bounds them all before the (1 + gamma) factor.
  template <class E>
  static ::ulpgate::ReductionExactParts<typename E::Value> Exact(E& e,
                                                                 const ::ulpgate::ElementTerms& t) {
    const typename E::Value d = e.Sub(e.Const(t.vectors[0][0]), e.Const(t.vectors[1][0]));
    const typename E::Value g = e.Const(t.scalars[0]);
    ::ulpgate::ReductionExactParts<typename E::Value> r{e.Zero(), 1, e.Zero(), 0, e.Zero(),
                                                        e.Zero()};
    r.numerator = e.Mul(e.Const(2.0f), e.Mul(d, g));
    r.denominator = t.count;
    r.abs_sum = e.Abs(r.numerator);
    r.roundings = 4;
    const typename E::Value least = e.Const(0x1p-149f);
    r.underflow = e.Add(e.Mul(e.Abs(g), least), e.Mul(least, e.Const(0.5f)));
    r.peak = e.Add(e.Mul(e.Const(2.0f), e.Abs(d)), r.abs_sum);
    return r;
  }
};
