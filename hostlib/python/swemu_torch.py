"""swemu_torch: PyTorch's DistributedDataParallel through swemu (hostlib/python/README.md).

Two ways in, both summing float32 CPU gradients through an AtpFabric's ATP job (the `swemu`
extension beside this file) and completing torch futures from a background thread, so that
DDP reduces one bucket while backward computes the next:

  * a DDP communication hook, with any process group (gloo) for DDP's own set-up:
        model.register_comm_hook(swemu_torch.HookState(), swemu_torch.allreduce_hook)
  * a torch.distributed backend named "swemu" (registered when this module is imported):
        dist.init_process_group("swemu", ...)
    float32 CPU all_reduce (SUM, AVG) goes through swemu, every other collective (broadcast,
    allgather, barrier, other dtypes and ops) through a Gloo group on the same store.

The launcher starts the fabric once, before spawning its workers; the workers find it through
the environment (SWEMU_WORKER_SPEC), each joins as its torch.distributed rank:
        swemu_torch.start_fabric(world_size)            # in the launcher
Ranks on their own machines (or network namespaces) instead join a job that `swemu-atp
publish` wrote for the switch, through the environment: SWEMU_JOB=<the job file> (then no
start_fabric; the PS runs as `swemu-atp ps --job FILE`), as their torch.distributed rank, over
kernel UDP; with SWEMU_PORT=<DPDK devargs> (e.g. net_af_packet0,iface=eth0) too, on that DPDK
port instead (Worker.from_job's port).
"""
import datetime
import os
import queue
import threading

import swemu
import torch
import torch.distributed as dist
from torch._C._distributed_c10d import (AllreduceOptions, PrefixStore, ProcessGroup,
                                        ProcessGroupGloo, ReduceOp, _create_work_from_future)

SPEC_ENV = "SWEMU_WORKER_SPEC"
JOB_ENV = "SWEMU_JOB"  # a published job file: this rank over kernel UDP through the switch
PORT_ENV = "SWEMU_PORT"  # with SWEMU_JOB: a DPDK port's devargs instead of kernel UDP
DEFAULT_TIMEOUT = 60.0  # seconds one all_reduce may take before its future fails
_fabrics = []  # started by start_fabric: kept until exit (the extension stops them then)


def start_fabric(world_size, **options):
    """Starts an AtpFabric of world_size workers (options: AtpFabric's, e.g. transport="udp")
    and puts its worker spec in this process's environment, which spawned workers inherit."""
    fabric = swemu.AtpFabric(workers=world_size, **options).start()
    os.environ[SPEC_ENV] = fabric.worker_spec()
    _fabrics.append(fabric)
    return fabric


def _worker(spec, rank):
    """This rank's swemu.Worker: from spec, else the environment's SWEMU_WORKER_SPEC (a
    fabric) or SWEMU_JOB (a published job; on the DPDK port SWEMU_PORT names, if set)."""
    spec = spec or os.environ.get(SPEC_ENV)
    if spec:
        return swemu.Worker(spec, rank)
    if os.environ.get(JOB_ENV):
        return swemu.Worker.from_job(os.environ[JOB_ENV], rank,
                                     port=os.environ.get(PORT_ENV) or None)
    raise RuntimeError(f"swemu_torch: no worker spec: call swemu_torch.start_fabric(world_size) "
                       f"in the launcher before starting the workers (it sets {SPEC_ENV}), "
                       f"pass spec=AtpFabric.worker_spec(), or set {JOB_ENV} to the job file "
                       f"swemu-atp publish wrote")


class Reducer:
    """One swemu.Worker and a thread that completes each call's torch future, in submission
    order. The worker's own loop thread does not: it would have to take the GIL, and while it
    waited for it no packet of the job would move."""

    def __init__(self, spec=None, rank=None, timeout=DEFAULT_TIMEOUT):
        rank = dist.get_rank() if rank is None else rank
        self.worker = _worker(spec, rank)
        self.timeout = timeout
        self._calls = queue.Queue()
        self._thread = threading.Thread(target=self._complete, name=f"swemu-rank{rank}",
                                        daemon=True)
        self._thread.start()

    def all_reduce(self, tensors, divide_by=1, value=None):
        """Queues the in-place sum of each float32 CPU tensor over the workers (divided by
        divide_by); returns a torch.futures.Future of `value` (default: the tensors)."""
        fut = torch.futures.Future()
        parts = []
        for t in tensors:
            if t.dtype != torch.float32 or t.device.type != "cpu":
                raise TypeError(f"swemu sums float32 CPU tensors, not {t.dtype} on {t.device}")
            # A strided tensor is summed in a contiguous copy and copied back when done.
            strided = not t.is_contiguous()
            work = t.detach().contiguous() if strided else t.detach()
            parts.append((t if strided else None, work, self.worker.all_reduce_async(work.numpy())))
        self._calls.put((parts, divide_by, fut, tensors if value is None else value))
        return fut

    def _complete(self):
        failed = None
        while True:
            item = self._calls.get()
            if item is None:
                return
            parts, divide_by, fut, value = item
            try:
                if failed is not None:  # the job's calls run in order: the rest cannot finish
                    raise failed
                for strided, work, handle in parts:
                    handle.wait(timeout=self.timeout)
                    if divide_by != 1:
                        work.div_(divide_by)
                    if strided is not None:
                        strided.detach().copy_(work)
                fut.set_result(value)
            except Exception as e:  # the caller's wait() raises it
                failed = failed or e
                fut.set_exception(e)

    def close(self):
        self._calls.put(None)
        self._thread.join()
        self.worker.close()


class HookState:
    """A DDP communication hook's state: this rank's swemu worker (spec: the launcher's
    start_fabric, through the environment; rank: torch.distributed's)."""

    def __init__(self, spec=None, rank=None, timeout=DEFAULT_TIMEOUT):
        self.reducer = Reducer(spec, rank, timeout)
        self.world_size = self.reducer.worker.workers

    def close(self):
        """Ends the completion thread and closes the worker (after the last backward)."""
        self.reducer.close()


def allreduce_hook(state, bucket):
    """DDP's default hook (average over the ranks) with the sum made by swemu: the bucket's
    flat float32 buffer is summed in place, then divided by the world size (after the sum, so
    that ATP's fixed point keeps the gradients' magnitude)."""
    buf = bucket.buffer()
    return state.reducer.all_reduce([buf], divide_by=state.world_size, value=buf)


# --- the "swemu" torch.distributed backend --------------------------------------------------

# Everything but float32 sums goes to Gloo: ATP only adds (int32 at a fixed scale), and
# parameters and buffers must be broadcast exactly.
_DELEGATED = ("allgather", "_allgather_base", "allgather_coalesced", "allreduce_coalesced",
              "alltoall", "alltoall_base", "barrier", "broadcast", "gather", "monitored_barrier",
              "recv", "recv_anysource", "reduce", "reduce_scatter", "_reduce_scatter_base",
              "scatter", "send")


class ProcessGroupSwemu(ProcessGroup):
    """init_process_group("swemu"): float32 CPU all_reduce (SUM, AVG) through swemu, the
    rest through Gloo. Work objects come from _create_work_from_future: torch 1.13 drops a
    Python Work subclass returned to C++ (DDP's set-up waits on it forever)."""

    def __init__(self, store, rank, size, timeout):
        super().__init__(rank, size)
        self._gloo = ProcessGroupGloo(PrefixStore("gloo", store), rank, size, timeout=timeout)
        self._reducer = Reducer(rank=rank, timeout=timeout.total_seconds())
        if self._reducer.worker.workers != size:
            raise ValueError(f"swemu_torch: the fabric has {self._reducer.worker.workers} "
                             f"workers, the process group {size}")

    def getBackendName(self):
        return "swemu"

    def allreduce(self, tensors, opts=None):
        if isinstance(opts, ReduceOp):  # pg.allreduce(tensors, op)
            op, opts = opts, AllreduceOptions()
            opts.reduceOp = op
        opts = opts or AllreduceOptions()
        if isinstance(tensors, torch.Tensor):  # pg.allreduce(tensor, ...)
            tensors = [tensors]
        op = opts.reduceOp
        ours = (op == ReduceOp.SUM or op == ReduceOp.AVG) and all(
            t.dtype == torch.float32 and t.device.type == "cpu" for t in tensors)
        if not ours:
            return self._gloo.allreduce(tensors, opts)
        divide_by = self.size() if op == ReduceOp.AVG else 1
        return _create_work_from_future(self._reducer.all_reduce(tensors, divide_by))


def _delegate(name):
    def method(self, *args, **kwargs):
        return getattr(self._gloo, name)(*args, **kwargs)
    method.__name__ = name
    return method


for _name in _DELEGATED:
    setattr(ProcessGroupSwemu, _name, _delegate(_name))


def _create(store, rank, size, timeout=datetime.timedelta(minutes=30)):
    return ProcessGroupSwemu(store, rank, size, timeout)


if "SWEMU" not in dist.Backend._plugins:
    dist.Backend.register_backend("swemu", _create)
