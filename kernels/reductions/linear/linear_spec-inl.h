// The op sequences of the linear layer's reductions, written once (see
// linear_spec.h).
//
// No include guard and no namespace on purpose, as every spec's -inl.h: this
// file is included as ulpgate::linear_spec by linear_spec.h (the models'
// binary32 emulation, the exact arithmetic) and as
// ulpgate::HWY_NAMESPACE::linear_spec by linear-inl.h once per Highway
// target. `sum_of_terms` is the namespace of the schedules in the same
// context (kernels/reductions/sum_of_terms-inl.h).
//
// Per op, a struct of templates the generic code calls (registered through
// kernels/reductions/registered_reductions.h):
//   Gather(operands, shape, element) -> ElementTerms: what output `element`
//     depends on;
//   Model(a, model, terms) -> a.Value: the model's bit-exact output over a
//     scalar arithmetic (the binary32 emulation);
//   Exact(e, terms) -> ReductionExactParts: the exact value and the
//     ingredients of its error bound, over an exact arithmetic (ExactArith).

// linear_fwd: the dot product is rounded first, then the bias is added once,
// as BLAS-backed frameworks compute x W^T + b (a GEMM, then a broadcast add).
template <class A>
typename A::Value AddBias(A& a, const typename A::Value& dot, const typename A::Value& bias) {
  return a.Add(dot, bias);
}

// The exact value of sum_k p_k q_k (+ bias) and its bound: every product is
// exact in 48 bits and the sum in the arithmetic's precision; the zero we
// start from is +0, so an exact sum of zero is +0. A dot product of length n
// meets n roundings in any order, fused or not; a bias is one more term, and
// its addition one more rounding. Underflow: each of the n rounded products
// may lose 2^-150, at most doubled on the way (oracles/reduction_bound.h).
template <class E>
::ulpgate::ReductionExactParts<typename E::Value> DotExact(E& e, const ::ulpgate::ElementTerms& t,
                                                            const float* bias) {
  const std::vector<float>& p = t.vectors[0];
  const std::vector<float>& q = t.vectors[1];
  ::ulpgate::ReductionExactParts<typename E::Value> r{e.Zero(), 1, e.Zero(), 0, e.Zero(), e.Zero()};
  for (size_t k = 0; k < p.size(); ++k) {
    const typename E::Value term = e.Mul(e.Const(p[k]), e.Const(q[k]));
    r.numerator = e.Add(r.numerator, term);
    r.abs_sum = e.Add(r.abs_sum, e.Abs(term));
  }
  r.roundings = p.size();
  if (bias != nullptr) {
    const typename E::Value b = e.Const(*bias);
    r.numerator = e.Add(r.numerator, b);
    r.abs_sum = e.Add(r.abs_sum, e.Abs(b));
    r.roundings = p.size() + 1;
  }
  // Exact: n <= 2^22 is a binary32 value, and 2^-149 its least subnormal.
  r.underflow = e.Mul(e.Const(static_cast<float>(p.size())), e.Const(0x1p-149f));
  r.peak = r.abs_sum;
  return r;
}

// y[b,o]: p = x[b,:], q = w[o,:], scalars {b[o]}.
struct LinearFwd {
  static ::ulpgate::ElementTerms Gather(const std::vector<std::vector<float>>& a,
                                        const ::ulpgate::ReductionShape& s, size_t element) {
    const size_t in = s[1], out = s[2];
    const size_t b = element / out, o = element % out;
    ::ulpgate::ElementTerms t;
    t.vectors.emplace_back(a[0].begin() + b * in, a[0].begin() + (b + 1) * in);
    t.vectors.emplace_back(a[1].begin() + o * in, a[1].begin() + (o + 1) * in);
    t.scalars = {a[2][o]};
    return t;
  }
  template <class A>
  static typename A::Value Model(A& a, const ::ulpgate::ReductionModel& m,
                                 const ::ulpgate::ElementTerms& t) {
    const std::vector<float>& p = t.vectors[0];
    const typename A::Value dot = sum_of_terms::RunSchedule<sum_of_terms::ProductTerm>(
        m.schedule, a, m.lanes, p.data(), t.vectors[1].data(), p.size());
    return AddBias(a, dot, a.Const(t.scalars[0]));
  }
  template <class E>
  static ::ulpgate::ReductionExactParts<typename E::Value> Exact(E& e,
                                                                 const ::ulpgate::ElementTerms& t) {
    return DotExact(e, t, &t.scalars[0]);
  }
};

// dx[b,i]: p = dy[b,:], q = w[:,i].
struct LinearBwdInput {
  static ::ulpgate::ElementTerms Gather(const std::vector<std::vector<float>>& a,
                                        const ::ulpgate::ReductionShape& s, size_t element) {
    const size_t in = s[1], out = s[2];
    const size_t b = element / in, i = element % in;
    ::ulpgate::ElementTerms t;
    t.vectors.emplace_back(a[0].begin() + b * out, a[0].begin() + (b + 1) * out);
    t.vectors.emplace_back();
    for (size_t o = 0; o < out; ++o) t.vectors[1].push_back(a[1][o * in + i]);
    return t;
  }
  template <class A>
  static typename A::Value Model(A& a, const ::ulpgate::ReductionModel& m,
                                 const ::ulpgate::ElementTerms& t) {
    const std::vector<float>& p = t.vectors[0];
    return sum_of_terms::RunSchedule<sum_of_terms::ProductTerm>(m.schedule, a, m.lanes, p.data(),
                                                               t.vectors[1].data(), p.size());
  }
  template <class E>
  static ::ulpgate::ReductionExactParts<typename E::Value> Exact(E& e,
                                                                 const ::ulpgate::ElementTerms& t) {
    return DotExact(e, t, nullptr);
  }
};

// dw[o,i]: p = dy[:,o], q = x[:,i].
struct LinearBwdWeight {
  static ::ulpgate::ElementTerms Gather(const std::vector<std::vector<float>>& a,
                                        const ::ulpgate::ReductionShape& s, size_t element) {
    const size_t batch = s[0], in = s[1], out = s[2];
    const size_t o = element / in, i = element % in;
    ::ulpgate::ElementTerms t;
    t.vectors.resize(2);
    for (size_t b = 0; b < batch; ++b) {
      t.vectors[0].push_back(a[0][b * out + o]);
      t.vectors[1].push_back(a[1][b * in + i]);
    }
    return t;
  }
  template <class A>
  static typename A::Value Model(A& a, const ::ulpgate::ReductionModel& m,
                                 const ::ulpgate::ElementTerms& t) {
    return LinearBwdInput::Model(a, m, t);
  }
  template <class E>
  static ::ulpgate::ReductionExactParts<typename E::Value> Exact(E& e,
                                                                 const ::ulpgate::ElementTerms& t) {
    return DotExact(e, t, nullptr);
  }
};

// db[o]: p = dy[:,o].
struct LinearBwdBias {
  static ::ulpgate::ElementTerms Gather(const std::vector<std::vector<float>>& a,
                                        const ::ulpgate::ReductionShape& s, size_t element) {
    const size_t batch = s[0], out = s[2];
    ::ulpgate::ElementTerms t;
    t.vectors.resize(1);
    for (size_t b = 0; b < batch; ++b) t.vectors[0].push_back(a[0][b * out + element]);
    return t;
  }
  template <class A>
  static typename A::Value Model(A& a, const ::ulpgate::ReductionModel& m,
                                 const ::ulpgate::ElementTerms& t) {
    const std::vector<float>& p = t.vectors[0];
    return sum_of_terms::RunSchedule<sum_of_terms::PlainTerm>(m.schedule, a, m.lanes, p.data(),
                                                             nullptr, p.size());
  }
  // A plain sum of n terms: n - 1 additions, none of which can underflow
  // inexactly (a sum of binary32 numbers that is subnormal is exact).
  template <class E>
  static ::ulpgate::ReductionExactParts<typename E::Value> Exact(E& e,
                                                                 const ::ulpgate::ElementTerms& t) {
    const std::vector<float>& p = t.vectors[0];
    ::ulpgate::ReductionExactParts<typename E::Value> r{e.Zero(), 1, e.Zero(), 0, e.Zero(),
                                                        e.Zero()};
    for (float v : p) {
      const typename E::Value term = e.Const(v);
      r.numerator = e.Add(r.numerator, term);
      r.abs_sum = e.Add(r.abs_sum, e.Abs(term));
    }
    r.roundings = p.empty() ? 0 : p.size() - 1;
    r.peak = r.abs_sum;
    return r;
  }
};
