// The statistic schedules every row reduction shares: a sequential sum, a
// lane-parallel sum joined by a fixed halving tree, and the row's maximum.
//
// No include guard and no namespace on purpose, as reduction_spec-inl.h: each
// family's spec includes this into its own namespace (rmsnorm_spec,
// softmax_spec), once as plain C++ and once per Highway target, so that the
// templates carry the target's attributes.
//
// Vocabulary: a, la, sa are arithmetics (Value, Zero(), Const(float), Add,
// Sub, Mul, Div, MulAdd(a, b, c) = a*b + c fused or not as the arithmetic
// is, Sqrt, Exp, Log as Highway 1.0.3 computes them, Max(m, x) = x > m ? x :
// m). A lane arithmetic la also has Lanes() and ToScalars(v), its lanes as an
// indexable buffer of the scalar arithmetic sa's values. A row gives the
// operands at index k: row.X(a, k) etc., one value for a scalar arithmetic,
// lanes k .. k+L-1 for a lane arithmetic, padded past n with the row's
// padding (0 for products and sums, -inf where a term is e^(x - max)).
// Term::Accumulate(a, row, k, acc) adds term k to acc; Term::Rounded(a, row,
// k) is term k rounded on its own.

// acc = +0; acc = Accumulate(term k, acc) for k = 0, 1, ..., n-1.
template <class Term, class A, class R>
typename A::Value SequentialSum(A& a, const R& row, size_t n) {
  typename A::Value acc = a.Zero();
  for (size_t k = 0; k < n; ++k) acc = Term::Accumulate(a, row, k, acc);
  return acc;
}

// lane[j] = lane[j] + lane[j + w] for w = L/2, L/4, ..., 1 (L a power of two),
// fixed here rather than Highway's SumOfLanes, whose order differs between
// targets; the same tree as reduction_spec-inl.h's ReduceLanes.
template <class SA, class Buffer>
typename SA::Value AddLanes(SA& sa, Buffer& lane, size_t lanes) {
  for (size_t w = lanes / 2; w >= 1; w /= 2) {
    for (size_t j = 0; j < w; ++j) lane[j] = sa.Add(lane[j], lane[j + w]);
  }
  return lane[0];
}

// One accumulator per lane over k = 0, L, 2L, ... (the last chunk padded),
// then AddLanes: the result depends on L.
template <class Term, class LA, class SA, class R>
typename SA::Value LaneParallelSum(LA& la, SA& sa, const R& row, size_t n) {
  typename LA::Value acc = la.Zero();
  for (size_t k = 0; k < n; k += la.Lanes()) acc = Term::Accumulate(la, row, k, acc);
  auto lane = la.ToScalars(acc);
  return AddLanes(sa, lane, la.Lanes());
}

// The row's maximum: exact whatever the order (a maximum rounds nothing), so
// every variant and lane count agrees on it, save the sign of a zero maximum,
// which x > m ? x : m leaves to the order; adding +0 makes a zero +0 (-0 + 0 =
// +0 to nearest), and x - (+0) is x for every x, zeros' signs included. A NaN
// never wins x > m. The row is padded with -inf.
template <class LA, class SA, class R>
typename SA::Value RowMax(LA& la, SA& sa, const R& row, size_t n) {
  typename LA::Value acc = la.Const(-std::numeric_limits<float>::infinity());
  for (size_t k = 0; k < n; k += la.Lanes()) acc = la.Max(acc, row.X(la, k));
  auto lane = la.ToScalars(acc);
  for (size_t w = la.Lanes() / 2; w >= 1; w /= 2) {
    for (size_t j = 0; j < w; ++j) lane[j] = sa.Max(lane[j], lane[j + w]);
  }
  return sa.Add(lane[0], sa.Zero());
}
