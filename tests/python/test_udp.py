"""swemu's Python module over transport="udp" (no switch; the PS on loopback UDP), and its
argument checks. Workers are spawned processes; run with the module's directory on PYTHONPATH:
  PYTHONPATH=build/hostlib/python /usr/bin/python3 tests/python/test_udp.py
"""
import os
import sys
import time
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swemu  # noqa: E402
import swemu_testlib as lib  # noqa: E402

WORKERS = 4


def sizes_worker(spec, rank, sizes, seed):
    """Every size class, exact against NumPy; async calls; a torch tensor's storage; the
    float path for values too large for int32."""
    w = swemu.Worker(spec, rank)
    out = {"sizes": [], "digests": []}
    for n in sizes:
        arrays = [lib.inputs(n, r, seed) for r in range(w.workers)]
        mine = arrays[rank].copy()
        returned = w.all_reduce(mine, timeout=60)
        assert returned is mine, "all_reduce returns the array it summed in place"
        out["sizes"].append((n,) + lib.check_sum(mine, arrays, w.error_bound))
        out["digests"].append(lib.digest(mine))
    # Shapes: any C-contiguous shape is its flat array.
    grid = [lib.inputs(3 * 70, r, seed + 1).reshape(3, 70) for r in range(w.workers)]
    mine = grid[rank].copy()
    w.all_reduce(mine, timeout=60)
    out["grid"] = lib.check_sum(mine, grid, w.error_bound)
    # Async: three calls in flight at once; they complete in order.
    arrays = {n: [lib.inputs(n, r, seed + 2) for r in range(w.workers)] for n in (5000, 70, 300)}
    mine = {n: a[rank].copy() for n, a in arrays.items()}
    handles = [(n, w.all_reduce_async(mine[n])) for n in arrays]
    busy = float(np.sum(np.sqrt(np.arange(10000, dtype=np.float64))))  # work meanwhile
    assert busy > 0
    last_n, last = handles[-1]
    assert last.wait(timeout=60) is mine[last_n]
    out["async_done"] = [h.done() for _, h in handles]
    out["async"] = [lib.check_sum(h.wait(timeout=60), arrays[n], w.error_bound)
                    for n, h in handles]
    out["async_seconds"] = [h.seconds for _, h in handles]
    # A torch tensor through .numpy() (shared memory: the tensor gets the sum, no copy).
    # Without torch (python3-torch), a NumPy array stands in for its storage.
    try:
        import torch
        ts = [torch.from_numpy(lib.inputs(777, r, seed + 3)) for r in range(w.workers)]
        t = ts[rank].clone()
        view = t.numpy()
        w.all_reduce(view, timeout=60)
        out["torch"] = lib.check_sum(t.numpy(), [x.numpy() for x in ts], w.error_bound)
        out["torch_shares"] = bool(np.shares_memory(view, t.numpy()))
    except ImportError:
        arrays = [lib.inputs(777, r, seed + 3) for r in range(w.workers)]
        mine = arrays[rank].copy()
        w.all_reduce(mine, timeout=60)
        out["torch"] = lib.check_sum(mine, arrays, w.error_bound)
        out["torch_shares"] = True
    # Too large for int32 at scale 2**20 (|x| >= 2048): that packet goes as float32.
    big = [lib.inputs(200, r, seed + 4) for r in range(w.workers)]
    big[0][5] = 3000.5
    mine = big[rank].copy()
    handle = w.all_reduce_async(mine)
    handle.wait(timeout=60)
    out["float_path"] = lib.check_sum(mine, big, w.error_bound)
    out["past_int32"] = handle.past_int32
    # NaN and inf reach the sum as they are, and the caller is told (a RuntimeWarning, and
    # Handle.nonfinite).
    import warnings
    odd = np.ones(10, dtype=np.float32)
    if rank == 1:
        odd[2], odd[7] = np.nan, np.inf
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        handle = w.all_reduce_async(odd)
        handle.wait(timeout=60)
    out["nonfinite"] = handle.nonfinite
    out["nonfinite_warned"] = any("NaN or inf" in str(c.message) for c in caught)
    out["nonfinite_sum"] = [bool(np.isnan(odd[2])), bool(np.isinf(odd[7])), float(odd[0])]
    out["stats"] = w.stats()
    w.close()
    return out


class UdpTest(unittest.TestCase):
    def test_all_reduce_across_processes(self):
        with swemu.AtpFabric(workers=WORKERS, transport="udp") as fabric:
            spec = fabric.worker_spec()
            reported, exitcodes = lib.run_workers(spec, range(WORKERS), sizes_worker,
                                                  (lib.SIZES, 1), timeout=120)
            for rank in range(WORKERS):
                self.assertIn(rank, reported, "rank %d did not report (exit %s)"
                              % (rank, exitcodes[rank]))
                ok, value = reported[rank]
                self.assertTrue(ok, value)
                for n, err, within in value["sizes"]:
                    self.assertTrue(within, "rank %d, %d elements: error %g" % (rank, n, err))
                for name in ("grid", "torch", "float_path"):
                    self.assertTrue(value[name][1], "%s: error %g" % (name, value[name][0]))
                self.assertTrue(all(within for _, within in value["async"]))
                self.assertEqual(value["async_done"], [True, True, True])
                self.assertTrue(all(s is not None and s >= 0 for s in value["async_seconds"]))
                self.assertTrue(value["torch_shares"])
                self.assertEqual(value["past_int32"], 1 if rank == 0 else 0)
                self.assertEqual(value["nonfinite"], 2 if rank == 1 else 0)
                self.assertEqual(value["nonfinite_warned"], rank == 1)
                self.assertEqual(value["nonfinite_sum"], [True, True, float(WORKERS)])
                stats = value["stats"]
                self.assertEqual(stats["rank"], rank)
                self.assertEqual(stats["calls_submitted"], stats["calls_completed"])
                self.assertGreater(stats["packets_sent"], 0)
                self.assertIn("retransmissions", stats)
                self.assertIn("timeouts", stats)
            # Every worker got the same sums, bit for bit.
            for rank in range(1, WORKERS):
                self.assertEqual(reported[rank][1]["digests"], reported[0][1]["digests"])
            self.assertGreater(reported[0][1]["stats"]["float_packets"], 0)
            ps = fabric.stats()
            self.assertGreater(ps["completed"], 0)
            self.assertEqual(ps["elements_by_switch"], 0)  # no switch: all at the PS
            self.assertGreater(ps["elements_at_ps"], 0)
            self.assertGreater(ps["float_packets"], 0)

    def test_worker_death_raises_in_bounded_time(self):
        with swemu.AtpFabric(workers=3, transport="udp") as fabric:
            timeout = 2.0
            reported, exitcodes = lib.run_workers(fabric.worker_spec(), range(3),
                                                  lib.death_worker, (2, 3, timeout), timeout=60)
            lib.check_death(self, reported, exitcodes, 2, timeout)
            # A new group of workers after reset(): seqs start again, sums are right.
            fabric.reset()
            reported, _ = lib.run_workers(fabric.worker_spec(), range(3), sizes_worker,
                                          ([1000], 5), timeout=60)
            for rank in range(3):
                ok, value = reported.get(rank, (False, "no report"))
                self.assertTrue(ok, value)
                self.assertTrue(value["sizes"][0][2])


class ArgumentTest(unittest.TestCase):
    """Bad arguments raise TypeError/ValueError with a clear message; failures swemu.Error."""

    @classmethod
    def setUpClass(cls):
        cls.fabric = swemu.AtpFabric(workers=2, transport="udp").start()
        cls.spec = cls.fabric.worker_spec()
        cls.worker = swemu.Worker(cls.spec, 0)  # its partner, rank 1, never comes

    @classmethod
    def tearDownClass(cls):
        cls.worker.close()
        cls.fabric.stop()

    def test_error_is_a_runtime_error(self):
        self.assertTrue(issubclass(swemu.Error, RuntimeError))

    def test_bad_arrays(self):
        w = self.worker
        with self.assertRaisesRegex(TypeError, "float32"):
            w.all_reduce(np.zeros(4, dtype=np.float64))
        with self.assertRaisesRegex(TypeError, "float32"):
            w.all_reduce(np.zeros(4, dtype=">f4"))
        with self.assertRaisesRegex(TypeError, "numpy.ndarray"):
            w.all_reduce([1.0, 2.0])
        with self.assertRaisesRegex(ValueError, "C-contiguous"):
            w.all_reduce(np.zeros((4, 4), dtype=np.float32)[:, 0])
        with self.assertRaisesRegex(ValueError, "C-contiguous"):
            w.all_reduce(np.zeros((4, 4), dtype=np.float32, order="F"))
        ro = np.zeros(4, dtype=np.float32)
        ro.setflags(write=False)
        with self.assertRaisesRegex(ValueError, "read-only"):
            w.all_reduce(ro)
        with self.assertRaisesRegex(TypeError, "numpy.ndarray"):
            w.all_reduce_async("x")
        with self.assertRaisesRegex(ValueError, "timeout"):
            w.all_reduce(np.zeros(4, dtype=np.float32), timeout=-1)
        with self.assertRaisesRegex(ValueError, "timeout"):
            w.all_reduce(np.zeros(4, dtype=np.float32), timeout=float("nan"))
        with self.assertRaisesRegex(TypeError, "timeout"):
            w.all_reduce(np.zeros(4, dtype=np.float32), timeout="1")

    def test_bad_workers(self):
        with self.assertRaisesRegex(ValueError, "rank must be 0..1"):
            swemu.Worker(self.spec, 2)
        with self.assertRaisesRegex(ValueError, "rank must be 0..1"):
            swemu.Worker(self.spec, -1)
        with self.assertRaisesRegex(TypeError, "rank must be an int"):
            swemu.Worker(self.spec, "0")
        with self.assertRaisesRegex(TypeError, "spec must be the str"):
            swemu.Worker(42, 0)
        with self.assertRaisesRegex(ValueError, "bad worker spec"):
            swemu.Worker("not a spec", 0)
        with self.assertRaisesRegex(ValueError, "bad worker spec.*no job="):
            swemu.Worker("swemu-atp-worker;transport=udp;workers=2", 0)
        with self.assertRaisesRegex(ValueError, "transport must be dpdk, udp or net"):
            swemu.Worker("swemu-atp-worker;transport=tcp;workers=2;job=/x", 0)
        with self.assertRaisesRegex(ValueError, "the spec is for rank 1"):
            swemu.Worker(self.fabric.worker_spec(1), 0)
        with self.assertRaisesRegex(ValueError, "rank is needed"):
            swemu.Worker(self.spec)
        with self.assertRaisesRegex(ValueError, "lanes"):
            swemu.Worker(self.spec, 1, lanes=0)
        with self.assertRaisesRegex(swemu.Error, "job file"):
            swemu.Worker("swemu-atp-worker;transport=udp;workers=2;job=/nonexistent/job1.atp", 0)
        with self.assertRaisesRegex(swemu.Error, "rank 0 has already joined.*reset()"):
            swemu.Worker(self.spec, 0)  # self.worker is rank 0

    def test_published_job_refusals(self):
        # A published job (swemu-atp publish's file, transport=net): the rank's address must be
        # this machine's; the rank must be in the job; the file must be there.
        job = os.path.join(self.fabric.out_dir, "published.job")
        with open(job, "w") as f:
            f.write("[job]\nid = 1\ngroup = 239.1.1.1\nelements = 64\nport = 9000\n"
                    "ps = ps learn 10.255.7.254 tor:2\nworker = w0 learn 10.255.7.1 tor:0\n"
                    "worker = w1 learn 10.255.7.2 tor:1\n")
        with self.assertRaisesRegex(swemu.Error,
                                    "10.255.7.1, which is not an address of this machine"):
            swemu.Worker.from_job(job, 0)
        with self.assertRaisesRegex(swemu.Error, "the job has 2 workers"):
            swemu.Worker.from_job(job, 2)
        with self.assertRaisesRegex(swemu.Error, "job file"):
            swemu.Worker.from_job(job + ".missing", 0)
        with self.assertRaisesRegex(swemu.Error, "not an address of this machine"):
            swemu.Worker("swemu-atp-worker;transport=net;job=" + job, 1)
        with self.assertRaisesRegex(TypeError, "path must be a str"):
            swemu.Worker.from_job(3, 0)
        # On a DPDK port (swemu-atp worker --port's rules): whole frames need the job's MACs,
        # refused before EAL; the port is devargs, and goes with a published job only.
        with self.assertRaisesRegex(swemu.Error, "worker 0: --port: the job file gives w0's MAC "
                                    "as learn; a host on a DPDK port sends whole frames"):
            swemu.Worker.from_job(job, 0, port="net_null0")
        with self.assertRaisesRegex(TypeError, "port must be a str"):
            swemu.Worker.from_job(job, 0, port=0)
        with self.assertRaisesRegex(ValueError, "port must be DPDK devargs"):
            swemu.Worker.from_job(job, 0, port="")
        with self.assertRaisesRegex(ValueError, "port= goes with transport=net"):
            swemu.Worker(self.spec + ";port=net_null0", 0)

    def test_published_job_one_rank_per_machine(self):
        # Over kernel UDP a published job's rank binds the job's port on every address (for the
        # group's datagrams), so a second rank on the same machine is refused, saying why (as
        # under torchrun --nproc_per_node 2). Loopback: both ranks' addresses are this machine's.
        job = os.path.join(self.fabric.out_dir, "loopback.job")
        with open(job, "w") as f:
            f.write("[job]\nid = 1\ngroup = 239.1.1.1\nelements = 64\nport = 19517\n"
                    "ps = ps learn 127.0.9.254 tor:2\nworker = w0 learn 127.0.9.1 tor:0\n"
                    "worker = w1 learn 127.0.9.2 tor:1\n")
        with swemu.Worker.from_job(job, 0):
            with self.assertRaisesRegex(swemu.Error, "worker 1: 127.0.9.2:19517 is taken .*a rank "
                                        "or the PS of this job already runs on this machine"):
                swemu.Worker.from_job(job, 1)

    def test_bad_fabrics(self):
        for kwargs, error, pattern in [
                (dict(workers=0), ValueError, "workers must be 1..32"),
                (dict(workers=33), ValueError, "workers must be 1..32"),
                (dict(workers=True), TypeError, "workers must be an int"),
                (dict(transport="tcp"), ValueError, "transport must be 'dpdk' or 'udp'"),
                (dict(elements=0), ValueError, "elements"),
                (dict(elements=367), ValueError, "elements must be 1..364"),
                (dict(out_dir="/tmp/a;b"), ValueError, "';'"),
                (dict(out_dir=3), TypeError, "out_dir"),
                (dict(start_timeout=-1), ValueError, "timeout")]:
            with self.assertRaisesRegex(error, pattern, msg=str(kwargs)):
                swemu.AtpFabric(**kwargs)
        f = swemu.AtpFabric(workers=2, transport="udp")
        with self.assertRaisesRegex(swemu.Error, "not started"):
            f.worker_spec()
        with self.assertRaisesRegex(ValueError, "rank must be 0..1"):
            self.fabric.worker_spec(2)
        with self.assertRaisesRegex(swemu.Error, "no switch"):
            self.fabric.switch_command("atp_stats")
        f = swemu.AtpFabric(workers=2, transport="dpdk", swemu_binary="/nonexistent/swemu")
        with self.assertRaisesRegex(swemu.Error, "cannot run the swemu binary"):
            f.start()
        self.assertFalse(f.started)
        f.stop()  # idempotent, also after a failed start

    def test_empty_call_needs_no_partner(self):
        a = np.zeros(0, dtype=np.float32)
        self.assertIs(self.worker.all_reduce(a, timeout=0), a)

    def test_timeout_names_what_was_left(self):
        start = time.monotonic()
        with self.assertRaises(swemu.Error) as raised:
            self.worker.all_reduce(np.ones(3, dtype=np.float32), timeout=0.5)
        elapsed = time.monotonic() - start
        self.assertLess(elapsed, 3)
        message = str(raised.exception)
        self.assertIn("all_reduce of 3 elements", message)
        self.assertIn("within 0.5 s", message)
        self.assertIn("another worker has likely died", message)

    def test_a_huge_timeout_is_no_limit(self):
        # 1e10 s and inf wait like None (1e10 s would overflow a nanosecond count): one worker,
        # in this process, so the call completes.
        with swemu.AtpFabric(workers=1, transport="udp") as f:
            w = swemu.Worker(f.worker_spec(0), 0)
            for timeout in (1e10, float("inf"), None):
                a = np.full(100, 2.0, dtype=np.float32)
                start = time.monotonic()
                self.assertIs(w.all_reduce(a, timeout=timeout), a)
                self.assertLess(time.monotonic() - start, 30)
                self.assertTrue(np.all(a == 2.0))
            w.close()

    def test_exit_on_an_exception_lets_it_through_and_stop_is_thread_safe(self):
        with self.assertRaises(KeyError):
            with swemu.AtpFabric(workers=1, transport="udp"):
                raise KeyError("the caller's")
        import threading
        f = swemu.AtpFabric(workers=2, transport="udp").start()
        threads = [threading.Thread(target=f.stop) for _ in range(4)]
        def stats():
            try:
                f.stats()
            except swemu.Error:  # already stopped: a clean error, not a crash
                pass
        threads.append(threading.Thread(target=stats))
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        self.assertFalse(f.started)

    def test_fabric_properties(self):
        f = self.fabric
        self.assertTrue(f.started)
        self.assertEqual((f.workers, f.transport, f.aggregate, f.job_id), (2, "udp", True, 1))
        self.assertTrue(os.path.exists(os.path.join(f.out_dir, "job1.atp")))
        self.assertEqual(self.worker.elements_per_packet, 64)
        self.assertAlmostEqual(self.worker.error_bound, 2 * 0.5 / 2**20)
        self.assertIn("rank 0 of 2", repr(self.worker))


if __name__ == "__main__":
    unittest.main(verbosity=2)
