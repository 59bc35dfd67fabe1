#include "suites/engine/reductions/row_statistics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
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

 private:
  const NativeBinary32Arith& b_;
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

std::vector<RowEpilogueCandidate> RowEpilogueCandidates(const RowOpInfo& op) {
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
    RowEpilogueCandidate c;
    c.finish = finishes.front();
    c.step = f.step;
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
    const size_t count = candidates.size();
    for (size_t k = 0; k < count; ++k) {
      RowEpilogueCandidate c = candidates[k];
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
      for (RowFit& fit : search.fits) {
        if (!fit.fits) continue;
        const RowEpilogueCandidate& c = fit.epilogue;
        auto& hits = fit.hits[row];
        RowStatistics s = center;
        // Per op: the statistic a value of the format, up to the limit of
        // the format's values each way (its own bound, 2 gamma_n with the
        // format's u, is no use past n u = 1).
        const int64_t step = c.per_op ? format_step : 1;
        const std::array<int64_t, 2> reach = c.per_op ? std::array<int64_t, 2>{cap, cap} : window;
        auto start = [&](float v) { return OrderedFloat(c.per_op ? RoundTo(format, v) : v); };
        auto searchable = [&](float v) {
          return std::isfinite(v) && (!c.per_op || v == 0 || std::fabs(static_cast<double>(v)) >= format_min_normal);
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

}  // namespace ulpgate
