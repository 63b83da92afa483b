#!/usr/bin/python3
"""Receive rate of a running DPDK process's ports, read through its telemetry socket.

usage: ethstats_rx.py SOCKET PORTS WARMUP INTERVALS
As ethstats.py (same waiting and sampling, its functions), but prints the per-second rates of
the ports' summed ipackets (Mpps), one per line: compare.sh's aggregation lines count what a
pipeline receives and processes, since it consumes most of it. Each interval's share of frames
transmitted (opackets / ipackets) goes to stderr, to check the mix in the logs.
"""
import json
import sys
import time

import ethstats


def counters(s, ports):
    rx = tx = 0
    for p in ports:
        s.send(f"/ethdev/stats,{p}".encode())
        stats = json.loads(s.recv(65536).decode()).get("/ethdev/stats")
        if isinstance(stats, dict):  # else the port is not set up yet
            rx += stats["ipackets"]
            tx += stats["opackets"]
    return rx, tx


def main():
    path, ports = sys.argv[1], [int(p) for p in sys.argv[2].split(",")]
    warmup, intervals = float(sys.argv[3]), int(sys.argv[4])
    s = ethstats.connect(path, time.time() + 30)
    ethstats.wait_for_traffic(s, ports, time.time() + 30)
    time.sleep(warmup)
    (rx0, tx0), t0 = counters(s, ports), time.monotonic()
    for _ in range(intervals):
        time.sleep(1.0)
        (rx, tx), t = counters(s, ports), time.monotonic()
        print(f"{(rx - rx0) / (t - t0) / 1e6:.3f}", flush=True)
        if rx > rx0:
            print(f"ethstats_rx: tx/rx {(tx - tx0) / (rx - rx0):.3f}", file=sys.stderr)
        (rx0, tx0), t0 = (rx, tx), t


if __name__ == "__main__":
    main()
