#!/usr/bin/python3
"""A stock PyTorch DistributedDataParallel script whose gradients go through swemu.

W worker processes (torch.multiprocessing, one per rank) train a model with DDP on the CPU,
rendezvous through a FileStore. The same script runs twice from the same seed on the same
batches (--modes): once with Gloo's all-reduce (DDP as it comes), once through swemu, which
takes three added lines, each marked `# swemu` below:

  import swemu_torch                                              # the worker and launcher
  swemu_torch.start_fabric(world_size, transport="dpdk")          # the launcher, once
  model.register_comm_hook(swemu_torch.HookState(), swemu_torch.allreduce_hook)   # each rank

(--via backend replaces the third with init_process_group("swemu"): the swemu torch.distributed
backend, hostlib/python/swemu_torch.py.) The fabric is the module's AtpFabric: swemu's `atp`
program on vhost-user ports with the workers on virtio_user (--transport dpdk: sums in the
switch), or a PS on loopback UDP without a switch (--transport udp: sums at the PS).

Models (--model): resnet, a small ResNet (three stages of one basic block, 16-32-64 channels,
batch norm; about 78k parameters) on synthetic CIFAR-shaped data (3x32x32, 10 classes: a smooth
random pattern per class plus noise; no download); digits, train_digits.py's CNN on
scikit-learn's digits.

Per epoch it prints each mode's training loss (over the whole training set), test accuracy and
time per iteration, and writes DIR/ddp.csv and DIR/ddp.json. --check applies train_digits.py's
rules (its check()): swemu's loss curve within --loss-tolerance of Gloo's in every epoch, the
final accuracies within 1 point, (dpdk) gradient elements summed in the switch.

  /usr/bin/python3 tools/train/train_ddp.py [--model resnet] [--workers 2] [--epochs 3] ...

Ranks as separate hosts (their own machines or network namespaces, through a switch that
`swemu-atp publish` configured, the PS as `swemu-atp ps --job FILE`): run one process per
rank with --rank (or torchrun's RANK), --init (the rendezvous: tcp://RANK0_IP:PORT, or env://
under torchrun) and --job FILE (or SWEMU_JOB=FILE in the environment): then the script does not
start a fabric (line 2 is skipped), and swemu_torch's worker joins the published job over
kernel UDP (with --port DEVARGS, or SWEMU_PORT=DEVARGS, on that DPDK port instead, as
`swemu-atp worker --port`). Each mode rendezvous on the next port (tcp://...:PORT+k, MASTER_PORT+k). Rank 0
prints the rows and runs --check; the share summed in the switch is then the PS's to tell
(its exit line).

Every rank hashes its parameters after training; rank 0 prints whether they are identical on
every rank, and --check requires it.

Exit status: 0 trained (and --check held); 1 a run failed or the check failed; 2 bad options
or a missing module.
"""
import argparse
import gc
import json
import math
import os
import sys
import tempfile
import time

PROG = "train_ddp"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import train_digits  # noqa: E402  (the digits model and data, and the --check rules)

MODELS = ("resnet", "digits")


def fail(message, status=1):
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)
    sys.exit(status)


# --- the models and the data ---------------------------------------------------------------

def make_resnet(seed, width=16):
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.short = nn.Sequential()
            if stride != 1 or cin != cout:
                self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                           nn.BatchNorm2d(cout))

        def forward(self, x):
            out = torch.relu(self.bn1(self.conv1(x)))
            return torch.relu(self.bn2(self.conv2(out)) + self.short(x))

    torch.manual_seed(seed)
    w = width
    return nn.Sequential(nn.Conv2d(3, w, 3, 1, 1, bias=False), nn.BatchNorm2d(w), nn.ReLU(),
                         Block(w, w, 1), Block(w, 2 * w, 2), Block(2 * w, 4 * w, 2),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4 * w, 10))


def cifar_like(seed, train_size, test_size=256):
    """CIFAR-shaped images: each class a smooth random 3x32x32 pattern, each image its class's
    pattern plus noise; the same for every process from the seed."""
    import torch
    from torch.nn import functional as F
    g = torch.Generator().manual_seed(seed)
    patterns = F.interpolate(torch.randn(10, 3, 8, 8, generator=g), size=32, mode="bilinear",
                             align_corners=False)
    n = train_size + test_size
    y = torch.randint(0, 10, (n,), generator=g)
    x = patterns[y] + torch.randn(n, 3, 32, 32, generator=g)
    return x[:train_size], y[:train_size], x[train_size:], y[train_size:]


def model_and_data(args):
    if args.model == "digits":
        return train_digits.make_model(args.seed), train_digits.load_data(args.seed)
    return make_resnet(args.seed, args.width), cifar_like(args.seed, args.train_size)


def evaluate(model, data):
    model.eval()
    try:
        return train_digits.evaluate(model, *data)
    finally:
        model.train()


# --- one rank: a stock DDP training loop ---------------------------------------------------

def params_identical(model, dist):
    """Whether every rank ends with the same parameters, bit for bit (rank 0's answer)."""
    import hashlib
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().numpy().tobytes())
    digests = [None] * dist.get_world_size()
    dist.all_gather_object(digests, h.hexdigest())
    return len(set(digests)) == 1


def train(rank, args, mode, init, out_json):
    import torch
    import torch.distributed as dist
    from torch.nn import functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    torch.set_num_threads(1)
    swemu = mode == "swemu"
    if swemu:
        import swemu_torch  # noqa: F401  # swemu (also registers the "swemu" backend)
    backend = "swemu" if swemu and args.via == "backend" else "gloo"
    dist.init_process_group(backend, init_method=init, rank=rank, world_size=args.workers)
    net, data = model_and_data(args)
    xtr, ytr = data[0], data[1]
    model = DDP(net, bucket_cap_mb=args.bucket_mb)
    hook = None
    if swemu and args.via == "hook":
        hook = swemu_torch.HookState()
        model.register_comm_hook(hook, swemu_torch.allreduce_hook)  # swemu
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    rows = []
    dist.barrier()  # every rank has started: the first epoch's time is training only
    for epoch in range(args.epochs):
        start, iters = time.monotonic(), 0
        for idx in train_digits.batches(len(ytr), args.batch, args.seed, epoch):
            shard = idx[rank::args.workers]
            opt.zero_grad()
            F.cross_entropy(model(xtr[shard]), ytr[shard]).backward()
            opt.step()
            iters += 1
        seconds = (time.monotonic() - start) / max(iters, 1)
        if rank == 0:
            loss, acc = evaluate(net, data)
            rows.append({"epoch": epoch + 1, "loss": loss, "accuracy": acc,
                         "seconds_per_iteration": seconds, "iterations": iters})
            print(f"{mode:5s} epoch {epoch + 1:2d}: loss {loss:.4f}, test accuracy "
                  f"{acc * 100:5.1f}%, {seconds * 1e3:7.2f} ms/iteration", flush=True)
    same = params_identical(net, dist)
    if rank == 0:
        print(f"{mode} parameters: {'identical' if same else 'NOT identical'} on all "
              f"{args.workers} ranks", flush=True)
        for r in rows:
            r["params_identical"] = same
        with open(out_json, "w") as f:
            json.dump(rows, f)
    dist.barrier()
    # The process group must not die in DDP's C++ reducer (model): it would join Gloo's threads
    # holding the GIL while one may still need it to free its last work's tensors (torch 1.13:
    # a deadlock, now and then). The group's own Python object drops it with the GIL released.
    group = dist.group.WORLD
    del model
    gc.collect()
    if hook is not None:
        hook.close()
    dist.destroy_process_group()
    del group


# --- the launcher ---------------------------------------------------------------------------

def run_mode(args, mode):
    """One run of W ranks; the rank-0 rows, with the share summed in the switch (dpdk)."""
    import torch.multiprocessing as mp
    fabric = None
    if mode == "swemu":
        import swemu_torch  # swemu
        fabric = swemu_torch.start_fabric(args.workers, transport=args.transport,  # swemu
                                          out_dir=os.path.join(args.out_dir, "fabric"))
    # Absolute: file://out/x would name host "out" and the file /x, which FileStore waits for.
    store = tempfile.mktemp(prefix=f"{PROG}-store-", dir=os.path.abspath(args.out_dir))
    out_json = os.path.join(args.out_dir, f"rows-{mode}.json")
    try:
        mp.spawn(train, args=(args, mode, f"file://{store}", out_json), nprocs=args.workers)
        share = None
        if fabric is not None:
            share = train_digits.switch_share(fabric) if args.transport == "dpdk" else 0.0
    finally:
        if fabric is not None:
            fabric.stop()
        if os.path.exists(store):
            os.unlink(store)
    with open(out_json) as f:
        rows = json.load(f)
    label = check_label(args, mode)
    for r in rows:
        r.update(mode=label, switch_share=share)
    return rows


def mode_init(init, k):
    """The rendezvous of the k-th mode: the next port (a new TCPStore) or file."""
    if init.startswith("tcp://"):
        host, port = init[len("tcp://"):].rsplit(":", 1)
        return f"tcp://{host}:{int(port) + k}"
    if init.startswith("env://"):
        os.environ["MASTER_PORT"] = str(int(os.environ.get("MASTER_PORT", "29500")) + k)
        if k > 0:
            # Under torchrun every rank is a client of the store its agent hosts at MASTER_PORT
            # (TORCHELASTIC_USE_AGENT_STORE); nobody hosts the next port's: rank 0 must.
            os.environ["TORCHELASTIC_USE_AGENT_STORE"] = "False"
        return init
    return f"{init}-{k}"


def run_rank(args, mode, k):
    """This process as one rank of a job whose ranks run apart (--rank); rank 0's rows."""
    out_json = os.path.join(args.out_dir, f"rows-{mode}.json")
    if args.rank == 0 and os.path.exists(out_json):
        os.unlink(out_json)
    train(args.rank, args, mode, mode_init(args.init, k), out_json)
    if args.rank != 0:
        return []
    with open(out_json) as f:
        rows = json.load(f)
    for r in rows:
        r.update(mode=check_label(args, mode), switch_share=None)
    return rows


def check_label(args, mode):
    """train_digits.check's mode names: Gloo is the float reference ("local"), swemu sums in
    the switch ("switch", dpdk) or at the PS ("ps", udp)."""
    if mode == "gloo":
        return "local"
    return "ps" if args.transport == "udp" else "switch"


def parse_args():
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="resnet", help="resnet or digits")
    ap.add_argument("--workers", type=int, default=2, help="ranks (1..16)")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=64, help="global batch (a multiple of --workers)")
    ap.add_argument("--train-size", type=int, default=512, help="resnet: training images")
    ap.add_argument("--width", type=int, default=16,
                    help="resnet: the first stage's channels (then 2x, 4x); 32: 4x the weights")
    ap.add_argument("--lr", type=float, default=None,
                    help="learning rate (default: resnet 0.05, digits 0.1 as train_digits)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bucket-mb", type=float, default=0.1, help="DDP's bucket_cap_mb")
    ap.add_argument("--modes", default="swemu,gloo", help="swemu, gloo or both")
    ap.add_argument("--via", default="hook", help="hook (a DDP comm hook, Gloo for the rest) "
                    "or backend (init_process_group('swemu'))")
    ap.add_argument("--transport", default="dpdk", help="dpdk (the switch) or udp (no switch)")
    ap.add_argument("--rank", type=int, default=None,
                    help="run only this rank here, the others elsewhere (default: $RANK if set)")
    ap.add_argument("--init", default=None, help="with --rank: the rendezvous, torch's "
                    "init_method (tcp://RANK0_IP:PORT; default env:// as under torchrun)")
    ap.add_argument("--job", default=None, help="with --rank: the job file swemu-atp publish "
                    "wrote (default: $SWEMU_JOB); the PS: swemu-atp ps --job FILE")
    ap.add_argument("--port", default=None, help="with --job: this rank's DPDK port, devargs "
                    "(a PCI address, net_af_packet0,iface=eth0, ...) instead of kernel UDP "
                    "(default: $SWEMU_PORT)")
    ap.add_argument("--out-dir", default="out/train_ddp")
    ap.add_argument("--build", default=os.path.join(REPO, "build"), help="the build directory")
    ap.add_argument("--check", action="store_true", help="fail unless train_digits' rules hold")
    ap.add_argument("--loss-tolerance", type=float, default=0.1,
                    help="largest per-epoch training-loss difference to the Gloo run")
    ap.add_argument("--accuracy-floor", type=float, default=0.0,
                    help="fail when a mode ends below this test accuracy (0..1)")
    try:
        args = ap.parse_args()
    except SystemExit as e:
        sys.exit(0 if e.code == 0 else 2)
    if args.model not in MODELS:
        fail("--model must be resnet or digits", 2)
    if not 1 <= args.workers <= 16:
        fail("--workers must be 1..16", 2)
    if not 1 <= args.epochs <= 1000:
        fail("--epochs must be 1..1000", 2)
    if args.batch < args.workers or args.batch % args.workers:
        fail("--batch must be a multiple of --workers", 2)
    if not args.batch <= args.train_size <= 100000:
        fail("--train-size must be --batch..100000", 2)
    if args.lr is None:
        args.lr = 0.05 if args.model == "resnet" else 0.1
    if not 4 <= args.width <= 256:
        fail("--width must be 4..256", 2)
    if not (args.lr > 0 and math.isfinite(args.lr)):
        fail("--lr must be a positive number", 2)
    if not (args.bucket_mb > 0 and math.isfinite(args.bucket_mb)):
        fail("--bucket-mb must be a positive number", 2)
    args.modes = [m for m in args.modes.split(",") if m]
    if not args.modes or any(m not in ("swemu", "gloo") for m in args.modes) or \
            len(set(args.modes)) != len(args.modes):
        fail("--modes: swemu, gloo, or both (comma-separated)", 2)
    if args.via not in ("hook", "backend"):
        fail("--via must be hook or backend", 2)
    if args.transport not in ("dpdk", "udp"):
        fail("--transport must be dpdk or udp", 2)
    if args.rank is None and os.environ.get("RANK"):
        args.rank = int(os.environ["RANK"])
        args.workers = int(os.environ.get("WORLD_SIZE", args.workers))
    if args.rank is not None:
        if not 0 <= args.rank < args.workers:
            fail(f"--rank must be 0..{args.workers - 1}", 2)
        args.init = args.init or "env://"
        args.job = args.job or os.environ.get("SWEMU_JOB")
        if "swemu" in args.modes and not args.job:
            fail("--rank: swemu needs the published job: --job FILE or SWEMU_JOB=FILE", 2)
        if args.job and not os.path.isfile(args.job):
            fail(f"--job {args.job}: no such file", 2)
        if args.job:
            os.environ["SWEMU_JOB"] = os.path.abspath(args.job)
        args.port = args.port or os.environ.get("SWEMU_PORT")
        if args.port and not args.job:
            fail("--port goes with --job (this rank's port to the published switch)", 2)
        if args.port:
            os.environ["SWEMU_PORT"] = args.port
        args.transport = "net"
    elif args.init or args.job or args.port:
        fail("--init, --job and --port go with --rank (one rank of ranks that run apart)", 2)
    if not (0 <= args.accuracy_floor <= 1):
        fail("--accuracy-floor must be in [0, 1]", 2)
    if os.path.exists(args.out_dir) and not os.path.isdir(args.out_dir):
        fail(f"--out-dir {args.out_dir}: not a directory", 2)
    args.module_dir = os.path.join(os.path.abspath(args.build), "hostlib", "python")
    return args


def import_modules(args):
    """torch, and the swemu modules from the build (the spawned ranks inherit PYTHONPATH)."""
    try:
        import torch  # noqa: F401
        if args.model == "digits":
            import sklearn  # noqa: F401
    except ImportError as e:
        fail(f"{e} (Debian: apt-get install python3-torch python3-sklearn)", 2)
    if "swemu" in args.modes:
        sys.path.insert(0, args.module_dir)
        os.environ["PYTHONPATH"] = os.pathsep.join(
            [args.module_dir] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                 if p])
        try:
            import swemu_torch  # noqa: F401
        except ImportError as e:
            fail(f"cannot import swemu_torch from {args.module_dir}: {e} (build it: "
                 f"cmake --build {args.build} --target swemu_python)", 2)


def write(rows, args):
    with open(os.path.join(args.out_dir, "ddp.json"), "w") as f:
        json.dump({"model": args.model, "workers": args.workers, "epochs": args.epochs,
                   "batch": args.batch, "lr": args.lr, "seed": args.seed, "via": args.via,
                   "transport": args.transport, "rows": rows}, f, indent=1)
    with open(os.path.join(args.out_dir, "ddp.csv"), "w") as f:
        f.write("mode,epoch,loss,accuracy,seconds_per_iteration\n")
        for r in rows:
            name = "gloo" if r["mode"] == "local" else "swemu"
            f.write(f"{name},{r['epoch']},{r['loss']:.6f},{r['accuracy']:.6f},"
                    f"{r['seconds_per_iteration']:.6f}\n")


def summary(rows):
    """Per mode: the mean time per iteration over the epochs after the first, the final loss."""
    for label, name in (("switch", "swemu"), ("ps", "swemu"), ("local", "gloo")):
        mine = [r for r in rows if r["mode"] == label]
        if not mine:
            continue
        timed = mine[1:] or mine
        ms = 1e3 * sum(r["seconds_per_iteration"] for r in timed) / len(timed)
        print(f"summary {name}: {ms:.1f} ms/iteration (epochs {timed[0]['epoch']}.."
              f"{timed[-1]['epoch']}), final loss {mine[-1]['loss']:.4f}, test accuracy "
              f"{mine[-1]['accuracy'] * 100:.1f}%"
              + (f", {mine[-1]['switch_share'] * 100:.1f}% of gradient elements summed in the "
                 f"switch" if label == "switch" and mine[-1]["switch_share"] is not None
                 else ""), flush=True)


def main():
    args = parse_args()
    import_modules(args)
    try:
        os.makedirs(args.out_dir, exist_ok=True)
    except OSError as e:
        fail(f"--out-dir: {e}", 2)
    net, _ = model_and_data(args)
    params = sum(p.numel() for p in net.parameters())
    print(f"{PROG}: {args.model} ({params} parameters), {args.workers} workers, global batch "
          f"{args.batch}, {args.epochs} epochs, lr {args.lr}, seed {args.seed}, modes "
          f"{','.join(args.modes)}, swemu via {args.via} over {args.transport}"
          + (f" on DPDK port {args.port}" if args.port else ""), flush=True)
    rows = []
    for k, mode in enumerate(args.modes):
        try:
            rows += run_mode(args, mode) if args.rank is None else run_rank(args, mode, k)
        except Exception as e:  # a rank's exception (mp.spawn), a fabric that did not start
            fail(f"{mode}: {type(e).__name__}: {e}")
    if args.rank:  # not rank 0: rank 0 reports and checks
        return
    if args.model == "digits" and "swemu" in args.modes:
        # ATP's arithmetic without a network (train_digits' "model"): what swemu must equal.
        rows += train_digits.train_inprocess(args, "model")
    write(rows, args)
    summary(rows)
    if args.check:
        args.modes = sorted({r["mode"] for r in rows})  # check()'s accuracy floor, by its names
        problems = train_digits.check(rows, args, labels={"local": "gloo"})
        problems += [f"{m}: the ranks' parameters differ" for m in sorted(
            {r["mode"] for r in rows if r.get("params_identical") is False})]
        if problems:
            fail("; ".join(problems))


if __name__ == "__main__":
    main()
