#!/usr/bin/python3
"""Draws what swemu-analyze measured: per-port throughput and per-queue depth over time, one
column per run, so runs with and without a mechanism sit side by side.

Usage: plot_run.py CSV_DIR OUT.png [FORMAT [BIN_NS]]   (CSV_DIR holds swemu-analyze --csv's
throughput.csv and queue.csv). swemu-analyze --plot runs it, giving the format of the name the
user asked for and the throughput bin; without BIN_NS the bin is read off the rows' spacing.
It uses Debian's python3-matplotlib.

Each bin is drawn to its end, so a run shorter than one bin is a flat segment over that bin, and
a run of 3 bins or fewer is also marked with points; each column has its own time unit and
range, from 0 (the run's first frame) to the end of its last bin or sample. A run with no queue
telemetry at all says so in its queue panel; a run whose queues never held a packet says "no
queue built up".
"""
import csv
import os
import sys
from collections import OrderedDict, defaultdict

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.fonttype"] = "none"  # an SVG keeps its words as text
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

FEW_BINS = 3  # a run of this many bins or fewer is also drawn as points


def read_rows(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def time_unit(span_s):
    """A unit that keeps the time axis's numbers readable."""
    if span_s >= 10:
        return 1.0, "s"
    if span_s >= 0.01:
        return 1e3, "ms"
    return 1e6, "us"


def series_by_run(rows, key, value):
    """run -> key(row) -> ([time_s], [value]) in file order."""
    out = defaultdict(lambda: defaultdict(lambda: ([], [])))
    for r in rows:
        t, y = out[r["run"]][key(r)]
        t.append(float(r["time_s"]))
        y.append(float(r[value]))
    return out


def bin_seconds(throughput, given_ns):
    """The throughput bin: given, else the smallest step between one port's rows, else 0."""
    if given_ns:
        return given_ns / 1e9
    steps = [b - a for ports in throughput.values() for t, _ in ports.values()
             for a, b in zip(t, t[1:]) if b > a]
    return min(steps, default=0.0)


def time_range(run, throughput, depth, bin_s):
    """(first, last) second of a run: from 0 (or an earlier sample) to the end of its last bin
    or its last queue sample."""
    times = [v for t, _ in throughput[run].values() for v in t]
    ends = [t[-1] + bin_s for t, _ in throughput[run].values() if t]
    ends += [t[-1] for t, _ in depth[run].values() if t]
    first = min([0.0] + times + [v for t, _ in depth[run].values() for v in t])
    last = max(ends, default=0.0)
    return first, last if last > first else first + (bin_s or 1e-6)


def draw_throughput(ax, ports, bin_s, scale, peak):
    for port, (t, y) in sorted(ports.items()):
        if max(y, default=0) == 0:
            continue  # a port that sent nothing only clutters the legend
        # The last bin is drawn to its end, not cut at its start.
        xs = [v * scale for v in t] + [(t[-1] + bin_s) * scale]
        line, = ax.step(xs, y + y[-1:], where="post", label=port, linewidth=1.2)
        if len(t) <= FEW_BINS:
            ax.plot([(v + bin_s / 2) * scale for v in t], y, "o", color=line.get_color())
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_ylim(0, peak * 1.1)
    ax.grid(alpha=0.3)
    if ports:
        ax.legend(fontsize=8, loc="upper right")


def draw_depth(ax, queues, scale, deepest):
    shown = 0
    for key, (t, y) in sorted(queues.items()):
        if max(y, default=0) == 0:
            continue  # an idle queue only clutters the legend
        line, = ax.step([v * scale for v in t], y, where="post", label=key, linewidth=1.2)
        if len(t) <= FEW_BINS:
            ax.plot([v * scale for v in t], y, "o", color=line.get_color())
        shown += 1
    ax.set_ylabel("queue depth (packets)")
    ax.set_ylim(0, deepest * 1.1)
    ax.grid(alpha=0.3)
    if shown:
        ax.legend(fontsize=8, loc="upper right")
    else:
        note = "no queue built up" if queues else "no queue telemetry in this run"
        ax.text(0.5, 0.5, note, ha="center", va="center", transform=ax.transAxes, color="gray")


def draw(runs, throughput, depth, bin_s, has_queues):
    rows = 2 if has_queues else 1
    fig, axes = plt.subplots(rows, len(runs), figsize=(5.5 * len(runs), 3.2 * rows),
                             squeeze=False, sharex="col")
    peak = max((max(y) for run in runs for _, y in throughput[run].values() if y), default=1)
    deepest = max((max(y) for run in runs for _, y in depth[run].values() if y), default=1)
    for col, run in enumerate(runs):
        first, last = time_range(run, throughput, depth, bin_s)
        scale, unit = time_unit(last - first)
        ax = axes[0][col]
        draw_throughput(ax, throughput[run], bin_s, scale, peak or 1)
        ax.set_title(os.path.basename(run.rstrip("/")) or run)
        if rows == 2:
            draw_depth(axes[1][col], depth[run], scale, deepest or 1)
        ax.set_xlim(first * scale, last * scale)
        axes[rows - 1][col].set_xlabel("time since the run's first frame (%s)" % unit)
    fig.tight_layout()
    return fig


def main(argv):
    if len(argv) not in (3, 4, 5):
        print("usage: plot_run.py CSV_DIR OUT.png [FORMAT [BIN_NS]]", file=sys.stderr)
        return 2
    # FORMAT: when OUT is a temporary name (swemu-analyze writes aside, then renames).
    csv_dir, out = argv[1], argv[2]
    fmt = argv[3] if len(argv) >= 4 and argv[3] else None
    try:
        given_ns = int(argv[4]) if len(argv) == 5 else 0
    except ValueError:
        given_ns = -1
    if given_ns < 0:
        print("plot_run.py: BIN_NS must be a whole number of nanoseconds", file=sys.stderr)
        return 2
    rates = read_rows(os.path.join(csv_dir, "throughput.csv"))
    queues = read_rows(os.path.join(csv_dir, "queue.csv"))
    runs = list(OrderedDict.fromkeys([r["run"] for r in rates] + [r["run"] for r in queues]))
    if not runs:
        print("plot_run.py: nothing to plot (no frames and no telemetry)", file=sys.stderr)
        return 1
    throughput = series_by_run(rates, lambda r: r["port"], "throughput_Mbps")
    depth = series_by_run(queues, lambda r: "%s port %s q%s" % (r["switch"], r["port"],
                                                                 r["queue"]), "depth_packets")
    fig = draw(runs, throughput, depth, bin_seconds(throughput, given_ns), bool(queues))
    try:
        fig.savefig(out, dpi=120, format=fmt)
    except (OSError, ValueError) as e:
        print("plot_run.py: cannot write the plot: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
