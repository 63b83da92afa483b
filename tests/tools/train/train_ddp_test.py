#!/usr/bin/python3
"""tools/train/train_ddp.py as CI runs it (ctest: tools_train_ddp_*).

  train_ddp_test.py --build BUILD --tmp DIR CASE

CASE digits: 2 ranks, one epoch of the digits CNN, swemu through the DDP hook over the switch
(dpdk), then Gloo: exit 0 with --check, swemu's curve bit-equal to ATP's arithmetic without a
network and within train_digits' rules of Gloo's, most gradient elements summed in the switch.
CASE resnet: 2 ranks, one epoch of the small ResNet, swemu as the torch.distributed backend
("swemu") over loopback UDP (no switch), then Gloo: exit 0 with --check.
CASE options: bad options end with one line and exit 2 before anything is written.
Exit 0 when the case holds, 1 with the reasons otherwise.
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SCRIPT = os.path.join(REPO, "tools", "train", "train_ddp.py")
PROBLEMS = []


def expect(cond, what):
    if not cond:
        PROBLEMS.append(what)


def run(args, tmp, name, timeout=600):
    out_dir = os.path.join(tmp, name)
    cmd = ["/usr/bin/python3", SCRIPT, "--out-dir", out_dir] + args
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout), out_dir


def rows(out_dir):
    with open(os.path.join(out_dir, "ddp.csv")) as f:
        return list(csv.DictReader(f))


def case_digits(build, tmp):
    p, out = run(["--model", "digits", "--workers", "2", "--epochs", "1", "--check",
                  "--accuracy-floor", "0.3", "--build", build], tmp, "digits")
    expect(p.returncode == 0, f"digits: exit {p.returncode}: {p.stdout}{p.stderr}")
    expect("check switch: equal to ATP's arithmetic" in p.stdout, f"not bit-equal: {p.stdout}")
    expect("check switch: largest loss difference to gloo" in p.stdout, "no comparison to Gloo")
    share = [l for l in p.stdout.splitlines() if l.startswith("summary swemu:")]
    expect(share and "summed in the switch" in share[0] and
           float(share[0].split("%, ")[-1].split("%")[0]) > 50, f"switch share: {share}")
    expect({r["mode"] for r in rows(out)} == {"swemu", "gloo"}, "modes in the CSV")


def case_resnet(build, tmp):
    p, out = run(["--model", "resnet", "--workers", "2", "--epochs", "1", "--via", "backend",
                  "--transport", "udp", "--check", "--build", build], tmp, "resnet")
    expect(p.returncode == 0, f"resnet: exit {p.returncode}: {p.stdout}{p.stderr}")
    expect("check ps: largest loss difference to gloo" in p.stdout, f"no check: {p.stdout}")
    expect("swemu via backend over udp" in p.stdout, "not the backend")
    r = rows(out)
    expect(len(r) == 2 and all(float(x["seconds_per_iteration"]) > 0 for x in r), f"rows {r}")


def case_options(build, tmp):
    shutil.rmtree(os.path.join(tmp, "options"), ignore_errors=True)
    for args in (["--workers", "0"], ["--workers", "3"], ["--batch", "11"], ["--lr", "-1"],
                 ["--modes", "swemu,bogus"], ["--modes", "gloo,gloo"], ["--via", "x"],
                 ["--transport", "tcp"], ["--model", "vgg"], ["--epochs", "0"],
                 ["--train-size", "8"], ["--bucket-mb", "0"], ["--accuracy-floor", "2"],
                 ["--width", "2"],
                 ["--bogus"], ["--out-dir", "/etc/passwd"]):
        p, out = run(args + ["--build", build], tmp, "options")
        lines = p.stderr.strip().splitlines()
        expect(p.returncode == 2, f"{args}: exit {p.returncode}")
        expect(len(lines) == 1 or (args == ["--bogus"] and lines[-1].startswith("train_ddp")),
               f"{args}: {p.stderr!r}")
        expect(not os.path.exists(os.path.join(out, "ddp.csv")), f"{args}: wrote output")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("case", choices=("digits", "resnet", "options"))
    a = ap.parse_args()
    os.makedirs(a.tmp, exist_ok=True)
    globals()["case_" + a.case](a.build, a.tmp)
    if PROBLEMS:
        print("\n".join(PROBLEMS))
        sys.exit(1)
    print(f"{a.case}: ok")


if __name__ == "__main__":
    main()
