// Line charts as SVG for people: panels sharing one legend, each series drawn
// in one style in every panel, axes with labels and round ticks, log scales
// where the values span decades, a legend that wraps into columns inside the
// width (grouped, with a heading per group). Used by `drift --svg` and by the
// HTML report; self-contained (no fonts or scripts fetched).
#ifndef ULPGATE_TOOLS_SVG_CHART_H_
#define ULPGATE_TOOLS_SVG_CHART_H_

#include <string>
#include <utility>
#include <vector>

namespace ulpgate {

struct SeriesStyle {
  std::string color = "#000";
  std::string dash;    // SVG stroke-dasharray, empty for a solid line
  double width = 1.4;  // stroke width
};

struct ChartSeries {
  std::string name;   // legend entry
  std::string group;  // legend heading it sits under (empty: none)
  SeriesStyle style;
  bool on_top = false;  // drawn after the others (its legend entry stays in place)
  // One y value per x = 0, 1, 2, ...; values a log axis cannot show (<= 0,
  // non-finite) break the line.
  std::vector<std::vector<double>> panels;  // panels[p]: the values in panel p
};

struct ChartPanel {
  std::string title;
  std::string y_label;
  bool log_y = true;
};

struct ChartOptions {
  std::string id = "chart";  // unique in a page that holds several charts
  std::string title;
  std::string x_label = "epoch";
  double width = 960;
  double panel_height = 280;
};

// Distinct styles: colour by `color_index` (a ten-colour palette, then hues
// spread by the golden angle, so no two indices share a colour), dash pattern
// by `dash_index`.
SeriesStyle DistinctStyle(size_t color_index, size_t dash_index);

// Styles for series in groups: one hue per group (a ten-hue wheel, then
// hues spread by the golden angle), its members told apart by lightness and
// dash, so that a group reads as one bundle and its members stay distinct.
SeriesStyle GroupStyle(size_t group, size_t member, size_t dash_index);

std::string LineChartSvg(const ChartOptions& options, const std::vector<ChartPanel>& panels,
                         const std::vector<ChartSeries>& series);

// A histogram as a small bar chart: one bar per bin, the x axis the bins'
// labels (every bin, or every k-th when they would crowd), the y axis the
// count on a log scale (bar height log10(1 + count)) with ticks at powers of
// ten. Charts drawn with the same bin_labels and max_count share their
// scales, so a table of them can be read across. Titles that would not fit
// are drawn narrower, never clipped.
struct HistogramChart {
  std::string title;     // bold, first line
  std::string subtitle;  // second line (may be empty)
  std::vector<std::string> bin_labels;   // the x scale: one label per bin
  std::vector<std::string> bin_names;    // each bar's tooltip name ("1 < e <= 2 ULP")
  std::vector<std::string> bin_colours;  // each bar's fill
  std::vector<double> counts;            // as many as bin_labels (0 past the data)
  double max_count = 1;                  // the top of the y scale
  std::string x_label = "ULP error (bin upper bound)";
  std::string y_label = "count (log)";
  double width = 320, height = 190;
};
std::string HistogramSvg(const HistogramChart& chart);

// A colour scale as a legend: a row of swatches, each with its value below,
// and a title; `stops` are (label, colour) from low to high.
std::string ColourScaleSvg(const std::string& title,
                           const std::vector<std::pair<std::string, std::string>>& stops);

// About how wide `text` is in the charts' sans-serif at `font_size` px
// (generously: wider than it renders), for sizing what holds it.
double TextWidth(const std::string& text, double font_size);

// Text made safe for SVG and HTML (& < > " ').
std::string XmlEscape(const std::string& text);

}  // namespace ulpgate

#endif  // ULPGATE_TOOLS_SVG_CHART_H_
