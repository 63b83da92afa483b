#!/usr/bin/python3
"""Reproduce the GOAT paper's comparisons with swemu-goat sim and draw them.

Three experiments, each run once per seed (the seed also draws which switches are programmable),
every run comparing the schemes goat, atp-style and ps-only:
  1. leaf-spine (the paper's simulation, Exp. #6/#7): 10 spines, 10 leaves, 50 servers, 20%
     programmable, AlexNet, workers W in {20, 25, 30, 35}, rate std 0.2: PS traffic (ps_bytes)
     and total communication (gradient_bytes);
  2. rate variation (the paper's Figure 16): leaf-spine, 35 workers, rate std in
     {0, 0.2, 0.4, 0.6}: total communication and PS traffic;
  3. testbed (Exp. #3): 8 workers on each of s1 and s2, ResNet-18 (44MB), rate std 0.2: PS
     traffic in model sizes (ps_over_model).
Sizes are those of the simulator's scaled model (its default --scale 1000). Writes every raw CSV
to DIR/raw/, a combined DIR/goat_experiment.csv (with the columns experiment, rate_std, seed added),
one figure of three panels, and prints a summary of the means over seeds. When stderr is a
terminal, one line shows how many runs are done and about how long the rest will take (nothing
when stderr is a pipe or a file).

  /usr/bin/python3 tools/goat/goat_experiment.py [--swemu-goat PATH] [--seeds S]
      [--out-dir DIR] [--plot FILE] [--quick]

--quick (for CI: seed 1, workers {20, 35}, rate std {0, 0.2}) also checks that the figure was
written and that GOAT's mean PS traffic at 35 workers is below atp-style's and ps-only's.
Exit status: 0 done; 1 a sim run failed, a row has mismatches, or a --quick check failed;
2 bad options.
"""
import argparse
import csv
import glob
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

PROG = "goat_experiment"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tools", "common"))
from progress import Progress  # noqa: E402  (found through the path above)
SCHEMES = ("goat", "atp-style", "ps-only")
LEAF_SPINE = ["--fabric", "leaf-spine"]  # the simulator's defaults: 10,10,50, 20%, AlexNet
TESTBED = ["--fabric", "testbed", "--per-switch", "8"]  # 16 workers, the default 44MB model
RATE_STD = 0.2
BIG_W = 35  # the leaf-spine size of the summary and of the rate-variation experiment
MB = 1e6


def die(status, message):
    print(f"{PROG}: {message}", file=sys.stderr)
    sys.exit(status)


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse prints its usage too)
        die(2, f"error: {message}")


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value}")
    return value


def parse_args():
    p = Parser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("--swemu-goat", default=os.path.join(REPO, "build/tools/swemu-goat"),
                   help="the swemu-goat binary (default: build/tools/swemu-goat in the repo)")
    p.add_argument("--seeds", type=positive_int, default=3, help="seeds 1..S (default 3)")
    p.add_argument("--out-dir", default="out/goat_experiment",
                   help="where the CSVs (and by default the figure) go")
    p.add_argument("--plot", help="the figure (default DIR/goat_experiment.png)")
    p.add_argument("--quick", action="store_true",
                   help="seed 1, workers {20, 35}, rate std {0, 0.2}, and check the outcome")
    a = p.parse_args()
    if not (os.path.isfile(a.swemu_goat) and os.access(a.swemu_goat, os.X_OK)):
        die(2, f"error: no executable swemu-goat at {a.swemu_goat}")
    if os.path.exists(a.out_dir) and not os.path.isdir(a.out_dir):
        die(2, f"error: --out-dir {a.out_dir} is not a directory")
    a.plot = a.plot or os.path.join(a.out_dir, "goat_experiment.png")
    if os.path.isdir(a.plot):
        die(2, f"error: --plot {a.plot} is a directory")
    try:
        os.makedirs(os.path.join(a.out_dir, "raw"), exist_ok=True)
        os.makedirs(os.path.dirname(os.path.abspath(a.plot)), exist_ok=True)
    except OSError as e:
        die(2, f"error: cannot make {e.filename}: {e.strerror}")
    return a


def plan(quick, seeds):
    """Every run as (experiment, workers, rate std, seed)."""
    seeds = [1] if quick else range(1, seeds + 1)
    workers = (20, BIG_W) if quick else (20, 25, 30, 35)
    stds = (0.0, 0.2) if quick else (0.0, 0.2, 0.4, 0.6)
    return ([("leaf-spine", w, RATE_STD, s) for w in workers for s in seeds] +
            [("rate-std", BIG_W, std, s) for std in stds for s in seeds] +
            [("testbed", 16, RATE_STD, s) for s in seeds])


def run(binary, raw_dir, job):
    """One swemu-goat sim run: its CSV rows with experiment, rate_std and seed added, or a
    one-line error (str)."""
    experiment, workers, std, seed = job
    fabric = TESTBED if experiment == "testbed" else LEAF_SPINE + ["--workers", str(workers)]
    path = os.path.join(raw_dir, f"{experiment}_w{workers}_std{std:g}_seed{seed}.csv")
    cmd = [binary, "sim", *fabric, "--rate-std", f"{std:g}", "--seed", str(seed),
           "--scheme", ",".join(SCHEMES), "--csv", path]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{' '.join(cmd[1:])}: {e}"
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or ["(no stderr)"]
        return f"{' '.join(cmd[1:])} exited {done.returncode}: {lines[-1]}"
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        return f"{' '.join(cmd[1:])}: no CSV: {e.strerror}"
    if sorted(r["scheme"] for r in rows) != sorted(SCHEMES):
        return f"{path}: expected one row per scheme {SCHEMES}"
    for r in rows:
        r.update(experiment=experiment, rate_std=f"{std:g}", seed=str(seed))
    return rows


def run_all(binary, raw_dir, jobs):
    """All runs, two or more at a time; exits 1 on the first failure."""
    for old in glob.glob(os.path.join(raw_dir, "*.csv")):
        os.remove(old)  # a previous run's, possibly of another plan
    rows = []
    bar = Progress(len(jobs))  # on a terminal only
    bar.step(0)
    pool = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1))
    for i, out in enumerate(pool.map(lambda j: run(binary, raw_dir, j), jobs), 1):
        if isinstance(out, str):
            pool.shutdown(wait=True, cancel_futures=True)
            bar.clear()
            die(1, f"sim run failed: {out}")
        bar.step(i, f"{out[0]['experiment']} workers {out[0]['workers']} "
                    f"rate std {out[0]['rate_std']} seed {out[0]['seed']}")
        rows += out
    pool.shutdown()
    return rows


def write_combined(rows, path):
    columns = ["experiment", "rate_std", "seed"] + [c for c in rows[0] if c not in
                                                    ("experiment", "rate_std", "seed")]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def stats(rows, experiment, x, column, scale=1.0):
    """{scheme: {x value: (mean, min, max)}} of column / scale over seeds."""
    groups = {}
    for r in rows:
        if r["experiment"] == experiment:
            groups.setdefault(r["scheme"], {}).setdefault(float(r[x]), []).append(
                float(r[column]) / scale)
    return {s: {k: (sum(v) / len(v), min(v), max(v)) for k, v in sorted(by_x.items())}
            for s, by_x in groups.items()}


def reduction(data, other):
    """GOAT's reduction at BIG_W workers vs other, in percent of other's mean."""
    return 100.0 * (1.0 - data["goat"][BIG_W][0] / data[other][BIG_W][0])


def summarise(rows, seeds):
    """The summary table on stdout; returns the means checked in --quick mode."""
    ps = stats(rows, "leaf-spine", "workers", "ps_bytes", MB)
    total = stats(rows, "leaf-spine", "workers", "gradient_bytes", MB)
    print(f"GOAT experiment, swemu-goat sim, means over seeds {seeds} "
          f"(MB of the model scaled 1/1000)\n")
    print(f"Leaf-spine, {BIG_W} workers, rate std {RATE_STD:g}")
    print(f"  {'scheme':<10} {'PS MB':>9} {'total MB':>9}")
    for s in SCHEMES:
        print(f"  {s:<10} {ps[s][BIG_W][0]:9.3f} {total[s][BIG_W][0]:9.3f}")
    for other in SCHEMES[1:]:
        print(f"  GOAT vs {other + ':':<10} PS traffic -{reduction(ps, other):.1f}%, "
              f"total communication -{reduction(total, other):.1f}%")
    rate = stats(rows, "rate-std", "rate_std", "gradient_bytes", MB)
    print(f"\nRate variation, leaf-spine, {BIG_W} workers: total MB")
    print(f"  {'rate std':<10}" + "".join(f" {s:>9}" for s in SCHEMES))
    for std in rate["goat"]:
        print(f"  {std:<10g}" + "".join(f" {rate[s][std][0]:9.3f}" for s in SCHEMES))
    tb = stats(rows, "testbed", "rate_std", "ps_over_model")
    print(f"\nTestbed, 16 workers, rate std {RATE_STD:g}: PS traffic in model sizes")
    print("  " + "   ".join(f"{s} {tb[s][RATE_STD][0]:.2f}" for s in SCHEMES))
    return {s: ps[s][BIG_W][0] for s in SCHEMES}


def plot(rows, path, seeds):
    """(a) PS traffic vs workers (log y), (b) total vs workers, (c) total vs rate std at 35."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = [(stats(rows, "leaf-spine", "workers", "ps_bytes", MB), "workers",
               "PS traffic (MB)", "(a) PS traffic, leaf-spine"),
              (stats(rows, "leaf-spine", "workers", "gradient_bytes", MB), "workers",
               "total communication (MB)", "(b) total communication, leaf-spine"),
              (stats(rows, "rate-std", "rate_std", "gradient_bytes", MB), "rate std",
               "total communication (MB)", f"(c) rate variation, {BIG_W} workers")]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for ax, (data, xlabel, ylabel, title) in zip(axes, panels):
        for scheme, marker in zip(SCHEMES, "osD"):
            xs = list(data[scheme])
            mean, lo, hi = zip(*data[scheme].values())
            ax.errorbar(xs, mean, yerr=[[m - l for m, l in zip(mean, lo)],
                                        [h - m for m, h in zip(mean, hi)]],
                        marker=marker, capsize=3, label=scheme)
        ax.set(xlabel=xlabel, ylabel=ylabel, title=title, xticks=xs)
        ax.grid(alpha=0.3)
    axes[0].set_yscale("log")
    axes[0].yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1, 2, 5)))
    axes[0].yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    axes[0].yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axes[0].legend()
    fig.suptitle(f"GOAT vs ATP-style vs PS-only (swemu-goat sim; AlexNet / 1000, 20% programmable;"
                 f" mean and min..max over seeds {seeds})")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def check(ok, message):
    if not ok:
        die(1, f"check failed: {message}")


def main():
    a = parse_args()
    raw_dir = os.path.join(a.out_dir, "raw")
    jobs = plan(a.quick, a.seeds)
    seeds = "1" if a.quick else f"1..{a.seeds}"
    rows = run_all(os.path.abspath(a.swemu_goat), raw_dir, jobs)
    combined = os.path.join(a.out_dir, "goat_experiment.csv")
    write_combined(rows, combined)
    bad = [r for r in rows if int(r["mismatches"]) != 0]
    if bad:
        r = bad[0]
        die(1, f"{len(bad)} row(s) with mismatches, e.g. {r['scheme']} in {r['experiment']} "
               f"workers {r['workers']} rate std {r['rate_std']} seed {r['seed']}: "
               f"{r['mismatches']}")
    ps = summarise(rows, seeds)
    plot(rows, a.plot, seeds)
    print(f"\nwrote {combined}, {len(jobs)} raw CSVs in {raw_dir}/ and {a.plot}")
    if a.quick:
        check(os.path.isfile(a.plot) and os.path.getsize(a.plot) > 0,
              f"the figure {a.plot} is missing or empty")
        for other in SCHEMES[1:]:
            check(ps["goat"] < ps[other], f"GOAT's mean PS traffic at {BIG_W} workers "
                  f"({ps['goat']:.3f} MB) is not below {other}'s ({ps[other]:.3f} MB)")
        print("quick checks passed: the figure is written; GOAT's PS traffic at "
              f"{BIG_W} workers is below atp-style's and ps-only's")


if __name__ == "__main__":
    main()
