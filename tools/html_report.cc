#include "tools/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <map>
#include <set>

#include "suites/reports/replay.h"
#include "suites/engine/op_table.h"
#include "oracles/ulp_metric.h"
#include "suites/reports/number_text.h"
#include "suites/reports/report.h"
#include "tools/drift_chart.h"
#include "tools/svg_chart.h"

namespace ulpgate {
namespace {

using Json = nlohmann::ordered_json;

std::string Esc(const std::string& s) { return XmlEscape(s); }

std::string Str(const Json& j, const char* key, const std::string& fallback = "") {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : fallback;
}

double Num(const Json& j, const char* key, double fallback = NAN) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

// Rounded away from zero (FormatUlp): a maximum never reads below its value.
std::string Sig(double x) {
  if (std::isnan(x)) return "&ndash;";
  if (std::isinf(x)) return x > 0 ? "&infin;" : "-&infin;";
  return FormatUlp(x);
}

// A colour from green (small) through yellow to red (large) for a ULP error,
// on a log scale: 0.5 ULP and below green, 2^12 and above red.
std::string UlpColour(double ulp) {
  if (!std::isfinite(ulp)) return "#b2182b";
  const double t = std::clamp((std::log2(std::max(ulp, 0.5)) + 1) / 13, 0.0, 1.0);
  const double hue = 120 * (1 - t);
  return fmt::format("hsl({:.0f},65%,{:.0f}%)", hue, 78 - 18 * t);
}

// The legend of UlpColour: a swatch per power of two from 0.5 to 2^12.
std::string UlpLegend() {
  std::vector<std::pair<std::string, std::string>> stops;
  for (int e = -1; e <= 12; ++e) {
    const double ulp = std::ldexp(1.0, e);
    const std::string label = e == -1 ? "\u22640.5" : e == 12 ? "\u22654096" : fmt::format("{:g}", ulp);
    stops.emplace_back(label, UlpColour(ulp));
  }
  stops.emplace_back("NaN/inf", UlpColour(INFINITY));
  return "<div class='legend'>" + ColourScaleSvg("max ULP error", stops) + "</div>";
}

// A bound of the histogram: 0.5, 1, 2, ... 512, then 2^10, 2^11, ...
std::string Bound(double b) {
  return b < 1000 ? fmt::format("{:g}", b)
                  : fmt::format("2^{}", static_cast<int>(std::lround(std::log2(b))));
}

// Bin i of a histogram: 0 holds the exact results, i < bounds the errors in
// (bounds[i-1], bounds[i]], the last those above every bound.
std::string BinLabel(const Json& bounds, size_t i) {
  if (i == 0) return "0";
  if (i >= bounds.size()) return ">" + Bound(bounds.back().get<double>());
  return Bound(bounds[i].get<double>());
}

std::string BinName(const Json& bounds, size_t i) {
  if (i == 0) return "exact (0 ULP)";
  if (i >= bounds.size()) return "above " + Bound(bounds.back().get<double>()) + " ULP";
  return fmt::format("{} < error \u2264 {} ULP", Bound(bounds[i - 1].get<double>()),
                     Bound(bounds[i].get<double>()));
}

struct HistogramItem {
  std::string title, subtitle;
  const Json* histogram;
};

// Histograms side by side on one x scale (bins up to the largest one any of
// them fills) and one y scale (up to the largest count), so bars compare
// across the row.
std::string HistogramGrid(const std::vector<HistogramItem>& items) {
  if (items.empty()) return "";
  const Json* widest = items[0].histogram;
  size_t bins = 2;
  double max_count = 1;
  for (const HistogramItem& item : items) {
    const Json& counts = (*item.histogram)["counts"];
    for (size_t i = 0; i < counts.size(); ++i) {
      const double c = counts[i].get<double>();
      if (c > 0) bins = std::max(bins, i + 1);
      max_count = std::max(max_count, c);
    }
    if ((*item.histogram)["bounds"].size() > (*widest)["bounds"].size()) widest = item.histogram;
  }
  const Json& bounds = (*widest)["bounds"];
  HistogramChart chart;
  chart.max_count = max_count;
  for (size_t i = 0; i < bins; ++i) {
    chart.bin_labels.push_back(BinLabel(bounds, i));
    chart.bin_names.push_back(BinName(bounds, i));
    const double upper = i == 0 ? 0 : i < bounds.size() ? bounds[i].get<double>() : INFINITY;
    chart.bin_colours.push_back(UlpColour(upper));
  }
  std::string html = "<div class='grid'>";
  for (const HistogramItem& item : items) {
    chart.title = item.title;
    chart.subtitle = item.subtitle;
    chart.counts.clear();
    for (const Json& c : (*item.histogram)["counts"]) chart.counts.push_back(c.get<double>());
    html += HistogramSvg(chart);
  }
  return html + "</div>";
}

std::string CaseName(const Json& c) { return Str(c, "variant") + "@" + Str(c, "target"); }

bool CaseConforms(const Json& c) {
  if (!c.contains("conformance") || !c["conformance"].is_object()) return true;
  const Json& k = c["conformance"];
  const std::string model = Str(k, "model"), expected = Str(k, "expected");
  return expected.empty() || (model == expected && k.value("mismatches", uint64_t{0}) == 0);
}

std::string Conformance(const Json& c) {
  if (!c.contains("conformance") || !c["conformance"].is_object()) return "&ndash;";
  const Json& k = c["conformance"];
  const std::string model = Str(k, "model"), expected = Str(k, "expected");
  if (CaseConforms(c)) {
    return model.empty() ? "&ndash;" : fmt::format("<span class='ok'>{}</span>", Esc(model));
  }
  return fmt::format("<span class='bad'>{} (expected {}; {} mismatches)</span>",
                     Esc(model.empty() ? "none" : model), Esc(expected),
                     k.value("mismatches", uint64_t{0}));
}

// The `run` that measures one case of a run report again: the same suite,
// seed and count give the same inputs and call plan.
std::string RunReplay(const Json& c) {
  return ReplayRunCommand(ReplayKernelOf(c), Str(c, "suite"), c.value("seed", uint64_t{1}),
                          c.contains("instances") ? c.value("instances", uint64_t{0}) : c.value("n", uint64_t{0}),
                          c.contains("shape") && c["shape"].is_string() ? Str(c, "shape") : "");
}

// A command, broken only between its words where it wraps (a browser would
// also break after the hyphens of --option).
std::string Code(const std::string& command) {
  std::string html = "<code class='replay'>";
  size_t at = 0;
  while (at <= command.size()) {
    const size_t end = std::min(command.find(' ', at), command.size());
    html += (at ? " " : "") + std::string("<span>") + Esc(command.substr(at, end - at)) + "</span>";
    at = end + 1;
  }
  return html + "</code>";
}

// A run's cases folded for its histograms and error map: one per variant and
// set of targets whose outputs are identical (the same output digest: the
// same bits on the same inputs, so the same histogram and error map), named
// with all those targets ("mac@SCALAR, AVX2"). The targets of a variant
// mostly compute the same bits, and a histogram each repeated them.
struct FoldedCase {
  const Json* c;
  std::string name;
};
std::vector<FoldedCase> FoldedCases(const Json& results) {
  std::vector<FoldedCase> folded;
  std::vector<std::string> keys;
  for (const Json& c : results) {
    const std::string digest = Str(c, "output_digest");
    const std::string key = digest.empty() ? "" : Str(c, "variant") + " " + Str(c, "dtype") + " " + digest;
    const auto same = key.empty() ? keys.end() : std::find(keys.begin(), keys.end(), key);
    if (same != keys.end()) {
      folded[static_cast<size_t>(same - keys.begin())].name += ", " + Str(c, "target");
      continue;
    }
    keys.push_back(key.empty() ? "#" + std::to_string(keys.size()) : key);
    folded.push_back({&c, CaseName(c)});
  }
  return folded;
}

// A faulted case's fault in words (FaultText) with its replay, for the red
// rows and the failing list: a faulted case measured nothing, so no figure
// and no histogram is drawn for it.
bool Faulted(const Json& c) { return c.is_object() && c.contains("fault") && c["fault"].is_object(); }

std::string FaultItem(const std::string& name, const Json& c) {
  const std::string replay = Str(c["fault"], "replay");
  return fmt::format("<li><b>FAULT</b> {}: the kernel faulted: {}; the case was not measured{}</li>",
                     Esc(name), Esc(FaultText(c)), replay.empty() ? "" : "; replay: " + Code(replay));
}

std::string SpecialCausesHtml(const Json& c, const std::string& replay);  // below

std::string RunSection(const ReportFile& f, size_t index) {
  const Json& results = f.json["results"];
  if (results.empty()) return "";
  const Json& first = results[0];
  std::string html = fmt::format(
      "<section id='run{}'><h2>{} &middot; suite {} &middot; {} &middot; n = {}</h2><p class='src'>{}</p>",
      index, Esc(Str(first, "op")), Esc(Str(first, "suite")), Esc(Str(first, "dtype", "f32")),
      first.value("n", first.value("instances", uint64_t{0})), Esc(f.path));
  html += "<table><tr><th>variant@target</th><th>kind</th><th>max ULP</th><th>mean</th><th>p99</th>"
          "<th>correctly rounded</th><th>special</th><th>model followed</th></tr>";
  std::string failing;
  for (const Json& c : results) {
    if (Faulted(c)) {
      html += fmt::format("<tr class='st-FAIL'><td>{}</td><td>{}</td><td colspan='6'><b>{}</b></td></tr>",
                          Esc(CaseName(c)), Esc(Str(c, "kind")), Esc(FaultText(c)));
      failing += FaultItem(CaseName(c), c);
      continue;
    }
    const double n = std::max(1.0, Num(c, "n", Num(c, "outputs", 1)));
    const double max_ulp = Num(c, "max_ulp");
    const uint64_t special = c.value("special_mismatch", uint64_t{0});
    const bool fails = !CaseConforms(c) || special > 0;
    html += fmt::format(
        "<tr{}><td>{}</td><td>{}</td><td class='n' style='background:{}'>{}</td><td class='n'>{}</td>"
        "<td class='n'>{}</td><td class='n'>{}</td><td class='n'>{}</td><td>{}</td></tr>",
        fails ? " class='st-FAIL'" : "", Esc(CaseName(c)), Esc(Str(c, "kind")), UlpColour(max_ulp),
        Sig(max_ulp), Sig(Num(c, "mean_ulp")),
        c.contains("percentiles") ? Sig(Num(c["percentiles"], "99")) : "&ndash;",
        c.contains("correctly_rounded") ? fmt::format("{:.2f}%", 100 * Num(c, "correctly_rounded") / n)
                                        : "&ndash;",
        special, Conformance(c));
    if (fails) {
      // And the first input that fails, computed again (the JSON's "reproduce").
      const char* first_failing = !CaseConforms(c) ? "first_mismatch_input" : "first_special_mismatch_input";
      const std::string input = c.contains("reproduce") ? Str(c["reproduce"], first_failing) : "";
      failing += fmt::format("<li><b>FAIL</b> {}: {}; replay: {}{}{}</li>", Esc(CaseName(c)),
                             !CaseConforms(c) ? "does not follow its expected model"
                                              : fmt::format("{} special mismatches", special),
                             Code(RunReplay(c) + (CaseConforms(c) ? "" : " --require-conformance")),
                             input.empty() ? "" : "<div>the first input: " + Code(input) + "</div>",
                             SpecialCausesHtml(c, RunReplay(c)));
    }
  }
  html += "</table>";
  if (!failing.empty()) html += "<ul class='failing'>" + failing + "</ul>";
  html += UlpLegend();
  const std::vector<FoldedCase> folded = FoldedCases(results);
  std::vector<HistogramItem> items;
  for (const FoldedCase& fold : folded) {
    const Json& c = *fold.c;
    if (!c.contains("histogram")) continue;
    items.push_back({fold.name, fmt::format("max {} ULP, n = {}", Sig(Num(c, "max_ulp")), c.value("n", uint64_t{0})),
                     &c["histogram"]});
  }
  html += HistogramGrid(items);
  // Error maps: max ULP per binade of the mapped operand, a row per case.
  std::vector<std::string> binades;
  std::string operand;
  for (const Json& c : results) {
    if (!c.contains("error_map")) continue;
    operand = Str(c["error_map"], "operand");
    for (const Json& b : c["error_map"]["buckets"]) {
      const std::string name = Str(b, "binade");
      if (std::find(binades.begin(), binades.end(), name) == binades.end()) binades.push_back(name);
    }
  }
  if (!binades.empty()) {
    html += fmt::format(
        "<h3>error map: max ULP by binade of {0}</h3><p class='note'>A row per variant and the "
        "targets that compute its outputs bit for bit alike, a "
        "column per binade of {0} (its sign and binary exponent); a cell's colour is the largest "
        "ULP error of the inputs in that binade (the scale below), blank where there are none. "
        "Hover a cell for its numbers.</p>{1}<div class='scroll'><table class='map'><tr><th>"
        "variant@target \\ binade of {0}</th>",
        Esc(operand), UlpLegend());
    for (const std::string& b : binades) html += "<th class='rot'><div>" + Esc(b) + "</div></th>";
    html += "</tr>";
    for (const FoldedCase& fold : folded) {
      const Json& c = *fold.c;
      if (!c.contains("error_map")) continue;
      std::map<std::string, const Json*> by;
      for (const Json& b : c["error_map"]["buckets"]) by[Str(b, "binade")] = &b;
      html += "<tr><td>" + Esc(fold.name) + "</td>";
      for (const std::string& b : binades) {
        const auto it = by.find(b);
        if (it == by.end()) {
          html += "<td></td>";
          continue;
        }
        const double m = Num(*it->second, "max_ulp");
        html += fmt::format("<td style='background:{}' title='{} {}: max {} ULP, {} inputs'></td>",
                            UlpColour(m), Esc(fold.name), Esc(b), Sig(m),
                            it->second->value("n", uint64_t{0}));
      }
      html += "</tr>";
    }
    html += "</table></div>";
  }
  return html + "</section>";
}

// The `check` that measures a check report's outputs again.
std::string CheckReplay(const Json& report, const Json& record) {
  std::string command = fmt::format("ulpgate check --op {} --dtype {} --inputs {}", Str(record, "op"),
                                    Str(record, "dtype", "f32"), ShellWord(Str(report, "inputs")));
  if (!Str(report, "outputs").empty()) command += " --outputs " + ShellWord(Str(report, "outputs"));
  // Outputs a plugin's or an IUT's kernel computed: that kernel, loaded again.
  if (!Str(report, "kernel").empty()) {
    command += " --variant " + ShellWord(Str(report, "kernel")) + SourceArguments(ReplayKernelOf(report));
  }
  if (!Str(report, "label").empty()) command += " --label " + ShellWord(Str(report, "label"));
  if (record.contains("conformance") && record["conformance"].contains("models")) {
    for (const Json& m : record["conformance"]["models"]) {
      if (Str(m, "source") == "user") {
        command += " --model " + ShellWord(Str(m, "name") + ": " + Str(m, "expression"));
      }
    }
  }
  return command;
}

// An input as its operands: "grad = 0x1p-3, t = 0x1.8p-1".
std::string InputText(const Json& input) {
  std::string text;
  if (!input.is_object()) return "&ndash;";
  for (const auto& [key, value] : input.items()) {
    if (key == "index" || key == "bits" || !value.is_string()) continue;
    text += fmt::format("{}{} = {}", text.empty() ? "" : ", ", Esc(key), Esc(value.get<std::string>()));
  }
  if (input.contains("index")) text += fmt::format(" (#{})", input["index"].dump());
  return text;
}

// A record's special mismatches by cause ("special_mismatch_causes"), each
// with its count, its first input and, for an elementwise op, a command that
// runs the case on that input alone (`replay` otherwise); empty when none.
std::string SpecialCausesHtml(const Json& c, const std::string& replay) {
  Json causes = c.contains("special_mismatch_causes") && c["special_mismatch_causes"].is_object()
                    ? c["special_mismatch_causes"]
                    : Json::object();
  if (c.contains("first_signed_zero_input")) {
    causes["signed zero (a zero of the wrong sign, 0 ULP, not a special mismatch)"] = {
        {"count", c.value("signed_zero_mismatch", uint64_t{0})},
        {"first_input", c["first_signed_zero_input"]}};
  }
  if (causes.empty()) return "";
  std::string html = "<ul class='causes'>";
  for (const auto& [key, cause] : causes.items()) {
    std::string text = key;
    for (int k = 0; k < kSpecialCauseCount; ++k) {
      if (key == SpecialCauseKey(SpecialCauseAt(k))) text = SpecialCauseText(SpecialCauseAt(k));
    }
    const Json input = cause.value("first_input", Json());
    std::string command = replay;
    if (input.is_object() && input.contains("bits") && Str(c, "kind") != "outputs") {
      // That input alone, through the one replay builder (its kernel's
      // --plugin or --iut with it).
      std::vector<std::string> names;
      std::vector<float> values;
      for (const auto& [name, value] : input.items()) {
        if (name != "index" && name != "bits" && value.is_string()) {
          names.push_back(name);
          values.push_back(std::strtof(value.get<std::string>().c_str(), nullptr));
        }
      }
      command = ReplayInputCommand(ReplayKernelOf(c), names, values);
    }
    html += fmt::format("<li>{}: {}, the first at {}; replay: {}</li>", Esc(text),
                        cause.value("count", uint64_t{0}), InputText(input), Code(command));
  }
  return html + "</ul>";
}

std::string CheckSection(const ReportFile& f, size_t index) {
  const Json& report = f.json;
  if (!report.contains("results") || report["results"].empty()) return "";
  const Json& r = report["results"][0];
  const std::string verdict = Str(report, "verdict");
  std::string html = fmt::format(
      "<section id='check{}'><h2>check: {} &middot; {} in {} &middot; {} outputs{}</h2>"
      "<p class='src'>{} &middot; inputs {} &middot; outputs {}</p>",
      index, Esc(Str(report, "label")), Esc(Str(r, "op")), Esc(Str(r, "dtype", "f32")),
      r.value("n", uint64_t{0}),
      verdict.empty() ? ""
                      : fmt::format(" &middot; <span class='{}'>{}</span>", verdict == "PASS" ? "ok" : "bad",
                                    Esc(verdict)),
      Esc(f.path), Esc(Str(report, "inputs")), Esc(Str(report, "outputs", "(a plugin's kernel)")));
  if (Faulted(r)) {
    html += fmt::format("<table><tr class='st-FAIL'><td><b>{}</b></td></tr></table><ul class='failing'>{}</ul>",
                        Esc(FaultText(r)), FaultItem(Str(report, "label", "outputs"), r));
    return html + "</section>";
  }
  const double n = std::max(1.0, Num(r, "n", 1));
  const double max_ulp = Num(r, "max_ulp");
  html += fmt::format(
      "<table><tr><th>max ULP</th><th>mean</th><th>p99</th><th>correctly rounded</th><th>special</th>"
      "<th>worst input</th></tr><tr><td class='n' style='background:{}'>{}</td><td class='n'>{}</td>"
      "<td class='n'>{}</td><td class='n'>{}</td><td class='n'>{}</td><td>{}</td></tr></table>",
      UlpColour(max_ulp), Sig(max_ulp), Sig(Num(r, "mean_ulp")),
      r.contains("percentiles") ? Sig(Num(r["percentiles"], "99")) : "&ndash;",
      r.contains("correctly_rounded") ? fmt::format("{:.2f}%", 100 * Num(r, "correctly_rounded") / n)
                                      : "&ndash;",
      r.value("special_mismatch", uint64_t{0}), r.contains("max_input") ? InputText(r["max_input"]) : "&ndash;");
  html += SpecialCausesHtml(r, CheckReplay(report, r));
  if (report.contains("failures") && !report["failures"].empty()) {
    html += "<ul class='failing'>";
    for (const Json& failure : report["failures"]) {
      html += "<li><b>FAIL</b> " + Esc(failure.is_string() ? failure.get<std::string>() : failure.dump()) + "</li>";
    }
    html += "</ul>";
  }
  html += fmt::format("<p>{}: {}</p>", verdict == "FAIL" ? "replay" : "measure again",
                      Code(CheckReplay(report, r)));
  const Json& conformance = r.contains("conformance") ? r["conformance"] : Json::object();
  if (conformance.contains("models") && !conformance["models"].empty()) {
    html += "<h3>rounding models: which the outputs follow bit for bit</h3><table><tr><th>model</th>"
            "<th>source</th><th>mismatches</th><th>nearest mismatch</th><th>statements</th></tr>";
    // Those followed first, then by how close they come.
    std::vector<const Json*> models;
    for (const Json& m : conformance["models"]) models.push_back(&m);
    std::stable_sort(models.begin(), models.end(), [](const Json* a, const Json* b) {
      return a->value("mismatches", uint64_t{0}) < b->value("mismatches", uint64_t{0});
    });
    for (const Json* model : models) {
      const Json& m = *model;
      const uint64_t mismatches = m.value("mismatches", uint64_t{0});
      std::string nearest = "&ndash;";
      if (m.contains("nearest_mismatches") && !m["nearest_mismatches"].empty()) {
        const Json& e = m["nearest_mismatches"][0];
        nearest = fmt::format("{}: output {}, model {}", InputText(e),
                              e.contains("output") ? Esc(Str(e["output"], "value")) : "?",
                              e.contains("model") ? Esc(Str(e["model"], "value")) : "?");
      }
      html += fmt::format(
          "<tr class='{}'><td>{}</td><td>{}</td><td class='n'>{}</td><td>{}</td><td><code>{}</code></td></tr>",
          mismatches == 0 ? "cell-ok" : "", Esc(Str(m, "name")), Esc(Str(m, "source")),
          mismatches == 0 ? "<span class='ok'>0: follows</span>" : std::to_string(mismatches), nearest,
          Esc(Str(m, "expression")));
    }
    html += "</table>";
  } else if (conformance.contains("matching")) {
    std::string matching;
    for (const Json& m : conformance["matching"]) matching += (matching.empty() ? "" : ", ") + Esc(m.get<std::string>());
    html += "<p>follows bit for bit: " + (matching.empty() ? std::string("no model") : matching) + "</p>";
  }
  if (r.contains("histogram")) {
    html += UlpLegend();
    html += HistogramGrid({{Str(report, "label", "outputs"),
                            fmt::format("max {} ULP, n = {}", Sig(max_ulp), r.value("n", uint64_t{0})),
                            &r["histogram"]}});
  }
  return html + "</section>";
}

std::string MatrixSection(const ReportFile& f, size_t index) {
  const Json& m = f.json;
  std::vector<std::string> variants, targets;
  std::map<std::pair<std::string, std::string>, const Json*> cells;
  for (const Json& c : m["cells"]) {
    const std::string v = Str(c, "variant"), t = Str(c, "target");
    if (std::find(variants.begin(), variants.end(), v) == variants.end()) variants.push_back(v);
    if (std::find(targets.begin(), targets.end(), t) == targets.end()) targets.push_back(t);
    cells[{v, t}] = &c;
  }
  std::string html = fmt::format(
      "<section id='matrix{}'><h2>target matrix: {} &middot; {} inputs per suite &middot; {}</h2>"
      "<p class='src'>{}</p><table><tr><th>variant</th>",
      index, Esc(Str(m, "op")), m.value("n_per_suite", uint64_t{0}),
      m.value("as_expected", false) ? "<span class='ok'>every kernel follows its model</span>"
                                    : "<span class='bad'>a kernel leaves its model</span>",
      Esc(f.path));
  for (const std::string& t : targets) html += "<th>" + Esc(t) + "</th>";
  html += "</tr>";
  for (const std::string& v : variants) {
    html += "<tr><td>" + Esc(v) + "</td>";
    for (const std::string& t : targets) {
      const auto it = cells.find({v, t});
      if (it == cells.end()) {
        html += "<td></td>";
        continue;
      }
      const Json& c = *it->second;
      const bool as_expected = Str(c, "model") == Str(c, "expected_model");
      std::string tip;
      if (c.contains("max_ulp")) {
        for (const auto& [suite, value] : c["max_ulp"].items()) {
          tip += fmt::format("{}{}: max {} ULP", tip.empty() ? "" : "; ", suite,
                             value.is_number() ? Sig(value.get<double>()) : std::string("?"));
        }
      }
      // A target this CPU cannot run was not measured: it is neither a pass
      // nor a failure, only the model it should follow is known.
      if (Faulted(c)) {
        html += fmt::format("<td class='cell-bad'><b>{}</b></td>", Esc(FaultText(c)));
        continue;
      }
      if (!c.value("run", true)) {
        html += fmt::format("<td class='cell-off' title='not run on this CPU'><i>not run here</i> "
                            "<span class='group'>expects {}</span></td>",
                            Esc(Str(c, "expected_model")));
        continue;
      }
      html += fmt::format("<td class='{}' title='{}'>{}<span class='group'>{}</span></td>",
                          as_expected ? "cell-ok" : "cell-bad", Esc(tip), Esc(Str(c, "model", "none")),
                          Esc(Str(c, "group")));
    }
    html += "</tr>";
  }
  html += "</table><p class='note'>Each cell: the model the kernel follows bit for bit (green: the one its "
          "target should; red: not), and its group of identical outputs; grey: a target this CPU cannot "
          "run, with the model it should follow.</p>";
  // Each kernel that leaves its model, with the runs that show it (one per suite).
  std::string failing;
  for (const Json& c : m["cells"]) {
    if (Faulted(c)) {
      failing += FaultItem(Str(c, "variant") + "@" + Str(c, "target"), c);
      continue;
    }
    if (!c.value("run", true) || Str(c, "model") == Str(c, "expected_model")) continue;
    std::string commands;
    for (const Json& suite : m.contains("suites") ? m["suites"] : Json::array()) {
      Json kernel = c;
      kernel["op"] = Str(m, "op");
      kernel["dtype"] = Str(m, "dtype", "f32");
      const std::string command =
          ReplayRunCommand(ReplayKernelOf(kernel), suite.is_string() ? suite.get<std::string>() : suite.dump(),
                           m.value("seed", uint64_t{1}), m.value("n_per_suite", uint64_t{0})) +
          " --require-conformance";
      commands += "<div>replay: " + Code(command) + "</div>";
    }
    failing += fmt::format("<li><b>FAIL</b> {}@{} follows {}, not {}{}</li>", Esc(Str(c, "variant")),
                           Esc(Str(c, "target")), Esc(Str(c, "model", "no model")),
                           Esc(Str(c, "expected_model")), commands);
  }
  if (!failing.empty()) html += "<ul class='failing'>" + failing + "</ul>";
  return html + "</section>";
}

// Horizontal bars of each op's share of the final loss deviation, signed,
// the interaction last; shares past +-200% are drawn at the edge.
std::string AttributionSvg(const Json& a, const std::string& id) {
  const Json& ops = a["ops"];
  const double row = 18, left = 150, width = 720, mid = left + 260, scale = 120;  // px per 100%
  const double height = (ops.size() + 2) * row + 36;
  std::string svg = fmt::format(
      "<svg id='{}' width='{}' height='{:.0f}' viewBox='0 0 {} {:.0f}' font-size='11' role='img'>"
      "<line x1='{}' y1='8' x2='{}' y2='{:.0f}' stroke='#333'/>",
      id, width, height, width, height, mid, mid, height - 22);
  for (int p : {-200, -100, 100, 200}) {
    const double x = mid + scale * p / 100.0;
    svg += fmt::format("<line x1='{}' y1='8' x2='{}' y2='{:.0f}' stroke='#ddd'/><text x='{}' y='{:.0f}' "
                       "text-anchor='middle' fill='#555'>{:+d}%</text>",
                       x, x, height - 22, x, height - 8, p);
  }
  auto bar = [&](size_t i, const std::string& name, double share, const std::string& colour,
                 const std::string& note) {
    const double y = 10 + i * row;
    const double clamped = std::clamp(std::isfinite(share) ? share : 0.0, -2.0, 2.0);
    const double x0 = mid + std::min(0.0, clamped) * scale, w = std::fabs(clamped) * scale;
    svg += fmt::format(
        "<text x='{}' y='{:.0f}' text-anchor='end'>{}</text><rect x='{:.1f}' y='{:.0f}' width='{:.1f}' "
        "height='{:.0f}' fill='{}'><title>{}: {}</title></rect><text x='{:.1f}' y='{:.0f}' fill='#222'>{}</text>",
        left - 6, y + 12, Esc(name), x0, y + 2, std::max(w, 1.0), row - 5, colour, Esc(name),
        std::isfinite(share) ? fmt::format("{:+.1f}%", 100 * share) : std::string("n/a"),
        clamped >= 0 ? x0 + w + 4 : x0 - 4, y + 12,
        (std::isfinite(share) ? fmt::format("{:+.1f}%", 100 * share) : std::string("n/a")) + note);
  };
  size_t i = 0;
  for (const Json& op : ops) {
    const bool stalls = op.contains("alone") && op["alone"].value("stalled", false);
    bar(i++, Str(op, "op"), Num(op, "share"), Num(op, "share", 0) >= 0 ? "#d6604d" : "#4393c3",
        stalls ? " (alone, it stalls the run)" : "");
  }
  bar(i, "(interaction)", Num(a, "interaction"), "#999", "");
  return svg + "</svg>";
}

std::string DriftSection(const ReportFile& f, size_t index) {
  const Json& d = f.json;
  const Json& s = d["scenario"];
  std::string html = fmt::format(
      "<section id='drift{}'><h2>drift: scenario {} &middot; {} epochs</h2><p class='src'>{}</p>"
      "<p>{}</p><div class='chart'>{}</div>",
      index, Esc(Str(s, "name")), d.value("epochs", uint64_t{0}), Esc(f.path), Esc(Str(s, "description")),
      DriftChartSvg(d, fmt::format("drift{}", index)));
  const Json& runs = d.contains("runs") ? d["runs"] : Json::array();
  if (!runs.empty()) {
    std::vector<RunFields> fields;
    for (const Json& r : runs) fields.push_back(FieldsOf(r));
    const std::vector<std::string> names = RunShortNames(fields);
    html += "<table><tr><th>run</th><th>precision</th><th>final dev.</th><th>max dev.</th><th>lag at end</th>"
            "<th>stalled</th><th>param max ULP</th></tr>";
    for (size_t i = 0; i < runs.size(); ++i) {
      const Json& sum = runs[i]["summary"];
      std::string lag = "&ndash;";
      if (sum.contains("lag") && !sum["lag"].empty()) {
        const Json& last = sum["lag"].back()["lag"];
        lag = last.is_null() ? "never" : fmt::format("{:+d}", last.get<long>());
      }
      html += fmt::format(
          "<tr><td>{}</td><td>{}</td><td class='n'>{}</td><td class='n'>{}</td><td class='n'>{}</td><td>{}</td>"
          "<td class='n'>{}</td></tr>",
          Esc(names[i]),
          Esc(Str(runs[i], "precision", "f32")), Sig(Num(sum, "final_signed_loss_deviation")),
          Sig(Num(sum, "max_relative_loss_deviation")), lag,
          sum.value("stalled", false) ? "<span class='bad'>stalled</span>" : "no",
          Sig(Num(sum, "final_parameter_max_ulp")));
    }
    html += "</table>";
  }
  if (d.contains("compare")) {
    for (const Json& c : d["compare"]) {
      html += fmt::format(
          "<p>recorded curve <b>{}</b> ({}): final deviation {} from the exact run, closest ulpgate run: {}</p>",
          Esc(Str(c, "label")), Esc(Str(c, "file")), Sig(Num(c["summary"], "final_signed_loss_deviation")),
          Esc(Str(c, "closest_run", "&ndash;")));
    }
  }
  if (d.contains("op_models")) {
    // Per two curves with recorded ops: the ops whose models differ, and why.
    for (const Json& pair : d["op_models"]) {
      const Json& labels = pair["curves"];
      const std::string la = labels.size() > 0 ? labels[0].get<std::string>() : "";
      const std::string lb = labels.size() > 1 ? labels[1].get<std::string>() : "";
      std::string rows;
      for (const Json& o : pair["ops"]) {
        if (o.value("cause", Json()).is_string() && o["cause"] == "none") continue;
        const Json& models = o.contains("models") ? o["models"] : Json::array();
        // A side that follows no model shows its nearest as such.
        auto side = [&](size_t k) -> std::string {
          const std::string m = models.size() > k ? models[k].get<std::string>() : "";
          const bool followed = o.contains("followed") && o["followed"].size() > k && o["followed"][k].get<bool>();
          if (followed) return Esc(m);
          return m.empty() ? std::string("none") : "none (nearest " + Esc(m) + ")";
        };
        rows += fmt::format(
            "<tr><td>{}</td><td class='n'>{}</td><td>{}</td><td><b>{}</b></td><td>{}</td><td>{}</td>"
            "<td>{}</td></tr>",
            Esc(Str(o, "op")), o.value("layer", -1), Esc(Str(o, "dtype")),
            o["cause"].is_string() ? Esc(o["cause"].get<std::string>()) : std::string("not settled"),
            Esc(Str(o, "evidence", "&ndash;")),
            side(0), side(1));
      }
      html += rows.empty()
                  ? fmt::format("<p>ops of {} and {}: every recorded op follows a model in common.</p>",
                                Esc(la), Esc(lb))
                  : fmt::format("<h3>ops whose models differ: {} and {}</h3><table><tr><th>op</th>"
                                "<th>layer</th><th>dtype</th><th>cause</th><th>evidence</th>"
                                "<th>{}</th><th>{}</th></tr>{}</table>",
                                Esc(la), Esc(lb), Esc(la), Esc(lb), rows);
    }
  }
  if (d.contains("attribution")) {
    size_t k = 0;
    for (const Json& a : d["attribution"]) {
      html += fmt::format("<h3>attribution of {}</h3><p>{}; dominant op: <b>{}</b>.{}</p>",
                          Esc(Str(a, "label")),
                          fmt::format("final loss deviation of the float run {}",
                                      Sig(Num(a["summary"], "final_signed_loss_deviation"))),
                          Esc(Str(a, "dominant", "none")),
                          a.value("stalled", false) ? " The run stalls." : "");
      html += AttributionSvg(a, fmt::format("attr{}-{}", index, k++));
      html += "<p class='note'>Share: the final loss deviation of the run with only that op rounded "
              "(every other op exact), over the float run's. Shares and the interaction add up to 100%.</p>";
    }
  }
  return html + "</section>";
}

// A gate row's message and replay command, for the rows that do not simply pass.
std::string GateRowDetails(const Json& r) {
  std::string html;
  const std::string message = Str(r, "message"), replay = Str(r, "replay");
  if (!message.empty()) html += "<div>" + Esc(message) + "</div>";
  if (!replay.empty() && Str(r, "status") != "PASS") html += "<div>replay: " + Code(replay) + "</div>";
  return html;
}

std::string Waiver(const Json& r) {
  if (!r.contains("waiver") || !r["waiver"].is_object()) return "";
  const Json& w = r["waiver"];
  return fmt::format("{} <span class='expires'>(expires {})</span>", Esc(Str(w, "reason")),
                     Esc(Str(w, "expires")));
}

std::string GateSection(const ReportFile& f, size_t index) {
  const Json& g = f.json;
  const std::string status = Str(g, "status");
  const Json& rows = g.contains("rows") ? g["rows"] : Json::array();
  // Counts of rows, and of rules by their worst row.
  const std::vector<std::string> statuses = {"PASS", "FAIL", "WAIVED", "EXPIRED", "SKIPPED"};
  auto severity = [](const std::string& s) {
    return s == "FAIL" || s == "EXPIRED" ? 3 : s == "WAIVED" ? 2 : s == "PASS" ? 1 : 0;
  };
  std::map<std::string, size_t> row_counts, rule_counts;
  std::vector<std::pair<std::string, std::string>> rules;  // id, worst status
  for (const Json& r : rows) {
    const std::string st = Str(r, "status");
    ++row_counts[st];
    if (rules.empty() || rules.back().first != Str(r, "rule")) {
      rules.emplace_back(Str(r, "rule"), st);
    } else if (severity(st) > severity(rules.back().second)) {
      rules.back().second = st;
    }
  }
  for (const auto& rule : rules) ++rule_counts[rule.second];
  std::string html = fmt::format(
      "<section id='gate{}'><h2>release gate: <span class='{}'>{}</span></h2><p class='src'>{} &middot; "
      "budgets {} &middot; waivers as of {}</p><table class='counts'><tr><th></th><th>total</th>",
      index, status == "PASS" ? "ok" : "bad", Esc(status), Esc(f.path), Esc(Str(g, "budgets")),
      Esc(Str(g, "today")));
  for (const std::string& st : statuses) html += "<th class='st-" + st + "'>" + st + "</th>";
  html += fmt::format("</tr><tr><td>rows</td><td class='n'>{}</td>", rows.size());
  for (const std::string& st : statuses) html += fmt::format("<td class='n'>{}</td>", row_counts[st]);
  html += fmt::format("</tr><tr><td>rules</td><td class='n'>{}</td>", rules.size());
  for (const std::string& st : statuses) html += fmt::format("<td class='n'>{}</td>", rule_counts[st]);
  // The kernels that faulted (each fails the rules over it): named first.
  std::string faults;
  for (const Json& fault : g.contains("faults") ? g["faults"] : Json::array()) {
    if (fault.is_string()) faults += "<li><b>FAULT</b> " + Esc(fault.get<std::string>()) + "</li>";
  }
  html += "</tr></table><p class='note'>A rule counts as its worst row.</p>";
  if (g.contains("model_targets") && !g["model_targets"].empty()) {
    std::string models;
    for (const Json& t : g["model_targets"]) models += (models.empty() ? "" : ", ") + Esc(t.get<std::string>());
    html += "<p class='note'>Evaluated on their models (MODEL ONLY; rows say \"(model)\"): " + models +
            ". A model checks the budgets hold for the target's rounding model, but cannot catch a bug "
            "in its kernels; only a CPU that runs the target can.</p>";
  }
  if (!faults.empty()) {
    html += "<h3>kernels that faulted (not measured)</h3><ul class='failing'>" + faults + "</ul>";
  }
  // The rows a reader must see, in full, above the table of every row.
  std::string attention;
  for (const Json& r : rows) {
    const std::string st = Str(r, "status");
    if (st == "SKIPPED" || (st == "PASS" && Str(r, "message").empty())) continue;
    attention += fmt::format(
        "<li class='st-{}'><b>{}</b> <code>{}.{}</code>: measured {}, limit {}{}{}</li>", Esc(st), Esc(st),
        Esc(Str(r, "rule")), Esc(Str(r, "limit")), Esc(Str(r, "measured_text", "-")), Sig(Num(r, "limit_value")),
        Str(r, "where").empty() ? "" : ", at " + Esc(Str(r, "where")), GateRowDetails(r));
  }
  if (!attention.empty()) {
    html += "<h3>rows that fail, are waived or expired</h3><ul class='attention'>" + attention + "</ul>";
  }
  html += fmt::format(
      "<h3>every row</h3><input class='filter' placeholder='filter rows' data-table='gate{0}-rows'>"
      "<label class='hide-pass'><input type='checkbox' data-table='gate{0}-rows'> hide PASS rows</label>"
      "<div class='scroll tall'><table id='gate{0}-rows'><tr><th>rule</th><th>limit</th><th>status</th>"
      "<th>measured</th><th>limit value</th><th>where</th><th>waiver (expires)</th>"
      "<th>message, replay</th></tr>",
      index);
  for (const Json& r : rows) {
    const std::string st = Str(r, "status");
    html += fmt::format("<tr class='st-{}'><td>{}</td><td>{}</td><td>{}</td><td class='n'>{}</td><td class='n'>{}</td>"
                        "<td>{}</td><td>{}</td><td class='details'>{}</td></tr>",
                        Esc(st), Esc(Str(r, "rule")), Esc(Str(r, "limit")), Esc(st),
                        Esc(Str(r, "measured_text", Sig(Num(r, "measured")))), Sig(Num(r, "limit_value")),
                        Esc(Str(r, "where")), Waiver(r), st == "PASS" && Str(r, "message").empty() ? "" : GateRowDetails(r));
  }
  return html + "</table></div></section>";
}

constexpr const char* kStyle = R"(
body { font-family: "DejaVu Sans", Arial, sans-serif; margin: 24px; color: #222; max-width: 1400px; }
h1 { font-size: 22px; } h2 { font-size: 17px; border-bottom: 1px solid #ccc; padding-bottom: 4px; }
h3 { font-size: 14px; } section { margin-bottom: 36px; }
table { border-collapse: collapse; font-size: 12px; margin: 8px 0; }
td, th { border: 1px solid #ddd; padding: 3px 6px; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f3f3f3; }
.ok { color: #1a7f37; font-weight: bold; } .bad { color: #b2182b; font-weight: bold; }
.cell-ok { background: #dff3e3; } .cell-bad { background: #f8d7da; } .cell-off { background: #f1f1f1; color: #666; }
.group { color: #666; font-size: 10px; margin-left: 4px; }
.grid { display: flex; flex-wrap: wrap; gap: 6px; }
.hist { border: 1px solid #eee; background: #fff; }
.scroll { overflow: auto; max-width: 100%; } .tall { max-height: 520px; }
.map td { width: 16px; height: 18px; padding: 0; border: 1px solid #fff; }
.map td:first-child { width: auto; padding: 0 6px; white-space: nowrap; }
.rot { height: 110px; vertical-align: bottom; padding: 0; }
.rot div { writing-mode: vertical-rl; transform: rotate(180deg); font-weight: normal; font-size: 10px;
  padding: 2px 0; }
.src { color: #666; font-size: 11px; margin-top: -6px; } .note { color: #555; font-size: 11px; }
.st-FAIL td, .st-EXPIRED td { background: #f8d7da; } .st-WAIVED td { background: #fff3cd; }
nav a { margin-right: 12px; } .dim { opacity: 0.12; } [data-legend] { cursor: pointer; }
.filter { margin: 4px 0; padding: 3px; width: 260px; } .hide-pass { margin-left: 12px; font-size: 12px; }
code, .replay { font-family: "DejaVu Sans Mono", monospace; font-size: 11px; }
.replay { background: #f3f3f3; padding: 1px 4px; user-select: all; } .replay span { white-space: nowrap; }
.attention li, .failing li { margin: 6px 0; font-size: 13px; } .attention li div { margin-left: 16px; }
li.st-FAIL b, li.st-EXPIRED b { color: #b2182b; } li.st-WAIVED b { color: #8a6d00; }
.counts td, .counts th { min-width: 44px; } .expires { color: #555; white-space: nowrap; }
td.details { max-width: 560px; } td.details div + div { margin-top: 3px; }
.legend { margin: 6px 0; }
)";

// Legend entries toggle their series in every panel of their chart; the
// gate's rows filter as one types, and hide their PASS rows on request; the
// page says when it has rendered.
constexpr const char* kScript = R"(
document.querySelectorAll('[data-legend]').forEach(function (entry) {
  entry.addEventListener('click', function () {
    var svg = entry.closest('svg');
    var k = entry.getAttribute('data-legend');
    entry.classList.toggle('dim');
    svg.querySelectorAll('[data-series="' + k + '"]').forEach(function (p) { p.classList.toggle('dim'); });
  });
});
function filterRows(id) {
  var text = document.querySelector('input.filter[data-table="' + id + '"]');
  var hide = document.querySelector('.hide-pass input[data-table="' + id + '"]');
  var needle = text ? text.value.toLowerCase() : '';
  var rows = document.getElementById(id).querySelectorAll('tr');
  for (var i = 1; i < rows.length; ++i) {
    var shown = rows[i].textContent.toLowerCase().indexOf(needle) >= 0 &&
                !(hide && hide.checked && rows[i].classList.contains('st-PASS'));
    rows[i].style.display = shown ? '' : 'none';
  }
}
document.querySelectorAll('input[data-table]').forEach(function (input) {
  var id = input.getAttribute('data-table');
  input.addEventListener('input', function () { filterRows(id); });
  input.addEventListener('change', function () { filterRows(id); });
});
document.body.setAttribute('data-rendered', 'yes');
)";

}  // namespace

bool IsReportFormat(const std::string& format) {
  return format == "ulpgate-run-1" || format == "ulpgate-matrix-1" || format == "ulpgate-drift-2" ||
         format == "ulpgate-drift-3" || format == "ulpgate-gate-2" || format == "ulpgate-check-1";
}

std::string HtmlReport(const std::vector<ReportFile>& files, const std::string& title) {
  std::string nav, body;
  size_t index = 0;
  // Gate first (the verdict), then matrices, runs (in the op table's order),
  // checks of outputs made elsewhere, drift (plain runs before attributions):
  // the order a reader asks.
  auto rank = [](const ReportFile& f) {
    const std::vector<OpInfo>& ops = OpTable();
    const Json& results = f.json.contains("results") ? f.json["results"] : Json::array();
    const std::string op = results.empty() ? "" : Str(results[0], "op");
    const size_t o = std::find_if(ops.begin(), ops.end(),
                                  [&](const OpInfo& info) { return info.name == op; }) -
                     ops.begin();
    return std::make_pair(o * 2 + (f.json.contains("attribution") ? 1 : 0),
                          results.empty() ? std::string() : Str(results[0], "dtype", "f32"));
  };
  std::vector<const ReportFile*> sorted;
  for (const ReportFile& f : files) sorted.push_back(&f);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](const ReportFile* a, const ReportFile* b) { return rank(*a) < rank(*b); });
  for (const char* format :
       {"ulpgate-gate-2", "ulpgate-matrix-1", "ulpgate-run-1", "ulpgate-check-1", "ulpgate-drift-3",
        "ulpgate-drift-2"}) {
    for (const ReportFile* fp : sorted) {
      const ReportFile& f = *fp;
      if (Str(f.json, "format") != format) continue;
      ++index;
      std::string section, anchor, name;
      if (std::string(format) == "ulpgate-gate-2") {
        section = GateSection(f, index);
        anchor = fmt::format("gate{}", index);
        name = "gate " + Str(f.json, "status");
      } else if (std::string(format) == "ulpgate-matrix-1") {
        section = MatrixSection(f, index);
        anchor = fmt::format("matrix{}", index);
        name = "matrix";
      } else if (std::string(format) == "ulpgate-run-1") {
        section = RunSection(f, index);
        anchor = fmt::format("run{}", index);
        const Json& results = f.json["results"];
        name = results.empty() ? "run" : Str(results[0], "op") + " " + Str(results[0], "suite") +
                                             (Str(results[0], "dtype", "f32") == "f32" ? "" : " " + Str(results[0], "dtype"));
      } else if (std::string(format) == "ulpgate-check-1") {
        section = CheckSection(f, index);
        anchor = fmt::format("check{}", index);
        name = "check " + Str(f.json, "label");
      } else {
        section = DriftSection(f, index);
        anchor = fmt::format("drift{}", index);
        std::set<std::string> precisions;
        if (f.json.contains("runs")) {
          for (const Json& r : f.json["runs"]) precisions.insert(Str(r, "precision", "f32"));
        }
        name = (f.json.contains("attribution") ? "attribution " : "drift ") +
               Str(f.json["scenario"], "name") +
               (precisions.size() == 1 ? " " + *precisions.begin()
                                       : fmt::format(" ({} precisions)", precisions.size()));
      }
      if (section.empty()) continue;
      nav += fmt::format("<a href='#{}'>{}</a>", anchor, Esc(name));
      body += section;
    }
  }
  return fmt::format(
      "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>{}</title><style>{}</style>"
      "</head>\n<body><h1>{}</h1><nav>{}</nav>\n{}\n<script>{}</script></body></html>\n",
      Esc(title), kStyle, Esc(title), nav, body, kScript);
}

}  // namespace ulpgate
