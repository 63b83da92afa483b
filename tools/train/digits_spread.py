#!/usr/bin/python3
"""How far the digits CNN's final accuracy moves under errors the size of ATP's rounding.

train_digits.py's CNN, data and batches, W shards per global batch, in one process with no
network, the shards' gradients combined three ways for each seed:

  float     summed in float32, divided by W: what Gloo's all-reduce gives DDP (with 2 workers
            bit-equal to train_ddp.py's Gloo run; float64 sums give the same for W=2);
  atp       ATP's arithmetic, train_digits.atp_sum (int32 at scale 2^20, exact sum, float32,
            / W): what swemu's runs equal bit for bit (train_digits' `model` mode);
  dither:K  float, each shard's gradient first moved by an independent U(-0.5, 0.5) / 2^20
            per element (seed K): random errors of the size of ATP's rounding (at most
            W * 0.5 / 2^20 per summed element).

If atp's final accuracy lies within the dither runs' spread and that spread is wider than
train_digits' 1-point rule, a gap between atp and float is the training's sensitivity to any
error of that size, not a flaw of ATP's arithmetic. Per run it prints the final loss and
accuracy and epochs 12..15 (or the last four), per seed the dither spread; writes --out (JSON).

  /usr/bin/python3 tools/train/digits_spread.py [--workers 2] [--seeds 1] [--dithers 8] ...

Exit status: 0 done; 2 bad options or a missing module.
"""
import argparse
import json
import math
import os
import sys

PROG = "digits_spread"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_digits as td  # noqa: E402  (the model, data, batches and ATP's arithmetic)


def fail(message, status=2):
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)
    sys.exit(status)


def combine(kind, shards, workers, rng):
    """The averaged gradient of one global batch from the shards' flat float32 gradients."""
    import numpy as np
    if kind == "atp":
        return td.atp_sum(shards, workers)
    if kind == "dither":
        shards = [(g.astype(np.float64) + rng.uniform(-0.5, 0.5, g.shape) / (1 << 20))
                  .astype(np.float32) for g in shards]
    out = shards[0].copy()
    for g in shards[1:]:
        out = out + g
    return out / np.float32(workers)


def train(args, seed, variant):
    """One run; its rows (epoch, loss, accuracy) after every epoch."""
    import numpy as np
    import torch
    from torch.nn import functional as F
    torch.set_num_threads(1)
    kind, _, k = variant.partition(":")
    rng = np.random.RandomState(int(k)) if kind == "dither" else None
    model = td.make_model(seed)
    params = list(model.parameters())
    opt = torch.optim.SGD(params, lr=args.lr, momentum=0.9)
    xtr, ytr, xte, yte = td.load_data(seed)
    rows = []
    for epoch in range(args.epochs):
        for idx in td.batches(len(ytr), args.batch, seed, epoch):
            shards = []
            for rank in range(args.workers):
                opt.zero_grad()
                shard = idx[rank::args.workers]
                F.cross_entropy(model(xtr[shard]), ytr[shard]).backward()
                shards.append(torch.cat([p.grad.reshape(-1) for p in params]).numpy().copy())
            td.set_grads(params, torch.from_numpy(combine(kind, shards, args.workers, rng)))
            opt.step()
        loss, acc = td.evaluate(model, xtr, ytr, xte, yte)
        rows.append({"epoch": epoch + 1, "loss": loss, "accuracy": acc})
    return rows


def report(seed, variant, rows):
    tail = ", ".join(f"{r['epoch']}: {r['loss']:.4f} {r['accuracy'] * 100:.1f}%"
                     for r in rows[-4:])
    print(f"seed {seed} {variant:9s} final loss {rows[-1]['loss']:.4f}, test accuracy "
          f"{rows[-1]['accuracy'] * 100:.1f}% (epochs {tail})", flush=True)


def spread(seed, runs):
    """One line per seed: the dither runs' accuracy range, where atp and float lie."""
    final = {v: rows[-1]["accuracy"] * 100 for v, rows in runs.items()}
    dith = [a for v, a in final.items() if v.startswith("dither")]
    line = (f"seed {seed}: atp {final['atp']:.1f}% vs float {final['float']:.1f}% "
            f"({abs(final['atp'] - final['float']):.1f} points)")
    if dith:
        lo, hi = min(dith), max(dith)
        inside = lo <= final["atp"] <= hi
        line += (f"; {len(dith)} dither runs {lo:.1f}..{hi:.1f}% ({hi - lo:.1f} points), atp "
                 f"{'inside' if inside else 'outside'}, "
                 f"{sum(abs(a - final['float']) > 1.0 for a in dith)} of {len(dith)} more than "
                 f"1 point from float")
    print(line, flush=True)


def parse_seeds(text):
    try:
        if "-" in text:
            a, b = (int(v) for v in text.split("-"))
            seeds = list(range(a, b + 1))
        else:
            seeds = [int(v) for v in text.split(",")]
    except ValueError:
        fail("--seeds: N, N,M,... or N-M")
    if not seeds or len(seeds) > 100 or any(s < 0 for s in seeds):
        fail("--seeds: 1..100 non-negative seeds")
    return seeds


def parse_args():
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=2, help="shards per global batch (1..16)")
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--batch", type=int, default=64, help="global batch (a multiple of --workers)")
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--seeds", default="1", help="N, N,M,... or N-M (train_digits' --seed)")
    ap.add_argument("--dithers", type=int, default=8, help="dither runs per seed (0..100)")
    ap.add_argument("--out", default="out/digits_spread.json", help="the JSON written")
    try:
        args = ap.parse_args()
    except SystemExit as e:
        sys.exit(0 if e.code == 0 else 2)
    if not 1 <= args.workers <= 16:
        fail("--workers must be 1..16")
    if not 1 <= args.epochs <= 1000:
        fail("--epochs must be 1..1000")
    if args.batch < args.workers or args.batch % args.workers:
        fail("--batch must be a multiple of --workers")
    if not (args.lr > 0 and math.isfinite(args.lr)):
        fail("--lr must be a positive number")
    if not 0 <= args.dithers <= 100:
        fail("--dithers must be 0..100")
    args.seeds = parse_seeds(args.seeds)
    if os.path.isdir(args.out):
        fail(f"--out {args.out}: is a directory")
    return args


def main():
    args = parse_args()
    try:
        import torch  # noqa: F401
        import sklearn  # noqa: F401
    except ImportError as e:
        fail(f"{e} (Debian: apt-get install python3-torch python3-sklearn)")
    try:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    except OSError as e:
        fail(f"--out: {e}")
    print(f"{PROG}: digits CNN, {args.workers} shards, global batch {args.batch}, "
          f"{args.epochs} epochs, lr {args.lr}, seeds {args.seeds}, {args.dithers} dither runs "
          f"each", flush=True)
    out = {"workers": args.workers, "epochs": args.epochs, "batch": args.batch, "lr": args.lr,
           "runs": []}
    for seed in args.seeds:
        runs = {}
        for variant in ["float", "atp"] + [f"dither:{k}" for k in range(1, args.dithers + 1)]:
            runs[variant] = train(args, seed, variant)
            report(seed, variant, runs[variant])
            out["runs"].append({"seed": seed, "variant": variant, "rows": runs[variant]})
        spread(seed, runs)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
