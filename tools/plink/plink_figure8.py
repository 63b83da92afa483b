#!/usr/bin/python3
"""Draw PLink's Figure 8 from `swemu-plink experiment --csv FILE`.

Runs the experiment (or reads a CSV it wrote) and draws the reduction latency of each method,
FA, 2LHA over Balanced Random groups, over the racks and over ProbeEmbed's groups, as one CDF
over the cluster assignments with each method's mean marked, and prints mean, p50 and p95.

  /usr/bin/python3 tools/plink/plink_figure8.py [--swemu-plink PATH] [--csv FILE]
      [--plot FILE] [--quick] [-- EXPERIMENT OPTIONS...]

Without --csv it runs `swemu-plink experiment --csv OUT` (OUT next to the plot) with the options
after `--`; when stderr is a terminal it shows which assignment the experiment is at and about
how long it has left, on one line (nothing when stderr is a pipe or a file). --quick (for CI:
a 16-host cloud, 3 assignments) also checks that the plot was written and that ProbeEmbed
2LHA's mean latency is below Balanced Random's and FA's.
Exit status: 0 done; 1 the experiment failed or a --quick check failed; 2 bad options.
"""
import argparse
import csv
import math
import os
import re
import subprocess
import sys
import threading

PROG = "plink_figure8"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tools", "common"))
from progress import Progress  # noqa: E402  (found through the path above)
METHODS = ("FA", "2LHA Balanced Random", "2LHA racks", "2LHA ProbeEmbed")
QUICK = ["--fanout", "2,2", "--rack-hosts", "7,2,4,3", "--assignments", "3", "--buffer",
         "256KB", "--chunk", "8KB", "--background", "4"]


def fail(message, status=1):
    print(f"{PROG}: {message}", file=sys.stderr)
    sys.exit(status)


def percentile(values, p):
    """Nearest rank, as swemu-plink experiment prints it."""
    values = sorted(values)
    rank = max(1, min(len(values), math.ceil(p * len(values))))
    return values[rank - 1]


def run_experiment(cmd):
    """Runs the experiment, passing its stdout on; on a terminal, asks it for a line per
    assignment (--progress) and turns those into a progress line with the time left. Returns
    (exit status, the rest of its stderr)."""
    bar = Progress(0)
    if bar.on:
        cmd = cmd + ["--progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()))
    reader.start()
    errors = []
    for line in proc.stderr:
        step = re.fullmatch(r"assignment (\d+)/(\d+)\n?", line)
        if step and bar.on:
            bar.total = int(step.group(2))
            bar.step(int(step.group(1)), "cluster assignments")
        else:
            errors.append(line)
    status = proc.wait()
    reader.join()
    if status != 0:
        bar.clear()  # an unfinished line, before the error
    sys.stdout.write("".join(out))
    return status, "".join(errors).strip()


def read_rows(path):
    if not os.path.isfile(path):
        fail(f"--csv {path}: not a regular file", 2)
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        fail(f"--csv {path}: {e}", 2)
    latency = {m: [] for m in METHODS}
    for row in rows:
        try:
            latency[row["method"]].append(float(row["latency_ms"]))
        except (KeyError, ValueError):
            fail(f"--csv {path}: not a swemu-plink experiment CSV (row {row})", 2)
    if not any(latency.values()):
        fail(f"--csv {path}: no rows", 2)
    return latency


def plot(latency, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for method in METHODS:
        values = sorted(latency[method])
        if not values:
            continue
        ys = [(i + 1) / len(values) for i in range(len(values))]
        line, = ax.step(values, ys, where="post", label=method)
        mean = sum(values) / len(values)
        ax.axvline(mean, color=line.get_color(), linestyle=":", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlabel("reduction latency (ms, log scale; dotted: mean)")
    ax.set_ylabel("share of cluster assignments")
    ax.set_title("swemu: PLink Figure 8 on an emulated cloud")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    ap.add_argument("--swemu-plink", default=os.path.join(REPO, "build/tools/swemu-plink"))
    ap.add_argument("--csv", help="read this CSV instead of running the experiment")
    ap.add_argument("--plot", default="plink_figure8.png")
    ap.add_argument("--quick", action="store_true")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        sys.exit(0 if e.code == 0 else 2)
    plot_dir = os.path.dirname(os.path.abspath(args.plot))
    try:
        os.makedirs(plot_dir, exist_ok=True)
    except OSError as e:
        fail(f"--plot {args.plot}: cannot make its directory: {e}", 2)
    if os.path.isdir(args.plot):
        fail(f"--plot {args.plot}: is a directory", 2)
    path = args.csv
    if path is None:
        if not os.access(args.swemu_plink, os.X_OK):
            fail(f"--swemu-plink {args.swemu_plink}: not an executable", 2)
        path = os.path.splitext(os.path.abspath(args.plot))[0] + ".csv"
        cmd = [args.swemu_plink, "experiment", "--csv", path] + (QUICK if args.quick else []) + extra
        status, errors = run_experiment(cmd)
        if status != 0:
            fail(f"{' '.join(cmd)}: exit {status}: {errors}", 2 if status == 2 else 1)
    latency = read_rows(path)
    print("method                  mean ms   p50 ms   p95 ms  (assignments)")
    means = {}
    for method in METHODS:
        values = latency[method]
        if not values:
            continue
        means[method] = sum(values) / len(values)
        print(f"{method:22s} {means[method]:8.3f} {percentile(values, 0.5):8.3f} "
              f"{percentile(values, 0.95):8.3f}  ({len(values)})")
    plot(latency, args.plot)
    print(f"plot: {args.plot}")
    if args.quick:
        if not os.path.getsize(args.plot):
            fail("the plot is empty")
        pe = means.get("2LHA ProbeEmbed")
        if pe is None or pe >= means["2LHA Balanced Random"] or pe >= means["FA"]:
            fail(f"ProbeEmbed 2LHA is not the faster one: {means}")


if __name__ == "__main__":
    main()
