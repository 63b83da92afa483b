"""A progress line with an estimate of the time left, for the long-running tool scripts.

On a terminal the line is rewritten in place after every step ("[5/27] what; 0:41 elapsed,
about 1:52 left") and ended with a newline once the last step is done; when the stream is not a
terminal (a pipe, a log file, a test) it writes nothing at all, so logs stay as they were.

Import it by path from a script in tools/<area>/:
  sys.path.insert(0, os.path.join(REPO, "tools", "common"))
  from progress import Progress
"""
import sys
import time


def clock_text(seconds):
    """0:07, 3:41, 1:02:03: minutes and seconds, hours when there are any."""
    seconds = int(round(max(seconds, 0)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def eta_text(done, total, elapsed):
    """The line's tail: the time so far and, once a step is done, the time left at the mean
    pace of the steps so far."""
    if done <= 0:
        return f"{clock_text(elapsed)} elapsed"
    if done >= total:
        return f"done in {clock_text(elapsed)}"
    left = elapsed / done * (total - done)
    return f"{clock_text(elapsed)} elapsed, about {clock_text(left)} left"


class Progress:
    """Counts `total` steps; `step(done, what)` redraws the line when the stream is a
    terminal."""

    def __init__(self, total, stream=None, clock=time.monotonic):
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.start = clock()
        self.width = 0  # of the line drawn last, to blank what a shorter line leaves
        try:
            self.on = self.stream.isatty()
        except (AttributeError, ValueError):  # no isatty, or a closed stream
            self.on = False

    def line(self, done, what=""):
        """The text of the line for `done` steps out of the total."""
        head = f"[{done}/{self.total}]" + (f" {what}" if what else "")
        return f"{head}; {eta_text(done, self.total, self.clock() - self.start)}"

    def step(self, done, what=""):
        if not self.on:
            return
        text = self.line(done, what)
        pad = " " * max(self.width - len(text), 0)
        self.width = len(text)
        end = "\n" if done >= self.total else ""
        self.stream.write(f"\r{text}{pad}{end}")
        self.stream.flush()

    def clear(self):
        """Blanks an unfinished line (before an error message, say)."""
        if self.on and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0
