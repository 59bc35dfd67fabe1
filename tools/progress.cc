#include "tools/progress.h"

#include "suites/engine/fault_notice.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

namespace ulpgate {

namespace {

// Away from a terminal: the first line after this long, then one this often.
constexpr double kLogAfterSeconds = 5.0;
constexpr double kLogEverySeconds = 15.0;

}  // namespace

ProgressLine::ProgressLine(std::string label, std::string unit, bool quiet)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      quiet_(quiet),
      tty_(::isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {
  SetKernelFaultNotice([this](const std::string& line) { Note(line); });
}

ProgressLine::~ProgressLine() { SetKernelFaultNotice(nullptr); }

void ProgressLine::Note(const std::string& line) {
  if (quiet_) return;
  // On a terminal the line stands until the next progress line replaces it.
  std::cerr << (tty_ ? "\r\033[K" : "") << label_ << ": " << line << (tty_ ? "" : "\n") << std::flush;
  shown_ = true;
}

double ProgressLine::Seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ProgressLine::operator()(uint64_t done, uint64_t total) {
  if (quiet_ || total == 0) return;
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double since = std::chrono::duration<double>(now - last_).count();
  if (tty_ ? since < 0.5 && done < total
           : (shown_ ? since < kLogEverySeconds : seconds < kLogAfterSeconds) || done >= total) {
    return;
  }
  last_ = now;
  shown_ = true;
  const double rate = static_cast<double>(done) / std::max(seconds, 1e-9);
  const std::string eta =
      done == 0 ? "" : fmt::format(", ETA {:.0f} s", static_cast<double>(total - done) / rate);
  std::cerr << fmt::format("{}{}: {:5.1f}% ({} of {} {}), {:.3g} {}/s{}{}", tty_ ? "\r\033[K" : "",
                           label_, 100.0 * static_cast<double>(done) / static_cast<double>(total),
                           done, total, unit_, rate, unit_, eta, tty_ ? "" : "\n")
            << std::flush;
}

void ProgressLine::Clear() {
  if (tty_ && shown_) std::cerr << "\r\033[K" << std::flush;
}

}  // namespace ulpgate
