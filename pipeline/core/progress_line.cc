#include "pipeline/core/progress_line.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace swemu {
namespace {

constexpr double kRedrawEveryS = 0.25;

// "42 s", "3 min 5 s", "1 h 2 min".
std::string Duration(double seconds) {
  const long s = std::lround(std::max(seconds, 0.0));
  char text[48];
  if (s < 60) {
    std::snprintf(text, sizeof(text), "%ld s", s);
  } else if (s < 3600) {
    std::snprintf(text, sizeof(text), "%ld min %ld s", s / 60, s % 60);
  } else {
    std::snprintf(text, sizeof(text), "%ld h %ld min", s / 3600, s % 3600 / 60);
  }
  return text;
}

}  // namespace

bool ProgressLine::StderrIsTerminal() { return isatty(STDERR_FILENO) != 0; }

std::string ProgressLine::Text(const std::string& label, double done, double elapsed_s) {
  done = std::clamp(done, 0.0, 1.0);
  char percent[16];
  std::snprintf(percent, sizeof(percent), " %.0f%%", std::floor(done * 100));
  std::string text = label + percent;
  if (done > 0 && done < 1) text += ", " + Duration(elapsed_s * (1 - done) / done) + " left";
  return text;
}

void ProgressLine::Update(const std::string& label, double done, double elapsed_s) {
  if (!terminal_ || (last_draw_s_ >= 0 && elapsed_s - last_draw_s_ < kRedrawEveryS)) return;
  last_draw_s_ = elapsed_s;
  const std::string text = Text(label, done, elapsed_s);
  // Blanks over what a longer line before left.
  const std::size_t pad = drawn_ > text.size() ? drawn_ - text.size() : 0;
  out_ << '\r' << text << std::string(pad, ' ') << std::flush;
  drawn_ = text.size() + pad;
}

void ProgressLine::Clear() {
  if (drawn_ == 0) return;
  out_ << '\r' << std::string(drawn_, ' ') << '\r' << std::flush;
  drawn_ = 0;
  last_draw_s_ = -1;
}

}  // namespace swemu
