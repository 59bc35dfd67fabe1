#include "suites/engine/reductions/row_model_fit.h"

#include <mpfr.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "kernels/reductions/row_sequences.h"
#include "oracles/float_text.h"
#include "oracles/format.h"
#include "oracles/ieee_emulation.h"
#include "suites/engine/reductions/row_models.h"
#include "suites/engine/reductions/sum_orders.h"

namespace ulpgate {

namespace {

// The binary32 nearest log(s) or 1/sqrt(s) (MPFR, 24 bits: exact rounding for
// the normal values a row's statistic takes).
float Correctly(bool log, float s) {
  mpfr_t x;
  mpfr_init2(x, 24);
  mpfr_set_flt(x, s, MPFR_RNDN);
  if (log) {
    mpfr_log(x, x, MPFR_RNDN);
  } else {
    mpfr_rec_sqrt(x, x, MPFR_RNDN);
  }
  const float out = mpfr_get_flt(x, MPFR_RNDN);
  mpfr_clear(x);
  return out;
}

}  // namespace

bool RowModelsApply(const RowOpInfo& op, const FloatFormat& format) {
  return IsBinary32(format) &&
         (op.op == RowOp::kRmsNormFwd || op.op == RowOp::kSoftmaxFwd || op.op == RowOp::kLogSoftmaxFwd);
}

std::string RowTermFunction(const RowOpInfo& op) {
  return op.op == RowOp::kSoftmaxFwd || op.op == RowOp::kLogSoftmaxFwd ? "exp(z)" : "";
}

RowFunctionModel ParseRowFunctionModel(const RowOpInfo& op, const std::string& spec) {
  if (RowTermFunction(op).empty()) {
    throw std::invalid_argument(std::string(op.name) + "'s terms call no function: a model of it has nothing to write "
                                                       "out (its orders and epilogues are searched without one)");
  }
  auto program = std::make_shared<ModelProgram>(ParseModelSpec(spec, {"z"}, kBinary32));
  if (program->function_calls > 0) {
    throw std::invalid_argument("model '" + program->name + "': a row model writes its " + RowTermFunction(op) +
                                " out; it calls a free function (write it `f(ARG) as EXPRESSION`, or in full)");
  }
  return {program->name, program->text, program};
}

RowModelSearch SearchRowModels(const ReductionInputSet& inputs, const std::vector<float>& outputs,
                               const std::vector<RowFunctionModel>& functions) {
  const RowOpInfo* op = FindRowOp(inputs.op->name);
  if (op == nullptr || !RowModelsApply(*op, *inputs.format)) {
    throw std::invalid_argument(std::string(inputs.op->name) + ": row models are for rmsnorm_fwd, softmax_fwd and "
                                                               "log_softmax_fwd in binary32");
  }
  RowModelSearch search;
  const size_t rows_per = inputs.shape[0], n = inputs.shape[1];
  search.rows = rows_per * inputs.instances.size();
  search.n = n;
  if (outputs.size() != search.rows * n) throw std::invalid_argument("row models: outputs' count");
  const bool has_function = !RowTermFunction(*op).empty();
  if (has_function && functions.empty()) {
    throw std::invalid_argument(std::string(op->name) + ": row models need its " + RowTermFunction(*op) +
                                " written out (--model)");
  }
  search.functions = has_function ? functions : std::vector<RowFunctionModel>{{"", "", nullptr}};
  search.orders = SumOrderNames(n);
  const bool log = op->op == RowOp::kLogSoftmaxFwd;
  search.statistic_function = log ? "log(S)" : op->op == RowOp::kRmsNormFwd ? "rsqrt(v)" : "";
  const std::vector<RowEpilogueCandidate> candidates = RowEpilogueCandidates(*op);
  const NativeBinary32Arith unfused(false), fused(true);
  // Per row: its operands and maximum (the sequential model's, which no
  // order changes).
  std::vector<RowOperands> operands;
  std::vector<float> maxima;
  for (const ReductionInstance& instance : inputs.instances) {
    std::vector<const float*> tensors;
    for (const auto& t : instance.operands) tensors.push_back(t.data());
    for (size_t r = 0; r < rows_per; ++r) {
      operands.push_back(RowOperandsOf(*op, tensors, r, n));
      maxima.push_back(RowStatisticsOf(unfused, *op, op->variants.front(), 1, operands.back(), n).max);
    }
  }
  for (const RowFunctionModel& function : search.functions) {
    std::vector<std::vector<float>> terms(search.rows, std::vector<float>(n));
    for (size_t r = 0; r < search.rows; ++r) {
      for (size_t i = 0; i < n; ++i) {
        const float x = operands[r].x[i];
        const double z = x - maxima[r];
        terms[r][i] = function.program ? static_cast<float>(function.program->Evaluate(&z)) : x * x;
      }
    }
    search.terms.push_back(std::move(terms));
  }
  for (size_t f = 0; f < search.functions.size(); ++f) {
    const std::vector<std::vector<float>>& terms = search.terms[f];
    for (const std::string& order : search.orders) {
      std::vector<float> statistic(search.rows);
      for (size_t r = 0; r < search.rows; ++r) {
        const float s = SumInOrder(order, terms[r]);
        statistic[r] = op->op == RowOp::kRmsNormFwd ? s / static_cast<float>(n) : s;
      }
      for (const RowEpilogueCandidate& c : candidates) {
        const bool takes_function =
            log || (op->op == RowOp::kRmsNormFwd &&
                    (c.finish == RowFinish::kRsqrt || c.step == RowEpilogueStep::kRsqrtFunction));
        RowModelFit fit;
        fit.function = f;
        fit.order = order;
        fit.epilogue = c;
        bool all = true;
        for (size_t r = 0; r < search.rows && all; ++r) {
          const float* expect = outputs.data() + r * n;
          RowStatistics s;
          s.max = maxima[r];
          s.value[0] = statistic[r];
          auto gives = [&](const float* g) {
            bool same = true;
            RowEpilogue(
                c.fused ? fused : unfused, *op, c.finish, c.step, operands[r], n, kDefaultRmsNormEps, s,
                [&](size_t i, float y) { return same = FloatBits(y) == FloatBits(expect[i]); },
                has_function ? terms[r].data() : nullptr, g);
            return same;
          };
          if (!takes_function) {
            all = gives(nullptr);
            fit.statistic_function.push_back(std::numeric_limits<float>::quiet_NaN());
            continue;
          }
          const float argument = log ? statistic[r] : statistic[r] + kDefaultRmsNormEps;
          const float centre = Correctly(log, argument);
          bool found = false;
          for (int64_t k = 0; k < 2 * kRowFunctionWindow + 1 && !found; ++k) {
            const int64_t offset = k % 2 == 1 ? (k + 1) / 2 : -(k / 2);
            const float g = FloatFromOrdered(OrderedFloat(centre) + offset);
            if (!std::isfinite(g) || !gives(&g)) continue;
            found = true;
            fit.statistic_function.push_back(g);
            fit.rows_own_function += offset != 0;
          }
          all = found;
        }
        if (!all) continue;
        fit.statistic = statistic;
        search.fits.push_back(fit);
      }
    }
  }
  return search;
}

}  // namespace ulpgate
