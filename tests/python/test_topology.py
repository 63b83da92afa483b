"""swemu's Python module on a topology file: AtpFabric(topology=T, job=J) runs T's switches as
swemu processes (hostlib/testbed's processes back end) and J's hosts on the ports J names, the
files `swemu-atp sim` and `swemu-atp demo --topology` take. Bad files raise ValueError with one
line. Run as root with the module's directory on PYTHONPATH:
  PYTHONPATH=build/hostlib/python /usr/bin/python3 tests/python/test_topology.py
"""
import json
import os
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swemu  # noqa: E402
import swemu_testlib as lib  # noqa: E402

CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "configs")
TWO_RACK = (os.path.join(CONFIGS, "atp_two_rack.topo"), os.path.join(CONFIGS, "atp_two_rack.job"))
ONE_RACK = (os.path.join(CONFIGS, "atp_fabric.topo"), os.path.join(CONFIGS, "atp_fabric.job"))
SIZES = [1, 64, 1000, 100_003]


def integers(n, rank, seed):
    """Worker rank's gradient: whole numbers in [-200, 200], so that every sum is exact (in
    float32, and in the switch's int32 at the job's scale of 2**20)."""
    rng = np.random.default_rng([seed, rank, n])
    return rng.integers(-200, 201, n).astype(np.float32)


def exact_worker(spec, rank, seed):
    """Every size, checked for the exact sum; returns the sums' digests and the call count."""
    w = swemu.Worker(spec, rank)
    out = {"exact": [], "digests": []}
    for n in SIZES:
        arrays = [integers(n, r, seed) for r in range(w.workers)]
        mine = arrays[rank].copy()
        w.all_reduce(mine, timeout=60)
        expected = np.sum(np.stack(arrays).astype(np.float64), axis=0).astype(np.float32)
        out["exact"].append((n, bool(np.array_equal(mine, expected))))
        out["digests"].append(lib.digest(mine))
    out["stats"] = w.stats()
    w.close()
    return out


def run_exact(test, fabric, seed):
    reported, exitcodes = lib.run_workers(fabric.worker_spec(), range(fabric.workers),
                                          exact_worker, (seed,), timeout=180)
    for rank in range(fabric.workers):
        ok, value = reported.get(rank, (False, "exit %s" % exitcodes[rank]))
        test.assertTrue(ok, value)
        for n, exact in value["exact"]:
            test.assertTrue(exact, "rank %d, %d elements: not the exact sum" % (rank, n))
        test.assertEqual(value["digests"], reported[0][1]["digests"])
        test.assertEqual(value["stats"]["calls_submitted"], value["stats"]["calls_completed"])
    return reported[0][1]["digests"]


def write(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(text)
    return path


class BadFilesTest(unittest.TestCase):
    """Refused when the fabric is made, before anything starts: ValueError, one line."""

    def refused(self, pattern, **kwargs):
        with self.assertRaises(ValueError) as caught:
            swemu.AtpFabric(**kwargs)
        message = str(caught.exception)
        self.assertNotIn("\n", message)
        self.assertRegex(message, pattern)

    def test_missing_files(self):
        self.refused(r"^/nonexistent\.topo: cannot open topology",
                     topology="/nonexistent.topo", job=TWO_RACK[1])
        self.refused(r"^/nonexistent\.job: cannot open job file",
                     topology=TWO_RACK[0], job="/nonexistent.job")

    def test_job_not_matching_topology(self):
        with open(TWO_RACK[1]) as f:
            job = f.read()
        with tempfile.TemporaryDirectory() as d:
            # w3 on rack_b's port to rack_a: a switch port, not a host's.
            path = write(d, "link_port.job", job.replace("rack_b:1", "rack_b:2"))
            self.refused(r"host w3 is on rack_b:2, which is not a host port of .*atp_two_rack",
                         topology=TWO_RACK[0], job=path)
            path = write(d, "no_switch.job", job.replace("rack_b:1", "rack_c:1"))
            self.refused(r"host w3: no switch named 'rack_c' in the topology",
                         topology=TWO_RACK[0], job=path)

    def test_options_that_do_not_go_with_a_topology(self):
        self.refused(r"topology and job go together", topology=TWO_RACK[0])
        self.refused(r"topology and job go together", job=TWO_RACK[1])
        self.refused(r"leave workers, elements, aggregators and link_rate unset",
                     topology=TWO_RACK[0], job=TWO_RACK[1], workers=4)
        self.refused(r"leave workers", topology=TWO_RACK[0], job=TWO_RACK[1], link_rate="1G")
        self.refused(r"a topology needs transport 'dpdk'", topology=TWO_RACK[0], job=TWO_RACK[1],
                     transport="udp")

    def test_the_job_gives_the_shape(self):
        fabric = swemu.AtpFabric(topology=TWO_RACK[0], job=TWO_RACK[1], aggregate=False)
        self.assertEqual((fabric.workers, fabric.elements, fabric.job_id), (4, 64, 2))
        self.assertEqual(fabric.topology, TWO_RACK[0])
        self.assertFalse(fabric.started)


class TopologyTest(unittest.TestCase):
    def test_two_racks(self):
        """configs/atp_two_rack: rack_b aggregates w2 and w3, rack_a all four, the sums exact."""
        with swemu.AtpFabric(topology=TWO_RACK[0], job=TWO_RACK[1]) as fabric:
            spec = fabric.worker_spec()
            self.assertIn(";ports=rack_a:0,rack_a:1,rack_b:0,rack_b:1", spec)
            self.assertTrue(fabric.control_socket.endswith("/rack_a-control.sock"))
            run_exact(self, fabric, 1)
            ps = fabric.stats()
            self.assertEqual(ps["job"], 1)
            self.assertGreater(ps["completed_by_switch"], 0)
            self.assertGreater(ps["elements_by_switch"], 0)
            self.assertGreater(json.loads(fabric.switch_command("atp_stats"))["completed"], 0)
            rack_b = json.loads(fabric.switch_command("atp_stats", switch="rack_b"))
            self.assertGreater(rack_b["aggregated"], 0)
            with self.assertRaisesRegex(swemu.Error, r"no switch named 'rack_c' \(the fabric's: "
                                                     r"rack_a, rack_b\)"):
                fabric.switch_command("atp_stats", switch="rack_c")
            # A new group of workers after a reset: both switches' aggregators freed.
            fabric.reset()
            run_exact(self, fabric, 2)

    def test_two_racks_aggregation_at_the_ps(self):
        with swemu.AtpFabric(topology=TWO_RACK[0], job=TWO_RACK[1], aggregate=False) as fabric:
            self.assertIn("job2.atp", fabric.worker_spec())
            run_exact(self, fabric, 3)
            ps = fabric.stats()
            self.assertEqual(ps["job"], 2)
            self.assertEqual(ps["elements_by_switch"], 0)
            self.assertGreater(ps["elements_at_ps"], 0)

    def test_bundled_file_is_the_default_fabric(self):
        """configs/atp_fabric.topo and .job: the same job files and the same sums as AtpFabric()."""
        results = []
        with tempfile.TemporaryDirectory() as d:
            for name, kwargs in (("default", {}),
                                 ("file", {"topology": ONE_RACK[0], "job": ONE_RACK[1]})):
                out_dir = os.path.join(d, name)
                with swemu.AtpFabric(out_dir=out_dir, **kwargs) as fabric:
                    self.assertEqual((fabric.workers, fabric.elements, fabric.job_id), (4, 64, 1))
                    digests = run_exact(self, fabric, 4)
                    stats = fabric.stats()
                    jobs = []
                    for job in ("job1.atp", "job2.atp"):
                        with open(os.path.join(out_dir, job)) as f:
                            jobs.append(f.read())
                results.append((digests, stats, jobs))
        (digests, stats, jobs), (file_digests, file_stats, file_jobs) = results
        self.assertEqual(file_jobs, jobs)
        self.assertEqual(file_digests, digests)
        self.assertEqual(file_stats["completed"], stats["completed"])
        self.assertGreater(stats["completed_by_switch"], 0)
        self.assertGreater(file_stats["completed_by_switch"], 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
