#include "suites/drift/report.h"
#include "suites/drift/kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "oracles/float_text.h"
#include "suites/engine/digest.h"
#include "suites/reports/report.h"

namespace ulpgate {
namespace {

nlohmann::ordered_json HexArray(const std::vector<float>& values) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (float v : values) a.push_back(HexFloat(v));
  return a;
}

nlohmann::ordered_json ParametersJson(const Parameters& p) {
  nlohmann::ordered_json j;
  j["names"] = p.names;
  for (size_t k = 0; k < p.tensors.size(); ++k) j["values"][p.names[k]] = HexArray(p.tensors[k]);
  return j;
}

// FNV-1a over the parameters' bits, tensor after tensor.
uint64_t ParametersDigest(const Parameters& p) {
  uint64_t h = kFnv1aOffset;
  for (const auto& t : p.tensors) h = Fnv1a(t.data(), t.size() * sizeof(float), h);
  return h;
}

nlohmann::ordered_json StatisticsJson(const ErrorStatistics& s) {
  nlohmann::ordered_json j;
  j["calls"] = s.n();  // outputs checked
  j["histogram"] = {{"bounds", s.bounds()}, {"counts", s.counts()}};
  j["max_ulp"] = s.max_ulp();
  j["mean_ulp"] = s.mean_ulp();
  j["special_mismatch"] = s.special_mismatch();
  j["correctly_rounded"] = s.correctly_rounded();
  return j;
}

}  // namespace

nlohmann::ordered_json CurveSummaryJson(const CurveSummary& s,
                                        const std::vector<double>* param_max_relative,
                                        const std::vector<double>* param_max_ulp) {
  nlohmann::ordered_json j = {{"final_relative_loss_deviation", s.final_relative_deviation},
                              {"final_signed_loss_deviation", s.final_signed_deviation},
                              {"max_relative_loss_deviation", s.max_relative_deviation},
                              {"max_deviation_epoch", s.max_deviation_epoch}};
  if (param_max_relative && !param_max_relative->empty()) {
    j["final_parameter_max_relative_error"] = param_max_relative->back();
    j["final_parameter_max_ulp"] = param_max_ulp->back();
  }
  for (const LagAt& lag : s.lags) {
    j["lag"].push_back(
        {{"epoch", lag.epoch},
         {"reference_loss", lag.reference_loss},
         {"lag", lag.lag ? nlohmann::ordered_json(*lag.lag) : nlohmann::ordered_json()}});
  }
  j["stalled"] = s.stalled;
  return j;
}

nlohmann::ordered_json DriftJson(const DriftResult& d) {
  nlohmann::ordered_json j;
  j["format"] = "ulpgate-drift-3";
  j["tool"] = ToolVersion();
  j["scenario"] = ScenarioJson(d.scenario);
  j["epochs"] = d.epochs;
  j["data"] = {{"x", HexArray(d.batch.x)}, {"target", HexArray(d.batch.target)}};
  j["initial_parameters"] = ParametersJson(d.initial);
  nlohmann::ordered_json losses = nlohmann::ordered_json::array();
  for (double l : d.reference.loss) losses.push_back(l);
  j["reference"]["loss"] = losses;
  for (const FloatRunResult& r : d.runs) {
    nlohmann::ordered_json run;
    run["label"] = r.config.Label();
    run["target"] = r.config.target->name;
    run["precision"] = r.config.precision.Name();
    run["variants"] = {{kDriftTanhBwd, r.config.tanh_bwd}, {"linear", r.config.linear},
                       {"bias", r.config.bias},         {"mse", r.config.mse},
                       {"sgd", r.config.sgd}};
    run["summary"] = CurveSummaryJson(r.summary, &r.param_max_relative, &r.param_max_ulp);
    nlohmann::ordered_json loss = nlohmann::ordered_json::array();
    for (double l : r.loss) loss.push_back(HexFloat(static_cast<float>(l)));
    run["loss"] = loss;
    run["parameter_error"] = {{"max_relative", r.param_max_relative},
                              {"max_ulp", r.param_max_ulp}};
    for (const auto& [op, stats] : r.in_situ) run["in_situ"][op] = StatisticsJson(stats);
    run["final_parameters"] = ParametersJson(r.final_parameters);
    run["final_parameters_digest"] = DigestHex(ParametersDigest(r.final_parameters));
    j["runs"].push_back(run);
  }
  return j;
}

}  // namespace ulpgate
