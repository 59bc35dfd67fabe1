#include "tools/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <boost/geometry.hpp>
#include <boost/geometry/geometries/point_xy.hpp>

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

// The points of a polyline a reader cannot tell from the whole of it: those
// that leave it more than `tolerance` pixels from the line through the kept
// ones around them (Ramer-Douglas-Peucker, Boost.Geometry's simplify). A
// curve of an epoch per point has a few points per pixel, most on a straight
// stretch: the page drew every one of them (0.85 MB per drift chart of 1000
// epochs).
std::vector<std::pair<double, double>> Simplified(const std::vector<std::pair<double, double>>& points,
                                                  double tolerance) {
  namespace bg = boost::geometry;
  using Point = bg::model::d2::point_xy<double>;
  bg::model::linestring<Point> line, kept_line;
  for (const auto& [x, y] : points) line.push_back(Point(x, y));
  if (line.size() < 3) return points;
  bg::simplify(line, kept_line, tolerance);
  std::vector<std::pair<double, double>> kept;
  for (const Point& q : kept_line) kept.push_back({q.x(), q.y()});
  return kept;
}

// One line of text no wider than `room`: when it would be wider, the
// renderer squeezes it to fit rather than letting the frame clip it.
std::string FittedText(double x, double y, const std::string& text, double size, double room,
                       const std::string& attributes) {
  const bool squeeze = TextWidth(text, size) > room;
  return fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='{}'{}{}>{}</text>", x, y, size,
                     attributes.empty() ? "" : " " + attributes,
                     squeeze ? fmt::format(" textLength='{:.0f}' lengthAdjust='spacingAndGlyphs'", room)
                             : std::string(),
                     XmlEscape(text));
}

}  // namespace

double TextWidth(const std::string& text, double font_size) {
  // DejaVu Sans averages about 0.6 em a character; bold and capitals run wider.
  double ems = 0;
  for (unsigned char c : text) {
    if (c >= 0x80 && c < 0xc0) continue;  // a UTF-8 continuation byte
    ems += std::isupper(c) || c == 'm' || c == 'w' || c == '@' ? 0.8 : c == ' ' || c == '.' ? 0.35 : 0.62;
  }
  return ems * font_size;
}

std::string HistogramSvg(const HistogramChart& c) {
  const double left = 46, right = 10, top = c.subtitle.empty() ? 24 : 38, bottom = 44;
  const double plot_w = c.width - left - right, plot_h = c.height - top - bottom;
  const size_t bins = std::max<size_t>(c.bin_labels.size(), 1);
  const double bar = plot_w / static_cast<double>(bins);
  // Decades up to the first power of ten at or above the largest count.
  const double decades = std::max(1.0, std::ceil(std::log10(std::max(c.max_count, 1.0)) - 1e-12));
  const double scale_top = std::log10(1 + std::pow(10.0, decades));
  auto y_of = [&](double count) { return top + plot_h * (1 - std::log10(1 + count) / scale_top); };
  std::string svg = fmt::format(
      "<svg class='hist' width='{0:.0f}' height='{1:.0f}' viewBox='0 0 {0:.0f} {1:.0f}' role='img' "
      "font-family='DejaVu Sans, Arial, sans-serif'><title>{2}</title>",
      c.width, c.height, XmlEscape(c.title + (c.subtitle.empty() ? "" : ": " + c.subtitle)));
  svg += FittedText(6, 14, c.title, 11, c.width - 12, "font-weight='bold'");
  if (!c.subtitle.empty()) svg += FittedText(6, 28, c.subtitle, 10, c.width - 12, "fill='#444'");
  // y: 0 at the base, then a gridline per decade (1, 10, 100, 1k, ...), its
  // label left out where it would touch the one below (1 sits close to 0 on
  // a scale of many decades).
  svg += fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='9' text-anchor='end'>0</text>", left - 4,
                     top + plot_h + 3);
  double last_label_y = top + plot_h;
  const double step = std::max(1.0, std::ceil(decades / 5));
  for (double e = 0; e <= decades + 1e-9; e += step) {
    const double v = std::pow(10.0, e), y = y_of(v);
    const std::string label = e < 3 ? fmt::format("{:g}", v) : e < 6 ? fmt::format("{:g}k", v / 1e3)
                                                                       : fmt::format("{:g}M", v / 1e6);
    svg += fmt::format("<line x1='{:.1f}' y1='{:.1f}' x2='{:.1f}' y2='{:.1f}' stroke='#e4e4e4'/>", left, y,
                       left + plot_w, y);
    if (last_label_y - y < 10) continue;
    svg += fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='9' text-anchor='end'>{}</text>", left - 4,
                       y + 3, label);
    last_label_y = y;
  }
  // Bars, then the x labels: all of them, or every k-th when they would overlap.
  double widest = 0;
  for (const std::string& l : c.bin_labels) widest = std::max(widest, TextWidth(l, 9));
  const size_t every = std::max<size_t>(1, static_cast<size_t>(std::ceil((widest + 3) / bar)));
  for (size_t i = 0; i < bins; ++i) {
    const double count = i < c.counts.size() ? c.counts[i] : 0;
    const double x = left + static_cast<double>(i) * bar;
    if (count > 0) {
      const double y = y_of(count);
      svg += fmt::format(
          "<rect x='{:.1f}' y='{:.1f}' width='{:.1f}' height='{:.1f}' fill='{}'><title>{}: {}</title>"
          "</rect>",
          x + 0.5, y, std::max(bar - 1, 1.0), top + plot_h - y,
          i < c.bin_colours.size() ? c.bin_colours[i] : "#888",
          XmlEscape(i < c.bin_names.size() ? c.bin_names[i] : c.bin_labels[i]),
          static_cast<uint64_t>(count));
    }
    if (i % every == 0 && i < c.bin_labels.size()) {
      svg += fmt::format(
          "<line x1='{0:.1f}' y1='{1:.1f}' x2='{0:.1f}' y2='{2:.1f}' stroke='#444'/>"
          "<text x='{0:.1f}' y='{3:.1f}' font-size='9' text-anchor='middle'>{4}</text>",
          x + bar / 2, top + plot_h, top + plot_h + 3, top + plot_h + 13, XmlEscape(c.bin_labels[i]));
    }
  }
  svg += fmt::format(
      "<line x1='{0:.1f}' y1='{1:.1f}' x2='{0:.1f}' y2='{2:.1f}' stroke='#444'/>"
      "<line x1='{0:.1f}' y1='{2:.1f}' x2='{3:.1f}' y2='{2:.1f}' stroke='#444'/>",
      left, top, top + plot_h, left + plot_w);
  svg += FittedText(left, c.height - 6, c.x_label, 10, plot_w, "fill='#333'");
  svg += fmt::format(
      "<text transform='translate(11,{:.1f}) rotate(-90)' font-size='10' text-anchor='middle' "
      "fill='#333'>{}</text>",
      top + plot_h / 2, XmlEscape(c.y_label));
  return svg + "</svg>";
}

std::string ColourScaleSvg(const std::string& title,
                           const std::vector<std::pair<std::string, std::string>>& stops) {
  double swatch = 30;
  for (const auto& [label, colour] : stops) swatch = std::max(swatch, TextWidth(label, 10) + 6);
  const double title_w = TextWidth(title, 11) + 12;
  const double width = title_w + swatch * static_cast<double>(stops.size()) + 4;
  std::string svg = fmt::format(
      "<svg class='colour-scale' width='{0:.0f}' height='40' viewBox='0 0 {0:.0f} 40' role='img' "
      "font-family='DejaVu Sans, Arial, sans-serif'><title>{1}</title>"
      "<text x='0' y='17' font-size='11' font-weight='bold'>{1}</text>",
      width, XmlEscape(title));
  for (size_t i = 0; i < stops.size(); ++i) {
    const double x = title_w + swatch * static_cast<double>(i);
    svg += fmt::format(
        "<rect x='{:.1f}' y='4' width='{:.1f}' height='16' fill='{}' stroke='#fff'/>"
        "<text x='{:.1f}' y='34' font-size='10' text-anchor='middle'>{}</text>",
        x, swatch, stops[i].second, x + swatch / 2, XmlEscape(stops[i].first));
  }
  return svg + "</svg>";
}

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
      // Each stretch of drawable points, simplified to a fifth of a pixel.
      std::string path;
      std::vector<std::pair<double, double>> stretch;
      auto draw = [&] {
        const std::vector<std::pair<double, double>> kept = Simplified(stretch, 0.2);
        for (size_t j = 0; j < kept.size(); ++j) {
          path += fmt::format("{}{:.1f},{:.1f} ", j ? "L" : "M", kept[j].first, kept[j].second);
        }
        stretch.clear();
      };
      for (size_t i = 0; i < s.panels[p].size(); ++i) {
        const double y = s.panels[p][i];
        if (!Drawable(y, panel.log_y)) {
          draw();
          continue;
        }
        stretch.emplace_back(x_of(static_cast<double>(i)), y_of(y));
      }
      draw();
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
