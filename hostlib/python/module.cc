// The Python module `swemu`: hostlib's ATP host API for training scripts (README.md here).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "hostlib/atp/quantize.h"
#include "hostlib/python/fabric.h"
#include "hostlib/python/worker.h"
#include "hostlib/python/worker_spec.h"

namespace py = pybind11;

namespace swemu::python {
namespace {

// swemu.Error: every failure of the C++ side, with its message.
class ModuleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void Check(const Status& status) {
  if (!status.ok()) throw ModuleError(status.message());
}

template <typename T>
T Get(Result<T> result) {
  if (!result.ok()) throw ModuleError(result.message());
  return std::move(*result);
}

py::dict ToDict(const Counters& counters) {
  py::dict d;
  for (const auto& [key, value] : counters) d[py::str(key)] = value;
  return d;
}

std::string TypeName(py::handle obj) {
  return py::str(py::type::handle_of(obj).attr("__qualname__")).cast<std::string>();
}

// An int argument (bool is refused too: True is no worker count).
int64_t IntArg(py::handle obj, const char* what) {
  if (py::isinstance<py::bool_>(obj) || PyIndex_Check(obj.ptr()) == 0) {
    throw py::type_error(std::string(what) + " must be an int, not " + TypeName(obj));
  }
  const py::int_ value = py::reinterpret_steal<py::int_>(PyNumber_Index(obj.ptr()));
  if (!value) throw py::error_already_set();
  try {
    return value.cast<int64_t>();
  } catch (const py::cast_error&) {
    throw py::value_error(std::string(what) + " is out of range");
  }
}

// None or inf: no limit. Seconds otherwise, >= 0.
std::optional<double> TimeoutArg(py::handle obj) {
  if (obj.is_none()) return std::nullopt;
  if (!py::isinstance<py::float_>(obj) && !py::isinstance<py::int_>(obj)) {
    throw py::type_error("timeout must be a number of seconds or None, not " + TypeName(obj));
  }
  const double t = obj.cast<double>();
  if (std::isnan(t) || t < 0) {
    throw py::value_error("timeout must be >= 0 seconds (or None: no limit), not " +
                          py::str(obj).cast<std::string>());
  }
  if (std::isinf(t)) return std::nullopt;
  return t;
}

std::string PathArg(py::handle obj, const char* what) {
  if (obj.is_none()) return std::string();
  try {
    return py::module_::import("os").attr("fspath")(obj).cast<std::string>();
  } catch (const py::error_already_set&) {
    throw py::type_error(std::string(what) + " must be a path (str or os.PathLike) or None, not " +
                         TypeName(obj));
  } catch (const py::cast_error&) {
    throw py::type_error(std::string(what) + " must be a str path, not bytes");
  }
}

// The array all_reduce sums in place: a writable, aligned, C-contiguous float32 ndarray.
py::array ArrayArg(py::handle obj) {
  if (!py::isinstance<py::array>(obj)) {
    throw py::type_error("all_reduce needs a numpy.ndarray of dtype float32, not " + TypeName(obj) +
                         " (for a CPU torch tensor pass t.numpy(), which shares its memory)");
  }
  auto a = py::reinterpret_borrow<py::array>(obj);
  auto& api = py::detail::npy_api::get();
  if (!api.PyArray_EquivTypes_(py::dtype::of<float>().ptr(), a.dtype().ptr())) {
    throw py::type_error("all_reduce needs dtype float32 (native byte order), not " +
                         py::str(a.dtype()).cast<std::string>() +
                         " (convert with a.astype(numpy.float32), which copies)");
  }
  const int flags = a.flags();
  if ((flags & py::array::c_style) == 0) {
    throw py::value_error(
        "all_reduce needs a C-contiguous array (the sum is written in place); this one has "
        "strides " +
        py::str(a.attr("strides")).cast<std::string>() +
        " (numpy.ascontiguousarray copies it into one)");
  }
  if (!a.writeable()) {
    throw py::value_error("all_reduce writes the sum in place, and this array is read-only");
  }
  if ((flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_) == 0) {
    throw py::value_error("all_reduce needs an aligned array (float32 on 4-byte boundaries)");
  }
  return a;
}

// swemu.Worker: the C++ worker and the arrays of its unfinished calls, kept alive until done.
class PyWorker {
 public:
  explicit PyWorker(std::unique_ptr<FabricWorker> impl) : impl_(std::move(impl)) {
    RegisterWorker(impl_.get());
  }
  ~PyWorker() {
    UnregisterWorker(impl_.get());
    (void)impl_->Close();  // GIL kept: this may run while the interpreter finalizes
  }

  FabricWorker& impl() { return *impl_; }

  std::shared_ptr<CallState> Submit(py::array array) {
    Prune();
    std::shared_ptr<CallState> call = Get(impl_->Submit(static_cast<float*>(array.mutable_data()),
                                                        static_cast<std::size_t>(array.size())));
    inflight_.push_back({call, array});
    // Told, not silently passed on: NaN/inf poison the sum as they would in any all-reduce.
    if (call->nonfinite != 0) {
      const std::string warning = "swemu: all_reduce: " + std::to_string(call->nonfinite) +
                                  " NaN or inf element(s) in the input reach the sum as they are";
      if (PyErr_WarnEx(PyExc_RuntimeWarning, warning.c_str(), 1) != 0) {
        throw py::error_already_set();
      }
    }
    return call;
  }

  // Waits for the call (GIL released, Ctrl-C honoured); raises swemu.Error when it did not
  // complete in time.
  void Wait(const std::shared_ptr<CallState>& call, py::handle timeout) {
    const std::optional<double> limit = TimeoutArg(timeout);
    const auto start = std::chrono::steady_clock::now();
    constexpr std::chrono::milliseconds kSlice(100);
    while (true) {
      std::chrono::nanoseconds slice = kSlice;
      if (limit) {
        const auto left =
            std::chrono::duration<double>(*limit) - (std::chrono::steady_clock::now() - start);
        if (left.count() <= 0) break;
        // Compared in double first: a huge timeout (1e10 s for "forever") would overflow the
        // cast to nanoseconds.
        if (left.count() < 0.1) slice = std::chrono::duration_cast<std::chrono::nanoseconds>(left);
      }
      bool ended = false;
      {
        py::gil_scoped_release release;
        ended = impl_->WaitFor(*call, slice);
      }
      if (ended) break;
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    }
    if (impl_->Done(*call)) {
      Prune();
      return;
    }
    throw ModuleError(
        impl_->Unfinished(*call, limit.value_or(std::numeric_limits<double>::infinity())));
  }

  void Close() {
    Status status;
    {
      py::gil_scoped_release release;
      status = impl_->Close();
    }
    inflight_.clear();  // the loop has stopped: nothing writes these arrays any more
    Check(status);
  }

 private:
  void Prune() {
    std::erase_if(inflight_, [this](const Inflight& f) { return impl_->Done(*f.call); });
  }

  struct Inflight {
    std::shared_ptr<CallState> call;
    py::object array;
  };
  std::unique_ptr<FabricWorker> impl_;
  std::vector<Inflight> inflight_;
};

// swemu.Handle: one all_reduce_async call.
struct PyHandle {
  py::object owner;  // the swemu.Worker (kept alive)
  PyWorker* worker;
  std::shared_ptr<CallState> call;
  py::object array;
};

constexpr const char* kModuleDoc =
    R"doc(swemu: all-reduce float32 arrays through swemu's ATP switch program.

A training launcher makes one AtpFabric (the switch as a child process and the parameter
server, or a PS on loopback UDP), hands fabric.worker_spec() to its worker processes, and each
worker process makes one Worker(spec, rank) and calls worker.all_reduce(array) on float32
NumPy arrays (t.numpy() of a CPU torch tensor shares its memory), summed in place over the
job's workers. See hostlib/python/README.md for the whole API, the error bound and the limits.

  fabric = swemu.AtpFabric(workers=4, transport="dpdk").start()
  spec = fabric.worker_spec()              # to every worker process
  # in worker process `rank`:
  w = swemu.Worker(spec, rank)
  w.all_reduce(grad)                       # in place; returns grad
  h = w.all_reduce_async(grad2); ...; h.wait()
)doc";

// AtpFabric(...): the options checked (TypeError, ValueError), the topology and job read.
std::unique_ptr<Fabric> MakeFabric(py::object workers, py::object out_dir, std::string transport,
                                   bool aggregate, py::object swemu_binary, py::object elements,
                                   py::object aggregators, py::object link_rate, bool busy_poll,
                                   py::object start_timeout, py::object topology, py::object job) {
  FabricOptions o;
  o.topology = PathArg(topology, "topology");
  o.job = PathArg(job, "job");
  if (!o.topology.empty() && !(workers.is_none() && elements.is_none() &&
                               aggregators.is_none() && link_rate.is_none())) {
    throw py::value_error(
        "with topology=, the job file gives workers and elements and the topology's switch "
        "configs give aggregators and link rates: leave workers, elements, aggregators and "
        "link_rate unset");
  }
  const int64_t w = workers.is_none() ? o.workers : IntArg(workers, "workers");
  const int64_t e = elements.is_none() ? o.elements : IntArg(elements, "elements");
  const int64_t a = aggregators.is_none() ? o.aggregators : IntArg(aggregators, "aggregators");
  if (w < 1 || w > swemu::kAtpMaxWorkers) {
    throw py::value_error("workers must be 1.." + std::to_string(swemu::kAtpMaxWorkers));
  }
  if (e < 1 || e > swemu::kAtpMaxElementsPerMtu) {
    throw py::value_error("elements must be 1.." + std::to_string(swemu::kAtpMaxElementsPerMtu) +
                          " (a packet within a 1500-byte MTU), not " + std::to_string(e));
  }
  if (a < 1 || a > (int64_t{1} << 24)) throw py::value_error("aggregators must be 1..16777216");
  if (!link_rate.is_none() && !py::isinstance<py::str>(link_rate)) {
    throw py::type_error("link_rate must be a str, e.g. '1G', not " + TypeName(link_rate));
  }
  o.workers = static_cast<uint32_t>(w);
  o.elements = static_cast<uint32_t>(e);
  o.aggregators = static_cast<uint32_t>(a);
  if (!link_rate.is_none()) o.link_rate = link_rate.cast<std::string>();
  o.out_dir = PathArg(out_dir, "out_dir");
  o.transport = transport;
  o.aggregate = aggregate;
  o.swemu_binary = PathArg(swemu_binary, "swemu_binary");
  o.busy_poll = busy_poll;
  const std::optional<double> t = TimeoutArg(start_timeout);
  o.start_timeout_s = t.value_or(3600);
  if (o.start_timeout_s <= 0) throw py::value_error("start_timeout must be > 0");
  Status valid = Fabric::Validate(o);
  if (!valid.ok()) throw py::value_error(valid.message());
  auto fabric = std::make_unique<Fabric>(o);
  Status loaded = fabric->LoadFiles();
  if (!loaded.ok()) throw py::value_error(loaded.message());
  return fabric;
}

// start, stop, reset and the context manager.
void BindFabricLifecycle(py::class_<Fabric>& cls) {
  cls
      .def(
          "start",
          [](py::object self) {
            Fabric& f = self.cast<Fabric&>();
            Status status;
            {
              py::gil_scoped_release release;
              status = f.Start();
            }
            Check(status);
            return self;
          },
          "Starts swemu (dpdk) and the PS; returns the fabric. Raises swemu.Error naming what "
          "failed (swemu's log is in out_dir).")
      .def(
          "stop",
          [](Fabric& f) {
            Status status;
            {
              py::gil_scoped_release release;
              status = f.Stop();
            }
            Check(status);
          },
          "Stops the PS and swemu (SIGINT: swemu drains and checks for leaks; an unclean exit "
          "raises swemu.Error). Idempotent.")
      .def(
          "reset",
          [](Fabric& f) {
            Status status;
            {
              py::gil_scoped_release release;
              status = f.Reset();
            }
            Check(status);
          },
          "Forgets the jobs' progress (a new PS; the switch's aggregators freed), for a new "
          "group of worker processes once every worker of the previous one has ended.")
      .def("__enter__",
           [](py::object self) {
             Fabric& f = self.cast<Fabric&>();
             if (!f.started()) {
               Status status;
               {
                 py::gil_scoped_release release;
                 status = f.Start();
               }
               Check(status);
             }
             return self;
           })
      .def("__exit__",
           [](Fabric& f, py::handle exc_type, py::handle, py::handle) {
             Status status;
             {
               py::gil_scoped_release release;
               status = f.Stop();
             }
             // Leaving on an exception (Ctrl-C also interrupts swemu, which then exits unclean):
             // that exception goes on, the stop's failure is only printed.
             if (!exc_type.is_none()) {
               if (!status.ok()) {
                 py::print("swemu: stopping the fabric also failed:", status.message(),
                           py::arg("file") = py::module_::import("sys").attr("stderr"));
               }
               return false;
             }
             Check(status);
             return false;
           });
}

// What a launcher asks a started fabric, and its options.
void BindFabricQueries(py::class_<Fabric>& cls) {
  cls
      .def(
          "worker_spec",
          [](Fabric& f, py::object rank) {
            int r = -1;
            if (!rank.is_none()) {
              const int64_t v = IntArg(rank, "rank");
              if (v < 0 || v >= f.options().workers) {
                throw py::value_error("rank must be 0.." + std::to_string(f.options().workers - 1) +
                                      ", not " + std::to_string(v));
              }
              r = static_cast<int>(v);
            }
            return Get(f.WorkerSpec(r));
          },
          py::arg("rank") = py::none(),
          "Everything a worker process needs to make its Worker, as one str (job file, transport, "
          "switch sockets). With a rank, the spec is for that rank only.")
      .def(
          "switch_command",
          [](Fabric& f, const std::string& line, py::object sw) {
            if (!sw.is_none() && !py::isinstance<py::str>(sw)) {
              throw py::type_error("switch must be a switch's name (str) or None, not " +
                                   TypeName(sw));
            }
            const std::string name = sw.is_none() ? std::string() : sw.cast<std::string>();
            if (line.find_first_not_of(" \t") == std::string::npos) {
              throw py::value_error("switch_command needs a command, e.g. 'atp_stats'");
            }
            if (line.find('\n') != std::string::npos) {
              throw py::value_error("switch_command takes one line");
            }
            Result<std::string> reply("");
            {
              py::gil_scoped_release release;
              reply = f.SwitchCommand(line, name);
            }
            return Get(std::move(reply));
          },
          py::arg("line"), py::arg("switch") = py::none(),
          "One command to a switch's control socket (docs/cli.md, 'Control commands'), e.g. "
          "'atp_stats' (the atp program's counters as JSON), 'show atp', 'set_port_loss all "
          "0.01'; returns the reply. swemu.Error when swemu refuses it. switch: a topology's "
          "switch by name (None: the first).")
      .def(
          "stats", [](Fabric& f) { return ToDict(Get(f.Stats())); },
          "The PS's counters for the workers' job: gradients, completed, elements_by_switch "
          "(packets that reached the PS fully aggregated by the switch) and elements_at_ps, ...")
      .def_property_readonly("started", &Fabric::started)
      .def_property_readonly("workers", [](const Fabric& f) { return f.options().workers; })
      .def_property_readonly("transport", [](const Fabric& f) { return f.options().transport; })
      .def_property_readonly("aggregate", [](const Fabric& f) { return f.options().aggregate; })
      .def_property_readonly("elements", [](const Fabric& f) { return f.options().elements; })
      .def_property_readonly("job_id", &Fabric::job_id)
      .def_property_readonly("topology",
                             [](const Fabric& f) -> py::object {
                               if (f.options().topology.empty()) return py::none();
                               return py::str(f.options().topology);
                             })
      .def_property_readonly(
          "out_dir",
          [](const Fabric& f) -> py::object {
            if (f.out_dir().empty()) return py::none();
            return py::str(f.out_dir());
          },
          "Where the job files, the switch's config, script and log and its sockets are.")
      .def_property_readonly("control_socket", &Fabric::control_socket)
      .def_property_readonly("swemu_pid", &Fabric::swemu_pid)
      .def("__repr__", [](const Fabric& f) {
        return "<swemu.AtpFabric " + f.options().transport +
               " workers=" + std::to_string(f.options().workers) +
               " job=" + std::to_string(f.job_id()) + (f.started() ? " started" : " stopped") + ">";
      });
}

void BindFabric(py::module_& m) {
  py::class_<Fabric> cls(m, "AtpFabric", R"doc(The switch and the parameter server of one ATP job.

AtpFabric(workers=4, out_dir=None, transport="dpdk", aggregate=True, swemu_binary=None,
          elements=64, aggregators=16384, link_rate="0", busy_poll=False, start_timeout=20.0,
          topology=None, job=None)

transport="dpdk": swemu (program atp) as a child process on vhost-user sockets in out_dir, the
PS in this process on its own virtio_user port (this process's DPDK: it cannot also be a
worker). transport="udp": no switch; the PS on a loopback UDP socket, aggregation at the PS.
aggregate=False: the switch forwards the job's packets (`atp_job forward_only`) and the PS
aggregates. out_dir=None: a new directory under /tmp, removed by a clean stop().
topology=, job=: a topology file and the ATP job file that runs on it (as `swemu-atp sim` and
`swemu-atp demo` take them, e.g. configs/atp_two_rack.topo and .job): its switches as swemu
processes, the job's hosts on the ports it names; the job gives workers and elements, the
switch configs aggregators and link rates (leave those four unset). Bad files raise ValueError.
start() the fabric, then give worker_spec() to the workers; stop() (also on exit, `with`, and
when the object is collected) ends swemu and the PS.)doc");
  cls.def(py::init(&MakeFabric), py::arg("workers") = py::none(), py::arg("out_dir") = py::none(),
          py::arg("transport") = "dpdk", py::arg("aggregate") = true,
          py::arg("swemu_binary") = py::none(), py::arg("elements") = py::none(),
          py::arg("aggregators") = py::none(), py::arg("link_rate") = py::none(),
          py::arg("busy_poll") = false, py::arg("start_timeout") = 20.0,
          py::arg("topology") = py::none(), py::arg("job") = py::none());
  BindFabricLifecycle(cls);
  BindFabricQueries(cls);
}

// Worker(spec, rank, lanes, busy_poll): the arguments checked, the worker opened.
std::unique_ptr<PyWorker> MakeWorker(py::object spec, py::object rank, py::object lanes,
                                     bool busy_poll) {
  if (!py::isinstance<py::str>(spec)) {
    throw py::type_error("spec must be the str AtpFabric.worker_spec() returned, not " +
                         TypeName(spec));
  }
  Result<WorkerSpec> parsed = ParseWorkerSpec(spec.cast<std::string>());
  if (!parsed.ok()) throw py::value_error(parsed.message());
  int r = parsed->rank;
  if (!rank.is_none()) {
    const int64_t v = IntArg(rank, "rank");
    // workers 0 (a published job, transport=net): the job file's count, checked when opened.
    const int64_t workers = parsed->workers > 0 ? parsed->workers : kAtpMaxWorkers;
    if (v < 0 || v >= workers) {
      throw py::value_error("rank must be 0.." + std::to_string(parsed->workers - 1) +
                            " (the job has " + std::to_string(parsed->workers) +
                            " workers), not " + std::to_string(v));
    }
    if (parsed->rank >= 0 && parsed->rank != v) {
      throw py::value_error("rank " + std::to_string(v) + " but the spec is for rank " +
                            std::to_string(parsed->rank));
    }
    r = static_cast<int>(v);
  }
  if (r < 0) throw py::value_error("rank is needed: the spec is not for one rank");
  const int64_t l = IntArg(lanes, "lanes");
  if (l < 1 || l > 64) throw py::value_error("lanes must be 1..64");
  WorkerOptions options;
  options.lanes = static_cast<uint32_t>(l);
  options.busy_poll = busy_poll;
  Result<std::unique_ptr<FabricWorker>> worker(Status::Error(""));
  {
    py::gil_scoped_release release;
    worker = FabricWorker::Open(*parsed, static_cast<uint32_t>(r), options);
  }
  return std::make_unique<PyWorker>(Get(std::move(worker)));
}

// Worker.from_job: one rank of a published job (kernel UDP, or a DPDK port with port=).
std::unique_ptr<PyWorker> WorkerFromJob(py::object path, py::object rank, py::object port,
                                        py::object lanes, bool busy_poll) {
  if (!py::isinstance<py::str>(path)) {
    throw py::type_error("path must be a str, not " + TypeName(path));
  }
  if (!port.is_none() && !py::isinstance<py::str>(port)) {
    throw py::type_error("port must be a str (DPDK devargs) or None, not " + TypeName(port));
  }
  WorkerSpec spec;
  spec.transport = "net";
  spec.job_file = path.cast<std::string>();
  if (!port.is_none()) {
    spec.port = port.cast<std::string>();
    if (spec.port.empty() || spec.port.find(';') != std::string::npos) {
      throw py::value_error(
          "port must be DPDK devargs (a PCI address, net_af_packet0,iface=eth0, ...), "
          "not '" +
          spec.port + "'");
    }
  }
  return MakeWorker(py::str(FormatWorkerSpec(spec)), rank, lanes, busy_poll);
}

void BindWorker(py::module_& m) {
  py::class_<PyWorker>(m, "Worker", R"doc(One worker of an AtpFabric's job, in this process.

Worker(spec, rank=None, lanes=2, busy_poll=False)

spec: AtpFabric.worker_spec(); rank: this worker's rank, 0..workers-1 (None: the spec's). With
dpdk, initialises this process's DPDK (one lcore, --no-huge) and attaches to the switch port of
its rank; with udp, binds the rank's loopback address. A loop thread then drives the worker.)doc")
      .def(py::init(&MakeWorker), py::arg("spec"), py::arg("rank") = py::none(),
           py::arg("lanes") = 2, py::arg("busy_poll") = false)
      .def_static(
          "from_job",
          &WorkerFromJob,
          py::arg("path"), py::arg("rank"), py::arg("port") = py::none(), py::arg("lanes") = 2,
          py::arg("busy_poll") = false,
          R"doc(One rank of a job published for hosts on their own machines (swemu-atp
publish's job file). port=None: the rank's IP in the job must be this machine's (or
namespace's); its gradients go to the switch over kernel UDP sockets and the sums come back to
the job's multicast group, which it joins. port="DEVARGS" (a PCI address,
"net_af_packet0,iface=eth0", ...): as `swemu-atp worker --port`, this process's DPDK (EAL)
drives that port and the rank sends and takes whole frames with the job's MACs (a `learn` MAC
is refused). The PS runs as `swemu-atp ps --job FILE`.)doc")
      .def(
          "all_reduce",
          [](PyWorker& w, py::handle array, py::handle timeout) {
            py::array a = ArrayArg(array);
            (void)TimeoutArg(timeout);  // bad timeouts fail before anything is sent
            std::shared_ptr<CallState> call = w.Submit(a);
            w.Wait(call, timeout);
            return a;
          },
          py::arg("array"), py::arg("timeout") = 30.0,
          R"doc(Sums array over the job's workers, in place, and returns it.

array: a writable C-contiguous numpy.ndarray of float32, any shape and size (0 elements too);
t.numpy() of a CPU torch tensor shares its memory, so the tensor gets the sum. Every worker
must make the same calls (sizes, order). Calls run one after another in submission order.
timeout: seconds (None: no limit). When the sum is not complete by then, raises swemu.Error
saying what was missing (typically: another worker died); the call keeps running and may still
write the array.)doc")
      .def(
          "all_reduce_async",
          [](py::object self, py::handle array) {
            PyWorker& w = self.cast<PyWorker&>();
            py::array a = ArrayArg(array);
            std::shared_ptr<CallState> call = w.Submit(a);
            return PyHandle{self, &w, call, a};
          },
          py::arg("array"),
          "Queues all_reduce(array) and returns a Handle at once (wait(timeout), done()). The "
          "array must not be read or written until the handle is done.")
      .def(
          "stats", [](PyWorker& w) { return ToDict(Get(w.impl().Stats())); },
          "This worker's counters: packets_sent, retransmissions, timeouts, params_received, "
          "elements_completed, port/socket counters... (where the sums were made, switch or PS, "
          "is only known at the PS: AtpFabric.stats()).")
      .def("close", &PyWorker::Close,
           "Stops the worker and frees its port; calls still running are abandoned.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__",
           [](PyWorker& w, py::handle, py::handle, py::handle) {
             w.Close();
             return false;
           })
      .def_property_readonly("rank", [](PyWorker& w) { return w.impl().rank(); })
      .def_property_readonly("workers", [](PyWorker& w) { return w.impl().workers(); })
      .def_property_readonly("transport", [](PyWorker& w) { return w.impl().transport(); })
      .def_property_readonly("job_id", [](PyWorker& w) { return w.impl().job().spec.job_id; })
      .def_property_readonly("elements_per_packet",
                             [](PyWorker& w) { return w.impl().job().spec.elements; })
      .def_property_readonly("scale", [](PyWorker& w) { return w.impl().job().spec.scale; })
      .def_property_readonly(
          "error_bound",
          [](PyWorker& w) {
            return swemu::AtpSumErrorBound(w.impl().workers(), w.impl().job().spec.scale);
          },
          "workers * 0.5 / scale: the largest |sum - exact sum| per element before the sum's "
          "own float32 rounding (half an ulp of it), for elements with |x| * scale < 2**31.")
      .def_property_readonly("closed", [](PyWorker& w) { return w.impl().closed(); })
      .def("__repr__", [](PyWorker& w) {
        return "<swemu.Worker rank " + std::to_string(w.impl().rank()) + " of " +
               std::to_string(w.impl().workers()) + " " + w.impl().transport() + " job " +
               std::to_string(w.impl().job().spec.job_id) + ">";
      });
}

void BindHandle(py::module_& m) {
  py::class_<PyHandle>(m, "Handle", "An all_reduce_async call.")
      .def(
          "wait",
          [](PyHandle& h, py::handle timeout) {
            h.worker->Wait(h.call, timeout);
            return h.array;
          },
          py::arg("timeout") = 30.0,
          "Waits until the sum is in the array and returns the array; swemu.Error after timeout "
          "seconds (None: no limit), saying what was missing. May be called again.")
      .def(
          "done", [](PyHandle& h) { return h.worker->impl().Done(*h.call); },
          "True once the sum is in the array.")
      .def_property_readonly("size", [](const PyHandle& h) { return h.call->n; })
      .def_property_readonly(
          "nonfinite", [](const PyHandle& h) { return h.call->nonfinite; },
          "Input elements that were NaN or inf (also warned of with a RuntimeWarning).")
      .def_property_readonly(
          "past_int32", [](const PyHandle& h) { return h.call->past_int32; },
          "Finite input elements too large for int32 at the job's scale: their packets went on "
          "the float path, summed exactly at the PS instead of in the switch.")
      .def_property_readonly(
          "switch_overflows",
          [](PyHandle& h) -> py::object {
            if (!h.worker->impl().Done(*h.call)) return py::none();
            return py::int_(h.call->switch_overflows);
          },
          "Packets of this call whose int32 sum overflowed in the switch (the result came back "
          "flagged kAtpFlagOverflow): ignored, resent and summed exactly at the PS; once done "
          "(None before).")
      .def_property_readonly(
          "seconds",
          [](PyHandle& h) -> py::object {
            if (!h.worker->impl().Done(*h.call)) return py::none();
            return py::float_(h.call->seconds);
          },
          "From submission to completion, once done (None before).");
}

}  // namespace
}  // namespace swemu::python

PYBIND11_MODULE(swemu, m) {
  using namespace swemu::python;  // NOLINT(google-build-using-namespace)
  m.doc() = kModuleDoc;
  py::register_exception<ModuleError>(m, "Error", PyExc_RuntimeError);
  m.attr("CHUNK_PACKETS") = kChunkPackets;
  m.attr("MAX_WORKERS") = swemu::kAtpMaxWorkers;
  m.attr("DEFAULT_SCALE") = swemu::kAtpDefaultScale;
  BindFabric(m);
  BindWorker(m);
  BindHandle(m);
  // Interpreter exit: stop what is still running (swemu children, loop threads), then EAL. With
  // the GIL held, so that no Python thread destroys a Worker meanwhile.
  py::module_::import("atexit").attr("register")(py::cpp_function([] { ShutdownAll(); }));
}
