#!/usr/bin/python3
"""swemu's side of the engine benchmark (bench/engine/) at --quick: its result line is whole and
consistent (packet-hops, events and bytes positive, every incast flow completed, ECN marks made,
hops per second = hops / wall time), and a second run does the same work to the event; so do
two partitions on threads and on two MPI ranks (mpirun -np 2), against one partition."""
import os
import subprocess
import sys

# Fields that depend on the work only; wall_s and hops_per_s depend on the machine.
WORK = ("events", "packet_hops", "flows_started", "flows_completed", "bytes_delivered",
        "mean_queue_pkts", "ecn_marks", "drops", "virtual_ms", "hosts")


def run(binary, *args, mpirun=()):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = subprocess.run([*mpirun, binary, "--quick", *args], check=True, capture_output=True,
                         text=True, timeout=60, env=env).stdout.strip().splitlines()
    partitioned = bool(args or mpirun)
    # A partitioned run adds its windows' line (one per rank, in the order the ranks wrote them).
    assert len(out) == 1 + (2 if mpirun else 1 if partitioned else 0), f"lines: {out}"
    results = [line for line in out if line.startswith("engine=")]
    assert len(results) == 1, out
    assert all(line.startswith(("engine=", "partitions=", "rank=")) for line in out), out
    fields = dict(item.split("=", 1) for item in results[0].split())
    assert fields["engine"] == "swemu", out[0]
    return fields


def check(f):
    hops, wall = int(f["packet_hops"]), float(f["wall_s"])
    assert hops > 0 and int(f["events"]) > 0 and int(f["bytes_delivered"]) > 0, f
    assert int(f["flows_started"]) > 0 and f["flows_completed"] == f["flows_started"], f
    assert int(f["ecn_marks"]) > 0, f  # the incast crosses K
    assert f["hosts"] == "128", f
    # Every delivered byte crossed at least the two host links as a 1514-byte frame's payload.
    assert hops * 1448 >= 2 * int(f["bytes_delivered"]), f
    # wall_s is printed to the millisecond, hops_per_s from the unrounded time.
    assert wall > 0 and abs(float(f["hops_per_s"]) * wall / hops - 1) < 0.02, f


def main():
    first, second = run(sys.argv[1]), run(sys.argv[1])
    check(first)
    for key in WORK:
        assert first[key] == second[key], f"{key}: {first[key]} then {second[key]}"
    one = run(sys.argv[1], "--partitions", "1")
    check(one)
    mpirun = ("mpirun", "-q", "--oversubscribe", "-np", "2")
    for name, other in (("2 partitions", run(sys.argv[1], "--partitions", "2")),
                        ("mpirun -np 2", run(sys.argv[1], mpirun=mpirun))):
        for key in WORK:
            assert one[key] == other[key], f"{name}: {key}: {other[key]}, not {one[key]}"
    print("ok:", " ".join(f"{k}={first[k]}" for k in WORK))


if __name__ == "__main__":
    main()
