"""Helpers of the swemu module's tests (tests/python/): worker processes and the checks.

Workers are separate processes started with multiprocessing's 'spawn' method (a DPDK worker
initialises EAL, which a process can do once). run_workers never hangs: a process that has not
reported by the deadline is killed and reported as such.
"""
import hashlib
import multiprocessing as mp
import os
import queue
import signal
import time
import traceback

import numpy as np

CTX = mp.get_context("spawn")

# The sizes every transport is checked with: empty, one element, around a packet of 64, not a
# multiple of a packet, several chunks' worth is in the 100 MiB case.
SIZES = [0, 1, 63, 64, 65, 1000, 4099, 100_003]
BIG = 100 * 2**20 // 4 + 1  # 100 MiB of float32 and one element (not a multiple of a packet)


def _entry(results, target, spec, rank, args):
    try:
        value = target(spec, rank, *args)
        results.put((rank, True, value))
    except BaseException as e:  # reported to the test, which fails with it
        results.put((rank, False, "%s: %s\n%s" % (type(e).__name__, e, traceback.format_exc())))


def run_workers(spec, ranks, target, args=(), timeout=120.0):
    """Runs target(spec, rank, *args) in one spawned process per rank.

    Returns {rank: (ok, value)} for the ranks that reported (value: the target's return value,
    or the exception's text), and {rank: exitcode}. Processes still running at the deadline are
    killed (exit code -9 and no report).
    """
    results = CTX.Queue()
    procs = {r: CTX.Process(target=_entry, args=(results, target, spec, r, args), daemon=True)
             for r in ranks}
    for p in procs.values():
        p.start()
    reported = {}
    deadline = time.monotonic() + timeout
    while len(reported) < len(procs) and time.monotonic() < deadline:
        try:
            rank, ok, value = results.get(timeout=0.2)
            reported[rank] = (ok, value)
            continue
        except queue.Empty:
            pass
        # Everyone either reported or is gone (a report is flushed before its process exits).
        if all(r in reported or not p.is_alive() for r, p in procs.items()):
            try:
                while True:
                    rank, ok, value = results.get(timeout=0.5)
                    reported[rank] = (ok, value)
            except queue.Empty:
                break
    # Those that reported are exiting (closing their ports, EAL's cleanup): give them time.
    grace = time.monotonic() + 15
    for r, p in procs.items():
        if r in reported:
            p.join(max(0.0, grace - time.monotonic()))
    for p in procs.values():
        if p.is_alive():
            p.kill()
        p.join(10)
    return reported, {r: p.exitcode for r, p in procs.items()}


def inputs(n, rank, seed):
    """Worker rank's gradient: normal, deterministic, with a few larger values."""
    rng = np.random.default_rng([seed, rank, n])
    return (rng.standard_normal(n, dtype=np.float32) * np.float32(3.0)).astype(np.float32)


def big_input(n, rank):
    """A cheap deterministic large array (values not on the 2**-20 grid)."""
    i = np.arange(n, dtype=np.int64)
    x = ((i * 7919 + rank * 104729) % 4001 - 2000).astype(np.float32)
    x /= np.float32(997.0)
    return x


def check_sum(result, arrays, error_bound):
    """Max |result - exact sum| and whether every element is within the documented bound:
    error_bound (workers * 0.5 / scale) plus half an ulp of the float32 result."""
    if result.size == 0:
        return 0.0, True
    exact = np.zeros(result.shape, dtype=np.float64)
    for a in arrays:
        exact += a
    err = np.abs(result.astype(np.float64) - exact)
    bound = error_bound + 0.5 * np.spacing(np.abs(result)).astype(np.float64) + 1e-12
    return float(err.max()), bool((err <= bound).all())


def digest(array):
    return hashlib.sha1(np.ascontiguousarray(array).tobytes()).hexdigest()


def die():
    """This worker process dies at once, without cleaning up (as if killed)."""
    os.kill(os.getpid(), signal.SIGKILL)


def death_worker(spec, rank, victim, workers, timeout):
    """Every rank all-reduces once; then `victim` dies, and the others' next call must raise
    swemu.Error within about `timeout` seconds; a call queued behind it says so."""
    import swemu
    w = swemu.Worker(spec, rank)
    a = inputs(1000, rank, 7)
    w.all_reduce(a, timeout=60)
    if rank == victim:
        die()
    b = inputs(5000, rank, 8)
    start = time.monotonic()
    try:
        w.all_reduce(b, timeout=timeout)
        return {"raised": False}
    except swemu.Error as e:
        first = (time.monotonic() - start, str(e))
    start = time.monotonic()
    try:
        w.all_reduce(np.ones(10, dtype=np.float32), timeout=0.5)
        second = (time.monotonic() - start, "completed")
    except swemu.Error as e:
        second = (time.monotonic() - start, str(e))
    stats = w.stats()
    w.close()
    return {"raised": True, "first": first, "second": second, "stats": stats}


def check_death(test, reported, exitcodes, victim, timeout):
    """The victim died (SIGKILL) and every other rank raised swemu.Error in bounded time."""
    test.assertEqual(exitcodes[victim], -signal.SIGKILL, "the victim should have been killed")
    test.assertNotIn(victim, reported)
    for rank, (ok, value) in reported.items():
        test.assertTrue(ok, "rank %d failed: %s" % (rank, value))
        test.assertTrue(value["raised"], "rank %d: all_reduce completed without a worker" % rank)
        seconds, message = value["first"]
        test.assertLess(seconds, timeout + 5, message)
        test.assertGreaterEqual(seconds, timeout - 0.05, message)
        test.assertIn("did not complete within", message)
        test.assertIn("another worker has likely died", message)
        test.assertIn("0 of 5000 elements summed", message)
        seconds, message = value["second"]
        test.assertLess(seconds, 5, message)
        test.assertIn("had not started", message)
