#pragma once
// A progress line for long runs, on a terminal only: "label 45%, 12 s left", rewritten in place
// with '\r' (at most four times a second) and erased before other output. On a stream that is
// not a terminal it writes nothing, so logs and tests see the same output as without it.
#include <chrono>
#include <ostream>
#include <string>

namespace swemu {

class ProgressLine {
 public:
  // Draws on `out` only when `terminal` (see StderrIsTerminal).
  ProgressLine(std::ostream& out, bool terminal) : out_(out), terminal_(terminal) {}
  ~ProgressLine() { Clear(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  static bool StderrIsTerminal();

  // `done` of the whole work in [0, 1] after `elapsed_s` seconds; the estimate assumes the rest
  // goes at the same pace. Redraws when 0.25 s have passed since the last drawing.
  void Update(const std::string& label, double done, double elapsed_s);
  // Erases the line, if one is drawn (before printing anything else on the terminal).
  void Clear();

  // "label 45%, 12 s left" (or "label 0%" before any estimate): the text drawn.
  static std::string Text(const std::string& label, double done, double elapsed_s);

 private:
  std::ostream& out_;
  bool terminal_;
  std::size_t drawn_ = 0;  // characters of the line on the terminal now
  double last_draw_s_ = -1;
};

}  // namespace swemu
