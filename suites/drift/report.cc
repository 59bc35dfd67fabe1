#include "suites/drift/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "oracles/float_text.h"
#include "suites/digest.h"
#include "suites/report.h"

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
  j["format"] = "ulpgate-drift-2";
  j["tool"] = "ulpgate 0.1.0";
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
    run["variants"] = {{"tanh_bwd", r.config.tanh_bwd}, {"linear", r.config.linear},
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

std::string DriftSvg(const DriftResult& d) {
  constexpr double kWidth = 900, kPanel = 300, kLeft = 70, kRight = 250, kTop = 30, kGap = 60;
  const double plot_w = kWidth - kLeft - kRight;
  const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                           "#8c564b", "#e377c2", "#17becf"};
  std::string svg = fmt::format(
      "<svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{}' font-family='sans-serif' "
      "font-size='12'>\n<rect width='100%' height='100%' fill='white'/>\n",
      kWidth, kTop + 2 * kPanel + kGap + 40);
  auto panel = [&](double top, const std::string& title,
                   const std::vector<std::pair<std::string, std::vector<double>>>& series) {
    double lo = INFINITY, hi = -INFINITY;
    for (const auto& [name, ys] : series) {
      for (double y : ys) {
        if (y > 0 && std::isfinite(y)) {
          lo = std::min(lo, y);
          hi = std::max(hi, y);
        }
      }
    }
    if (!(lo < hi)) {
      lo = 1e-300 < hi ? hi / 10 : 1e-10;
      hi = std::max(hi, lo * 10);
    }
    const double log_lo = std::floor(std::log10(lo)), log_hi = std::ceil(std::log10(hi));
    const size_t n = d.epochs;
    auto x_of = [&](size_t e) { return kLeft + plot_w * e / std::max<size_t>(n - 1, 1); };
    auto y_of = [&](double y) {
      return top + kPanel * (log_hi - std::log10(y)) / std::max(log_hi - log_lo, 1.0);
    };
    svg += fmt::format("<text x='{}' y='{}' font-weight='bold'>{}</text>\n", kLeft, top - 8, title);
    svg += fmt::format("<rect x='{}' y='{}' width='{}' height='{}' fill='none' stroke='#444'/>\n",
                       kLeft, top, plot_w, kPanel);
    for (double p = log_lo; p <= log_hi; ++p) {
      const double y = y_of(std::pow(10.0, p));
      svg += fmt::format("<line x1='{}' y1='{:.1f}' x2='{}' y2='{:.1f}' stroke='#ddd'/>"
                         "<text x='{}' y='{:.1f}' text-anchor='end'>1e{}</text>\n",
                         kLeft, y, kLeft + plot_w, y, kLeft - 6, y + 4, static_cast<int>(p));
    }
    for (size_t k = 0; k <= 4; ++k) {
      const size_t e = (n - 1) * k / 4;
      svg += fmt::format("<text x='{:.1f}' y='{}' text-anchor='middle'>{}</text>\n", x_of(e),
                         top + kPanel + 16, e);
    }
    for (size_t s = 0; s < series.size(); ++s) {
      std::string points;
      for (size_t e = 0; e < series[s].second.size(); ++e) {
        const double y = series[s].second[e];
        if (!(y > 0) || !std::isfinite(y)) continue;
        points += fmt::format("{:.1f},{:.1f} ", x_of(e), y_of(y));
      }
      const char* colour = s == 0 && series[0].first == "reference (exact)" ? "#000" : colours[s % 8];
      svg += fmt::format("<polyline fill='none' stroke='{}' stroke-width='1.2' points='{}'/>\n",
                         colour, points);
      svg += fmt::format("<line x1='{}' y1='{}' x2='{}' y2='{}' stroke='{}' stroke-width='2'/>"
                         "<text x='{}' y='{}'>{}</text>\n",
                         kLeft + plot_w + 10, top + 14 + 16 * s, kLeft + plot_w + 30,
                         top + 14 + 16 * s, colour, kLeft + plot_w + 35, top + 18 + 16 * s,
                         series[s].first);
    }
  };
  std::vector<std::pair<std::string, std::vector<double>>> losses = {
      {"reference (exact)", d.reference.loss}};
  std::vector<std::pair<std::string, std::vector<double>>> deviations;
  for (const FloatRunResult& r : d.runs) {
    const std::string name = r.config.tanh_bwd + "@" + r.config.target->name;
    losses.emplace_back(name, r.loss);
    std::vector<double> dev;
    for (size_t e = 0; e < r.loss.size(); ++e) {
      dev.push_back(std::fabs(r.loss[e] - d.reference.loss[e]) / d.reference.loss[e]);
    }
    deviations.emplace_back(name, dev);
  }
  panel(kTop, "loss (" + d.scenario.name + "), log scale, by epoch", losses);
  panel(kTop + kPanel + kGap, "relative loss deviation from the exact run", deviations);
  svg += "</svg>\n";
  return svg;
}

}  // namespace ulpgate
