#!/usr/bin/python3
"""PCN's metrics from two runs, without and with PCN, side by side with the paper's figures, and
a PNG of the queue toward the PS over time (whole runs, and every burst aligned on its start).

A run directory holds telemetry.csv (swemu --telemetry, or swemu-pcn sim --out) and its bursts:
worker*.json (swemu-pcn ddl --json) or summary.json (swemu-pcn sim); background throughput comes
from iperf3's bg*.json when they are there, else from summary.json (the sim's). Metrics as the
paper defines them: the queue when a burst's first packet is enqueued, the maximum over the
burst, burst completion time, DDL throughput (each burst's bytes over its completion time,
averaged over bursts), background throughput over the DDL (first burst start to last burst
end), and the queueing delay in bursts (depth times a full frame's time, averaged).

The three queue figures of a sim run are the sim's own, read from summary.json: it computed them
from the depth sampled every 10 us, which telemetry.csv (a row every 1 ms) cannot reproduce, so
this report prints what comparison.txt prints. A real-time run's come from its telemetry rows.

usage: pcn_report.py --without DIR --with DIR [--rate 100M] [--port SWITCH:PORT] [--plot PNG]

--plot NAME, a bare file name, is written beside the data: in the directory that holds the two
run directories (--without out/pcn-sim/without --with out/pcn-sim/with --plot q.png writes
out/pcn-sim/q.png); a path with a directory part (./q.png, /tmp/q.png) is taken as given.
"""
import argparse
import bisect
import csv
import glob
import json
import os
import sys

PAPER = [  # metric, paper without, with, change
    ("queue at burst start (packets)", "35", "5", "-85.7%"),
    ("max queue per burst (packets)", "54.8", "44.1", "-19.5%"),
    ("burst completion time (ms)", "-", "-", "-39%"),
    ("DDL throughput (Mbit/s)", "-", "-", "+72%"),
    ("background throughput (Mbit/s)", "-", "-", "-5.7%"),
    ("queueing delay in bursts (ms)", "-", "-", "-13%"),
]
FULL_FRAME_BITS = (1514 + 24) * 8
# A burst in the sim's summary.json, with its queue figures (QUEUE_KEYS) as the sim computed them.
QUEUE_KEYS = ("start_queue", "max_queue", "queue_delay_ms")
SUMMARY_KEYS = ("arrival_ns", "start_ns", "done_ns", "bytes", "acked") + QUEUE_KEYS


def fail(message):
    print(f"pcn_report: {message}", file=sys.stderr)
    sys.exit(2)


def parse_rate(text):
    units = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}
    t = text.strip().upper().removesuffix("BPS").removesuffix("B")
    suffix = t[-1] if t and t[-1] in units else ""
    try:
        value = float(t[: len(t) - len(suffix)]) * units[suffix]
    except ValueError:
        fail(f"--rate {text}: not a rate (e.g. 100M)")
    if value <= 0:
        fail(f"--rate {text}: must be > 0")
    return value


def read_telemetry(path, port):
    """{(switch, port): [(t_ns, depth)]} with depths summed over queues."""
    if not os.path.isfile(path):
        fail(f"{path}: missing")
    series = {}
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if not reader.fieldnames or "depth_packets" not in reader.fieldnames:
            fail(f"{path}: not a swemu telemetry file")
        for row in reader:
            key = (row["switch"], int(row["port"]))
            if port and key != port:
                continue
            by_time = series.setdefault(key, {})
            t = int(row["time_ns"])
            by_time[t] = by_time.get(t, 0) + int(row["depth_packets"])
    if not series:
        fail(f"{path}: no samples" + (f" of {port[0]}:{port[1]}" if port else ""))
    # The port toward the PS is the one whose queue grew most.
    key = max(series, key=lambda k: max(series[k].values()))
    return key, sorted(series[key].items())


def read_bursts(run):
    bursts = []
    for path in sorted(glob.glob(os.path.join(run, "worker*.json"))):
        with open(path) as f:
            doc = json.load(f)
        for b in doc["bursts"]:
            if b["done_ns"] > b["start_ns"] > 0:
                bursts.append({"arrival_ns": b["start_ns"], "start_ns": b["start_ns"],
                               "done_ns": b["done_ns"], "bytes": doc["burst_bytes"],
                               "acked": b["acked"]})
    path = os.path.join(run, "summary.json")
    if not bursts and os.path.isfile(path):
        with open(path) as f:
            bursts = [{k: b[k] for k in SUMMARY_KEYS} for b in json.load(f)["bursts"]]
    if not bursts:
        fail(f"{run}: no completed bursts (worker*.json or summary.json)")
    return sorted(bursts, key=lambda b: b["arrival_ns"])


def background_mbps(run, first_ns, last_ns):
    files = sorted(glob.glob(os.path.join(run, "bg*.json")))
    if not files:
        path = os.path.join(run, "summary.json")
        if os.path.isfile(path):
            with open(path) as f:
                return json.load(f).get("background_mbps", 0.0)
        return 0.0
    total_bits = 0.0
    for path in files:
        try:
            with open(path) as f:
                doc = json.load(f)
            t0 = doc["start"]["timestamp"]["timesecs"] * 1e9
            intervals = doc["intervals"]
        except (OSError, ValueError, KeyError) as e:
            fail(f"{path}: not an iperf3 JSON report ({e})")
        for i in intervals:
            s = i["sum"]
            a, b = t0 + s["start"] * 1e9, t0 + s["end"] * 1e9
            overlap = min(b, last_ns) - max(a, first_ns)
            if overlap > 0 and b > a:
                total_bits += s["bytes"] * 8 * overlap / (b - a)
    return total_bits / 1e6 / ((last_ns - first_ns) / 1e9)


def depth_at(samples, times, t):
    i = bisect.bisect_right(times, t) - 1
    return samples[i][1] if i >= 0 else 0


def queue_figures(b, samples, times, frame_ms):
    """The burst's queue at its start, its maximum and its mean queueing delay (ms): the sim's
    own when summary.json gave them, else from the telemetry rows of its arrival..done."""
    if all(k in b for k in QUEUE_KEYS):
        return tuple(b[k] for k in QUEUE_KEYS)
    a, z = b["arrival_ns"], b["done_ns"]
    lo, hi = bisect.bisect_right(times, a) - 1, bisect.bisect_right(times, z)
    window = [d for _, d in samples[max(lo, 0):hi]] or [0]
    return depth_at(samples, times, a), max(window), sum(window) / len(window) * frame_ms


def analyze(run, port, rate):
    key, samples = read_telemetry(os.path.join(run, "telemetry.csv"), port)
    times = [t for t, _ in samples]
    bursts = read_bursts(run)
    frame_ms = FULL_FRAME_BITS / rate * 1e3
    rows = []
    for b in bursts:
        start_queue, max_queue, delay_ms = queue_figures(b, samples, times, frame_ms)
        bct_ms = (b["done_ns"] - b["start_ns"]) / 1e6
        rows.append({"start_queue": start_queue, "max_queue": max_queue, "bct_ms": bct_ms,
                     "mbps": b["bytes"] * 8 / 1e3 / bct_ms, "delay_ms": delay_ms})
    mean = lambda k: sum(r[k] for r in rows) / len(rows)
    first = min(b["start_ns"] for b in bursts)
    last = max(b["done_ns"] for b in bursts)
    return {"port": key, "samples": samples, "bursts": bursts, "rows": rows,
            "metrics": [mean("start_queue"), mean("max_queue"), mean("bct_ms"), mean("mbps"),
                        background_mbps(run, first, last), mean("delay_ms")]}


def table(without, with_):
    lines = [f"{'metric':<36} {'paper w/o':>10} {'paper PCN':>10} {'change':>8} | "
             f"{'swemu w/o':>10} {'swemu PCN':>10} {'change':>8}"]
    for (name, pw, pp, pc), w, p in zip(PAPER, without["metrics"], with_["metrics"]):
        fmt = "{:.2f}" if "delay" in name else "{:.1f}"
        change = f"{(p - w) / w * 100:+.1f}%" if w else "-"
        lines.append(f"{name:<36} {pw:>10} {pp:>10} {pc:>8} | {fmt.format(w):>10} "
                     f"{fmt.format(p):>10} {change:>8}")
    n_w, n_p = len(without["bursts"]), len(with_["bursts"])
    acked = sum(1 for b in with_["bursts"] if b.get("acked"))
    lines.append(f"\n{n_w} and {n_p} bursts; {acked} of the PCN run's STARTs answered; queue of "
                 f"{with_['port'][0]} port {with_['port'][1]}")
    return "\n".join(lines)


def plot(without, with_, path, rate):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail("--plot needs python3-matplotlib")
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 8))
    colors = {"without PCN": "tab:blue", "with PCN": "tab:orange"}
    for label, run in (("without PCN", without), ("with PCN", with_)):
        times = [t for t, _ in run["samples"]]
        # The top panel: the queue around the second burst (the first follows a quiet start).
        a = run["bursts"][min(1, len(run["bursts"]) - 1)]["arrival_ns"]
        lo = max(bisect.bisect_left(times, a - 300_000_000), 0)
        hi = bisect.bisect_right(times, a + 700_000_000)
        top.step([(t - a) / 1e6 for t, _ in run["samples"][lo:hi]],
                 [d for _, d in run["samples"][lo:hi]], where="post", lw=0.9,
                 color=colors[label], label=label)
        for i, b in enumerate(run["bursts"]):
            a = b["arrival_ns"]
            lo = max(bisect.bisect_left(times, a - 50_000_000), 0)
            hi = bisect.bisect_right(times, a + 400_000_000)
            xs = [(t - a) / 1e6 for t, _ in run["samples"][lo:hi]]
            ys = [d for _, d in run["samples"][lo:hi]]
            bottom.step(xs, ys, where="post", lw=0.8, color=colors[label], alpha=0.6,
                        label=label if i == 0 else None)
    for ax in (top, bottom):
        ax.axhline(40, ls="--", lw=0.8, color="gray")
        ax.axhline(10, ls=":", lw=0.8, color="gray")
        ax.set_ylabel("queue toward the PS (packets)")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize=8)
    top.set_xlabel("time since the second burst's first packet (ms)")
    top.set_title("queue length around one burst (thresholds 40 and 10 dashed)")
    bottom.set_xlabel("time since the burst's first packet (ms)")
    bottom.set_title("every burst, aligned on its first packet")
    bottom.set_xlim(-50, 400)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def plot_path(plot, without, with_):
    """Where --plot goes: a bare file name into the directory holding both run directories,
    any path with a directory part as given."""
    if os.path.dirname(plot):
        return plot
    parents = [os.path.dirname(os.path.normpath(d)) for d in (without, with_)]
    try:
        base = os.path.commonpath(parents)
    except ValueError:  # one absolute, one relative
        base = os.path.commonpath([os.path.abspath(d) for d in parents])
    return os.path.join(base, plot)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--without", required=True)
    p.add_argument("--with", dest="with_", required=True)
    p.add_argument("--rate", default="100M",
                   help="bottleneck rate (queueing delay per packet, where telemetry gives it)")
    p.add_argument("--port", help="SWITCH:PORT of the queue toward the PS (default: the fullest)")
    p.add_argument("--plot", help="write the queue over time as this PNG; a bare file name goes "
                   "into the directory that holds the two run directories, a path with a "
                   "directory part (./q.png) as given")
    a = p.parse_args()
    port = None
    if a.port:
        sw, _, num = a.port.rpartition(":")
        if not sw or not num.isdigit():
            fail(f"--port {a.port}: expected SWITCH:PORT")
        port = (sw, int(num))
    for d in (a.without, a.with_):
        if not os.path.isdir(d):
            fail(f"{d}: not a directory")
    if a.plot:
        a.plot = plot_path(a.plot, a.without, a.with_)
    if a.plot and os.path.isdir(a.plot):
        fail(f"--plot {a.plot}: is a directory")
    rate = parse_rate(a.rate)
    without, with_ = analyze(a.without, port, rate), analyze(a.with_, port, rate)
    print(table(without, with_))
    if a.plot:
        plot(without, with_, a.plot, rate)
        print(f"wrote {a.plot}")


if __name__ == "__main__":
    main()
