#!/usr/bin/python3
"""Draws DLCP's simulation (swemu-dlcp sim --csv FILE) as one PNG of three panels:
the completion-time CDF of DLCP and each baseline in the file (DCTCP, PIAS, pFabric; push and
pull), their mean and p99 per stage, and the loss each layer saw (DLCP: the share missing when
the bound was met; a baseline: the share of segments retransmitted).

  dlcp_plot.py FLOWS.csv --out PLOT.png [--title TEXT]
Exit status 2 with one line for a bad file or option."""
import argparse
import csv
import math
import os
import sys

COLUMNS = ["transport", "stage", "layer", "from", "to", "bytes", "start_ns", "fct_ns",
           "arrived_ns", "loss"]
# swemu-dlcp sim's transport names (--schemes), the baselines in the order drawn.
BASELINES = ["dctcp", "pias", "pfabric"]
LABELS = {"dlcp": "DLCP", "dctcp": "DCTCP", "pias": "PIAS", "pfabric": "pFabric"}
COLORS = {"dlcp": "tab:blue", "dctcp": "tab:red", "pias": "tab:orange", "pfabric": "tab:green"}


def fail(message):
    print(f"dlcp_plot: {message}", file=sys.stderr)
    sys.exit(2)


def read_flows(path):
    if not os.path.isfile(path):
        fail(f"{path}: not a regular file")
    if os.path.getsize(path) > 256 << 20:
        fail(f"{path}: larger than 256 MiB")
    flows = []
    try:
        with open(path, newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header != COLUMNS:
                fail(f"{path}: not swemu-dlcp sim --csv output (header {header})")
            for n, row in enumerate(reader, start=2):
                if len(row) != len(COLUMNS):
                    fail(f"{path}:{n}: {len(row)} fields, want {len(COLUMNS)}")
                r = dict(zip(COLUMNS, row))
                try:
                    flows.append({"transport": r["transport"], "stage": r["stage"],
                                  "layer": int(r["layer"]), "fct_ms": int(r["fct_ns"]) / 1e6,
                                  "loss": float(r["loss"])})
                except ValueError as e:
                    fail(f"{path}:{n}: {e}")
                if flows[-1]["transport"] not in LABELS or \
                        flows[-1]["stage"] not in ("push", "pull"):
                    fail(f"{path}:{n}: unknown transport or stage")
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        fail(f"{path}: {e}")
    present = {f["transport"] for f in flows}
    if "dlcp" not in present or not present & set(BASELINES):
        fail(f"{path}: needs flows of dlcp and of a baseline (dctcp, pias, pfabric)")
    return flows


def p99(values):
    v = sorted(values)
    return v[min(len(v) - 1, math.ceil(0.99 * len(v)) - 1)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--out", required=True)
    parser.add_argument("--title", help="default: DLCP against the file's baselines, virtual time")
    args = parser.parse_args()
    out_dir = os.path.dirname(os.path.abspath(args.out))
    if os.path.isdir(args.out) or not os.path.isdir(out_dir):
        fail(f"--out {args.out}: not a file in an existing directory")
    flows = read_flows(args.csv)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    baselines = [b for b in BASELINES if any(f["transport"] == b for f in flows)]
    fig, (cdf, bars, loss) = plt.subplots(1, 3, figsize=(15, 4.2))
    stages = [s for s in ("push", "pull") if any(f["stage"] == s for f in flows)]
    for transport in baselines + ["dlcp"]:
        for stage in stages:
            fct = sorted(f["fct_ms"] for f in flows
                         if f["transport"] == transport and f["stage"] == stage)
            if not fct:
                continue
            y = [(i + 1) / len(fct) for i in range(len(fct))]
            cdf.step(fct, y, where="post", color=COLORS[transport],
                     linestyle="-" if stage == "push" else "--",
                     label=f"{LABELS[transport]} {stage}")
    cdf.set_xscale("log")
    cdf.set_xlabel("flow completion time (ms)")
    cdf.set_ylabel("share of flows")
    cdf.legend()
    cdf.set_title("completion times")

    groups = ["all"] + stages
    series = [(t, m) for t in baselines + ["dlcp"] for m in ("mean", "p99")]
    width = 0.8 / len(series)
    for k, (transport, metric) in enumerate(series):
        heights = []
        for g in groups:
            fct = [f["fct_ms"] for f in flows
                   if f["transport"] == transport and (g == "all" or f["stage"] == g)]
            heights.append(sum(fct) / len(fct) if metric == "mean" else p99(fct))
        bars.bar([i + (k - (len(series) - 1) / 2) * width for i in range(len(groups))], heights,
                 width, color=COLORS[transport], alpha=0.5 if metric == "mean" else 1.0,
                 label=f"{LABELS[transport]} {metric}")
    bars.set_xticks(range(len(groups)))
    bars.set_xticklabels(groups)
    bars.set_ylabel("ms")
    bars.legend()
    bars.set_title("mean and p99")

    layers = max(f["layer"] for f in flows) + 1
    for transport, stage, style in [(t, s, "-" if s == "push" else "--")
                                    for t in ["dlcp"] + baselines for s in ("push", "pull")]:
        if stage not in stages:
            continue
        per_layer = []
        for layer in range(layers):
            v = [f["loss"] for f in flows if f["transport"] == transport and
                 f["stage"] == stage and f["layer"] == layer]
            per_layer.append(100 * sum(v) / len(v) if v else float("nan"))
        loss.plot(range(layers), per_layer, style, color=COLORS[transport],
                  label=f"{LABELS[transport]} {stage}")
    loss.set_xlabel("layer (input first)")
    others = LABELS[baselines[0]] if len(baselines) == 1 else "others"
    loss.set_ylabel(f"% (DLCP: missing at the bound; {others}: retransmitted)")
    loss.legend()
    loss.set_title("loss per layer")
    fig.suptitle(args.title or "DLCP against " + ", ".join(LABELS[b] for b in baselines) +
                 ", virtual time")
    fig.tight_layout()
    try:
        fig.savefig(args.out, dpi=90)
    except OSError as e:
        fail(f"--out {args.out}: {e}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
