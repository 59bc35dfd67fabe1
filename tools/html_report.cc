#include "tools/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "suites/engine/op_table.h"
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

std::string Sig(double x, int digits = 4) {
  if (std::isnan(x)) return "&ndash;";
  if (std::isinf(x)) return x > 0 ? "&infin;" : "-&infin;";
  return fmt::format("{:.{}g}", x, digits);
}

// A colour from green (small) through yellow to red (large) for a ULP error,
// on a log scale: 0.5 ULP and below green, 2^12 and above red.
std::string UlpColour(double ulp) {
  if (!std::isfinite(ulp)) return "#b2182b";
  const double t = std::clamp((std::log2(std::max(ulp, 0.5)) + 1) / 13, 0.0, 1.0);
  const double hue = 120 * (1 - t);
  return fmt::format("hsl({:.0f},65%,{:.0f}%)", hue, 78 - 18 * t);
}

// A bound of the histogram: 0.5, 1, 2, ... 512, then 2^10, 2^11, ...
std::string Bound(double b) {
  return b < 1000 ? Sig(b) : fmt::format("2^{}", static_cast<int>(std::lround(std::log2(b))));
}

std::string BinLabel(const Json& bounds, size_t i) {
  if (i == 0) return "0";
  if (i >= bounds.size()) return ">" + Bound(bounds.back().get<double>());
  return "&le;" + Bound(bounds[i].get<double>());
}

// One case's histogram as a small bar chart: bins from e = 0 up to the
// largest bin with a count, bar heights log10(1 + count).
std::string HistogramSvg(const Json& histogram, const std::string& title) {
  const Json& bounds = histogram["bounds"];
  const Json& counts = histogram["counts"];
  size_t last = 1;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i].get<uint64_t>() > 0) last = std::max(last, i);
  }
  const size_t bins = last + 1;
  double top = 1;
  for (size_t i = 0; i < bins; ++i) top = std::max(top, std::log10(1.0 + counts[i].get<double>()));
  const double w = 250, h = 120, left = 6, bottom = 30, bar = (w - 2 * left) / bins;
  std::string svg = fmt::format(
      "<svg class='hist' width='{}' height='{}' viewBox='0 0 {} {}' role='img'><title>{}</title>"
      "<text x='{}' y='12' font-size='11' font-weight='bold'>{}</text>",
      w, h + 16, w, h + 16, Esc(title), left, Esc(title));
  for (size_t i = 0; i < bins; ++i) {
    const double c = counts[i].get<double>();
    const double bh = (h - bottom) * std::log10(1.0 + c) / top;
    const double x = left + i * bar;
    const double upper = i == 0 ? 0 : i < bounds.size() ? bounds[i].get<double>() : INFINITY;
    svg += fmt::format(
        "<rect x='{:.1f}' y='{:.1f}' width='{:.1f}' height='{:.1f}' fill='{}'><title>{} ULP: {}</title>"
        "</rect>",
        x + 0.5, 16 + (h - bottom) - bh, std::max(bar - 1, 1.0), bh, UlpColour(upper),
        BinLabel(bounds, i), static_cast<uint64_t>(c));
    if (bins <= 8 || i % ((bins + 5) / 6) == 0) {
      svg += fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='9' text-anchor='middle'>{}</text>",
                         x + bar / 2, 16 + h - bottom + 11, BinLabel(bounds, i));
    }
  }
  svg += fmt::format("<text x='{}' y='{}' font-size='9' fill='#555'>ULP error (bar height: log count)</text>",
                     left, 16 + h - 2);
  return svg + "</svg>";
}

std::string CaseName(const Json& c) { return Str(c, "variant") + "@" + Str(c, "target"); }

std::string Conformance(const Json& c) {
  if (!c.contains("conformance")) return "&ndash;";
  const Json& k = c["conformance"];
  const std::string model = Str(k, "model"), expected = Str(k, "expected");
  if (expected.empty() || model == expected) {
    return fmt::format("<span class='ok'>{}</span>", Esc(model.empty() ? "&ndash;" : model));
  }
  return fmt::format("<span class='bad'>{} (expected {}; {} mismatches)</span>",
                     Esc(model.empty() ? "none" : model), Esc(expected),
                     k.value("mismatches", uint64_t{0}));
}

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
  for (const Json& c : results) {
    const double n = std::max(1.0, Num(c, "n", Num(c, "outputs", 1)));
    const double max_ulp = Num(c, "max_ulp");
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td class='n' style='background:{}'>{}</td><td class='n'>{}</td>"
        "<td class='n'>{}</td><td class='n'>{}</td><td class='n'>{}</td><td>{}</td></tr>",
        Esc(CaseName(c)), Esc(Str(c, "kind")), UlpColour(max_ulp), Sig(max_ulp), Sig(Num(c, "mean_ulp")),
        c.contains("percentiles") ? Sig(Num(c["percentiles"], "99")) : "&ndash;",
        c.contains("correctly_rounded") ? fmt::format("{:.2f}%", 100 * Num(c, "correctly_rounded") / n)
                                        : "&ndash;",
        c.value("special_mismatch", uint64_t{0}), Conformance(c));
  }
  html += "</table><div class='grid'>";
  for (const Json& c : results) {
    if (!c.contains("histogram")) continue;
    html += HistogramSvg(c["histogram"], fmt::format("{}: max {} ULP", CaseName(c), Sig(Num(c, "max_ulp"))));
  }
  html += "</div>";
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
        "<h3>error map: max ULP by binade of {}</h3><div class='scroll'><table class='map'><tr><th></th>",
        Esc(operand));
    for (const std::string& b : binades) html += "<th class='rot'><div>" + Esc(b) + "</div></th>";
    html += "</tr>";
    for (const Json& c : results) {
      if (!c.contains("error_map")) continue;
      std::map<std::string, const Json*> by;
      for (const Json& b : c["error_map"]["buckets"]) by[Str(b, "binade")] = &b;
      html += "<tr><td>" + Esc(CaseName(c)) + "</td>";
      for (const std::string& b : binades) {
        const auto it = by.find(b);
        if (it == by.end()) {
          html += "<td></td>";
          continue;
        }
        const double m = Num(*it->second, "max_ulp");
        html += fmt::format("<td style='background:{}' title='{} {}: max {} ULP, {} inputs'></td>",
                            UlpColour(m), Esc(CaseName(c)), Esc(b), Sig(m),
                            it->second->value("n", uint64_t{0}));
      }
      html += "</tr>";
    }
    html += "</table></div>";
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
      html += fmt::format("<td class='{}' title='{}'>{}<span class='group'>{}</span>{}</td>",
                          as_expected ? "cell-ok" : "cell-bad", Esc(tip), Esc(Str(c, "model", "none")),
                          Esc(Str(c, "group")), c.value("run", true) ? "" : " <i>(model)</i>");
    }
    html += "</tr>";
  }
  html += "</table><p class='note'>Each cell: the model the kernel follows bit for bit (green: the one its "
          "target should; red: not), and its group of identical outputs.</p></section>";
  return html;
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

std::string GateSection(const ReportFile& f, size_t index) {
  const Json& g = f.json;
  const std::string status = Str(g, "status");
  std::string counts;
  if (g.contains("counts")) {
    for (const auto& [k, v] : g["counts"].items()) counts += fmt::format(" {} {}", v.get<uint64_t>(), k);
  }
  std::string html = fmt::format(
      "<section id='gate{}'><h2>release gate: <span class='{}'>{}</span></h2><p class='src'>{} &middot; "
      "budgets {} &middot; {}</p><p>{}</p><input class='filter' placeholder='filter rows' "
      "data-table='gate{}-rows'><div class='scroll tall'><table id='gate{}-rows'><tr><th>rule</th><th>limit</th>"
      "<th>status</th><th>measured</th><th>limit value</th><th>where</th></tr>",
      index, status == "PASS" ? "ok" : "bad", Esc(status), Esc(f.path), Esc(Str(g, "budgets")),
      Esc(Str(g, "today")), Esc(counts), index, index);
  for (const Json& r : g["rows"]) {
    const std::string st = Str(r, "status");
    html += fmt::format("<tr class='st-{}'><td>{}</td><td>{}</td><td>{}</td><td class='n'>{}</td><td class='n'>{}</td>"
                        "<td>{}</td></tr>",
                        Esc(st), Esc(Str(r, "rule")), Esc(Str(r, "limit")), Esc(st),
                        Esc(Str(r, "measured_text", Sig(Num(r, "measured")))), Sig(Num(r, "limit_value")),
                        Esc(Str(r, "where")));
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
.cell-ok { background: #dff3e3; } .cell-bad { background: #f8d7da; }
.group { color: #666; font-size: 10px; margin-left: 4px; }
.grid { display: flex; flex-wrap: wrap; gap: 6px; }
.hist { border: 1px solid #eee; background: #fff; }
.scroll { overflow: auto; max-width: 100%; } .tall { max-height: 520px; }
.map td { width: 9px; height: 14px; padding: 0; border: 1px solid #fff; }
.map td:first-child { width: auto; padding: 0 6px; white-space: nowrap; }
.rot { height: 110px; vertical-align: bottom; padding: 0; }
.rot div { writing-mode: vertical-rl; transform: rotate(180deg); font-weight: normal; font-size: 10px; }
.src { color: #666; font-size: 11px; margin-top: -6px; } .note { color: #555; font-size: 11px; }
.st-FAIL td, .st-EXPIRED td { background: #f8d7da; } .st-WAIVED td { background: #fff3cd; }
nav a { margin-right: 12px; } .dim { opacity: 0.12; } [data-legend] { cursor: pointer; }
.filter { margin: 4px 0; padding: 3px; width: 260px; }
)";

// Legend entries toggle their series in every panel of their chart; the
// gate's rows filter as one types; the page says when it has rendered.
constexpr const char* kScript = R"(
document.querySelectorAll('[data-legend]').forEach(function (entry) {
  entry.addEventListener('click', function () {
    var svg = entry.closest('svg');
    var k = entry.getAttribute('data-legend');
    entry.classList.toggle('dim');
    svg.querySelectorAll('[data-series="' + k + '"]').forEach(function (p) { p.classList.toggle('dim'); });
  });
});
document.querySelectorAll('input.filter').forEach(function (input) {
  input.addEventListener('input', function () {
    var rows = document.getElementById(input.getAttribute('data-table')).querySelectorAll('tr');
    var needle = input.value.toLowerCase();
    for (var i = 1; i < rows.length; ++i) {
      rows[i].style.display = rows[i].textContent.toLowerCase().indexOf(needle) >= 0 ? '' : 'none';
    }
  });
});
document.body.setAttribute('data-rendered', 'yes');
)";

}  // namespace

bool IsReportFormat(const std::string& format) {
  return format == "ulpgate-run-1" || format == "ulpgate-matrix-1" || format == "ulpgate-drift-2" ||
         format == "ulpgate-gate-2";
}

std::string HtmlReport(const std::vector<ReportFile>& files, const std::string& title) {
  std::string nav, body;
  size_t index = 0;
  // Gate first (the verdict), then matrices, runs (in the op table's order),
  // drift (plain runs before attributions): the order a reader asks.
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
  for (const char* format : {"ulpgate-gate-2", "ulpgate-matrix-1", "ulpgate-run-1", "ulpgate-drift-2"}) {
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
