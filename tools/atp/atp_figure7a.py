#!/usr/bin/python3
"""ATP's Figure 7a in virtual time: goodput against one worker's loss rate.

Runs `swemu-atp sim` on the two-rack job (configs/atp_two_rack.*) with loss on worker 0's link
only and congestion control off (section 7.2.3's setting), for each model and loss rate, with
ATP's recovery and with a SwitchML-style baseline (a fixed 1 ms timeout, nothing else), then
writes one CSV row per run, prints a table and draws goodput against loss, one panel per model.

  /usr/bin/python3 tools/atp/atp_figure7a.py [--swemu-atp PATH] [--csv FILE] [--plot FILE]
      [--models ResNet50,VGG16] [--losses 0.00001,0.0001,0.001,0.01] [--layers N] [--quick]
      [--jobs N]

The runs are independent: --jobs of them run at once (default: the cores), and the rows come
out in the same order. Without --csv (or with a --csv that does not exist yet) it runs the sweep and writes the CSV;
with an existing --csv it only draws. --quick (for CI: 6 layers of ResNet50, losses 0.1% and
1%) also checks the aims: ATP at least half its lossless goodput at 1% loss, and above the
timeout-only baseline at every loss rate.
Exit status: 0 done; 1 a run or a --quick check failed; 2 bad options.
"""
import argparse
import csv
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

PROG = "atp_figure7a"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMES = (("ATP", "atp"), ("timeout-only (SwitchML, 1 ms)", "timeout"))
FIELDS = ("model", "scheme", "loss", "time_ms", "goodput_gbps", "retransmissions", "timeouts")
PASS = re.compile(r"^in-network\s+\d+\s+(?P<ms>[\d.]+)\s+(?P<gbps>[\d.]+)\s+\S+\s+\S+\s+\S+\s+"
                  r"(?P<retx>\d+)\s+(?P<timeouts>\d+)")

sys.path.insert(0, os.path.join(REPO, "tools", "common"))


def fail(message, status=1):
    print(f"{PROG}: {message}", file=sys.stderr)
    sys.exit(status)


def parse_list(text, convert, name):
    try:
        values = [convert(v) for v in text.split(",") if v]
    except ValueError:
        fail(f"{name}: '{text}' is not a comma-separated list", 2)
    if not values:
        fail(f"{name}: empty", 2)
    return values


class RunFailed(Exception):
    """A sim run that failed, with the one line that says why."""


def run_point(binary, model, layers, scheme, loss):
    """One swemu-atp sim run: the in-network pass's time, goodput, retransmissions, timeouts
    (RunFailed when it fails)."""
    cmd = [binary, "sim", "--topology", os.path.join(REPO, "configs/atp_two_rack.topo"),
           "--job", os.path.join(REPO, "configs/atp_two_rack.job"), "--model", model,
           "--layers", str(layers), "--iterations", "1", "--in-network-only",
           "--congestion-control", "off", "--recovery", scheme]
    if loss > 0:
        cmd += ["--loss", format(loss, ".8f"), "--lossy-worker", "0"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RunFailed(f"{' '.join(cmd)}: exit {done.returncode}: {done.stderr.strip()}")
    for line in done.stdout.splitlines():
        m = PASS.match(line)
        if m:
            return {"time_ms": float(m["ms"]), "goodput_gbps": float(m["gbps"]),
                    "retransmissions": int(m["retx"]), "timeouts": int(m["timeouts"])}
    raise RunFailed(f"{' '.join(cmd)}: no in-network pass line in its output")


def sweep(args, models, losses):
    """Every point, --jobs at a time (each run is independent and in virtual time, so its
    figures do not depend on what runs beside it); rows in the points' order."""
    from progress import Progress  # tools/common/progress.py
    points = [(m, s, l) for m in models for _, s in SCHEMES for l in [0.0] + losses]
    rows = []
    progress = Progress(len(points))
    progress.step(0)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_point, args.swemu_atp, m, args.layers, s, l)
                   for m, s, l in points]
        for done, ((model, scheme, loss), future) in enumerate(zip(points, futures), 1):
            try:
                result = future.result()
            except (RunFailed, OSError) as e:  # the first in the points' order
                progress.clear()
                for later in futures:
                    later.cancel()
                pool.shutdown(wait=True)
                fail(str(e))
            rows.append({"model": model, "scheme": scheme, "loss": loss, **result})
            if done < len(points):
                progress.step(done, f"{model}, {scheme} recovery, loss {loss:g}")
    progress.step(len(points), "done")
    try:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            w.writeheader()
            w.writerows(rows)
    except OSError as e:
        fail(f"--csv {args.csv}: {e}", 2)
    return rows


def read_rows(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        for row in rows:
            row["loss"] = float(row["loss"])
            row["goodput_gbps"] = float(row["goodput_gbps"])
            row["time_ms"] = float(row["time_ms"])
    except (OSError, UnicodeDecodeError, csv.Error, KeyError, ValueError) as e:
        fail(f"--csv {path}: not an {PROG} CSV ({e})", 2)
    if not rows:
        fail(f"--csv {path}: no rows", 2)
    return rows


def goodput(rows, model, scheme, loss):
    for row in rows:
        if row["model"] == model and row["scheme"] == scheme and row["loss"] == loss:
            return row["goodput_gbps"]
    return None


def print_table(rows):
    models = sorted({r["model"] for r in rows})
    losses = sorted({r["loss"] for r in rows})
    print("model     loss       ATP_Gbps  ATP/lossless  timeout_Gbps  ATP/timeout")
    for model in models:
        lossless = goodput(rows, model, "atp", 0.0)
        for loss in losses:
            atp = goodput(rows, model, "atp", loss)
            base = goodput(rows, model, "timeout", loss)
            if atp is None or base is None:
                continue
            share = f"{atp / lossless:12.2f}" if lossless else "           -"
            ratio = f"{atp / base:11.2f}" if base else "          -"
            print(f"{model:<9} {loss * 100:8.4f}%  {atp:8.3f}  {share}  {base:12.3f}  {ratio}")


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    models = sorted({r["model"] for r in rows})
    fig, axes = plt.subplots(1, len(models), figsize=(5.5 * len(models), 4), squeeze=False)
    for ax, model in zip(axes[0], models):
        for label, scheme in SCHEMES:
            pts = sorted((r["loss"], r["goodput_gbps"]) for r in rows
                         if r["model"] == model and r["scheme"] == scheme and r["loss"] > 0)
            ax.plot([p[0] * 100 for p in pts], [p[1] for p in pts], marker="o", label=label)
        lossless = goodput(rows, model, "atp", 0.0)
        if lossless:
            ax.axhline(lossless, color="grey", linestyle=":", label="ATP, no loss")
        ax.set_xscale("log")
        ax.set_xlabel("loss rate of one worker's link (%)")
        ax.set_ylabel("all-reduce goodput per worker (Gbit/s)")
        ax.set_ylim(bottom=0)
        ax.set_title(model)
        ax.legend(fontsize="small")
    fig.suptitle("ATP Figure 7a in virtual time: two racks, 4 workers, 10G, congestion control "
                 "off", fontsize="medium")
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=100)
    except OSError as e:
        fail(f"--plot {path}: {e}", 2)


def check_aims(rows):
    ok = True
    for model in sorted({r["model"] for r in rows}):
        lossless = goodput(rows, model, "atp", 0.0)
        for loss in sorted({r["loss"] for r in rows if r["loss"] > 0}):
            atp = goodput(rows, model, "atp", loss)
            base = goodput(rows, model, "timeout", loss)
            if atp is None or base is None or atp <= base:
                print(f"{PROG}: {model} at {loss:g}: ATP {atp} not above the baseline {base}",
                      file=sys.stderr)
                ok = False
        atp1 = goodput(rows, model, "atp", 0.01)
        if atp1 is not None and lossless and atp1 < lossless / 2:
            print(f"{PROG}: {model} at 1%: ATP {atp1} below half of lossless {lossless}",
                  file=sys.stderr)
            ok = False
    return ok


def main():
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    p.add_argument("--swemu-atp", default=os.path.join(REPO, "build/tools/swemu-atp"))
    p.add_argument("--csv", default="atp_figure7a.csv")
    p.add_argument("--plot", default="atp_figure7a.png")
    p.add_argument("--models", default="ResNet50,VGG16")
    p.add_argument("--losses", default="0.00001,0.0001,0.001,0.01")
    p.add_argument("--layers", type=int, default=0, help="only the first N layers (0: all)")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="runs at once (default: the cores)")
    args = p.parse_args()
    models = parse_list(args.models, str, "--models")
    losses = parse_list(args.losses, float, "--losses")
    if any(not 0 < l <= 1 for l in losses):
        fail(f"--losses: each must be in (0, 1]: {args.losses}", 2)
    if args.layers < 0:
        fail("--layers must be 0 or more", 2)
    if not 1 <= args.jobs <= 256:
        fail("--jobs must be 1 to 256", 2)
    if args.quick:
        models, losses, args.layers = ["ResNet50"], [0.001, 0.01], 6
    if os.path.exists(args.csv) and not args.quick:
        rows = read_rows(args.csv)
    else:
        if not os.access(args.swemu_atp, os.X_OK):
            fail(f"--swemu-atp {args.swemu_atp}: not an executable (build it: "
                 "ninja -C build swemu-atp)", 2)
        rows = sweep(args, models, losses)
    print_table(rows)
    plot(rows, args.plot)
    print(f"{PROG}: wrote {args.plot} from {args.csv}")
    if args.quick and not check_aims(rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
