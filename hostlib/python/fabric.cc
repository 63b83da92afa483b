#include "hostlib/python/fabric.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include "hostlib/common/event_loop.h"
#include "hostlib/common/udp_socket_transport.h"
#include "hostlib/dpdk/dpdk_host.h"
#include "hostlib/dpdk/host_runner.h"
#include "hostlib/python/dpdk_process.h"
#include "hostlib/testbed/atp_job_file.h"
#include "hostlib/testbed/demo_layout.h"
#include "hostlib/testbed/processes_plan.h"
#include "hostlib/testbed/swemu_process.h"
#include "hostlib/testbed/testbed_run.h"
#include "pipeline/core/output_files.h"
#include "pipeline/core/text_file.h"

#ifndef SWEMU_DEFAULT_SWEMU_BINARY
#define SWEMU_DEFAULT_SWEMU_BINARY ""
#endif

namespace swemu::python {
namespace {

constexpr TimeNs kRunSliceNs = 1'000'000'000;
// Covers the current and the previous AllReduce call of a job (kChunkPackets each; ps.h).
constexpr uint32_t kPsHistory = 2 * kChunkPackets;
// swemu's SIGINT drain and leak check.
constexpr std::chrono::seconds kSwemuStopTimeout(10);
// util-linux: the child gets SIGKILL when the thread that started it ends, so a launcher that
// is killed does not leave swemu polling a core.
constexpr const char* kSetpriv = "/usr/bin/setpriv";

std::atomic<uint32_t> g_fabrics_made{0};

std::mutex g_registry_mu;
std::set<Fabric*> g_fabrics;
std::set<FabricWorker*> g_workers;

// EAL's runtime directories (/var/run/dpdk/<file-prefix> for root) that this module's processes
// left behind when they were killed (a worker, a launcher and its swemu): each would stay in
// tmpfs for good. A directory is in use while its EAL holds the write lock on its `config`.
// This process's own are skipped (closing a descriptor of a file would drop our own lock), and
// so are other fabrics' younger than a minute (an EAL starting up makes its directory before it
// takes the lock); `own`: this fabric's file-prefix stem, whose workers' are never young.
void RemoveStaleRuntimeDirs(const std::string& own) {
  std::vector<std::string> roots = {"/var/run/dpdk", "/tmp/dpdk"};
  if (const char* xdg = getenv("XDG_RUNTIME_DIR"); xdg != nullptr) {
    roots.push_back(std::string(xdg) + "/dpdk");
  }
  const std::string self = std::to_string(getpid());
  for (const std::string& root : roots) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
      const std::string name = entry.path().filename().string();
      const bool ours = name.ends_with("-" + self) ||  // a worker's
                        (name.rfind("swemu-py-" + self + "-", 0) == 0 && name.ends_with("-ps"));
      if (name.rfind("swemu-py-", 0) != 0 || ours) continue;
      const std::string config = entry.path().string() + "/config";
      if (own.empty() || name.rfind(own + "-w", 0) != 0) {
        std::error_code age_error;
        const auto written = std::filesystem::last_write_time(config, age_error);
        if (age_error ||
            std::filesystem::file_time_type::clock::now() - written < std::chrono::minutes(1)) {
          continue;
        }
      }
      const int fd = open(config.c_str(), O_RDWR | O_CLOEXEC);
      if (fd < 0) continue;
      struct flock lock {};
      lock.l_type = F_WRLCK;
      lock.l_whence = SEEK_SET;
      const bool unused = fcntl(fd, F_GETLK, &lock) == 0 && lock.l_type == F_UNLCK;
      close(fd);
      if (unused) {
        std::error_code ignored;
        std::filesystem::remove_all(entry.path(), ignored);
      }
    }
  }
}

// Every rank may join again (worker.h, JoinedMarker).
void RemoveJoinedMarkers(const std::string& dir, uint32_t workers) {
  for (uint32_t rank = 0; rank < workers; ++rank) {
    std::error_code ignored;
    std::filesystem::remove(JoinedMarker(dir + "/job", rank), ignored);
  }
}

}  // namespace

// The PS's Context behind a stable Endpoint, so Reset can replace it under a running driver.
class Fabric::PsEndpoint final : public Endpoint {
 public:
  explicit PsEndpoint(std::unique_ptr<Context> ctx) : ctx_(std::move(ctx)) {}
  void Replace(std::unique_ptr<Context> ctx) { ctx_ = std::move(ctx); }
  Context& ctx() const { return *ctx_; }

  void OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept override {
    ctx_->OnFrame(now, frame);
  }
  void OnTimer(TimeNs now) noexcept override { ctx_->OnTimer(now); }
  TimeNs NextTimer() const noexcept override { return ctx_->NextTimer(); }
  void Pump(TimeNs now) noexcept override { ctx_->Pump(now); }

 private:
  std::unique_ptr<Context> ctx_;
};

Status Fabric::Validate(const FabricOptions& o) {
  if (o.workers < 1 || o.workers > kAtpMaxWorkers) {
    return Status::Error("workers must be 1.." + std::to_string(kAtpMaxWorkers) + ", not " +
                         std::to_string(o.workers));
  }
  if (o.transport != "dpdk" && o.transport != "udp") {
    return Status::Error("transport must be 'dpdk' or 'udp', not '" + o.transport + "'");
  }
  if (o.elements < 1 || o.elements > kAtpMaxElementsPerMtu) {
    return Status::Error("elements must be 1.." + std::to_string(kAtpMaxElementsPerMtu) +
                         " (a packet within a 1500-byte MTU), not " + std::to_string(o.elements));
  }
  if (o.aggregators < 1 || o.aggregators > (1u << 24)) {
    return Status::Error("aggregators must be 1..16777216");
  }
  if (!(o.start_timeout_s > 0) || o.start_timeout_s > 3600) {
    return Status::Error("start_timeout must be in (0, 3600] seconds");
  }
  if (o.out_dir.find(';') != std::string::npos) {
    return Status::Error("out_dir must not contain ';' (worker specs are ';'-separated)");
  }
  if (o.link_rate.empty() || o.link_rate.find_first_of(" \t\n#") != std::string::npos) {
    return Status::Error("link_rate must be one word of swemu's rate syntax, e.g. '1G' or '0'");
  }
  if (o.topology.empty() != o.job.empty()) {
    return Status::Error("topology and job go together: a topology file and the ATP job file "
                         "that runs on it (e.g. configs/atp_two_rack.topo and .job)");
  }
  if (!o.topology.empty() && o.transport != "dpdk") {
    return Status::Error("a topology needs transport 'dpdk' (its switches run as swemu "
                         "processes), not '" + o.transport + "'");
  }
  return Status::Ok();
}

Status Fabric::LoadFiles() {
  std::lock_guard lock(mu_);
  if (options_.topology.empty() || files_ != nullptr) return Status::Ok();
  Result<AtpTopologyJob> files = LoadAtpTopologyJob(options_.topology, options_.job);
  if (!files.ok()) return files.status();
  files_ = std::make_unique<AtpTopologyJob>(std::move(*files));
  options_.workers = files_->job.aggregate.num_workers();
  options_.elements = files_->job.aggregate.spec.elements;
  return Status::Ok();
}

Fabric::Fabric(FabricOptions options) : options_(std::move(options)) {
  std::lock_guard lock(g_registry_mu);
  g_fabrics.insert(this);
}

Fabric::~Fabric() {
  {
    std::lock_guard lock(g_registry_mu);
    g_fabrics.erase(this);
  }
  (void)Stop();
}

uint16_t Fabric::job_id() const {
  if (files_ != nullptr) {
    return (options_.aggregate ? files_->job.aggregate : files_->job.plain).spec.job_id;
  }
  return options_.aggregate ? 1 : 2;
}

std::vector<std::pair<std::string, std::string>> Fabric::Switches() const {
  std::vector<std::pair<std::string, std::string>> switches;
  if (plan_ != nullptr) {
    for (const TestbedSwitch& sw : plan_->switches) {
      switches.emplace_back(sw.name, sw.control_socket);
    }
  } else if (layout_ != nullptr && options_.transport == "dpdk") {
    switches.emplace_back("rack0", layout_->ControlSocket(0));
  }
  return switches;
}

std::string Fabric::control_socket() const {
  const auto switches = Switches();
  return switches.empty() ? std::string() : switches.front().second;
}

int Fabric::swemu_pid() const {
  if (switches_ != nullptr) {
    return switches_->switches().empty() ? -1 : switches_->switches().front()->pid();
  }
  return swemu_ == nullptr ? -1 : swemu_->pid();
}

std::string Fabric::SwemuBinary() const {
  return options_.swemu_binary.empty() ? std::string(SWEMU_DEFAULT_SWEMU_BINARY)
                                       : options_.swemu_binary;
}

Status Fabric::Start() {
  std::lock_guard lock(mu_);
  if (started_) return Status::Ok();
  SWEMU_RETURN_IF_ERROR(Validate(options_));
  failed_ = false;
  created_dir_ = false;
  std::error_code ec;
  if (options_.out_dir.empty()) {
    char dir[] = "/tmp/swemu-fabric-XXXXXX";
    if (mkdtemp(dir) == nullptr) {
      return Status::Error(std::string("cannot create a directory in /tmp: ") +
                           std::strerror(errno));
    }
    dir_ = dir;
    created_dir_ = true;
  } else {
    std::filesystem::create_directories(options_.out_dir, ec);
    if (ec) return Status::Error("cannot create " + options_.out_dir + ": " + ec.message());
    dir_ = std::filesystem::absolute(options_.out_dir).lexically_normal().string();
    while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  }
  RemoveJoinedMarkers(dir_, kAtpMaxWorkers);  // a reused out_dir's
  RemoveStaleRuntimeDirs("");
  serial_ = g_fabrics_made++;
  prefix_ = "swemu-py-" + std::to_string(getpid()) + "-" + std::to_string(serial_);
  Status status = LoadFiles();
  if (!status.ok()) {
  } else if (files_ != nullptr) {
    status = StartTopology();
  } else {
    layout_ = std::make_unique<DemoLayout>(options_.workers, 1, dir_, prefix_);
    // sockaddr_un holds 107 characters.
    if (layout_->VhostSocket(0, 99).size() > 107) {
      status = Status::Error("out_dir " + dir_ + " is too long for Unix socket paths");
    } else {
      status = options_.transport == "dpdk" ? StartDpdk() : StartUdp();
    }
  }
  if (!status.ok()) {
    failed_ = swemu_ != nullptr || switches_ != nullptr;  // keep out_dir for swemu's logs
    started_ = true;              // so that Stop cleans up what did start
    (void)Stop();
    return status;
  }
  started_ = true;
  return Status::Ok();
}

Status Fabric::WriteJobs() {
  for (int i = 0; i < 2; ++i) {
    AtpJobSpec spec = files_ != nullptr
                          ? (i == 0 ? files_->job.aggregate : files_->job.plain).spec
                          : layout_->JobSpec(layout_->jobs()[i], options_.elements);
    if (udp_ != nullptr) {
      // Loopback addresses of this fabric: 127.A.B.(w+1), the PS 127.A.B.254, one port.
      for (uint32_t w = 0; w < spec.workers.size(); ++w) spec.workers[w].ip = udp_base_ | (w + 1);
      spec.ps.ip = udp_base_ | 254;
      spec.udp_port = udp_->local_port();
    }
    const std::string text = FormatAtpJobText(spec);
    Result<AtpJobConfig> job = ParseAtpJobConfig(text);  // what the workers will read
    if (!job.ok())
      return Status::Error("atp job " + std::to_string(spec.job_id) + ": " + job.message());
    jobs_[i] = *job;
    job_files_[i] = dir_ + "/job" + std::to_string(spec.job_id) + ".atp";
    SWEMU_RETURN_IF_ERROR(WriteTextFile(job_files_[i], text));
  }
  return Status::Ok();
}

Status Fabric::StartDpdk() {
  SWEMU_RETURN_IF_ERROR(WriteJobs());
  const std::string binary = SwemuBinary();
  if (binary.empty() || access(binary.c_str(), X_OK) != 0) {
    return Status::Error("cannot run the swemu binary '" + binary +
                         "': build the swemu target, or pass swemu_binary=");
  }
  const std::string base = dir_ + "/rack0";
  SWEMU_RETURN_IF_ERROR(WriteTextFile(base + ".cli", layout_->SwitchCli(0)));
  Result<std::string> ini = layout_->SwitchIni(0, base + ".cli", options_.elements,
                                                options_.aggregators, options_.link_rate);
  if (!ini.ok()) return ini.status();
  SWEMU_RETURN_IF_ERROR(WriteTextFile(base + ".ini", *ini));
  std::vector<std::string> ready = {layout_->ControlSocket(0)};
  std::error_code ignored;
  for (uint16_t port = 0; port < layout_->RackPorts(0); ++port) {
    std::filesystem::remove(layout_->VhostSocket(0, port), ignored);
    ready.push_back(layout_->VhostSocket(0, port));
  }
  std::filesystem::remove(layout_->ControlSocket(0), ignored);
  std::vector<std::string> args = {"--config", base + ".ini", "--control-socket",
                                   layout_->ControlSocket(0)};
  if (options_.busy_poll) args.push_back("--busy-poll");
  for (const char* eal : {"--", "-l", "0", "--no-huge", "-m", "256"}) args.push_back(eal);
  std::string program = binary;
  if (access(kSetpriv, X_OK) == 0) {
    args.insert(args.begin(), {"--pdeathsig", "KILL", "--", binary});
    program = kSetpriv;
  }
  swemu_ = std::make_unique<SwemuProcess>();
  SWEMU_RETURN_IF_ERROR(swemu_->Start(program, args, base + ".log"));
  Status up = swemu_->WaitForPaths(
      ready, std::chrono::milliseconds(static_cast<int64_t>(options_.start_timeout_s * 1000)));
  if (!up.ok()) {
    // swemu says why on its last line (a refused option, e.g. more elements than it parses).
    Result<std::string> log = ReadTextFile(swemu_->log_path(), "swemu's log");
    std::string last;
    if (log.ok()) {
      std::size_t end = log->find_last_not_of("\n");
      if (end != std::string::npos) {
        const std::size_t begin = log->rfind('\n', end);
        last = log->substr(begin == std::string::npos ? 0 : begin + 1,
                           end - (begin == std::string::npos ? 0 : begin + 1) + 1);
      }
    }
    return Status::Error(up.message() + (last.empty() ? std::string() : ": " + last));
  }
  Result<std::unique_ptr<DpdkHost>> dpdk =
      OpenDpdkPort("the AtpFabric's parameter server", prefix_ + "-ps",
                   layout_->HostDevargs(layout_->ps(), 0) + ",mac=" + FormatMac(layout_->ps().mac),
                   options_.ps_memory_mb);
  if (!dpdk.ok()) return dpdk.status();
  dpdk_ = std::move(*dpdk);
  return StartPs();
}

// The topology's switches (the processes back end's plan, under this fabric's out_dir), then the
// PS on the job's PS port.
Status Fabric::StartTopology() {
  const std::string binary = SwemuBinary();
  if (binary.empty() || access(binary.c_str(), X_OK) != 0) {
    return Status::Error("cannot run the swemu binary '" + binary +
                         "': build the swemu target, or pass swemu_binary=");
  }
  SWEMU_RETURN_IF_ERROR(WriteJobs());
  // The tag names the switches' EAL file prefixes: unique per fabric of this process.
  const pid_t tag =
      static_cast<pid_t>(((static_cast<uint32_t>(getpid()) << 8) | (serial_ & 0xFF)) & 0x7FFFFFFF);
  Result<TestbedPlan> plan = PlanProcessesTestbed(files_->topology, dir_, tag);
  if (!plan.ok()) return plan.status();
  plan_ = std::make_unique<TestbedPlan>(std::move(*plan));
  testbed_ = std::make_unique<TestbedOptions>();
  testbed_->swemu_binary = binary;
  testbed_->out_dir = dir_;
  testbed_->busy_poll = options_.busy_poll;
  switches_ = std::make_unique<TestbedRunner>(*plan_, *testbed_);
  SWEMU_RETURN_IF_ERROR(switches_->Build());
  SWEMU_RETURN_IF_ERROR(switches_->StartSwitches());
  const JobPlacement& at = files_->job.ps;
  Result<std::unique_ptr<DpdkHost>> dpdk = OpenDpdkPort(
      "the AtpFabric's parameter server", prefix_ + "-ps",
      ProcessesHostDevargs(dir_, at.sw, at.port, 0) + ",mac=" + FormatMac(jobs_[0].spec.ps.mac),
      options_.ps_memory_mb);
  if (!dpdk.ok()) return dpdk.status();
  dpdk_ = std::move(*dpdk);
  return StartPs();
}

Status Fabric::StartUdp() {
  // A /24 of 127/8 per fabric (from the pid and a serial), so that fabrics of several
  // processes, and the ports they pick, do not meet.
  const uint32_t h = static_cast<uint32_t>(getpid()) * 2654435761u + g_fabrics_made * 40503u;
  const Ipv4Addr base = MakeIpv4Addr(127, static_cast<uint8_t>(1 + h % 250),
                                     static_cast<uint8_t>((h >> 8) & 0xFF), 0);
  UdpSocketConfig config;
  config.bind_ip = base | 254;
  config.local_mac = layout_->ps().mac;
  config.socket_buffer_bytes = 16 << 20;
  Result<std::unique_ptr<UdpSocketTransport>> udp = UdpSocketTransport::Open(config);
  if (!udp.ok()) return Status::Error("the AtpFabric's parameter server: " + udp.message());
  udp_ = std::move(*udp);
  udp_base_ = base;
  SWEMU_RETURN_IF_ERROR(WriteJobs());
  for (const AtpJobConfig& job : jobs_) {
    for (const AtpHost& worker : job.spec.workers) {
      udp_->AddGroupMember(job.spec.group_ip, worker.ip, job.spec.udp_port);
    }
  }
  return StartPs();
}

Status Fabric::MakePsContext(std::unique_ptr<Context>* out) const {
  const AtpHost& ps = jobs_[0].spec.ps;
  Transport* transport = dpdk_ != nullptr ? static_cast<Transport*>(&dpdk_->port(0))
                                          : static_cast<Transport*>(udp_.get());
  auto ctx = std::make_unique<Context>(AtpHostConfig{ps.mac, ps.ip}, transport);
  AtpPsOptions ps_options;
  ps_options.history = kPsHistory;
  for (const AtpJobConfig& job : jobs_) SWEMU_RETURN_IF_ERROR(ctx->ServeJob(job, ps_options));
  *out = std::move(ctx);
  return Status::Ok();
}

Status Fabric::StartPs() {
  std::unique_ptr<Context> ctx;
  SWEMU_RETURN_IF_ERROR(MakePsContext(&ctx));
  ps_ = std::make_unique<PsEndpoint>(std::move(ctx));
  const bool busy_poll = options_.busy_poll;
  loop_.Start([this, busy_poll](LoopThread& loop) -> Status {
    bool go = true;
    auto service = [&loop, &go] {
      go = loop.Service();
      return !go;
    };
    if (dpdk_ != nullptr) {
      const bool registered = RegisterDpdkThread();
      HostRunnerOptions runner_options;
      runner_options.busy_poll = busy_poll;
      HostRunner runner(runner_options);
      runner.Add(*ps_, dpdk_->port(0));
      while (go) {
        (void)runner.RunUntil(service, kRunSliceNs, nullptr);
      }
      if (registered) UnregisterDpdkThread();
    } else {
      EventLoopOptions loop_options;
      loop_options.busy_poll = busy_poll;
      EventLoop events(loop_options);
      events.Add(udp_.get(), ps_.get());
      while (go) {
        (void)events.RunUntil(service, kRunSliceNs);
      }
    }
    return Status::Ok();
  });
  return Status::Ok();
}

Status Fabric::Stop() {
  std::lock_guard lock(mu_);
  if (!started_) return Status::Ok();
  started_ = false;
  loop_.Stop();
  Status closed = Status::Ok();
  if (dpdk_ != nullptr) {
    closed = dpdk_->Close();
    ReleaseDpdk();
    dpdk_.reset();
  }
  udp_.reset();
  ps_.reset();
  Status stopped = Status::Ok();
  if (swemu_ != nullptr) {
    if (swemu_->pid() > 0) {
      Result<int> exit_status = swemu_->Stop(kSwemuStopTimeout);
      if (!exit_status.ok()) {
        stopped = exit_status.status();
      } else if (*exit_status != 0) {
        stopped = Status::Error("swemu exited with status " + std::to_string(*exit_status) +
                                " (log: " + swemu_->log_path() + ")");
      }
    }
    swemu_.reset();
  }
  if (switches_ != nullptr) {
    Status torn_down = switches_->Teardown();
    if (stopped.ok()) stopped = torn_down;
    switches_.reset();
    plan_.reset();
    testbed_.reset();
  }
  RemoveStaleRuntimeDirs(prefix_);
  if (!closed.ok() || !stopped.ok()) failed_ = true;
  if (created_dir_ && !failed_) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  SWEMU_RETURN_IF_ERROR(closed);
  return stopped;
}

Status Fabric::Reset() {
  std::lock_guard lock(mu_);
  if (!started_) return Status::Error("the fabric is not started");
  // Aggregators still holding a dead group's partial sums would capture the new group's
  // packets of the same seqs.
  for (const auto& [name, socket] : Switches()) {
    const bool atp = plan_ == nullptr || std::any_of(files_->topology.switches.begin(),
                                                     files_->topology.switches.end(),
                                                     [&name](const LoadedSwitchConfig& sw) {
                                                       return sw.config.name == name &&
                                                              sw.config.program == "atp";
                                                     });
    if (!atp) continue;
    for (const char* reg : {"atp_id", "atp_bitmap", "atp_count", "atp_value", "atp_overflow"}) {
      Result<std::string> reply = SwitchCommand(std::string("register_reset ") + reg, name);
      if (!reply.ok()) return reply.status();
    }
  }
  std::unique_ptr<Context> fresh;
  SWEMU_RETURN_IF_ERROR(MakePsContext(&fresh));
  SWEMU_RETURN_IF_ERROR(loop_.Call([this, &fresh] { ps_->Replace(std::move(fresh)); }));
  RemoveJoinedMarkers(dir_, options_.workers);
  return Status::Ok();
}

Result<std::string> Fabric::WorkerSpec(int rank) const {
  std::lock_guard lock(mu_);
  if (!started_) return Status::Error("the fabric is not started (call start() first)");
  python::WorkerSpec spec;
  spec.transport = options_.transport;
  spec.workers = options_.workers;
  spec.job_file = job_files_[options_.aggregate ? 0 : 1];
  spec.socket_dir = dir_;
  spec.file_prefix = prefix_;
  spec.rank = rank;
  if (files_ != nullptr) {
    for (const JobPlacement& at : files_->job.workers) spec.ports.push_back({at.sw, at.port});
  }
  return FormatWorkerSpec(spec);
}

Result<std::string> Fabric::SwitchCommand(const std::string& line, const std::string& sw) {
  std::lock_guard lock(mu_);
  if (!started_) return Status::Error("the fabric is not started");
  const auto switches = Switches();
  if (switches.empty()) {
    return Status::Error("this fabric has no switch (transport '" + options_.transport + "')");
  }
  std::string names;
  for (std::size_t s = 0; s < switches.size(); ++s) {
    if (sw.empty() || switches[s].first == sw) {
      SwemuProcess& process = switches_ != nullptr ? *switches_->switches()[s] : *swemu_;
      return process.Command(switches[s].second, line);
    }
    names += (s == 0 ? "" : ", ") + switches[s].first;
  }
  return Status::Error("no switch named '" + sw + "' (the fabric's: " + names + ")");
}

Counters Fabric::Snapshot() const {
  const Context& ctx = ps_->ctx();
  const AtpPsStats& s = *ctx.ps_stats(job_id());
  Counters c = {
      {"job", job_id()},
      {"gradients", s.gradients},
      {"originals", s.originals},
      {"partials", s.partials},
      {"full", s.full},
      {"float_packets", s.float_packets},
      {"duplicates", s.duplicates},
      {"partial_overlaps", s.partial_overlaps},
      {"replaced", s.replaced},
      {"overflow_ignored", s.overflow_ignored},
      {"bad_packets", s.bad_packets},
      {"slot_busy", s.slot_busy},
      {"history_misses", s.history_misses},
      {"completed", s.completed},
      {"completed_by_switch", s.completed_by_switch},
      {"elements_by_switch", s.elements_by_switch},
      {"elements_at_ps", s.elements_at_ps},
      {"params_sent", s.params_sent},
      {"param_resends", s.param_resends},
      {"send_failures", s.send_failures},
      {"frames_not_atp", ctx.counters().not_atp},
      {"frames_unknown_job", ctx.counters().unknown_job},
  };
  AppendTransportCounters(dpdk_.get(), udp_.get(), &c);
  return c;
}

Result<Counters> Fabric::Stats() {
  std::lock_guard lock(mu_);
  if (!started_) return Status::Error("the fabric is not started");
  Counters counters;
  SWEMU_RETURN_IF_ERROR(loop_.Call([&] { counters = Snapshot(); }));
  return counters;
}

void RegisterWorker(FabricWorker* worker) {
  std::lock_guard lock(g_registry_mu);
  g_workers.insert(worker);
}

void UnregisterWorker(FabricWorker* worker) {
  std::lock_guard lock(g_registry_mu);
  g_workers.erase(worker);
}

void ShutdownAll() {
  std::set<Fabric*> fabrics;
  std::set<FabricWorker*> workers;
  {
    std::lock_guard lock(g_registry_mu);
    fabrics = g_fabrics;
    workers = g_workers;
  }
  for (FabricWorker* worker : workers) (void)worker->Close();
  for (Fabric* fabric : fabrics) (void)fabric->Stop();
  CleanupDpdkAtExit();
}

}  // namespace swemu::python
