#!/usr/bin/python3
"""tools/train/train_digits.py as CI runs it (ctest: tools_train_digits_*).

  train_digits_test.py --build BUILD --tmp DIR CASE

CASE quick: one epoch, every mode, the claims checked (--quick): exit 0, the networked curves
bit-equal to ATP's arithmetic, the switch summing most elements, the CSV and PNG written, the
epoch numbered 1 in the CSV and on stdout.
CASE loss: 1% loss on every switch port, one epoch: still bit-equal and above the floor.
CASE kill: worker 2 dies at step 5: exit 1 within a bound, the other workers named with the
module's timeout error, the job reset with no aggregator left in use.
CASE options: bad options end with one line and exit 2 before anything is written.
Exit 0 when the case holds, 1 with the reasons otherwise.
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SCRIPT = os.path.join(REPO, "tools", "train", "train_digits.py")
PROBLEMS = []


def expect(cond, what):
    if not cond:
        PROBLEMS.append(what)


def run(args, tmp, name, timeout=600):
    out_dir = os.path.join(tmp, name)
    cmd = ["/usr/bin/python3", SCRIPT, "--out-dir", out_dir] + args
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p, time.monotonic() - start, out_dir


def case_quick(build, tmp):
    p, _, out = run(["--quick", "--build", build], tmp, "quick")
    expect(p.returncode == 0, f"--quick: exit {p.returncode}: {p.stderr}")
    for mode in ("switch", "ps"):
        expect(f"check {mode}: equal to ATP's arithmetic" in p.stdout, f"{mode} not bit-equal")
    rows = list(csv.DictReader(open(os.path.join(out, "train.csv"))))
    modes = {r["mode"] for r in rows}
    expect(modes == {"switch", "ps", "local", "model"}, f"modes in the CSV: {modes}")
    share = [float(r["switch_share"]) for r in rows if r["mode"] == "switch"]
    expect(share and share[-1] > 0.5, f"switch share {share}")
    expect(all(float(r["accuracy"]) >= 0.4 for r in rows), "an accuracy below the floor")
    expect(os.path.getsize(os.path.join(out, "train.png")) > 0, "no plot")
    # Epochs count from 1 wherever they appear (the plot's axis draws the CSV's numbers).
    expect({r["epoch"] for r in rows} == {"1"}, f"epochs in the CSV: {[r['epoch'] for r in rows]}")
    printed = re.findall(r"^\S+ +epoch +(\d+):", p.stdout, re.M)
    expect(printed and set(printed) == {"1"}, f"epochs printed: {printed}")


def case_loss(build, tmp):
    p, _, _ = run(["--modes", "switch,model", "--epochs", "1", "--port-loss", "0.01", "--check",
                   "--accuracy-floor", "0.4", "--build", build], tmp, "loss")
    expect(p.returncode == 0, f"--port-loss 0.01: exit {p.returncode}: {p.stderr}")
    expect("check switch: equal to ATP's arithmetic" in p.stdout, "switch not bit-equal with loss")
    retx = [l for l in p.stdout.splitlines() if l.startswith("switch: ")]
    expect(retx and " 0 retransmissions" not in retx[0], f"no retransmission under loss: {retx}")


def case_kill(build, tmp):
    p, seconds, _ = run(["--modes", "switch", "--epochs", "2", "--kill", "2:5", "--timeout", "5",
                         "--build", build], tmp, "kill")
    expect(p.returncode == 1, f"--kill: exit {p.returncode}, expected 1")
    expect("worker 2's process ended (exit code 3)" in p.stderr, f"the dead worker: {p.stderr}")
    for r in (0, 1, 3):
        expect(f"worker {r}: Error: all_reduce" in p.stderr, f"worker {r}'s error: {p.stderr}")
    expect(re.search(r"aggregators in use \S+ before, 0 after", p.stderr) is not None,
           f"aggregators still in use: {p.stderr.splitlines()[-1:]}")
    # Bounded: the 5 s wait, swemu and the workers' start, well under the launcher's patience.
    expect(seconds < 120, f"took {seconds:.0f} s")


def case_options(build, tmp):
    for args in (["--workers", "0"], ["--workers", "3"], ["--batch", "10"], ["--lr", "-1"],
                 ["--lr", "nan"], ["--modes", "switch,bogus"], ["--port-loss", "1"],
                 ["--kill", "9:1"], ["--kill", "x"], ["--timeout", "0"], ["--epochs", "0"],
                 ["--accuracy-floor", "2"], ["--bogus"], ["--bucket-bytes", "0"],
                 ["--out-dir", "/etc/passwd"], ["--plot", tmp]):
        p, _, out = run(args + ["--build", build], tmp, "options")
        lines = p.stderr.strip().splitlines()
        expect(p.returncode == 2, f"{args}: exit {p.returncode}")
        expect(len(lines) == 1 or (args == ["--bogus"] and lines[-1].startswith("train_digits")),
               f"{args}: {p.stderr!r}")
        expect(not os.path.exists(os.path.join(out, "train.csv")), f"{args}: wrote output")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("case", choices=("quick", "loss", "kill", "options"))
    a = ap.parse_args()
    os.makedirs(a.tmp, exist_ok=True)
    globals()["case_" + a.case](a.build, a.tmp)
    if PROBLEMS:
        print("\n".join(PROBLEMS))
        sys.exit(1)
    print(f"{a.case}: ok")


if __name__ == "__main__":
    main()
