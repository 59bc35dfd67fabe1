#include "tools/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ulpgate {
namespace {

constexpr double kLeft = 78, kRight = 24, kTop = 40, kPanelGap = 64, kAxisBelow = 40;
constexpr double kCharWidth = 6.6;  // of the 11 px sans-serif legend text, generously
constexpr double kLegendRow = 16;

// Round steps of 1, 2 or 5 times a power of ten, at most `most` of them.
double NiceStep(double span, int most) {
  const double raw = span / most;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= raw) return m * p;
  }
  return 10 * p;
}

std::string Number(double v) {
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1e-3 && a < 1e5) return fmt::format("{:g}", v);
  const int e = static_cast<int>(std::floor(std::log10(a)));
  const double m = v / std::pow(10.0, e);
  return std::fabs(m - 1) < 1e-9 ? fmt::format("1e{}", e) : fmt::format("{:g}e{}", m, e);
}

bool Drawable(double y, bool log) { return std::isfinite(y) && (!log || y > 0); }

}  // namespace

std::string XmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

SeriesStyle DistinctStyle(size_t color_index, size_t dash_index) {
  static const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  static const char* kDashes[] = {"", "6,3", "2,2", "8,3,2,3", "12,4", "4,2,1,2,1,2"};
  SeriesStyle s;
  if (color_index < 10) {
    s.color = kPalette[color_index];
  } else {
    // The golden angle spreads any number of hues without repeating one;
    // lightness alternates so neighbours differ in two ways.
    const double hue = std::fmod(static_cast<double>(color_index) * 137.508, 360.0);
    s.color = fmt::format("hsl({:.0f},70%,{}%)", hue, color_index % 2 ? 38 : 52);
  }
  s.dash = kDashes[dash_index % 6];
  if (dash_index >= 6) s.width = 2.2;  // more patterns than dashes: wider too
  return s;
}

SeriesStyle GroupStyle(size_t group, size_t member, size_t dash_index) {
  static const double kHues[] = {210, 2, 125, 32, 275, 180, 330, 55, 95, 240};
  const double hue = group < 10 ? kHues[group] : std::fmod(static_cast<double>(group) * 137.508, 360.0);
  SeriesStyle s = DistinctStyle(0, dash_index + member / 4);
  // Four lightness steps, then the dash changes too.
  s.color = fmt::format("hsl({:.0f},75%,{}%)", hue, 28 + 12 * static_cast<int>(member % 4));
  return s;
}

std::string LineChartSvg(const ChartOptions& o, const std::vector<ChartPanel>& panels,
                         const std::vector<ChartSeries>& series) {
  const double plot_w = o.width - kLeft - kRight;
  size_t points = 0;
  for (const ChartSeries& s : series) {
    for (const auto& p : s.panels) points = std::max(points, p.size());
  }
  const double x_max = points > 1 ? static_cast<double>(points - 1) : 1;
  auto x_of = [&](double x) { return kLeft + plot_w * x / x_max; };

  // The legend: columns as wide as the longest entry, as many as fit.
  size_t longest = 8;
  for (const ChartSeries& s : series) longest = std::max({longest, s.name.size(), s.group.size()});
  const double column_w = 40 + kCharWidth * static_cast<double>(longest);
  const size_t columns = std::max<size_t>(1, static_cast<size_t>((o.width - kLeft) / column_w));
  struct Entry {
    const ChartSeries* series;  // null: a group heading
    std::string text;
  };
  std::vector<Entry> entries;
  std::string group = "\x01";
  for (const ChartSeries& s : series) {
    if (s.group != group) {
      group = s.group;
      if (!group.empty()) entries.push_back({nullptr, group});
    }
    entries.push_back({&s, s.name});
  }
  const size_t rows = (entries.size() + columns - 1) / columns;
  const double panels_h =
      static_cast<double>(panels.size()) * (o.panel_height + kPanelGap) - kPanelGap + kAxisBelow;
  const double legend_top = kTop + panels_h + 16;
  const double height = legend_top + static_cast<double>(rows) * kLegendRow + 12;

  std::string svg = fmt::format(
      "<svg xmlns='http://www.w3.org/2000/svg' width='{:.0f}' height='{:.0f}' "
      "viewBox='0 0 {:.0f} {:.0f}' font-family='DejaVu Sans, Arial, sans-serif' font-size='11'>\n"
      "<rect width='100%' height='100%' fill='white'/>\n"
      "<text x='{}' y='18' font-size='14' font-weight='bold'>{}</text>\n",
      o.width, height, o.width, height, kLeft, XmlEscape(o.title));
  for (size_t p = 0; p < panels.size(); ++p) {
    const ChartPanel& panel = panels[p];
    const double top = kTop + static_cast<double>(p) * (o.panel_height + kPanelGap);
    double lo = INFINITY, hi = -INFINITY;
    for (const ChartSeries& s : series) {
      if (p >= s.panels.size()) continue;
      for (double y : s.panels[p]) {
        if (!Drawable(y, panel.log_y)) continue;
        lo = std::min(lo, y);
        hi = std::max(hi, y);
      }
    }
    if (!(lo <= hi)) lo = hi = panel.log_y ? 1 : 0;
    double a, b;  // axis range (log10 units on a log axis)
    if (panel.log_y) {
      a = std::floor(std::log10(lo));
      b = std::ceil(std::log10(hi));
      if (b <= a) b = a + 1;
    } else {
      const double pad = lo == hi ? std::max(1.0, std::fabs(lo)) * 0.1 : (hi - lo) * 0.05;
      const double step = NiceStep(hi - lo + 2 * pad, 6);
      a = std::floor((lo - pad) / step) * step;
      b = std::ceil((hi + pad) / step) * step;
    }
    auto y_of = [&](double y) {
      const double v = panel.log_y ? std::log10(y) : y;
      return top + o.panel_height * (b - v) / (b - a);
    };
    svg += fmt::format("<text x='{}' y='{:.0f}' font-size='12' font-weight='bold'>{}</text>\n",
                       kLeft, top - 8, XmlEscape(panel.title));
    // y ticks: every decade (with 2 and 5 when there are few), or round steps.
    std::vector<double> ticks;
    if (panel.log_y) {
      const double decade_step = std::max(1.0, std::ceil((b - a) / 8));
      for (double e = a; e <= b + 1e-9; e += decade_step) {
        ticks.push_back(std::pow(10.0, e));
        if (b - a <= 2 && e < b) {
          ticks.push_back(2 * std::pow(10.0, e));
          ticks.push_back(5 * std::pow(10.0, e));
        }
      }
    } else {
      const double step = NiceStep(b - a, 6);
      for (double v = a; v <= b + step * 1e-9; v += step) ticks.push_back(v);
    }
    for (double t : ticks) {
      const double y = y_of(t);
      svg += fmt::format(
          "<line x1='{}' y1='{:.1f}' x2='{:.1f}' y2='{:.1f}' stroke='#e4e4e4'/>"
          "<text x='{}' y='{:.1f}' text-anchor='end'>{}</text>\n",
          kLeft, y, kLeft + plot_w, y, kLeft - 6, y + 4, Number(t));
    }
    const double x_step = NiceStep(x_max, 8);
    for (double x = 0; x <= x_max + 1e-9; x += x_step) {
      svg += fmt::format(
          "<line x1='{:.1f}' y1='{}' x2='{:.1f}' y2='{:.1f}' stroke='#f0f0f0'/>"
          "<text x='{:.1f}' y='{:.1f}' text-anchor='middle'>{}</text>\n",
          x_of(x), top, x_of(x), top + o.panel_height, x_of(x), top + o.panel_height + 15,
          Number(x));
    }
    svg += fmt::format("<rect x='{}' y='{}' width='{:.1f}' height='{}' fill='none' stroke='#444'/>\n",
                       kLeft, top, plot_w, o.panel_height);
    svg += fmt::format("<text x='{:.1f}' y='{:.1f}' text-anchor='middle'>{}</text>\n",
                       kLeft + plot_w / 2, top + o.panel_height + 31, XmlEscape(o.x_label));
    svg += fmt::format(
        "<text transform='translate({},{:.1f}) rotate(-90)' text-anchor='middle'>{}</text>\n", 14,
        top + o.panel_height / 2, XmlEscape(panel.y_label));
    svg += fmt::format(
        "<clipPath id='{}-panel{}'><rect x='{}' y='{}' width='{:.1f}' height='{}'/></clipPath>\n",
        o.id, p, kLeft, top, plot_w, o.panel_height);
    std::vector<size_t> order;
    for (size_t k = 0; k < series.size(); ++k) {
      if (!series[k].on_top) order.push_back(k);
    }
    for (size_t k = 0; k < series.size(); ++k) {
      if (series[k].on_top) order.push_back(k);
    }
    for (size_t k : order) {
      const ChartSeries& s = series[k];
      if (p >= s.panels.size()) continue;
      std::string path;
      bool pen_down = false;
      for (size_t i = 0; i < s.panels[p].size(); ++i) {
        const double y = s.panels[p][i];
        if (!Drawable(y, panel.log_y)) {
          pen_down = false;
          continue;
        }
        path += fmt::format("{}{:.1f},{:.1f} ", pen_down ? "L" : "M", x_of(static_cast<double>(i)),
                            y_of(y));
        pen_down = true;
      }
      if (path.empty()) continue;
      svg += fmt::format(
          "<path data-series='{}' clip-path='url(#{}-panel{})' fill='none' stroke='{}' "
          "stroke-width='{}'{} d='{}'><title>{}</title></path>\n",
          k, o.id, p, s.style.color, s.style.width,
          s.style.dash.empty() ? "" : fmt::format(" stroke-dasharray='{}'", s.style.dash), path,
          XmlEscape(s.name));
    }
  }
  // Column-major legend: groups read down a column.
  for (size_t i = 0; i < entries.size(); ++i) {
    const double x = kLeft + static_cast<double>(i / rows) * column_w;
    const double y = legend_top + static_cast<double>(i % rows) * kLegendRow;
    const Entry& e = entries[i];
    if (e.series == nullptr) {
      svg += fmt::format("<text x='{:.1f}' y='{:.1f}' font-weight='bold'>{}</text>\n", x, y + 4,
                         XmlEscape(e.text));
      continue;
    }
    const SeriesStyle& st = e.series->style;
    // data-legend: a page that shows the chart may toggle the series there.
    svg += fmt::format(
        "<g data-legend='{}'><rect x='{:.1f}' y='{:.1f}' width='{:.1f}' height='{}' fill='white' "
        "fill-opacity='0'/><line x1='{:.1f}' y1='{:.1f}' x2='{:.1f}' y2='{:.1f}' stroke='{}' "
        "stroke-width='{}'{}/><text x='{:.1f}' y='{:.1f}'>{}</text></g>\n",
        e.series - series.data(), x, y - kLegendRow / 2, column_w - 4, kLegendRow, x + 4, y, x + 30,
        y, st.color, std::max(st.width, 2.0),
        st.dash.empty() ? "" : fmt::format(" stroke-dasharray='{}'", st.dash), x + 36, y + 4,
        XmlEscape(e.text));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace ulpgate
