#include "suites/inputs/row_suites.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "oracles/format.h"
#include "suites/inputs/counter_rng.h"

namespace ulpgate {
namespace {

// A format value near v: rounded to nearest, kept finite.
float InFormat(const FloatFormat& format, double v) {
  const double largest = LargestFinite(format);
  return static_cast<float>(RoundDouble(format, std::clamp(v, -largest, largest)));
}

double Signed(CounterRng& rng, double magnitude) {
  return (rng.Next() & 1) ? -magnitude : magnitude;
}

// Uniform in [-1, 1) times 2^e, e uniform in [lo, hi].
double Scaled(CounterRng& rng, int lo, int hi) {
  const int e = lo + static_cast<int>(rng.Below(static_cast<uint64_t>(hi - lo + 1)));
  return std::ldexp(rng.Unit() * 2 - 1, e);
}

// |v| log-uniform over [2^lo, 2^hi], random sign.
double LogUniform(CounterRng& rng, int lo, int hi) {
  return Signed(rng, std::exp2(lo + (hi - lo) * rng.Unit()));
}

void Softmax(std::vector<double>& x, bool log) {
  const double max = *std::max_element(x.begin(), x.end());
  double sum = 0;
  for (double v : x) sum += std::exp(v - max);
  for (double& v : x) v = log ? v - max - std::log(sum) : std::exp(v - max) / sum;
}

}  // namespace

std::vector<std::string> RowSuiteNames() { return {"random", "wide", "adversarial"}; }

RowProblem MakeRowProblem(const RowOpInfo& op, const FloatFormat& format, std::string_view suite,
                          uint64_t seed, size_t rows, size_t n, float eps) {
  const std::vector<std::string> names = RowSuiteNames();
  if (std::find(names.begin(), names.end(), suite) == names.end()) {
    throw std::invalid_argument("unknown row suite '" + std::string(suite) + "'");
  }
  if (n == 0 || n > kMaxRowLength) throw std::invalid_argument("row length out of range");
  RowProblem p;
  p.op = &op;
  p.format = &format;
  p.suite = std::string(suite);
  p.seed = seed;
  p.rows = rows;
  p.n = n;
  p.eps = eps;
  const bool narrow_range = format.emax < 20;  // f16
  const int wide = narrow_range ? 10 : 30;
  const uint64_t stream = StreamId(std::string(op.name) + "/" + std::string(suite));
  const size_t count = op.operands.size();
  p.operands.assign(count, {});
  for (size_t k = 0; k < count; ++k) p.operands[k].resize(IsRowWeight(op, k) ? n : rows * n);
  const auto index_of = [&](std::string_view name) {
    for (size_t k = 0; k < count; ++k) {
      if (op.operands[k] == name) return static_cast<int>(k);
    }
    return -1;
  };
  const int ix = index_of("x"), ig = index_of("g"), idy = index_of("dy"), iy = index_of("y");
  // g: one row for the whole problem.
  if (ig >= 0) {
    CounterRng rng(seed, stream, ~uint64_t{0});
    for (size_t j = 0; j < n; ++j) {
      const double g = suite == "random" ? 1 + Scaled(rng, -3, -1) : LogUniform(rng, -4, 4);
      p.operands[static_cast<size_t>(ig)][j] = InFormat(format, g);
    }
  }
  for (size_t r = 0; r < rows; ++r) {
    CounterRng rng(seed, stream, r);
    const size_t family = r % 5;
    std::vector<double> x(n), dy(n), y(n);
    const bool softmax = op.op != RowOp::kRmsNormFwd && op.op != RowOp::kRmsNormBwd;
    for (size_t j = 0; j < n; ++j) {
      if (suite == "random") {
        x[j] = softmax ? Scaled(rng, 0, 3) : Scaled(rng, -2, 2);
      } else if (suite == "wide") {
        x[j] = softmax ? (rng.Unit() * 2 - 1) * 100 : LogUniform(rng, -wide, wide);
      } else if (!softmax) {
        switch (family) {
          case 0: x[j] = Scaled(rng, -40, -30); break;
          case 1: x[j] = 0.75; break;
          case 2: x[j] = Scaled(rng, -1, 1); break;
          case 3: x[j] = std::ldexp(1 + rng.Unit(), narrow_range ? 12 : 40); break;
          default: x[j] = j == 0 ? 1024.0 : Scaled(rng, -8, -4); break;
        }
      } else {
        switch (family) {
          case 0: x[j] = j == n / 2 ? 40.0 : Scaled(rng, 0, 2); break;
          case 1: x[j] = -3.5; break;
          case 2: x[j] = LogUniform(rng, narrow_range ? 0 : 60, narrow_range ? 15 : 100); break;
          case 3: x[j] = -8.0 + 16.0 * static_cast<double>(j) / static_cast<double>(n); break;
          default: x[j] = (rng.Below(3) == 0) ? (rng.Next() & 1 ? -0.0 : 0.0) : -Scaled(rng, 0, 1); break;
        }
      }
      x[j] = InFormat(format, x[j]);
      dy[j] = suite == "wide" ? LogUniform(rng, -wide, wide) : Scaled(rng, -2, 2);
    }
    // Backward softmaxes: y is the forward op's output of a random row.
    if (op.op == RowOp::kSoftmaxBwd || op.op == RowOp::kLogSoftmaxBwd) {
      std::vector<double> logits(n);
      for (size_t j = 0; j < n; ++j) {
        logits[j] = suite == "wide" ? (rng.Unit() * 2 - 1) * 60 : Scaled(rng, 0, 2);
        if (suite == "adversarial" && family == 4) logits[j] = j == 0 ? 200.0 : 0.0;  // one-hot
      }
      y = logits;
      Softmax(y, op.op == RowOp::kLogSoftmaxBwd);
      if (suite == "adversarial" && family == 0) std::fill(dy.begin(), dy.end(), 0.625);
      if (suite == "adversarial" && (family == 1 || family == 2)) {
        // dy = c softmax: log_softmax_bwd's dy_i - exp(y_i) sum dy cancels.
        std::vector<double> probabilities = logits;
        Softmax(probabilities, false);
        for (size_t j = 0; j < n; ++j) dy[j] = 3 * probabilities[j];
      }
    }
    if (op.op == RowOp::kRmsNormBwd && suite == "adversarial" && family == 2) dy = x;
    for (size_t j = 0; j < n; ++j) {
      const size_t at = r * n + j;
      if (ix >= 0) p.operands[static_cast<size_t>(ix)][at] = static_cast<float>(x[j]);
      if (idy >= 0) p.operands[static_cast<size_t>(idy)][at] = InFormat(format, dy[j]);
      if (iy >= 0) p.operands[static_cast<size_t>(iy)][at] = InFormat(format, y[j]);
    }
  }
  if (op.op == RowOp::kRmsNormBwd && suite == "adversarial" && ig >= 0) {
    // g = 1 where dy = x, so that g dy W - x T cancels; the other families
    // keep the drawn g (one g serves every row): rows of family 2 use 1.
    std::fill(p.operands[static_cast<size_t>(ig)].begin(), p.operands[static_cast<size_t>(ig)].end(),
              1.0f);
  }
  return p;
}

}  // namespace ulpgate
