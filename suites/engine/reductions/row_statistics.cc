#include "suites/engine/reductions/row_statistics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>

#include "oracles/format.h"
#include "oracles/ieee_emulation.h"
#include "suites/engine/reductions/row_models.h"

namespace ulpgate {

namespace {

std::string FinishName(RowFinish f) {
  switch (f) {
    case RowFinish::kPlain: return "plain";
    case RowFinish::kRsqrt: return "rsqrt";
    case RowFinish::kSqrtDivide: return "sqrt_divide";
    case RowFinish::kDivide: return "divide";
    case RowFinish::kReciprocal: return "reciprocal";
  }
  return "?";
}

std::string FinishSequence(const RowOpInfo& op, RowFinish f) {
  switch (f) {
    case RowFinish::kPlain:
      return op.op == RowOp::kSoftmaxBwd      ? "dx = RN(y RN(dy - D))"
             : op.op == RowOp::kLogSoftmaxBwd ? "dx = RN(dy - RN(Exp(y) G))"
                                              : "y = RN(RN(x - M) - Log(S))";
    case RowFinish::kRsqrt: return "v = RN(mean + eps), r = RN(1/RN(sqrt v)), then products by r";
    case RowFinish::kSqrtDivide: return "v = RN(mean + eps), s = RN(sqrt v), each element divided by s";
    case RowFinish::kDivide: return "y = RN(Exp(RN(x - M)) / S)";
    case RowFinish::kReciprocal: return "y = RN(Exp(RN(x - M)) RN(1/S))";
  }
  return "?";
}

uint32_t Bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// The spacing of binary32 values at v (its ULP), the smallest subnormal's
// at zero.
double UlpAt(float v) {
  const float a = std::fabs(v);
  if (!std::isfinite(a)) return std::numeric_limits<double>::infinity();
  return static_cast<double>(std::nextafter(a, std::numeric_limits<float>::infinity())) - a;
}

// 0, 1, -1, 2, -2, ...: the k-th offset searched, nearest the center first.
int64_t Offset(int64_t k) { return k % 2 == 1 ? (k + 1) / 2 : -(k / 2); }

float RoundTo(const FloatFormat& format, float v) {
  return static_cast<float>(RoundToFormat(format, static_cast<double>(v)));
}

// NativeBinary32Arith with every result rounded again to a 16-bit format:
// what NumPy's float16 and ml_dtypes' bfloat16 compute (each operation in
// binary32, then rounded to the format).
class PerOpArith {
 public:
  using Value = float;
  PerOpArith(const NativeBinary32Arith& base, const FloatFormat& format) : b_(base), f_(format) {}
  bool fused() const { return b_.fused(); }
  float Const(float c) const { return c; }
  float Zero() const { return 0.0f; }
  float Add(float a, float b) const { return RoundTo(f_, b_.Add(a, b)); }
  float Sub(float a, float b) const { return RoundTo(f_, b_.Sub(a, b)); }
  float Mul(float a, float b) const { return RoundTo(f_, b_.Mul(a, b)); }
  float Div(float a, float b) const { return RoundTo(f_, b_.Div(a, b)); }
  float Sqrt(float a) const { return RoundTo(f_, b_.Sqrt(a)); }
  float MulAdd(float a, float b, float c) const {
    return fused() ? RoundTo(f_, b_.MulAdd(a, b, c)) : Add(Mul(a, b), c);
  }
  // Highway's Exp and Log (RowFunctionArith) in binary32, rounded to the
  // format as NumPy's and ml_dtypes' exp and log ufuncs round theirs.
  float RoundFunction(float v) const { return RoundTo(f_, v); }

 private:
  const NativeBinary32Arith& b_;
  const FloatFormat& f_;
};

// NativeBinary32Arith with the functions' results (Highway's Log of the
// row's sum) rounded to a 16-bit format: a kernel that keeps the row's
// statistic and its function in the tensor's type and its elements'
// arithmetic in binary32.
class FormatFunctionArith : public NativeBinary32Arith {
 public:
  FormatFunctionArith(bool fused, const FloatFormat& format) : NativeBinary32Arith(fused), f_(format) {}
  float RoundFunction(float v) const { return RoundTo(f_, v); }

 private:
  const FloatFormat& f_;
};

}  // namespace

int64_t OrderedFloat(float v) {
  const uint32_t b = Bits(v);
  const int64_t magnitude = b & 0x7fffffffu;
  return (b >> 31) != 0 ? -magnitude : magnitude;
}

float FloatFromOrdered(int64_t k) {
  const uint32_t b = static_cast<uint32_t>(k < 0 ? -k : k) | (k < 0 ? 0x80000000u : 0u);
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

std::vector<RowEpilogueCandidate> RowEpilogueCandidates(const RowOpInfo& op, bool sixteen_bit) {
  std::vector<RowEpilogueCandidate> out;
  auto add = [&](RowEpilogueCandidate c) {
    for (const bool fused : {false, true}) {
      c.fused = fused;
      c.name = c.form + (fused ? "_fused" : "_unfused");
      out.push_back(c);
    }
  };
  std::vector<RowFinish> finishes;
  for (const RowVariant& v : op.variants) {
    if (std::find(finishes.begin(), finishes.end(), v.finish) != finishes.end()) continue;
    finishes.push_back(v.finish);
    RowEpilogueCandidate c;
    c.finish = v.finish;
    c.form = FinishName(v.finish);
    c.cause = "formula";
    c.sequence = FinishSequence(op, v.finish);
    add(c);
  }
  for (const RowEpilogueForm& f : op.other_epilogues) {
    if (f.rounding != RowFormRounding::kAny && !sixteen_bit) continue;
    RowEpilogueCandidate c;
    c.finish = finishes.front();
    c.step = f.step;
    c.declared = true;
    c.statistic_in_format = f.rounding == RowFormRounding::kStatisticInFormat;
    c.form = f.name;
    c.cause = f.cause;
    c.sequence = f.sequence;
    add(c);
  }
  return out;
}

RowStatisticSearch SearchRowStatistics(const ReductionInputSet& inputs, const std::vector<float>& outputs) {
  const RowOpInfo* op = FindRowOp(inputs.op->name);
  if (op == nullptr) throw std::invalid_argument(std::string(inputs.op->name) + " is not a row reduction");
  const size_t rows_per = inputs.shape[0], n = inputs.shape[1];
  const FloatFormat& format = *inputs.format;
  RowStatisticSearch search;
  search.n = n;
  search.statistics = op->statistics.size();
  search.rows = rows_per * inputs.instances.size();
  if (outputs.size() != search.rows * n) throw std::invalid_argument("row statistics: outputs' count");
  std::vector<RowEpilogueCandidate> candidates = RowEpilogueCandidates(*op);
  if (!IsBinary32(format)) {
    // Each as it is and per op; the forms that differ from a finish only per
    // op, per op alone.
    for (RowEpilogueCandidate c : RowEpilogueCandidates(*op, true)) {
      if (c.statistic_in_format) {
        candidates.push_back(c);
        continue;
      }
      c.per_op = true;
      c.name += "_per_op";
      candidates.push_back(c);
    }
  }
  // A 16-bit format's values are binary32 values whose last 24 - p
  // significand bits are zero (f16's normal range; its subnormals are left
  // out): the next one is 2^(24 - p) binary32 values on.
  const int64_t format_step = int64_t{1} << (24 - format.precision);
  const double format_min_normal = std::ldexp(1.0, format.emin);
  for (const RowEpilogueCandidate& c : candidates) {
    RowFit fit;
    fit.epilogue = c;
    fit.fits = true;
    fit.hits.resize(search.rows);
    fit.capped.assign(search.rows, false);
    search.fits.push_back(fit);
  }
  const NativeBinary32Arith unfused(false), fused(true);
  // gamma_n = n u / (1 - n u), u = 2^-24: n <= kMaxRowLength keeps it finite.
  const double u = std::ldexp(1.0, -24);
  const double gamma = static_cast<double>(n) * u / (1 - static_cast<double>(n) * u);
  const int64_t cap = search.statistics == 1 ? kRowStatisticWindow : kRowStatisticWindow2;
  if (!IsBinary32(format)) {
    search.format = format.name;
    search.format_window = cap;
    search.format_step = format_step;
  }
  size_t row = 0;
  for (const ReductionInstance& instance : inputs.instances) {
    std::vector<const float*> tensors;
    for (const auto& t : instance.operands) tensors.push_back(t.data());
    for (size_t r = 0; r < rows_per; ++r, ++row) {
      const RowOperands in = RowOperandsOf(*op, tensors, r, n);
      const float* expect = outputs.data() + row * n;
      const RowStatistics center = RowStatisticsOf(unfused, *op, op->variants.front(), 1, in, n);
      const std::array<double, 2> magnitude = RowStatisticMagnitudes(unfused, *op, in, n);
      std::array<int64_t, 2> window{0, 0};
      std::array<double, 2> bound{0, 0};
      for (size_t s = 0; s < search.statistics; ++s) {
        bound[s] = 2 * gamma * magnitude[s] / UlpAt(center.value[s]);
        // Two ULPs more: a mean's division and the sequential sum's own error.
        const double w = std::ceil(bound[s]) + 2;
        window[s] = std::isfinite(w) ? static_cast<int64_t>(std::min<double>(w, static_cast<double>(cap))) : cap;
      }
      search.centers.push_back(center);
      search.window.push_back(window);
      search.bound_ulp.push_back(bound);
      if (!op->unpinned_functions.empty() && !IsBinary32(format) && op->op == RowOp::kLogSoftmaxFwd) {
        double moved = 0;
        for (size_t k = 0; k < n; ++k) {
          const float z = RoundTo(format, in.x[k] - center.max);
          const float e = ExpOfSequences(z, false);
          const double rounded = RoundTo(format, e);
          double most = 0;
          for (int64_t j = -kRowFunctionWindow; j <= kRowFunctionWindow; ++j) {
            const float v = FloatFromOrdered(OrderedFloat(e) + j);
            if (std::isfinite(v)) most = std::max(most, std::fabs(static_cast<double>(RoundTo(format, v)) - rounded));
          }
          moved += most;
        }
        search.function_slack.push_back(static_cast<int64_t>(std::ceil(moved / UlpAt(center.value[0]))) + format_step);
      }
      for (RowFit& fit : search.fits) {
        if (!fit.fits) continue;
        const RowEpilogueCandidate& c = fit.epilogue;
        auto& hits = fit.hits[row];
        RowStatistics s = center;
        // Per op: the statistic a value of the format, up to the limit of
        // the format's values each way (its own bound, 2 gamma_n with the
        // format's u, is no use past n u = 1).
        const bool in_format = c.per_op || c.statistic_in_format;
        const int64_t step = in_format ? format_step : 1;
        const std::array<int64_t, 2> reach = in_format ? std::array<int64_t, 2>{cap, cap} : window;
        auto start = [&](float v) { return OrderedFloat(in_format ? RoundTo(format, v) : v); };
        auto searchable = [&](float v) {
          return std::isfinite(v) && (!in_format || v == 0 || std::fabs(static_cast<double>(v)) >= format_min_normal);
        };
        const int64_t o0 = start(center.value[0]), o1 = start(center.value[1]);
        const int64_t count1 = search.statistics == 2 ? 2 * reach[1] + 1 : 1;
        for (int64_t k0 = 0; k0 < 2 * reach[0] + 1; ++k0) {
          s.value[0] = FloatFromOrdered(o0 + step * Offset(k0));
          if (!searchable(s.value[0])) continue;
          for (int64_t k1 = 0; k1 < count1; ++k1) {
            if (search.statistics == 2) {
              s.value[1] = FloatFromOrdered(o1 + step * Offset(k1));
              if (!searchable(s.value[1])) continue;
            }
            bool same = true;
            auto sink = [&](size_t i, float y) {
              const float got = IsBinary32(format) ? y : static_cast<float>(RoundToFormat(format, static_cast<double>(y)));
              same = Bits(got) == Bits(expect[i]);
              return same;
            };
            const NativeBinary32Arith& base = c.fused ? fused : unfused;
            if (c.per_op) {
              RowEpilogue(PerOpArith(base, format), *op, c.finish, c.step, in, n, kDefaultRmsNormEps, s, sink);
            } else if (c.statistic_in_format) {
              RowEpilogue(FormatFunctionArith(c.fused, format), *op, c.finish, c.step, in, n, kDefaultRmsNormEps, s,
                          sink);
            } else {
              RowEpilogue(base, *op, c.finish, c.step, in, n, kDefaultRmsNormEps, s, sink);
            }
            if (!same) continue;
            if (hits.size() < kRowStatisticHits) {
              hits.push_back({OrderedFloat(s.value[0]), OrderedFloat(s.value[1])});
            } else {
              fit.capped[row] = true;
            }
          }
        }
        if (hits.empty()) {
          fit.fits = false;
          fit.unfit_row = static_cast<int64_t>(row);
        }
      }
    }
  }
  return search;
}

SharedFunctionSearch SearchSharedFunctionValues(const ReductionInputSet& inputs, const std::vector<float>& a_out,
                                                const std::vector<float>& b_out) {
  SharedFunctionSearch search;
  const RowOpInfo* op = FindRowOp(inputs.op->name);
  if (op == nullptr || op->element_function.empty() || op->statistics.size() != 1) return search;
  search.function = op->element_function;
  const size_t rows_per = inputs.shape[0], n = inputs.shape[1];
  const FloatFormat& format = *inputs.format;
  search.rows = rows_per * inputs.instances.size();
  search.window = kRowStatisticWindow;
  const std::vector<RowEpilogueCandidate> candidates = RowEpilogueCandidates(*op);
  const NativeBinary32Arith unfused(false), fused(true);
  const row_models_detail::RowFunctionArith<NativeBinary32Arith> highway(unfused);
  // One element's output by candidate c with statistic g and function value e.
  auto element = [&](const RowEpilogueCandidate& c, const RowOperands& in, size_t i, float g, float e) {
    RowOperands one;
    one.x = in.x != nullptr ? in.x + i : nullptr;
    one.dy = in.dy != nullptr ? in.dy + i : nullptr;
    one.y = in.y != nullptr ? in.y + i : nullptr;
    one.g = in.g != nullptr ? in.g + i : nullptr;
    RowStatistics s;
    s.value[0] = g;
    float out = 0;
    auto sink = [&](size_t, float y) {
      out = IsBinary32(format) ? y : RoundTo(format, y);
      return true;
    };
    RowEpilogue(c.fused ? fused : unfused, *op, c.finish, c.step, one, 1, kDefaultRmsNormEps, s, sink, &e);
    return Bits(out);
  };
  // Per row, candidate and side: the statistics with which every element has
  // some function value giving the side's output.
  std::vector<std::vector<std::array<std::vector<int64_t>, 2>>> hits(
      search.rows, std::vector<std::array<std::vector<int64_t>, 2>>(candidates.size()));
  std::vector<std::vector<std::vector<float>>> values(search.rows);  // per row, element: the values tried
  std::vector<RowOperands> operands;
  size_t row = 0;
  for (const ReductionInstance& instance : inputs.instances) {
    std::vector<const float*> tensors;
    for (const auto& t : instance.operands) tensors.push_back(t.data());
    for (size_t r = 0; r < rows_per; ++r, ++row) {
      const RowOperands in = RowOperandsOf(*op, tensors, r, n);
      operands.push_back(in);
      values[row].resize(n);
      const RowStatistics center = RowStatisticsOf(unfused, *op, op->variants.front(), 1, in, n);
      for (size_t i = 0; i < n; ++i) {
        // Highway's value of the element's function: exp(y_i) (log-softmax
        // backward) or exp(RN(x_i - max)) (softmax).
        const float argument = op->op == RowOp::kSoftmaxFwd ? unfused.Sub(in.x[i], center.max) : in.y[i];
        const int64_t centre = OrderedFloat(highway.Exp(argument));
        for (int64_t k = 0; k < 2 * kRowFunctionWindow + 1; ++k) {
          const float e = FloatFromOrdered(centre + Offset(k));
          if (std::isfinite(e)) values[row][i].push_back(e);
        }
      }
      const int64_t o = OrderedFloat(center.value[0]);
      for (size_t c = 0; c < candidates.size(); ++c) {
        for (int side = 0; side < 2; ++side) {
          const float* expect = (side == 0 ? a_out : b_out).data() + row * n;
          for (int64_t k = 0; k < 2 * search.window + 1; ++k) {
            const float g = FloatFromOrdered(o + Offset(k));
            if (!std::isfinite(g)) continue;
            bool all = true;
            for (size_t i = 0; i < n && all; ++i) {
              bool any = false;
              for (const float e : values[row][i]) {
                if (element(candidates[c], in, i, g, e) == Bits(expect[i])) {
                  any = true;
                  break;
                }
              }
              all = any;
            }
            if (all && hits[row][c][side].size() < kRowStatisticHits) hits[row][c][side].push_back(OrderedFloat(g));
          }
        }
      }
    }
  }
  for (size_t ca = 0; ca < candidates.size(); ++ca) {
    for (size_t cb = 0; cb < candidates.size(); ++cb) {
      SharedFunctionPair pair;
      pair.a = candidates[ca];
      pair.b = candidates[cb];
      bool every = true;
      for (size_t r = 0; r < search.rows && every; ++r) {
        const RowOperands& in = operands[r];
        auto serves = [&](int64_t ga, int64_t gb) {
          for (size_t i = 0; i < n; ++i) {
            bool any = false;
            for (const float e : values[r][i]) {
              if (element(pair.a, in, i, FloatFromOrdered(ga), e) == Bits(a_out[r * n + i]) &&
                  element(pair.b, in, i, FloatFromOrdered(gb), e) == Bits(b_out[r * n + i])) {
                any = true;
                break;
              }
            }
            if (!any) return false;
          }
          return true;
        };
        // One statistic serving both first; else the nearest pair that serves.
        std::optional<std::array<int64_t, 2>> found;
        bool apart = true;
        for (const int64_t ga : hits[r][ca][0]) {
          const auto& hb = hits[r][cb][1];
          if (std::find(hb.begin(), hb.end(), ga) != hb.end() && serves(ga, ga)) {
            found = std::array<int64_t, 2>{ga, ga};
            apart = false;
            break;
          }
        }
        if (!found) {
          // The nearest pairs first, kRowFunctionPairs of them at most.
          std::vector<std::array<int64_t, 3>> tries;
          for (const int64_t ga : hits[r][ca][0]) {
            for (const int64_t gb : hits[r][cb][1]) tries.push_back({ga > gb ? ga - gb : gb - ga, ga, gb});
          }
          const size_t count = std::min(tries.size(), kRowFunctionPairs);
          std::partial_sort(tries.begin(), tries.begin() + static_cast<std::ptrdiff_t>(count), tries.end());
          for (size_t t = 0; t < count && !found; ++t) {
            if (serves(tries[t][1], tries[t][2])) found = std::array<int64_t, 2>{tries[t][1], tries[t][2]};
          }
        }
        if (!found) {
          every = false;
          break;
        }
        pair.statistic.push_back(*found);
        pair.apart.push_back(apart);
      }
      if (every) search.pairs.push_back(pair);
    }
  }
  return search;
}

}  // namespace ulpgate
