"""swemu's Python module over transport="dpdk": swemu (program atp) as a child process, the PS
in this process and each worker in a process of its own, all on virtio_user ports (DPDK,
--no-huge). Run as root with the module's directory on PYTHONPATH:
  PYTHONPATH=build/hostlib/python /usr/bin/python3 tests/python/test_dpdk.py
"""
import glob
import json
import os
import sys
import time
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swemu  # noqa: E402
import swemu_testlib as lib  # noqa: E402

WORKERS = 4


def sizes_worker(spec, rank, sizes, seed, big):
    """Every size class, exact against NumPy, the same sums on every worker; with big, the
    100 MiB case (rank 0 checks it against the exact sum, the others by digest)."""
    w = swemu.Worker(spec, rank)
    out = {"sizes": [], "digests": []}
    for n in sizes:
        arrays = [lib.inputs(n, r, seed) for r in range(w.workers)]
        mine = arrays[rank].copy()
        assert w.all_reduce(mine, timeout=60) is mine
        out["sizes"].append((n,) + lib.check_sum(mine, arrays, w.error_bound))
        out["digests"].append(lib.digest(mine))
    expected = mine.astype(np.float64) * w.workers
    h = w.all_reduce_async(mine)  # async over DPDK too: the sum of the sums
    h.wait(timeout=60)
    out["async"] = bool(np.all(np.abs(mine - expected) <= 4 * w.error_bound * w.workers +
                               np.spacing(np.abs(mine))))
    if big:
        mine = lib.big_input(lib.BIG, rank)
        start = time.monotonic()
        w.all_reduce(mine, timeout=120)
        out["big_seconds"] = time.monotonic() - start
        out["big_digest"] = lib.digest(mine)
        if rank == 0:
            arrays = [lib.big_input(lib.BIG, r) for r in range(w.workers)]
            out["big"] = lib.check_sum(mine, arrays, w.error_bound)
    out["stats"] = w.stats()
    w.close()
    return out


def overflow_worker(spec, rank):
    """Every worker sends 1500.0: each fits int32 at 2^20, but four of them overflow int32 in
    the switch. The call still gets the exact sum (redone at the PS) and its handle says how
    many packets went that way."""
    w = swemu.Worker(spec, rank)
    mine = np.full(10_000, 1500.0, dtype=np.float32)
    h = w.all_reduce_async(mine)
    h.wait(timeout=60)
    out = {"exact": bool(np.all(mine == 1500.0 * w.workers)), "past_int32": h.past_int32,
           "switch_overflows": h.switch_overflows,
           "overflow_results": w.stats()["overflow_results"]}
    w.close()
    return out


def loss_worker(spec, rank, seed):
    """One call while the switch loses 1% of frames (the launcher set it): still exact."""
    w = swemu.Worker(spec, rank)
    arrays = [lib.inputs(200_000, r, seed) for r in range(w.workers)]
    mine = arrays[rank].copy()
    w.all_reduce(mine, timeout=60)
    out = {"sum": lib.check_sum(mine, arrays, w.error_bound), "stats": w.stats()}
    w.close()
    return out


class DpdkTest(unittest.TestCase):
    def check_sizes(self, reported, exitcodes, workers):
        for rank in range(workers):
            self.assertIn(rank, reported, "rank %d did not report (exit %s)"
                          % (rank, exitcodes[rank]))
            ok, value = reported[rank]
            self.assertTrue(ok, value)
            for n, err, within in value["sizes"]:
                self.assertTrue(within, "rank %d, %d elements: error %g" % (rank, n, err))
            self.assertTrue(value["async"])
            self.assertEqual(value["digests"], reported[0][1]["digests"])
            stats = value["stats"]
            self.assertEqual(stats["calls_submitted"], stats["calls_completed"])
            self.assertEqual(stats["port_tx_no_buffer"], 0)

    def test_in_network_aggregation(self):
        with swemu.AtpFabric(workers=WORKERS, transport="dpdk") as fabric:
            self.assertGreater(fabric.swemu_pid, 0)
            spec = fabric.worker_spec()
            # This process's DPDK is the PS's: it cannot also be a worker.
            with self.assertRaisesRegex(swemu.Error, "DPDK is in use in this process"):
                swemu.Worker(spec, 0)
            start = time.monotonic()
            reported, exitcodes = lib.run_workers(spec, range(WORKERS), sizes_worker,
                                                  (lib.SIZES, 1, True), timeout=180)
            print("\n4 dpdk workers, every size and 100 MiB: %.1f s" % (time.monotonic() - start))
            self.check_sizes(reported, exitcodes, WORKERS)
            err, within = reported[0][1]["big"]
            self.assertTrue(within, "100 MiB: error %g" % err)
            for rank in range(WORKERS):
                self.assertEqual(reported[rank][1]["big_digest"], reported[0][1]["big_digest"])
            seconds = max(reported[r][1]["big_seconds"] for r in range(WORKERS))
            print("100 MiB all_reduce: %.2f s, %.0f MB/s per worker"
                  % (seconds, lib.BIG * 4 / seconds / 1e6))
            # Where the sums were made: the switch (packets reaching the PS with every worker).
            ps = fabric.stats()
            self.assertGreater(ps["elements_by_switch"], ps["elements_at_ps"])
            self.assertGreater(ps["completed_by_switch"], 0)
            atp = json.loads(fabric.switch_command("atp_stats"))
            self.assertGreater(atp["completed"], 0)
            self.assertIn("aggregators in use", fabric.switch_command("show atp"))
            with self.assertRaisesRegex(swemu.Error, "no_such_command"):
                fabric.switch_command("no_such_command")
            # A new group of workers needs a reset: their seqs start again.
            reported, _ = lib.run_workers(spec, [0], loss_worker, (3,), timeout=60)
            self.assertIn("rank 0 has already joined", reported[0][1])
            fabric.reset()
            # A sum that overflows int32 in the switch: exact all the same, and each handle
            # counts the packets that were redone at the PS.
            reported, exitcodes = lib.run_workers(spec, range(WORKERS), overflow_worker, (),
                                                  timeout=120)
            for rank in range(WORKERS):
                ok, value = reported.get(rank, (False, "exit %s" % exitcodes[rank]))
                self.assertTrue(ok, value)
                self.assertTrue(value["exact"], value)
                self.assertEqual(value["past_int32"], 0)
                self.assertGreater(value["switch_overflows"], 0, value)
                self.assertEqual(value["switch_overflows"], value["overflow_results"])
            self.assertGreater(json.loads(fabric.switch_command("atp_stats"))["overflow"], 0)
            fabric.reset()
            # Losses on every switch port: retransmissions, same sums.
            fabric.switch_command("set_port_loss all 0.01")
            reported, exitcodes = lib.run_workers(spec, range(WORKERS), loss_worker, (3,),
                                                  timeout=120)
            fabric.switch_command("set_port_loss all 0")
            retransmissions = 0
            for rank in range(WORKERS):
                ok, value = reported.get(rank, (False, "exit %s" % exitcodes[rank]))
                self.assertTrue(ok, value)
                self.assertTrue(value["sum"][1], "with loss: error %g" % value["sum"][0])
                retransmissions += value["stats"]["retransmissions"]
            self.assertGreater(retransmissions, 0)
            # A worker dies mid-run: the others raise swemu.Error in bounded time.
            fabric.reset()
            timeout = 2.0
            reported, exitcodes = lib.run_workers(spec, range(WORKERS), lib.death_worker,
                                                  (3, WORKERS, timeout), timeout=60)
            lib.check_death(self, reported, exitcodes, 3, timeout)
            prefix = fabric.worker_spec().split("prefix=")[1].split(";")[0]
        # The killed worker's DPDK runtime directory went with the fabric.
        self.assertEqual(glob.glob("/var/run/dpdk/%s-*" % prefix), [])

    def test_aggregation_at_the_ps(self):
        with swemu.AtpFabric(workers=2, transport="dpdk", aggregate=False) as fabric:
            self.assertEqual(fabric.job_id, 2)
            reported, exitcodes = lib.run_workers(fabric.worker_spec(), range(2), sizes_worker,
                                                  ([1000, 100_003], 2, False), timeout=120)
            self.check_sizes(reported, exitcodes, 2)
            ps = fabric.stats()
            self.assertEqual(ps["job"], 2)
            self.assertEqual(ps["elements_by_switch"], 0)
            self.assertEqual(ps["completed_by_switch"], 0)
            self.assertGreater(ps["elements_at_ps"], 0)
            atp = json.loads(fabric.switch_command("atp_stats"))
            self.assertEqual(atp["completed"], 0)
            self.assertGreater(atp["forwarded_plain"], 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
