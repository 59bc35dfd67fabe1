// Progress of a long command on stderr: on a terminal one line rewritten at
// most twice a second; elsewhere (a CI log, a pipe) a line now and then once
// the work has run a few seconds, so that a quick command prints nothing and
// a slow kernel never leaves a silent log.
#ifndef ULPGATE_TOOLS_PROGRESS_H_
#define ULPGATE_TOOLS_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <string>

namespace ulpgate {

class ProgressLine {
 public:
  // "LABEL: 39.3% (393216 of 1000000 UNIT), 4.55e+05 UNIT/s, ETA 1 s".
  // While it lives, the lines of suites/engine/fault_notice.h (a kernel's
  // fault being bisected) show on stderr too, on a terminal in its place.
  ProgressLine(std::string label, std::string unit, bool quiet = false);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  void operator()(uint64_t done, uint64_t total);
  // Erases the terminal's line (before the command's own output).
  void Clear();
  // One line now, whatever the rate: on a terminal in the progress line's place.
  void Note(const std::string& line);
  double Seconds() const;

 private:
  std::string label_, unit_;
  bool quiet_, tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace ulpgate

#endif  // ULPGATE_TOOLS_PROGRESS_H_
