"""swemu_torch (hostlib/python/swemu_torch.py): the DDP comm hook and the "swemu"
torch.distributed backend, 2 spawned ranks over transport="udp" (no switch). Run with the
module's directory on PYTHONPATH:
  PYTHONPATH=build/hostlib/python /usr/bin/python3 tests/python/test_torch.py
"""
import os
import sys
import tempfile
import time
import unittest

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import swemu_torch

WORLD = 2


def init(rank, store, backend):
    torch.set_num_threads(1)
    dist.init_process_group(backend, init_method=f"file://{store}", rank=rank, world_size=WORLD)


def backend_rank(rank, store):
    """Collectives through init_process_group("swemu"): float32 sums through swemu (exact for
    whole numbers), async futures, the rest through Gloo, and DDP without a hook."""
    init(rank, store, "swemu")
    assert dist.get_backend() == "swemu", dist.get_backend()
    t = torch.full((1000,), float(rank + 1))
    work = dist.all_reduce(t, async_op=True)
    value = work.get_future().wait()
    assert torch.equal(value[0], torch.full((1000,), 3.0)) and value[0] is not None, value
    work.wait()
    x = torch.arange(10.0).reshape(2, 5).t()  # strided: summed in a copy, copied back
    dist.all_reduce(x)
    assert torch.equal(x, 2 * torch.arange(10.0).reshape(2, 5).t()), x
    a = torch.tensor([float(rank)] * 3)
    dist.all_reduce(a, op=dist.ReduceOp.AVG)
    assert torch.equal(a, torch.full((3,), 0.5)), a
    i = torch.ones(3, dtype=torch.int64)  # not float32: Gloo
    dist.all_reduce(i)
    assert i.tolist() == [2, 2, 2], i
    m = torch.tensor([float(rank) + 0.123456789])  # MAX: Gloo, exact
    dist.all_reduce(m, op=dist.ReduceOp.MAX)
    assert m.item() == torch.tensor([1.123456789]).item(), m
    b = torch.tensor([0.1234567, 1e-9, 3e5]) if rank == 0 else torch.zeros(3)
    dist.broadcast(b, 0)  # exact, through Gloo
    assert torch.equal(b, torch.tensor([0.1234567, 1e-9, 3e5])), b
    ddp_steps(rank, hook=False)


def hook_rank(rank, store):
    """DDP over Gloo with swemu_torch's hook: each bucket's result is the ranks' average within
    ATP's bound, and every rank ends with the same parameters."""
    init(rank, store, "gloo")
    ddp_steps(rank, hook=True)


def ddp_steps(rank, hook):
    torch.manual_seed(rank)  # different on each rank: DDP's broadcast makes them equal
    model = torch.nn.Sequential(torch.nn.Linear(20, 300), torch.nn.ReLU(), torch.nn.Linear(300, 3))
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.01)
    if hook:
        state = swemu_torch.HookState()
        ddp.register_comm_hook(state, swemu_torch.allreduce_hook)
        bound = state.reducer.worker.error_bound
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for step in range(4):
        opt.zero_grad()
        torch.manual_seed(100 + 2 * step + rank)
        x = torch.randn(8, 20)
        # The rank's own gradient, without DDP, gathered to compare with the hook's result.
        local = [torch.autograd.grad(model(x).pow(2).mean(), p)[0] for p in [model[0].weight]]
        ddp(x).pow(2).mean().backward()
        both = [torch.zeros_like(local[0]) for _ in range(WORLD)]
        dist.all_gather(both, local[0])
        mean = (both[0] + both[1]) / 2
        err = (model[0].weight.grad - mean).abs().max().item()
        assert err <= (bound if hook else 1e-5) + 1e-6 * mean.abs().max().item(), err
        opt.step()
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    gathered = [torch.zeros_like(flat) for _ in range(WORLD)]
    dist.all_gather(gathered, flat)
    assert torch.equal(gathered[0], gathered[1]), "the ranks' parameters differ"
    if hook:  # its completion thread ends and its worker closes, not left to interpreter exit
        state.close()
        assert not state.reducer._thread.is_alive() and state.reducer.worker.closed, "open"
    dist.barrier()
    dist.destroy_process_group()


def death_rank(rank, store):
    """Rank 1 ends after two steps (after DDP's rebuilt buckets, Gloo's last exchange); rank 0's
    next backward raises swemu's timeout through the hook's future: exit 0 when it did, with
    the message, within a bound."""
    init(rank, store, "gloo")
    ddp = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(20, 3))
    ddp.register_comm_hook(swemu_torch.HookState(timeout=3), swemu_torch.allreduce_hook)
    for step in range(4):
        if rank == 1 and step == 2:
            os._exit(3)
        start = time.monotonic()
        try:
            ddp(torch.randn(4, 20)).sum().backward()
        except RuntimeError as e:
            ok = "did not complete within 3 s" in str(e) and time.monotonic() - start < 10
            print(f"rank 0: {e}", flush=True)
            os._exit(0 if ok and step == 2 else 1)
    os._exit(2)  # no error: the dead rank went unnoticed


def spawn(target):
    store = tempfile.mktemp(prefix="swemu-torch-test-")
    try:
        mp.spawn(target, args=(store,), nprocs=WORLD)
    finally:
        if os.path.exists(store):
            os.unlink(store)


class TorchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fabric = swemu_torch.start_fabric(WORLD, transport="udp")

    @classmethod
    def tearDownClass(cls):
        cls.fabric.stop()

    def setUp(self):
        self.fabric.reset()  # each test's ranks are a new group of workers

    def test_backend(self):
        spawn(backend_rank)
        self.assertGreater(self.fabric.stats()["completed"], 0)

    def test_hook(self):
        spawn(hook_rank)
        self.assertGreater(self.fabric.stats()["completed"], 0)

    def test_death(self):
        store = tempfile.mktemp(prefix="swemu-torch-test-")
        ctx = mp.get_context("spawn")
        procs = [ctx.Process(target=death_rank, args=(r, store)) for r in range(WORLD)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        if os.path.exists(store):
            os.unlink(store)
        self.assertEqual([p.exitcode for p in procs], [0, 3])

    def test_registered(self):
        self.assertIn("SWEMU", dist.Backend._plugins)
        self.assertEqual(dist.Backend("swemu"), "swemu")

    def test_no_spec(self):
        spec = os.environ.pop(swemu_torch.SPEC_ENV)
        try:
            with self.assertRaisesRegex(RuntimeError, "start_fabric"):
                swemu_torch.Reducer(rank=0)
        finally:
            os.environ[swemu_torch.SPEC_ENV] = spec


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False).result.wasSuccessful() else 1)
