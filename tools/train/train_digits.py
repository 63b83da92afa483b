#!/usr/bin/python3
"""Train a small CNN on scikit-learn's handwritten digits through swemu's `atp` switch program.

Data-parallel training with W worker processes (default 4) and PyTorch on the CPU: after every
backward pass each worker all-reduces its gradients, bucketed like DistributedDataParallel,
through swemu (the `swemu` Python module, hostlib/python), divides by W and steps. swemu runs in
real time on net_vhost ports, the workers on virtio_user, the PS in this process (the module's
AtpFabric). The same model is trained, from the same seed and on the same batches, four ways:

  switch  gradients summed in the emulated switch (ATP's aggregate job);
  ps      the switch forwards, the PS sums (ATP's forward_only job);
  local   one process, no network: each global batch's gradient at once, in float;
  model   one process, no network: the W shards' gradients combined with ATP's arithmetic
          (int32 at scale 2^20, summed exactly, back to float32, divided by W).

Per epoch it prints each mode's training loss (over the whole training set), test accuracy, the
time per iteration, and (switch, ps) the share of gradient elements summed in the switch; it
writes DIR/train.csv, DIR/train.json and a PNG of the loss and accuracy curves side by side.
Epochs are numbered from 1 in all of them. Modes whose curves are equal bit for bit are drawn as
one line whose legend entry names them all and says they are identical.

Why this dataset and model: scikit-learn's bundled digits (1797 8x8 images, 10 classes) need no
download, and a two-layer CNN of about 14k parameters trains to about 97% test accuracy in a few
seconds per epoch on one core, so three modes fit a CI job; its gradients still span several
buckets and hundreds of ATP packets per step.

The claims checked (--check, and --quick): (1) the switch's and the PS's curves equal the model's
bit for bit in every epoch: the network, its losses and retransmissions included, adds nothing
but ATP's quantisation; (2) their training losses stay within --loss-tolerance (default 0.1,
absolute) of the local float run's, and the final test accuracies within 1 point. Why 0.1: ATP
sums int32s of x * 2^20, so each summed gradient element is off by at most W * 0.5 / 2^20 (1.9e-6
for 4 workers), a relative change of about 1e-4 of these gradients; but SGD with momentum at
lr 0.1 is chaotic, and the local run itself spikes (seed 1, epoch 5: 0.149 where the quantised
runs have 0.062): a change in the sixth digit moves such a spike by an epoch. The final accuracy,
and (1), are the tight checks.

Faults: --port-loss P sets every switch port's loss (`set_port_loss all P`): ATP retransmits,
training converges the same. --kill RANK:STEP ends that worker's process at that step: the others
fail with swemu.Error within --timeout, the launcher reports it, resets the job and checks that the
switch holds no aggregator any more; exit 1.

  /usr/bin/python3 tools/train/train_digits.py [--workers 4] [--epochs 15] [--out-dir DIR] ...

Exit status: 0 trained (and --check held); 1 a run failed, a worker died, or the check failed;
2 bad options or a missing module.
"""
import argparse
import json
import math
import multiprocessing as mp
import os
import queue
import sys
import time

PROG = "train_digits"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODES = ("switch", "ps", "local", "model")


def fail(message, status=1):
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)
    sys.exit(status)


# --- the model and the data (imported lazily: workers are spawned) -------------------------

def make_model(seed):
    import torch
    from torch import nn
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 16 x 4 x 4
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # 32 x 2 x 2
        nn.Flatten(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))


def load_data(seed):
    """The digits, scaled to [0, 1], split 80/20 by a fixed permutation."""
    import numpy as np
    import torch
    from sklearn.datasets import load_digits
    digits = load_digits()
    x = torch.tensor(digits.images / 16.0, dtype=torch.float32).unsqueeze(1)
    y = torch.tensor(digits.target, dtype=torch.int64)
    order = np.random.RandomState(seed).permutation(len(y))
    cut = int(0.8 * len(y))
    train, test = order[:cut], order[cut:]
    return x[train], y[train], x[test], y[test]


def batches(n, batch, seed, epoch):
    """The epoch's global batches (index arrays), the same in every mode; the tail is dropped."""
    import numpy as np
    order = np.random.RandomState([seed, epoch]).permutation(n)
    return [order[i:i + batch] for i in range(0, n - batch + 1, batch)]


def evaluate(model, xtr, ytr, xte, yte):
    import torch
    from torch.nn import functional as F
    with torch.no_grad():
        loss = F.cross_entropy(model(xtr), ytr).item()
        acc = (model(xte).argmax(1) == yte).float().mean().item()
    return loss, acc


def set_grads(params, flat):
    """Each parameter's gradient from its slice of a flat buffer, in order."""
    off = 0
    for p in params:
        p.grad.copy_(flat[off:off + p.numel()].view_as(p))
        off += p.numel()


def buckets(model, bucket_bytes):
    """Parameters in reverse order (as backward produces their gradients), cut into buckets."""
    out, cur, size = [], [], 0
    for p in reversed(list(model.parameters())):
        cur.append(p)
        size += p.numel() * 4
        if size >= bucket_bytes:
            out.append(cur)
            cur, size = [], 0
    if cur:
        out.append(cur)
    return out


# --- one worker process ------------------------------------------------------------------

def worker_main(args, spec, rank, reports):
    """Trains on its shard of every global batch; rank 0 reports the metrics per epoch."""
    try:
        import torch
        from torch.nn import functional as F
        torch.set_num_threads(1)
        sys.path.insert(0, args.module_dir)
        import swemu
        w = swemu.Worker(spec, rank)
        model = make_model(args.seed)
        opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
        xtr, ytr, xte, yte = load_data(args.seed)
        groups = buckets(model, args.bucket_bytes)
        flat = [torch.zeros(sum(p.numel() for p in g)) for g in groups]
        # A start barrier: the processes spawn and import torch at their own pace on a busy
        # machine, which must not count against the first step's --timeout.
        w.all_reduce(torch.zeros(1).numpy(), timeout=max(120.0, args.timeout))
        step = 0
        for epoch in range(args.epochs):
            start, iters = time.monotonic(), 0
            for idx in batches(len(ytr), args.batch, args.seed, epoch):
                if args.kill is not None and args.kill[0] == rank and step == args.kill[1]:
                    reports.close()  # what it put is out (its feeder holds no lock)
                    reports.join_thread()
                    os._exit(3)  # a crashed worker: no goodbye to anyone
                shard = idx[rank::args.workers]
                opt.zero_grad()
                F.cross_entropy(model(xtr[shard]), ytr[shard]).backward()
                handles = []
                for g, buf in zip(groups, flat):  # bucket by bucket, like DDP
                    torch.cat([p.grad.reshape(-1) for p in g], out=buf)
                    handles.append(w.all_reduce_async(buf.numpy()))
                for h, g, buf in zip(handles, groups, flat):
                    h.wait(timeout=args.timeout)
                    buf /= args.workers
                    set_grads(g, buf)
                opt.step()
                step += 1
                iters += 1
            seconds = time.monotonic() - start
            if rank == 0:
                loss, acc = evaluate(model, xtr, ytr, xte, yte)
                reports.put(("epoch", rank, epoch + 1, loss, acc, seconds / max(iters, 1)))
        stats = w.stats()
        reports.put(("done", rank, {k: stats[k] for k in ("packets_sent", "retransmissions",
                                                            "timeouts") if k in stats}))
        w.close()
    except BaseException as e:
        reports.put(("error", rank, f"{type(e).__name__}: {e}"))
        raise SystemExit(1)


def atp_sum(grads, workers):
    """ATP's arithmetic without a network (hostlib/atp/quantize.h): every worker's gradient
    rounded to int32 at scale 2^20 (ties to even), summed exactly, returned as float32 of the
    sum over the scale; then divided by W as the workers do."""
    import numpy as np
    scale = float(1 << 20)
    total = np.zeros(grads[0].shape, dtype=np.int64)
    for g in grads:
        v = g.astype(np.float64) * scale
        if not np.all(np.abs(v) < 2**31 - 1):
            raise ValueError("a gradient element beyond ATP's int32 range (the float path)")
        total += np.rint(v).astype(np.int64)
    out = (total.astype(np.float64) / scale).astype(np.float32)
    out /= np.float32(workers)
    return out


def train_inprocess(args, mode):
    """local: each global batch's gradient in one pass, in float. model: the workers' shard
    gradients combined with ATP's arithmetic (atp_sum), what the network must reproduce."""
    import torch
    from torch.nn import functional as F
    torch.set_num_threads(1)
    model = make_model(args.seed)
    params = list(model.parameters())
    opt = torch.optim.SGD(params, lr=args.lr, momentum=0.9)
    xtr, ytr, xte, yte = load_data(args.seed)
    rows = []
    for epoch in range(args.epochs):
        start, iters = time.monotonic(), 0
        for idx in batches(len(ytr), args.batch, args.seed, epoch):
            opt.zero_grad()
            if mode == "local":
                F.cross_entropy(model(xtr[idx]), ytr[idx]).backward()
            else:
                shards = []
                for rank in range(args.workers):
                    opt.zero_grad()
                    shard = idx[rank::args.workers]
                    F.cross_entropy(model(xtr[shard]), ytr[shard]).backward()
                    shards.append(torch.cat([p.grad.reshape(-1) for p in params]).numpy().copy())
                set_grads(params, torch.from_numpy(atp_sum(shards, args.workers)))
            opt.step()
            iters += 1
        seconds = (time.monotonic() - start) / max(iters, 1)
        loss, acc = evaluate(model, xtr, ytr, xte, yte)
        rows.append({"mode": mode, "epoch": epoch + 1, "loss": loss, "accuracy": acc,
                     "seconds_per_iteration": seconds, "switch_share": None})
        print(f"{mode:6s} epoch {epoch + 1:2d}: loss {loss:.4f}, test accuracy {acc * 100:5.1f}%, "
              f"{seconds * 1e3:7.2f} ms/iteration", flush=True)
    return rows


def switch_share(fabric):
    s = fabric.stats()
    by_switch = s.get("elements_by_switch", 0)
    total = by_switch + s.get("elements_at_ps", 0)
    return by_switch / total if total else 0.0


def train_networked(args, mode, swemu):
    """One fabric, W worker processes; the rows, or exits 1 naming what failed."""
    ctx = mp.get_context("spawn")
    out_dir = os.path.join(args.out_dir, f"fabric-{mode}")
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    with swemu.AtpFabric(workers=args.workers, out_dir=out_dir, transport="dpdk",
                         aggregate=(mode == "switch")) as fabric:
        if args.port_loss > 0:
            fabric.switch_command(f"set_port_loss all {args.port_loss}")
        reports = ctx.Queue()
        procs = [ctx.Process(target=worker_main, args=(args, fabric.worker_spec(r), r, reports),
                             daemon=True) for r in range(args.workers)]
        for p in procs:
            p.start()
        done, errors, worker_stats = set(), {}, {}
        # Every epoch must report within this bound, or the run is declared stuck.
        patience = args.timeout * 3 + 60
        last = time.monotonic()
        while len(done | errors.keys()) < args.workers:
            try:
                msg = reports.get(timeout=0.5)
            except queue.Empty:
                # A process that ended without a report (its messages are all in: the queue
                # was empty after it ended).
                dead = [r for r, p in enumerate(procs)
                        if p.exitcode is not None and r not in done and r not in errors]
                for r in dead:
                    errors[r] = f"worker {r}'s process ended (exit code {procs[r].exitcode})"
                if time.monotonic() - last > patience:
                    for r, p in enumerate(procs):
                        if r not in done and r not in errors:
                            errors[r] = f"worker {r} reported nothing for {patience:.0f} s"
                continue
            last = time.monotonic()
            if msg[0] == "epoch":
                _, _, epoch, loss, acc, sec = msg
                share = switch_share(fabric)
                rows.append({"mode": mode, "epoch": epoch, "loss": loss, "accuracy": acc,
                             "seconds_per_iteration": sec, "switch_share": share})
                print(f"{mode:6s} epoch {epoch:2d}: loss {loss:.4f}, test accuracy "
                      f"{acc * 100:5.1f}%, {sec * 1e3:7.2f} ms/iteration, "
                      f"{share * 100:5.1f}% of gradient elements summed in the switch",
                      flush=True)
            elif msg[0] == "done":
                done.add(msg[1])
                errors.pop(msg[1], None)
                worker_stats[msg[1]] = msg[2]
            else:
                errors[msg[1]] = msg[2]  # its own words replace "ended without a report"
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.kill()
                p.join(5)
        if errors:
            for r in sorted(errors):
                print(f"{mode}: worker {r}: {errors[r]}", file=sys.stderr, flush=True)
            in_use_before = aggregators_in_use(fabric)
            try:
                fabric.reset()
            except swemu.Error as e:
                fail(f"{mode}: {len(errors)} of {args.workers} workers failed (above), and "
                     f"resetting the job failed too: {e}")
            in_use_after = aggregators_in_use(fabric)
            fail(f"{mode}: {len(errors)} of {args.workers} workers failed (above); the job was "
                 f"reset: switch aggregators in use {in_use_before} before, {in_use_after} after")
        retx = sum(s.get("retransmissions", 0) for s in worker_stats.values())
        packets = sum(s.get("packets_sent", 0) for s in worker_stats.values())
        print(f"{mode}: {packets} gradient packets sent, {retx} retransmissions", flush=True)
    return rows


def aggregators_in_use(fabric):
    try:
        return json.loads(fabric.switch_command("atp_stats")).get("aggregators_in_use", "?")
    except Exception as e:  # the count is a report, not a condition of the run
        return f"unknown ({e})"


def same_curves(rows):
    """[(modes, their rows)]: the modes in MODES order, those whose loss and accuracy are equal
    in every epoch, bit for bit, in one group."""
    groups = {}
    for mode in MODES:
        mine = [r for r in rows if r["mode"] == mode]
        if mine:
            curve = tuple((r["epoch"], r["loss"], r["accuracy"]) for r in mine)
            groups.setdefault(curve, ([], mine))[0].append(mode)
    return list(groups.values())


def plot(rows, path, workers):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 3.8))
    labels = {"switch": f"in the switch ({workers} workers)",
              "ps": f"at the PS ({workers} workers)", "local": "one process, no network",
              "model": "ATP's arithmetic, no network"}
    styles = {"switch": "-", "ps": "--", "local": ":", "model": "-."}
    for modes, mine in same_curves(rows):
        # One line for identical curves: drawn apart, each would hide the others.
        label = "\n= ".join(labels[m] for m in modes)
        if len(modes) > 1:
            label += "\n(identical curves, bit for bit)"
        epochs = [r["epoch"] for r in mine]
        ax_loss.plot(epochs, [r["loss"] for r in mine], styles[modes[0]], label=label)
        ax_acc.plot(epochs, [r["accuracy"] * 100 for r in mine], styles[modes[0]], label=label)
    ax_loss.set_xlabel("epoch")
    ax_loss.set_ylabel("training loss")
    ax_loss.set_yscale("log")
    ax_acc.set_xlabel("epoch")
    ax_acc.set_ylabel("test accuracy (%)")
    for ax in (ax_loss, ax_acc):
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("swemu: digits CNN, gradients all-reduced through the emulated switch")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def check(rows, args, labels=None):
    """The claims: the networked runs equal ATP's arithmetic bit for bit (the network adds
    nothing but the quantisation, and loses nothing); their loss curves stay within
    --loss-tolerance of the local float run's; final accuracies within 1 point of it.
    labels: names to print for modes (train_ddp.py: Gloo's run is the float reference)."""
    by = {m: {r["epoch"]: r for r in rows if r["mode"] == m} for m in MODES}
    local_name = (labels or {}).get("local", "local")
    problems = []
    for mode in ("switch", "ps"):
        mine = by[mode]
        if not mine:
            continue
        if by["model"]:
            same = all(mine[e]["loss"] == by["model"][e]["loss"] and
                       mine[e]["accuracy"] == by["model"][e]["accuracy"] for e in mine)
            print(f"check {mode}: {'equal' if same else 'NOT equal'} to ATP's arithmetic without "
                  f"a network (model) in every epoch, bit for bit", flush=True)
            if not same:
                problems.append(f"{mode}'s curve differs from ATP's arithmetic (model)")
        if by["local"]:
            local = by["local"]
            worst = max(abs(mine[e]["loss"] - local[e]["loss"]) for e in mine if e in local)
            last = max(mine)
            gap = abs(mine[last]["accuracy"] - local[last]["accuracy"]) * 100
            print(f"check {mode}: largest loss difference to {local_name} {worst:.2e} (tolerance "
                  f"{args.loss_tolerance}), final accuracy {mine[last]['accuracy'] * 100:.1f}% "
                  f"vs {local[last]['accuracy'] * 100:.1f}% ({gap:.1f} points)", flush=True)
            if worst > args.loss_tolerance:
                problems.append(f"{mode}'s loss is {worst:.3g} off the {local_name} run's")
            if gap > 1.0:
                problems.append(f"{mode}'s final accuracy is {gap:.1f} points off the "
                                f"{local_name} run's")
        share = mine[max(mine)]["switch_share"]  # None: not known here (the PS's to tell)
        if mode == "switch" and share is not None and share <= 0:
            problems.append("no gradient element was summed in the switch")
    for mode in args.modes:
        final = [r for r in rows if r["mode"] == mode]
        if final and final[-1]["accuracy"] < args.accuracy_floor:
            problems.append(f"{mode}'s final accuracy {final[-1]['accuracy'] * 100:.1f}% is below "
                            f"the floor {args.accuracy_floor * 100:.0f}%")
    return problems


def parse_args():
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=4, help="worker processes (1..16)")
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--batch", type=int, default=64, help="global batch (a multiple of --workers)")
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bucket-bytes", type=int, default=16384,
                    help="gradient bytes per all_reduce call (DDP's buckets)")
    ap.add_argument("--modes", default="switch,ps,local,model",
                    help="any of switch, ps, local, model")
    ap.add_argument("--port-loss", type=float, default=0.0,
                    help="loss probability on every switch port (set_port_loss)")
    ap.add_argument("--kill", default=None, help="RANK:STEP: that worker's process ends there")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per all_reduce wait")
    ap.add_argument("--out-dir", default="out/train")
    ap.add_argument("--plot", default=None, help="the PNG (default OUT_DIR/train.png)")
    ap.add_argument("--build", default=os.path.join(REPO, "build"), help="the build directory")
    ap.add_argument("--check", action="store_true", help="fail unless the claim holds")
    ap.add_argument("--loss-tolerance", type=float, default=0.1,
                    help="largest per-epoch training-loss difference to the local run")
    ap.add_argument("--accuracy-floor", type=float, default=0.0,
                    help="fail when a mode ends below this test accuracy (0..1)")
    ap.add_argument("--quick", action="store_true",
                    help="CI: one epoch, --check, an accuracy floor of 0.4 (chance: 0.1)")
    try:
        args = ap.parse_args()
    except SystemExit as e:
        sys.exit(0 if e.code == 0 else 2)
    if args.quick:
        args.epochs, args.check = 1, True
        args.accuracy_floor = max(args.accuracy_floor, 0.4)
    if not 1 <= args.workers <= 16:
        fail("--workers must be 1..16", 2)
    if args.epochs < 1 or args.epochs > 1000:
        fail("--epochs must be 1..1000", 2)
    if args.batch < args.workers or args.batch % args.workers:
        fail("--batch must be a multiple of --workers", 2)
    if not (args.lr > 0 and math.isfinite(args.lr)):
        fail("--lr must be a positive number", 2)
    if args.bucket_bytes < 4:
        fail("--bucket-bytes must be at least 4", 2)
    if not (0 <= args.port_loss < 1):
        fail("--port-loss must be in [0, 1)", 2)
    if not (args.timeout > 0 and math.isfinite(args.timeout)):
        fail("--timeout must be a positive number of seconds", 2)
    if not (0 <= args.accuracy_floor <= 1):
        fail("--accuracy-floor must be in [0, 1]", 2)
    args.modes = [m for m in args.modes.split(",") if m]
    if not args.modes or any(m not in MODES for m in args.modes):
        fail(f"--modes: a comma-separated list of {', '.join(MODES)}", 2)
    if args.kill is not None:
        try:
            rank, step = (int(v) for v in args.kill.split(":"))
        except ValueError:
            fail("--kill must be RANK:STEP", 2)
        if not (0 <= rank < args.workers and step >= 0):
            fail("--kill: RANK in 0..workers-1, STEP >= 0", 2)
        args.kill = (rank, step)
    args.module_dir = os.path.join(os.path.abspath(args.build), "hostlib", "python")
    if os.path.exists(args.out_dir) and not os.path.isdir(args.out_dir):
        fail(f"--out-dir {args.out_dir}: not a directory", 2)
    args.plot = args.plot or os.path.join(args.out_dir, "train.png")
    if os.path.isdir(args.plot):
        fail(f"--plot {args.plot}: is a directory", 2)
    return args


def main():
    args = parse_args()
    try:
        import torch  # noqa: F401
        import sklearn  # noqa: F401
    except ImportError as e:
        fail(f"{e} (Debian: apt-get install python3-torch python3-sklearn)", 2)
    swemu = None
    if any(m in ("switch", "ps") for m in args.modes):
        sys.path.insert(0, args.module_dir)
        try:
            import swemu
        except ImportError as e:
            fail(f"cannot import the swemu module from {args.module_dir}: {e} (build it: "
                 f"cmake --build {args.build} --target swemu_python)", 2)
    try:
        os.makedirs(args.out_dir, exist_ok=True)
        os.makedirs(os.path.dirname(os.path.abspath(args.plot)), exist_ok=True)
    except OSError as e:
        fail(f"--out-dir/--plot: {e}", 2)
    params = sum(p.numel() for p in make_model(args.seed).parameters())
    print(f"{PROG}: digits CNN ({params} parameters), {args.workers} workers, global batch "
          f"{args.batch}, {args.epochs} epochs, lr {args.lr}, seed {args.seed}, modes "
          f"{','.join(args.modes)}"
          + (f", switch port loss {args.port_loss}" if args.port_loss else ""), flush=True)
    rows = []
    for mode in args.modes:
        if mode in ("local", "model"):
            rows += train_inprocess(args, mode)
        else:
            try:
                rows += train_networked(args, mode, swemu)
            except swemu.Error as e:
                fail(f"{mode}: {e}")
    with open(os.path.join(args.out_dir, "train.json"), "w") as f:
        json.dump({"workers": args.workers, "epochs": args.epochs, "batch": args.batch,
                   "lr": args.lr, "seed": args.seed, "port_loss": args.port_loss,
                   "rows": rows}, f, indent=1)
    with open(os.path.join(args.out_dir, "train.csv"), "w") as f:
        f.write("mode,epoch,loss,accuracy,seconds_per_iteration,switch_share\n")
        for r in rows:
            share = "" if r["switch_share"] is None else f"{r['switch_share']:.6f}"
            f.write(f"{r['mode']},{r['epoch']},{r['loss']:.6f},{r['accuracy']:.6f},"
                    f"{r['seconds_per_iteration']:.6f},{share}\n")
    plot(rows, args.plot, args.workers)
    print(f"curves: {args.plot}; figures: {os.path.join(args.out_dir, 'train.csv')}", flush=True)
    if args.check:
        problems = check(rows, args)
        if problems:
            fail("; ".join(problems))


if __name__ == "__main__":
    main()
