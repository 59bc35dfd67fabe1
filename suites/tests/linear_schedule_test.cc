// Smoke tier: the op sequences of kernels/reductions/ (the schedules of
// sum_of_terms-inl.h, and what linear_spec-inl.h and mse_spec-inl.h do around
// them), pinned as
// symbolic traces. Kernels and models are instantiated from the same
// templates, so conformance tests cannot notice a change of order; these
// traces do (and the goldens will). Each expectation is written out by hand
// from the spec's comments.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/reductions/linear/linear_spec.h"
#include "kernels/reductions/mse/mse_spec.h"
#include "kernels/reductions/sum_of_terms.h"

namespace ulpgate {
namespace {

namespace spec = sum_of_terms;

// An arithmetic whose values are the expressions that computed them.
struct TraceArith {
  using Value = std::string;
  std::string Const(float c) const {
    std::string text = std::to_string(c);
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
    return text;
  }
  std::string Zero() const { return "0"; }
  std::string Add(const std::string& a, const std::string& b) const { return "(" + a + "+" + b + ")"; }
  std::string Sub(const std::string& a, const std::string& b) const { return "(" + a + "-" + b + ")"; }
  std::string Mul(const std::string& a, const std::string& b) const { return a + "*" + b; }
  std::string Div(const std::string& a, const std::string& b) const { return a + "/" + b; }
  std::string MulAdd(const std::string& a, const std::string& b, const std::string& c) const {
    return "fma(" + a + "," + b + "," + c + ")";
  }
};

// The same, lane by lane, for the lane-parallel schedule.
struct TraceLanes {
  using Value = std::vector<std::string>;
  size_t lanes;
  TraceArith scalar;
  size_t Lanes() const { return lanes; }
  Value Zero() const { return Value(lanes, "0"); }
  Value ToScalars(const Value& v) const { return v; }
  Value Add(const Value& a, const Value& b) const { return Map(a, b, [&](auto& x, auto& y) { return scalar.Add(x, y); }); }
  Value Sub(const Value& a, const Value& b) const { return Map(a, b, [&](auto& x, auto& y) { return scalar.Sub(x, y); }); }
  Value Mul(const Value& a, const Value& b) const { return Map(a, b, [&](auto& x, auto& y) { return scalar.Mul(x, y); }); }
  Value MulAdd(const Value& a, const Value& b, const Value& c) const {
    Value r;
    for (size_t j = 0; j < lanes; ++j) r.push_back(scalar.MulAdd(a[j], b[j], c[j]));
    return r;
  }
  template <class F>
  Value Map(const Value& a, const Value& b, F f) const {
    Value r;
    for (size_t j = 0; j < lanes; ++j) r.push_back(f(a[j], b[j]));
    return r;
  }
};

// p_k and q_k by name; for lanes, +0 ("0") past n, as the padded loads give.
struct TraceTerms {
  size_t n;
  std::string P(const TraceArith&, size_t k) const { return "p" + std::to_string(k); }
  std::string Q(const TraceArith&, size_t k) const { return "q" + std::to_string(k); }
  std::vector<std::string> P(const TraceLanes& la, size_t k) const { return Chunk(la, "p", k); }
  std::vector<std::string> Q(const TraceLanes& la, size_t k) const { return Chunk(la, "q", k); }
  std::vector<std::string> Chunk(const TraceLanes& la, const char* name, size_t k) const {
    std::vector<std::string> v;
    for (size_t j = 0; j < la.lanes; ++j) {
      v.push_back(k + j < n ? name + std::to_string(k + j) : "0");
    }
    return v;
  }
};

TEST(ReductionScheduleTrace, SequentialFusedAccumulatesFromPlusZero) {
  TraceArith a;
  EXPECT_EQ(spec::SequentialFused<spec::ProductTerm>(a, TraceTerms{3}, 3),
            "fma(p2,q2,fma(p1,q1,fma(p0,q0,0)))");
  EXPECT_EQ(spec::SequentialFused<spec::PlainTerm>(a, TraceTerms{3}, 3), "(((0+p0)+p1)+p2)");
  EXPECT_EQ(spec::SequentialFused<mse_spec::SquaredDifferenceTerm>(a, TraceTerms{2}, 2),
            "fma((p1-q1),(p1-q1),fma((p0-q0),(p0-q0),0))");
}

TEST(ReductionScheduleTrace, SequentialUnfusedRoundsEachProduct) {
  TraceArith a;
  EXPECT_EQ(spec::SequentialUnfused<spec::ProductTerm>(a, TraceTerms{3}, 3),
            "(((0+p0*q0)+p1*q1)+p2*q2)");
  EXPECT_EQ(spec::SequentialUnfused<mse_spec::SquaredDifferenceTerm>(a, TraceTerms{1}, 1),
            "(0+(p0-q0)*(p0-q0))");
}

TEST(ReductionScheduleTrace, PairwiseSplitsAtThePowerOfTwoBelowN) {
  TraceArith a;
  EXPECT_EQ(spec::Pairwise<spec::PlainTerm>(a, TraceTerms{0}, 0), "0");
  EXPECT_EQ(spec::Pairwise<spec::PlainTerm>(a, TraceTerms{1}, 1), "p0");
  EXPECT_EQ(spec::Pairwise<spec::PlainTerm>(a, TraceTerms{5}, 5), "(((p0+p1)+(p2+p3))+p4)");
  EXPECT_EQ(spec::Pairwise<spec::PlainTerm>(a, TraceTerms{7}, 7),
            "(((p0+p1)+(p2+p3))+((p4+p5)+p6))");
  EXPECT_EQ(spec::Pairwise<spec::ProductTerm>(a, TraceTerms{3}, 3), "((p0*q0+p1*q1)+p2*q2)");
}

TEST(ReductionScheduleTrace, LaneParallelAssignsTermsModuloLanesPadsWithZeroAndHalves) {
  TraceArith a;
  // 4 lanes, 6 terms: lane j takes terms j and j + 4; lanes 2 and 3 meet the
  // +0 padding of the second chunk; then lane 0 += lane 2, lane 1 += lane 3,
  // lane 0 += lane 1.
  TraceLanes four{4, a};
  const std::string l0 = "fma(p4,q4,fma(p0,q0,0))", l1 = "fma(p5,q5,fma(p1,q1,0))";
  const std::string l2 = "fma(0,0,fma(p2,q2,0))", l3 = "fma(0,0,fma(p3,q3,0))";
  EXPECT_EQ(spec::LaneParallel<spec::ProductTerm>(four, a, TraceTerms{6}, 6),
            "((" + l0 + "+" + l2 + ")+(" + l1 + "+" + l3 + "))");
  // 8 lanes, 2 terms: the tree adds the zero lanes in a fixed order.
  TraceLanes eight{8, a};
  EXPECT_EQ(spec::LaneParallel<spec::PlainTerm>(eight, a, TraceTerms{2}, 2),
            "((((0+p0)+(0+0))+((0+0)+(0+0)))+(((0+p1)+(0+0))+((0+0)+(0+0))))");
  // One lane: the sequential fused sum, no tree.
  TraceLanes one{1, a};
  EXPECT_EQ(spec::LaneParallel<spec::ProductTerm>(one, a, TraceTerms{2}, 2),
            "fma(p1,q1,fma(p0,q0,0))");
}

TEST(ReductionScheduleTrace, AroundTheReduction) {
  TraceArith a;
  EXPECT_EQ(linear_spec::AddBias(a, std::string("dot"), std::string("b")), "(dot+b)");
  EXPECT_EQ(mse_spec::MeanByDivision(a, std::string("s"), std::string("N")), "s/N");
  EXPECT_EQ(mse_spec::MeanByReciprocal(a, std::string("s"), std::string("N")), "s*1/N");
  const std::string scale = mse_spec::MseBwdScale(a, std::string("N"));
  EXPECT_EQ(scale, "2/N");
  EXPECT_EQ(mse_spec::MseBwdElement(a, std::string("y"), std::string("t"), scale, std::string("g")),
            "2/N*(y-t)*g");
}

}  // namespace
}  // namespace ulpgate
