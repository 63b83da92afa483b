#!/usr/bin/python3
"""Draws what swemu-analyze measured: per-port throughput and per-queue depth over time, one
column per run, so runs with and without a mechanism sit side by side.

Usage: plot_run.py CSV_DIR OUT.png   (CSV_DIR holds swemu-analyze --csv's throughput.csv and
queue.csv). swemu-analyze --plot runs it; it uses Debian's python3-matplotlib.
"""
import csv
import os
import sys
from collections import OrderedDict, defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)


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


def main(argv):
    if len(argv) not in (3, 4):
        print("usage: plot_run.py CSV_DIR OUT.png [FORMAT]", file=sys.stderr)
        return 2
    # FORMAT: when OUT is a temporary name (swemu-analyze writes aside, then renames).
    csv_dir, out = argv[1], argv[2]
    fmt = argv[3] if len(argv) == 4 else None
    throughput = read_rows(os.path.join(csv_dir, "throughput.csv"))
    queues = read_rows(os.path.join(csv_dir, "queue.csv"))
    runs = list(OrderedDict.fromkeys([r["run"] for r in throughput] + [r["run"] for r in queues]))
    if not runs:
        print("plot_run.py: nothing to plot (no frames and no telemetry)", file=sys.stderr)
        return 1
    series = defaultdict(lambda: defaultdict(lambda: ([], [])))  # run -> port -> (t, Mbit/s)
    for r in throughput:
        t, y = series[r["run"]][r["port"]]
        t.append(float(r["time_s"]))
        y.append(float(r["throughput_Mbps"]))
    depth = defaultdict(lambda: defaultdict(lambda: ([], [])))  # run -> queue -> (t, packets)
    for r in queues:
        key = "%s port %s q%s" % (r["switch"], r["port"], r["queue"])
        t, y = depth[r["run"]][key]
        t.append(float(r["time_s"]))
        y.append(float(r["depth_packets"]))
    spans = [max(t[-1] for t, _ in series[run].values()) if series[run] else 0 for run in runs]
    spans += [max(t[-1] for t, _ in depth[run].values()) if depth[run] else 0 for run in runs]
    scale, unit = time_unit(max(spans))
    rows = 2 if queues else 1
    fig, axes = plt.subplots(rows, len(runs), figsize=(5.5 * len(runs), 3.2 * rows),
                             squeeze=False, sharex="col")
    peak = max((max(y) for run in runs for _, y in series[run].values() if y), default=1)
    deepest = max((max(y) for run in runs for _, y in depth[run].values() if y), default=1)
    for col, run in enumerate(runs):
        ax = axes[0][col]
        for port, (t, y) in sorted(series[run].items()):
            if max(y, default=0) == 0:
                continue  # a port that sent nothing only clutters the legend
            ax.step([v * scale for v in t], y, where="post", label=port, linewidth=1.2)
        ax.set_title(os.path.basename(run.rstrip("/")) or run)
        ax.set_ylabel("throughput (Mbit/s)")
        ax.set_ylim(0, peak * 1.1)
        ax.grid(alpha=0.3)
        if series[run]:
            ax.legend(fontsize=8, loc="upper right")
        if rows == 2:
            ax = axes[1][col]
            shown = 0
            for key, (t, y) in sorted(depth[run].items()):
                if max(y, default=0) == 0:
                    continue  # an idle queue only clutters the legend
                ax.step([v * scale for v in t], y, where="post", label=key, linewidth=1.2)
                shown += 1
            ax.set_ylabel("queue depth (packets)")
            ax.set_ylim(0, deepest * 1.1)
            ax.grid(alpha=0.3)
            if shown:
                ax.legend(fontsize=8, loc="upper right")
            else:
                ax.text(0.5, 0.5, "no queue built up", ha="center", va="center",
                        transform=ax.transAxes, color="gray")
        axes[rows - 1][col].set_xlabel("time since the run's first frame (%s)" % unit)
    fig.tight_layout()
    try:
        fig.savefig(out, dpi=120, format=fmt)
    except (OSError, ValueError) as e:
        print("plot_run.py: cannot write the plot: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
