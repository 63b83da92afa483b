#!/usr/bin/python3
"""Times one large all_reduce per worker through the `swemu` module (hostlib/python).

  /usr/bin/python3 bench/python/allreduce.py [--build build] [--transport dpdk|udp]
      [--workers 4] [--mib 100] [--calls 3] [--ps]

Starts an AtpFabric (dpdk: swemu with the atp program and the PS on virtio_user; udp: the PS on
loopback), then W worker processes that each all-reduce a float32 array of --mib MiB --calls
times, and prints the seconds of every call (the slowest worker's) and the MB/s of each
worker's array at the best call. --ps: the forward_only job (the PS sums). The figures in
hostlib/python/README.md ("Performance") are this script's. Exit 0, 1 on a failed call, 2 on
bad options.
"""
import argparse
import multiprocessing as mp
import os
import sys
import time


def worker(module_dir, spec, rank, n, calls, results):
    try:
        sys.path.insert(0, module_dir)
        import numpy as np
        import swemu
        w = swemu.Worker(spec, rank)
        x = np.ones(n, dtype=np.float32)
        times = []
        for _ in range(calls):
            start = time.monotonic()
            w.all_reduce(x, timeout=600)
            times.append(time.monotonic() - start)
            x.fill(1.0)
        retx = w.stats().get("retransmissions", 0)
        w.close()
        results.put((rank, times, retx, None))
    except BaseException as e:
        results.put((rank, None, 0, f"{type(e).__name__}: {e}"))


def main():
    ap = argparse.ArgumentParser(prog="allreduce", description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))), "build"))
    ap.add_argument("--transport", choices=("dpdk", "udp"), default="dpdk")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--mib", type=float, default=100)
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--ps", action="store_true")
    try:
        a = ap.parse_args()
    except SystemExit as e:
        sys.exit(0 if e.code == 0 else 2)
    if not (1 <= a.workers <= 16 and 0 < a.mib <= 1024 and 1 <= a.calls <= 100):
        print("allreduce: --workers 1..16, --mib in (0, 1024], --calls 1..100", file=sys.stderr)
        sys.exit(2)
    module_dir = os.path.join(os.path.abspath(a.build), "hostlib", "python")
    sys.path.insert(0, module_dir)
    try:
        import swemu
    except ImportError as e:
        print(f"allreduce: cannot import swemu from {module_dir}: {e}", file=sys.stderr)
        sys.exit(2)
    n = int(a.mib * 2**20) // 4
    ctx = mp.get_context("spawn")
    with swemu.AtpFabric(workers=a.workers, transport=a.transport,
                         aggregate=not a.ps) as fabric:
        results = ctx.Queue()
        procs = [ctx.Process(target=worker, args=(module_dir, fabric.worker_spec(r), r, n,
                                                  a.calls, results)) for r in range(a.workers)]
        for p in procs:
            p.start()
        got = [results.get(timeout=600 * a.calls + 60) for _ in procs]
        for p in procs:
            p.join(30)
    errors = [e for _, _, _, e in got if e]
    if errors:
        print("allreduce: " + "; ".join(errors), file=sys.stderr)
        sys.exit(1)
    per_call = [max(t[i] for _, t, _, _ in got) for i in range(a.calls)]
    retx = sum(r for _, _, r, _ in got)
    job = "at the PS" if a.ps or a.transport == "udp" else "in-network"
    print(f"{a.transport}, {job}, {a.workers} workers, {a.mib:g} MiB each: seconds per call "
          + ", ".join(f"{s:.2f}" for s in per_call)
          + f"; best {a.mib * 2**20 / 1e6 / min(per_call):.0f} MB/s per worker; "
          f"{retx} retransmissions")


if __name__ == "__main__":
    main()
