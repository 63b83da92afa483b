#!/usr/bin/python3
"""tools/train/digits_spread.py (ctest: tools_train_digits_spread_*).

  digits_spread_test.py --tmp DIR CASE

CASE run: 2 epochs, seed 1, 2 dither runs: exit 0; its float run equals train_ddp.py's Gloo run
(--modes gloo, 2 ranks) and its atp run train_digits.py's `model` mode, bit for bit in every
epoch; the dither runs are not the float run; the per-seed spread line printed.
CASE options: bad options end with one line and exit 2 before anything is written.
Needs PyTorch and scikit-learn (not the swemu module); prints SKIPPED without them.
Exit 0 when the case holds, 1 with the reasons otherwise.
"""
import argparse
import json
import os
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
TRAIN = os.path.join(REPO, "tools", "train")
PROBLEMS = []


def expect(cond, what):
    if not cond:
        PROBLEMS.append(what)


def tool(name, args):
    return subprocess.run(["/usr/bin/python3", os.path.join(TRAIN, name)] + args,
                          capture_output=True, text=True, timeout=600)


def curve(rows):
    return [(r["epoch"], r["loss"], r["accuracy"]) for r in rows]


def case_run(tmp):
    out = os.path.join(tmp, "spread.json")
    p = tool("digits_spread.py", ["--epochs", "2", "--dithers", "2", "--out", out])
    expect(p.returncode == 0, f"digits_spread: exit {p.returncode}: {p.stderr}")
    if p.returncode:
        return
    runs = {r["variant"]: curve(r["rows"]) for r in json.load(open(out))["runs"]}
    expect(set(runs) == {"float", "atp", "dither:1", "dither:2"}, f"variants {sorted(runs)}")
    expect("seed 1: atp " in p.stdout and "2 dither runs" in p.stdout,
           f"no spread line:\n{p.stdout}")
    ddp_dir = os.path.join(tmp, "ddp")
    g = tool("train_ddp.py", ["--model", "digits", "--workers", "2", "--epochs", "2",
                              "--modes", "gloo", "--out-dir", ddp_dir])
    expect(g.returncode == 0, f"train_ddp gloo: exit {g.returncode}: {g.stderr}")
    if g.returncode == 0:
        gloo = curve(json.load(open(os.path.join(ddp_dir, "ddp.json")))["rows"])
        expect(runs["float"] == gloo, f"float {runs['float']} != Gloo's {gloo}")
    td_dir = os.path.join(tmp, "digits")
    m = tool("train_digits.py", ["--workers", "2", "--epochs", "2", "--modes", "model",
                                 "--out-dir", td_dir])
    expect(m.returncode == 0, f"train_digits model: exit {m.returncode}: {m.stderr}")
    if m.returncode == 0:
        model = curve(json.load(open(os.path.join(td_dir, "train.json")))["rows"])
        expect(runs["atp"] == model, f"atp {runs['atp']} != train_digits' model {model}")
    for k in ("dither:1", "dither:2"):
        expect(runs[k] != runs["float"], f"{k} equals the float run: no perturbation")


def case_options(tmp):
    out = os.path.join(tmp, "options.json")
    for args in (["--workers", "0"], ["--workers", "3"], ["--batch", "9"], ["--lr", "-1"],
                 ["--lr", "nan"], ["--epochs", "0"], ["--dithers", "-1"], ["--seeds", "x"],
                 ["--seeds", "3-1"], ["--bogus"], ["--out", tmp]):
        p = tool("digits_spread.py", args + ([] if "--out" in args else ["--out", out]))
        lines = p.stderr.strip().splitlines()
        expect(p.returncode == 2, f"{args}: exit {p.returncode}")
        expect(len(lines) == 1 or (args == ["--bogus"] and lines[-1].startswith("digits_spread")),
               f"{args}: {p.stderr!r}")
        expect(not os.path.exists(out), f"{args}: wrote output")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tmp", required=True)
    ap.add_argument("case", choices=("run", "options"))
    a = ap.parse_args()
    try:
        import torch  # noqa: F401
        import sklearn  # noqa: F401
    except ImportError as e:
        print(f"{a.case} SKIPPED: {e}")
        return
    os.makedirs(a.tmp, exist_ok=True)
    globals()["case_" + a.case](a.tmp)
    if PROBLEMS:
        print("\n".join(PROBLEMS))
        sys.exit(1)
    print(f"{a.case}: ok")


if __name__ == "__main__":
    main()
