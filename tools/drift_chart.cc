#include "tools/drift_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "oracles/float_text.h"
#include "suites/drift/kernels.h"
#include "tools/svg_chart.h"

namespace ulpgate {
namespace {

constexpr const char* kVariantKeys[] = {kDriftTanhBwd, "linear", "bias", "mse", "sgd"};

double LossValue(const nlohmann::ordered_json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const auto f = ParseFloat(v.get<std::string>());
    return f ? *f : NAN;
  }
  return NAN;  // null: a NaN loss
}

std::vector<double> Losses(const nlohmann::ordered_json& list) {
  std::vector<double> y;
  for (const auto& v : list) y.push_back(LossValue(v));
  return y;
}

// The largest value over each window of `window` epochs, drawn at every epoch
// of it: a deviation changes sign from one epoch to the next, and on a log
// axis its dips to zero hide the curve; the envelope keeps the size.
std::vector<double> Envelope(const std::vector<double>& y, size_t window) {
  std::vector<double> e(y.size(), NAN);
  for (size_t start = 0; start < y.size(); start += window) {
    double max = -INFINITY;
    bool any = false;
    const size_t end = std::min(y.size(), start + window);
    for (size_t i = start; i < end; ++i) {
      if (std::isnan(y[i])) continue;
      max = std::max(max, y[i]);
      any = true;
    }
    for (size_t i = start; i < end; ++i) e[i] = any ? max : NAN;
  }
  return e;
}

std::vector<double> Deviation(const std::vector<double>& loss, const std::vector<double>& ref) {
  std::vector<double> d(loss.size(), NAN);
  for (size_t e = 0; e < loss.size() && e < ref.size(); ++e) {
    d[e] = std::fabs(loss[e] - ref[e]) / std::fabs(ref[e]);
  }
  return d;
}

}  // namespace

RunFields FieldsOf(const RunConfig& c) {
  return {{{"precision", c.precision.Name()},
           {kDriftTanhBwd, c.tanh_bwd},
           {"linear", c.linear},
           {"bias", c.bias},
           {"mse", c.mse},
           {"sgd", c.sgd},
           {"target", c.target ? c.target->name : "?"}}};
}

RunFields FieldsOf(const nlohmann::ordered_json& run) {
  RunFields f;
  f.fields.emplace_back("precision", run.value("precision", std::string("f32")));
  for (const char* key : kVariantKeys) {
    f.fields.emplace_back(key, run["variants"].value(key, std::string()));
  }
  f.fields.emplace_back("target", run.value("target", std::string()));
  return f;
}

std::vector<std::string> RunShortNames(const std::vector<RunFields>& runs, bool without_precision) {
  std::vector<bool> differs;
  if (!runs.empty()) {
    for (size_t k = 0; k < runs[0].fields.size(); ++k) {
      bool d = false;
      for (const RunFields& r : runs) d = d || r.fields[k].second != runs[0].fields[k].second;
      differs.push_back(d);
    }
  }
  std::vector<std::string> names;
  for (const RunFields& r : runs) {
    std::string precision, variants, target;
    for (size_t k = 0; k < r.fields.size(); ++k) {
      const auto& [key, value] = r.fields[k];
      if (key == "precision") {
        if (differs[k] && !without_precision) precision = value + " ";
      } else if (key == "target") {
        if (differs[k] || runs.size() == 1) target = "@" + value;
      } else if (differs[k]) {
        variants += (variants.empty() ? "" : ",") + key + "=" + value;
      }
    }
    // Nothing but the target (or nothing) differs: the tanh layer's variant
    // names it.
    if (variants.empty()) variants = std::string(kDriftTanhBwd) + "=" + r.fields[1].second;
    names.push_back(precision + variants + target);
  }
  return names;
}

std::vector<std::string> RunShortNames(const std::vector<const FloatRunResult*>& runs) {
  std::vector<RunFields> fields;
  for (const FloatRunResult* r : runs) fields.push_back(FieldsOf(r->config));
  return RunShortNames(fields);
}

std::string DriftChartSvg(const nlohmann::ordered_json& report, const std::string& id) {
  const std::vector<double> reference = Losses(report["reference"]["loss"]);
  const nlohmann::ordered_json& runs = report.contains("runs") ? report["runs"] : nlohmann::ordered_json::array();
  std::vector<RunFields> fields;
  for (const auto& run : runs) fields.push_back(FieldsOf(run));
  // Grouped by precision when there are several; named by what differs within.
  std::map<std::string, size_t> precisions, specs, targets;
  for (const RunFields& f : fields) {
    precisions.emplace(f.fields[0].second, precisions.size());
    std::string spec;
    for (size_t k = 1; k + 1 < f.fields.size(); ++k) spec += f.fields[k].second + ",";
    specs.emplace(spec, specs.size());
    targets.emplace(f.fields.back().second, targets.size());
  }
  const bool grouped = precisions.size() > 1;
  const size_t window = std::max<size_t>(1, reference.size() / 100);
  const std::vector<std::string> names = RunShortNames(fields, grouped);

  std::vector<ChartSeries> series;
  // On top of the runs, dashed, so that runs that follow it closely do not
  // hide it (nor it them).
  ChartSeries exact;
  exact.name = "exact run (MPFR)";
  exact.style = {"#000", "5,3", 1.8};
  exact.on_top = true;
  exact.panels = {reference, {}};
  series.push_back(exact);
  // Runs in precision order, so that each group's entries stand together.
  std::vector<size_t> order(runs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return precisions.at(fields[a].fields[0].second) < precisions.at(fields[b].fields[0].second);
  });
  std::map<std::string, size_t> members;  // per precision, specs seen so far
  for (size_t i : order) {
    const RunFields& f = fields[i];
    std::string spec;
    for (size_t k = 1; k + 1 < f.fields.size(); ++k) spec += f.fields[k].second + ",";
    ChartSeries s;
    s.name = names[i];
    s.group = grouped ? f.fields[0].second : "";
    // A run looks the same in both panels and in the legend: with several
    // precisions, one hue per precision (its runs a bundle of shades);
    // otherwise a colour per variant spec; the dash tells targets apart.
    const size_t dash = targets.at(f.fields.back().second);
    s.style = grouped ? GroupStyle(precisions.at(f.fields[0].second),
                                   members[f.fields[0].second]++, dash)
                      : DistinctStyle(specs.at(spec), dash);
    const std::vector<double> loss = Losses(runs[i]["loss"]);
    s.panels = {loss, Envelope(Deviation(loss, reference), window)};
    series.push_back(std::move(s));
  }
  if (report.contains("compare")) {
    size_t k = 0;
    for (const auto& c : report["compare"]) {
      ChartSeries s;
      s.name = c.value("label", std::string("recorded")) + " (recorded)";
      s.group = "recorded curves";
      s.style = {k % 2 ? "#6a3d9a" : "#b15928", k / 2 % 2 ? "1,2" : "", 2.8};
      const std::vector<double> loss = Losses(c["loss"]);
      s.panels = {loss, Envelope(Deviation(loss, reference), window)};
      series.push_back(std::move(s));
      ++k;
    }
  }
  if (report.contains("attribution")) {
    // The float run beside the runs that round one op only, for the three
    // ops with the largest shares: the dominant op's curve lies on the run's.
    size_t k = 0;
    for (const auto& a : report["attribution"]) {
      for (size_t i = 0; i < a["ops"].size() && i < 3; ++i) {
        const auto& op = a["ops"][i];
        ChartSeries s;
        s.name = "only " + op.value("op", std::string("?")) + " rounded";
        s.group = "attribution (every other op exact)";
        s.style = DistinctStyle(4 + k++, 1);
        const std::vector<double> loss = Losses(op["alone_loss"]);
        s.panels = {loss, Envelope(Deviation(loss, reference), window)};
        series.push_back(std::move(s));
      }
    }
  }
  ChartOptions options;
  options.id = id;
  const auto& scenario = report["scenario"];
  options.title = fmt::format("drift: scenario {}, {} epochs, {} run{} beside the exact run",
                              scenario.value("name", std::string("?")),
                              report.value("epochs", size_t{0}), runs.size(),
                              runs.size() == 1 ? "" : "s");
  const std::vector<ChartPanel> panels = {
      {"loss per epoch (log scale)", "loss", true},
      {window > 1 ? fmt::format("relative loss deviation from the exact run, |run - exact| / "
                                "exact, largest of each {} epochs (log scale)",
                                window)
                  : std::string("relative loss deviation from the exact run, |run - exact| / "
                                "exact (log scale)"),
       "relative deviation", true}};
  return LineChartSvg(options, panels, series);
}

}  // namespace ulpgate
