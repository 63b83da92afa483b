#include "hostlib/python/worker.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "hostlib/common/event_loop.h"
#include "hostlib/common/udp_socket_transport.h"
#include "hostlib/dpdk/dpdk_host.h"
#include "hostlib/dpdk/host_net.h"
#include "hostlib/dpdk/host_runner.h"
#include "hostlib/python/dpdk_process.h"
#include "hostlib/testbed/atp_job_file.h"
#include "hostlib/testbed/demo_layout.h"
#include "hostlib/testbed/processes_plan.h"
#include "pipeline/core/text_file.h"

namespace swemu::python {

void AppendTransportCounters(DpdkHost* dpdk, UdpSocketTransport* udp, Counters* c) {
  if (dpdk != nullptr) {
    const DpdkPortCounters& p = dpdk->port(0).counters();
    c->insert(c->end(), {{"port_rx_frames", p.rx_frames},
                         {"port_tx_frames", p.tx_frames},
                         {"port_tx_no_buffer", p.tx_no_buffer},
                         {"port_tx_port_full", p.tx_port_full}});
  } else if (udp != nullptr) {
    const UdpSocketCounters& u = udp->counters();
    c->insert(c->end(), {{"udp_datagrams_sent", u.datagrams_sent},
                         {"udp_send_errors", u.send_errors},
                         {"udp_datagrams_received", u.datagrams_received}});
  }
}
namespace {

constexpr TimeNs kRunSliceNs = 1'000'000'000;

// The transport's socket shares its address (SO_REUSEADDR), so a second Worker of the same
// rank would bind too and take the first one's datagrams. A plain bind first (TryBindUdp) says
// whether the address is free. A published job's rank (`net`) binds the job's port on every
// address, so any other rank or PS of the job on this machine (or namespace) holds it too.
Status CheckUdpAddressFree(Ipv4Addr ip, uint16_t port, bool published) {
  const int error = TryBindUdp(ip, port);
  if (error == 0) return Status::Ok();
  if (error == EADDRNOTAVAIL) {
    return Status::Error("the job gives this rank " + FormatIpv4(ip) +
                         ", which is not an address of this machine (or namespace)");
  }
  return Status::Error(
      FormatIpv4(ip) + ":" + std::to_string(port) + " is taken (" + std::strerror(error) +
      (published ? "): a rank or the PS of this job already runs on this machine (or namespace); "
                   "over kernel UDP each rank binds the job's port on every address, so one "
                   "rank per machine"
                 : "): another Worker of this rank is running"));
}

// The job a Worker of `spec` runs. A published job's (transport net) is read as swemu-atp
// worker and ps read it (LoadPublishedAtpJob: a host's rack is its switch, so the switch
// aggregates the workers on it); a fabric's is plain job text.
Result<AtpJobConfig> ReadWorkerJob(const WorkerSpec& spec) {
  if (spec.transport == "net") {
    Result<AtpJobFile> published = LoadPublishedAtpJob(spec.job_file);
    if (!published.ok()) return published.status();
    return published->aggregate;
  }
  Result<std::string> text = ReadTextFile(spec.job_file, "job file");
  if (!text.ok()) return text.status();
  Result<AtpJobConfig> job = ParseAtpJobConfig(*text);
  if (!job.ok()) return Status::Error(spec.job_file + ": " + job.message());
  return job;
}

// The DPDK port of a Worker: a fabric's switch port over virtio_user (transport dpdk), or a
// published job's rank on the port its caller names (net with port=), as `swemu-atp worker
// --port` runs it: whole frames with the job's MACs, the switch's replicas of the group's
// parameter packets come to the port, so no group to join and no socket to claim.
Result<std::unique_ptr<DpdkHost>> OpenRankPort(const WorkerSpec& spec, uint32_t rank,
                                               const AtpJobConfig& job,
                                               const WorkerOptions& options) {
  const std::string who = "worker " + std::to_string(rank);
  const AtpHost& host = job.spec.workers[rank];
  if (spec.transport == "net") {
    if (Status macs = NeedMacs(std::vector<AtpHost>{host, job.spec.ps}); !macs.ok()) {
      return Status::Error(who + ": " + macs.message());
    }
    return OpenDpdkPort(who,
                        "swemu-py-job-w" + std::to_string(rank) + "-" + std::to_string(getpid()),
                        spec.port, options.dpdk_memory_mb);
  }
  std::string socket, devargs;
  if (!spec.ports.empty()) {  // a topology's switch port (the processes back end)
    const WorkerPort& at = spec.ports[rank];
    socket = ProcessesHostSocket(spec.socket_dir, at.sw, at.port);
    devargs = ProcessesHostDevargs(spec.socket_dir, at.sw, at.port, 0);
  } else {
    DemoLayout layout(spec.workers, 1, spec.socket_dir, spec.file_prefix);
    const DemoHost& port_host = layout.hosts()[rank];
    socket = layout.VhostSocket(port_host.rack, port_host.port);
    devargs = layout.HostDevargs(port_host, 0);
  }
  if (!std::filesystem::exists(socket)) {
    return Status::Error(who + ": no switch socket " + socket +
                         " (is the AtpFabric started, and this its spec?)");
  }
  return OpenDpdkPort(
      who, spec.file_prefix + "-w" + std::to_string(rank) + "-" + std::to_string(getpid()),
      devargs + ",mac=" + FormatMac(host.mac), options.dpdk_memory_mb);
}

}  // namespace

Result<std::unique_ptr<FabricWorker>> FabricWorker::Open(const WorkerSpec& spec, uint32_t rank,
                                                         const WorkerOptions& options) {
  const std::string who = "worker " + std::to_string(rank);
  Result<AtpJobConfig> job = ReadWorkerJob(spec);
  if (!job.ok()) return Status::Error(who + ": " + job.message());
  if (spec.workers > 0 && job->num_workers() != spec.workers) {
    return Status::Error(who + ": " + spec.job_file + " has " + std::to_string(job->num_workers()) +
                         " workers, the spec says " + std::to_string(spec.workers));
  }
  if (rank >= job->num_workers()) {
    return Status::Error(who + ": the job has " + std::to_string(job->num_workers()) +
                         " workers (ranks 0.." + std::to_string(job->num_workers() - 1) + ")");
  }
  if (options.lanes == 0 || options.lanes > 64) return Status::Error(who + ": lanes must be 1..64");
  // A published job's rank is claimed by its address (one machine owns it, one socket binds
  // it), as swemu-atp worker's is; no fabric resets it, so no marker file.
  if (spec.transport == "net") return OpenJoined(spec, rank, options, *job);
  // One Worker per rank until the fabric's next reset(): a second one would start the job's
  // seqs again from 0, and the PS (and switch) would answer it with sums of the first one's.
  const std::string marker = JoinedMarker(spec.job_file, rank);
  const int fd = open(marker.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST) {
    return Status::Error(who + ": rank " + std::to_string(rank) +
                         " has already joined this fabric's job (a Worker of this rank ran "
                         "before, and the job's seqs went on). For a new group of workers, call "
                         "AtpFabric.reset() once every worker of the previous one has ended");
  }
  if (fd < 0) return Status::Error(who + ": cannot create " + marker + ": " + std::strerror(errno));
  const std::string pid = std::to_string(getpid()) + "\n";
  (void)!write(fd, pid.data(), pid.size());
  close(fd);
  Result<std::unique_ptr<FabricWorker>> opened = OpenJoined(spec, rank, options, *job);
  if (!opened.ok()) unlink(marker.c_str());  // it never sent anything: the rank is free again
  return opened;
}

std::string JoinedMarker(const std::string& job_file, uint32_t rank) {
  return std::filesystem::path(job_file).parent_path().string() + "/rank" + std::to_string(rank) +
         ".joined";
}

Result<std::unique_ptr<FabricWorker>> FabricWorker::OpenJoined(const WorkerSpec& spec,
                                                               uint32_t rank,
                                                               const WorkerOptions& options,
                                                               const AtpJobConfig& job_config) {
  const std::string who = "worker " + std::to_string(rank);
  const AtpJobConfig* job = &job_config;
  std::unique_ptr<FabricWorker> w(new FabricWorker());
  w->transport_ = spec.transport;
  w->rank_ = rank;
  w->job_ = *job;
  w->options_ = options;
  const AtpHost& host = job->spec.workers[rank];
  Transport* transport = nullptr;
  if (spec.transport == "dpdk" || !spec.port.empty()) {
    Result<std::unique_ptr<DpdkHost>> dpdk = OpenRankPort(spec, rank, *job, options);
    if (!dpdk.ok()) return dpdk.status();
    w->dpdk_ = std::move(*dpdk);
    transport = &w->dpdk_->port(0);
  } else {
    Status free = CheckUdpAddressFree(host.ip, job->spec.udp_port, spec.transport == "net");
    if (!free.ok()) return Status::Error(who + ": " + free.message());
    UdpSocketConfig config;
    config.bind_ip = host.ip;
    config.port = job->spec.udp_port;
    config.local_mac = host.mac;
    const bool net = spec.transport == "net";
    if (net) {
      // Bound to any address: Linux gives a group's datagrams only to sockets bound to the
      // group or to INADDR_ANY, and the PS's unicast resends come to the rank's IP.
      config.bind_ip = 0;
      config.multicast_if = host.ip;
    }
    Result<std::unique_ptr<UdpSocketTransport>> udp = UdpSocketTransport::Open(config);
    if (!udp.ok()) return Status::Error(who + ": " + udp.message());
    w->udp_ = std::move(*udp);
    if (net) {
      if (Status g = w->udp_->JoinGroup(job->spec.group_ip); !g.ok()) {
        return Status::Error(who + ": group " + FormatIpv4(job->spec.group_ip) + ": " +
                             g.message());
      }
    }
    transport = w->udp_.get();
  }
  w->ctx_ = std::make_unique<Context>(AtpHostConfig{host.mac, host.ip}, transport);
  AtpWorkerOptions worker_options;
  worker_options.lanes = options.lanes;
  Status joined = w->ctx_->JoinJob(*job, worker_options);
  if (!joined.ok()) {
    (void)w->Close();
    return Status::Error(who + ": " + joined.message());
  }
  Status started = w->StartLoop();
  if (!started.ok()) {
    (void)w->Close();
    return Status::Error(who + ": " + started.message());
  }
  return w;
}

FabricWorker::~FabricWorker() { (void)Close(); }

Status FabricWorker::StartLoop() {
  auto body = [this](LoopThread& loop) -> Status {
    bool go = true;
    auto service = [&loop, &go] {
      go = loop.Service();
      return !go;
    };
    if (dpdk_ != nullptr) {
      dpdk_registered_ = RegisterDpdkThread();
      HostRunnerOptions runner_options;
      runner_options.busy_poll = options_.busy_poll;
      HostRunner runner(runner_options);
      runner.Add(*ctx_, dpdk_->port(0));
      while (go) {
        (void)runner.RunUntil(service, kRunSliceNs, nullptr);
      }
      if (dpdk_registered_) UnregisterDpdkThread();
    } else {
      EventLoopOptions loop_options;
      loop_options.busy_poll = options_.busy_poll;
      EventLoop events(loop_options);
      events.Add(udp_.get(), ctx_.get());
      while (go) {
        (void)events.RunUntil(service, kRunSliceNs);
      }
    }
    return Status::Ok();
  };
  loop_.Start(body, [this] { Tick(); });
  return Status::Ok();
}

void FabricWorker::Tick() {
  if (running_.empty()) return;
  bool changed = false;
  while (!running_.empty()) {
    CallState& call = *running_.front();
    if (!call.chunks.back()->done()) break;  // calls complete in order
    const auto now = std::chrono::steady_clock::now();
    {
      std::lock_guard lock(loop_.mutex());
      call.done = true;
      call.seconds = std::chrono::duration<double>(now - call.submitted).count();
      for (const AllReduceJob* chunk : call.chunks)
        call.switch_overflows += chunk->overflow_results();
    }
    ++calls_completed_;
    running_.erase(running_.begin());
    changed = true;
  }
  if (changed) loop_.Notify();
}

Result<std::shared_ptr<CallState>> FabricWorker::Submit(float* data, std::size_t n) {
  if (closed_) return Status::Error("worker " + std::to_string(rank_) + " is closed");
  const uint32_t e = job_.spec.elements;
  // A job's seqs run on across calls and are 32 bits on the wire; the PS cannot follow them past
  // the wrap (hostlib/atp/ps.h), so the call that would cross it is refused.
  const uint64_t packets = (uint64_t{n} + e - 1) / e;
  if (submitted_packets_ + packets > (uint64_t{1} << 32)) {
    return Status::Error("worker " + std::to_string(rank_) + ": this call of " +
                         std::to_string(packets) + " packets would take the job past 2^32 " +
                         "packets (" + std::to_string(submitted_packets_) +
                         " sent so far), which ATP's 32-bit seqs cannot number: end the workers "
                         "and reset() the fabric to start the job again");
  }
  auto call = std::make_shared<CallState>();
  call->n = n;
  const double limit = 2147483647.5 / job_.spec.scale;
  for (std::size_t i = 0; i < n; ++i) {
    const float x = data[i];
    if (!std::isfinite(x)) {
      ++call->nonfinite;
    } else if (std::fabs(static_cast<double>(x)) >= limit) {
      ++call->past_int32;
    }
  }
  call->packets = static_cast<uint32_t>((n + e - 1) / e);
  call->elements_before = submitted_elements_;
  call->submitted = std::chrono::steady_clock::now();
  if (n == 0) {  // nothing to send: done at once, even behind calls still running
    std::lock_guard lock(loop_.mutex());
    call->done = true;
    ++calls_submitted_;
    ++calls_empty_;
    return call;
  }
  const uint16_t job_id = job_.spec.job_id;
  const bool queued = loop_.Post([this, call, data, n, e, job_id] {
    const std::size_t chunk = std::size_t{kChunkPackets} * e;
    for (std::size_t first = 0; first < n; first += chunk) {
      const std::size_t count = std::min(chunk, n - first);
      call->chunks.push_back(ctx_->AllReduce(job_id, data + first, data + first, count));
    }
    running_.push_back(call);
  });
  if (!queued) {
    const std::string why = loop_.exit_message();
    return Status::Error("worker " + std::to_string(rank_) + ": its host loop is not running" +
                         (why.empty() ? std::string() : ": " + why));
  }
  submitted_elements_ += n;
  submitted_packets_ += packets;
  ++calls_submitted_;
  return call;
}

bool FabricWorker::WaitFor(const CallState& call, std::chrono::nanoseconds timeout) {
  std::unique_lock lock(loop_.mutex());
  return loop_.cv().wait_for(
      lock, timeout, [&] { return call.done || call.abandoned || !loop_.running_locked(); });
}

bool FabricWorker::Done(const CallState& call) {
  std::lock_guard lock(loop_.mutex());
  return call.done;
}

std::string FabricWorker::Describe(const CallState& call) const {
  const AtpWorkerStats& s = *ctx_->worker_stats(job_.spec.job_id);
  const uint64_t completed = s.elements_completed;
  std::string text;
  if (completed < call.elements_before) {
    text = "it had not started: an earlier call of this worker has not completed either (" +
           std::to_string(call.elements_before - completed) + " of its elements still missing)";
  } else {
    text = std::to_string(std::min<uint64_t>(completed - call.elements_before, call.n)) + " of " +
           std::to_string(call.n) + " elements summed";
  }
  return text + ". This worker sent " + std::to_string(s.packets_sent) + " packets (" +
         std::to_string(s.retransmissions) + " retransmissions, " + std::to_string(s.timeouts) +
         " timeouts) and received " + std::to_string(s.params_received) +
         " parameter packets. The parameter server completes a packet only once every worker's "
         "gradient is in: another worker has likely died, stopped calling all_reduce, or called "
         "it with other sizes (or the switch or the fabric is gone). The call keeps running and "
         "may still write the array; close the worker if the job is lost";
}

std::string FabricWorker::Unfinished(const CallState& call, double timeout_s) {
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%g", timeout_s);
  std::string head = "all_reduce of " + std::to_string(call.n) + " elements (" +
                     std::to_string(call.packets) + " packets of " +
                     std::to_string(job_.spec.elements) + ") on worker " + std::to_string(rank_) +
                     " of " + std::to_string(workers()) + " (job " +
                     std::to_string(job_.spec.job_id) + ", " + transport_ + ")";
  if (closed_) return head + " did not complete: the worker was closed first";
  std::string detail;
  Status described = loop_.Call([&] { detail = Describe(call); });
  if (!described.ok()) return head + " did not complete: " + described.message();
  return head + " did not complete within " + seconds + " s: " + detail;
}

Counters FabricWorker::Snapshot() const {
  const AtpWorkerStats& s = *ctx_->worker_stats(job_.spec.job_id);
  Counters c = {
      {"rank", rank_},
      {"workers", workers()},
      {"job", job_.spec.job_id},
      {"calls_submitted", calls_submitted_.load()},
      {"calls_completed", calls_completed_ + calls_empty_.load()},
      {"packets_sent", s.packets_sent},
      {"bytes_sent", s.bytes_sent},
      {"retransmissions", s.retransmissions},
      {"fast_retransmits", s.fast_retransmits},
      {"timeouts", s.timeouts},
      {"tail_probes", s.tail_probes},
      {"spurious_fast", s.spurious_fast},
      {"spurious_timeouts", s.spurious_timeouts},
      {"ecn_halvings", s.ecn_halvings},
      {"loss_halvings", s.loss_halvings},
      {"float_packets", s.float_packets},
      {"send_failures", s.send_failures},
      {"params_received", s.params_received},
      {"duplicate_params", s.duplicate_params},
      {"stale_params", s.stale_params},
      {"overflow_results", s.overflow_results},
      {"elements_completed", s.elements_completed},
      {"atp_calls_completed", s.calls_completed},
      {"window_bytes", s.window_bytes},
      {"rtt_samples", s.rtt_samples},
      {"srtt_ns", s.srtt_ns},
      {"frames_not_atp", ctx_->counters().not_atp},
      {"frames_unknown_job", ctx_->counters().unknown_job},
  };
  AppendTransportCounters(dpdk_.get(), udp_.get(), &c);
  return c;
}

Result<Counters> FabricWorker::Stats() {
  if (closed_) return Status::Error("worker " + std::to_string(rank_) + " is closed");
  Counters counters;
  SWEMU_RETURN_IF_ERROR(loop_.Call([&] { counters = Snapshot(); }));
  return counters;
}

Status FabricWorker::Close() {
  if (closed_) return close_error_.empty() ? Status::Ok() : Status::Error(close_error_);
  closed_ = true;
  loop_.Stop();
  {
    std::lock_guard lock(loop_.mutex());
    for (auto& call : running_) {
      if (!call->done) call->abandoned = true;
    }
  }
  loop_.Notify();
  running_.clear();
  if (dpdk_ != nullptr) {
    Status status = dpdk_->Close();
    ReleaseDpdk();
    if (!status.ok()) close_error_ = "worker " + std::to_string(rank_) + ": " + status.message();
  }
  udp_.reset();
  return close_error_.empty() ? Status::Ok() : Status::Error(close_error_);
}

}  // namespace swemu::python
