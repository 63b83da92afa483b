#!/usr/bin/python3
"""Rate of a running DPDK process's ports, read through its telemetry socket.

usage: ethstats.py SOCKET PORTS WARMUP INTERVALS
Waits for SOCKET and for the first transmitted frame (an app may still be building its
pipeline), sleeps WARMUP seconds, then samples the sum of the ports' opackets once a
second for INTERVALS seconds and prints the per-second rates (Mpps), one per line.
Telemetry is read from outside the process, so the forwarding lcore is not disturbed.
"""
import json
import socket
import sys
import time


def connect(path, deadline):
    while True:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(path)
            s.recv(4096)  # the greeting
            return s
        except OSError:
            if time.time() > deadline:
                raise SystemExit(f"ethstats: no telemetry socket at {path}")
            time.sleep(0.2)


def opackets(s, ports):
    total = 0
    for p in ports:
        s.send(f"/ethdev/stats,{p}".encode())
        stats = json.loads(s.recv(65536).decode()).get("/ethdev/stats")
        total += stats["opackets"] if isinstance(stats, dict) else 0  # port not set up yet
    return total


def wait_for_traffic(s, ports, deadline):
    while opackets(s, ports) == 0:
        if time.time() > deadline:
            raise SystemExit("ethstats: no frame transmitted")
        time.sleep(0.2)


def main():
    path, ports = sys.argv[1], [int(p) for p in sys.argv[2].split(",")]
    warmup, intervals = float(sys.argv[3]), int(sys.argv[4])
    s = connect(path, time.time() + 30)
    wait_for_traffic(s, ports, time.time() + 30)
    time.sleep(warmup)
    last, t_last = opackets(s, ports), time.monotonic()
    for _ in range(intervals):
        time.sleep(1.0)
        now, t_now = opackets(s, ports), time.monotonic()
        print(f"{(now - last) / (t_now - t_last) / 1e6:.3f}", flush=True)
        last, t_last = now, t_now


if __name__ == "__main__":
    main()
