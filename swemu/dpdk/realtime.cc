#include "swemu/dpdk/realtime.h"

#include <pthread.h>
#include <rte_lcore.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "pipeline/core/output_files.h"
#include "pipeline/engine/telemetry.h"
#include "swemu/control_mailbox.h"
#include "swemu/control_server.h"
#include "swemu/control_socket.h"
#include "swemu/cpu_pump.h"
#include "swemu/digest_pump.h"
#include "swemu/dpdk/datapath.h"
#include "swemu/dpdk/eal.h"
#include "swemu/dpdk/mbuf_pool.h"
#include "swemu/dpdk/pcap_recorder.h"
#include "swemu/dpdk/ports.h"
#include "swemu/dpdk/shard.h"
#include "swemu/dpdk/tsc_clock.h"
#include "swemu/replica_merge.h"
#include "swemu/switch_config.h"

namespace swemu {
namespace {

std::atomic<bool> g_stop{false};  // lock-free, so safe to set from a signal handler
static_assert(std::atomic<bool>::is_always_lock_free);

void OnSignal(int) { g_stop.store(true, std::memory_order_relaxed); }

void InstallSignalHandlers() {
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  // SIGHUP and SIGQUIT stop the switch as SIGTERM does (a closed terminal, Ctrl-\).
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaction(sig, &action, nullptr);
}

Result<LoadedSwitchConfig> LoadRealtimeConfig(const CommandLine& cmd) {
  if (cmd.config.empty()) {
    return Status::Error(
        "--config: required in real time (--topology runs with --offline or --backend netns)");
  }
  if (!cmd.inputs.empty()) return Status::Error("--in: only with --offline");
  if (!cmd.out_dir.empty()) return Status::Error("--out-dir: only with --offline");
  Result<LoadedSwitchConfig> loaded = LoadSwitchConfig(cmd.config);
  if (!loaded.ok()) return loaded;
  if (loaded->port_devargs.empty()) {
    return Status::Error(
        cmd.config +
        ": no [port.N] devargs: real time needs at least one DPDK port (or add --offline "
        "to run it in virtual time on pcaps)");
  }
  if (cmd.seed) loaded->config.seed = *cmd.seed;
  return loaded;
}

// What one lcore owns: its replica of the switch ([dpdk] workers), the mailbox it polls and its
// datapath.
struct Replica {
  std::unique_ptr<LoopClock> clock;  // the switch's: latched once per loop by the datapath
  std::unique_ptr<Switch> sw;
  ControlMailbox mailbox;
  std::unique_ptr<ShardRouter> router;  // only with several lcores
  std::unique_ptr<Datapath> datapath;
};

// One switch of the process, between rte_eal_init and rte_eal_cleanup, destroyed in reverse
// order: ports before the switches. The pool their packets come from is the process's.
struct Realtime {
  MbufPacketPool* pool = nullptr;
  TscClock clock;
  std::unique_ptr<ShardRings> rings;  // only with several lcores
  std::vector<std::unique_ptr<Replica>> replicas;
  DpdkPorts ports;
  std::mutex control_lines;  // several lcores: one line at a time runs on every replica
  std::unique_ptr<PcapRecorder> recorder;
  std::unique_ptr<ControlServer> control;  // destroyed first: no command reaches a dead lcore
  std::unique_ptr<DigestPump> digests;     // a program with digests: its control plane
  std::unique_ptr<CpuPump> cpu_pump;       // several lcores and a CPU port agent: its rounds

  Switch& sw() { return *replicas.front()->sw; }
  Datapath& datapath() { return *replicas.front()->datapath; }
};

// --config's switch and each --also-switch's, on one mbuf pool (a frame one switch sends
// another over a link in the process is the other's to free), destroyed before the pool.
struct Process {
  std::unique_ptr<MbufPacketPool> pool;
  std::vector<std::unique_ptr<Realtime>> switches;

  ~Process() {
    while (!switches.empty()) switches.pop_back();  // the last started goes first
  }
};

// A line runs on replica 0 first and, only when it succeeds there, on the others, so the
// replicas hold the same tables and settings. The answer is replica 0's, except for the reads
// replica_merge.h merges (counters, registers, runtime, and a program's reads by the rule each
// declares): each lcore answers between its bursts, one after the other, and the answers become
// one for the whole switch. The command table read here is fixed once the switch is loaded.
Result<std::string> ExecuteEverywhere(Realtime& rt, const std::string& line) {
  if (rt.replicas.size() == 1) return rt.replicas.front()->mailbox.Execute(line);
  std::lock_guard<std::mutex> lock(rt.control_lines);
  Result<std::string> first = rt.replicas.front()->mailbox.Execute(line);
  if (!first.ok()) return first;
  std::vector<std::string> answers = {*first};
  for (std::size_t i = 1; i < rt.replicas.size(); ++i) {
    Result<std::string> other = rt.replicas[i]->mailbox.Execute(line);
    if (!other.ok()) return Status::Error("lcore " + std::to_string(i) + ": " + other.message());
    answers.push_back(std::move(*other));
  }
  const MergeRule rule = MergeRuleFor(line);
  std::string merged = MergeAnswers(rt.sw().commands(), line, answers);
  // Frames handed from one lcore to another sit in the shard rings, in no replica's TM: said
  // so that show stats adds up (rx = tx + drops + consumed + queued + between lcores).
  if (rule == MergeRule::kShowStats && rt.rings) {
    uint64_t between = 0;
    for (uint32_t to = 0; to < rt.rings->lcores(); ++to) between += rt.rings->PendingFor(to);
    merged += "between lcores (shard rings): " + std::to_string(between) + "\n";
  }
  return merged;
}

// Threads that serve the lcores (the control server, telemetry, stats) are created from the
// main lcore and would inherit its one CPU: each of their mailbox calls then waited for the
// busy lcore's time slice (~4 ms a command or a sample). While one lives, the creating thread
// runs on the CPUs no lcore uses (all CPUs when the lcores take every one), so its threads do.
class OffLcoreCpus {
 public:
  OffLcoreCpus() {
    if (pthread_getaffinity_np(pthread_self(), sizeof(saved_), &saved_) != 0) return;
    cpu_set_t all, free;
    CPU_ZERO(&all);
    const long cpus = std::min<long>(sysconf(_SC_NPROCESSORS_ONLN), CPU_SETSIZE);
    for (long c = 0; c < cpus; ++c) CPU_SET(c, &all);
    free = all;
    unsigned lcore = 0;
    RTE_LCORE_FOREACH(lcore) CPU_CLR(rte_lcore_to_cpu_id(lcore), &free);
    restore_ = pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t),
                                      CPU_COUNT(&free) > 0 ? &free : &all) == 0;
  }
  ~OffLcoreCpus() {
    if (restore_) pthread_setaffinity_np(pthread_self(), sizeof(saved_), &saved_);
  }
  OffLcoreCpus(const OffLcoreCpus&) = delete;
  OffLcoreCpus& operator=(const OffLcoreCpus&) = delete;

 private:
  cpu_set_t saved_{};
  bool restore_ = false;
};

// The control socket serves the switch's command table; each line is executed by the lcore
// between bursts (through the mailbox), so live changes take no lock on the fast path.
Status StartControl(const CommandLine& cmd, Realtime& rt) {
  if (cmd.control_socket == "none" && cmd.control_tcp.empty()) return Status::Ok();
  ControlServerConfig config;
  config.unix_path = cmd.control_socket.empty()     ? DefaultControlSocketPath()
                     : cmd.control_socket == "none" ? ""
                                                    : cmd.control_socket;
  config.mode = static_cast<mode_t>(cmd.control_mode);
  config.tcp = cmd.control_tcp;
  rt.control = std::make_unique<ControlServer>(
      config, [&rt](const std::string& line) { return ExecuteEverywhere(rt, line); });
  OffLcoreCpus off_lcores;
  return rt.control->Start();
}

// A program that sends digests (MAC learning) gets its control plane: a thread that drains
// every replica's channel each millisecond and delivers the records to all replicas alike.
void StartDigestPump(Realtime& rt) {
  if (rt.sw().digests() == nullptr) return;
  DigestPumpHooks hooks;
  hooks.replicas = static_cast<uint32_t>(rt.replicas.size());
  hooks.drain = [&rt](uint32_t i, std::vector<DigestRecord>* out) {
    Replica& replica = *rt.replicas[i];
    return replica.mailbox.Call([&replica, out] {
      std::vector<DigestRecord> drained = replica.sw->digests()->DrainAll();
      out->insert(out->end(), drained.begin(), drained.end());
    });
  };
  hooks.execute = [&rt](const std::string& line) { return ExecuteEverywhere(rt, line); };
  hooks.now = [&rt] { return rt.clock.NowNs(); };
  rt.digests = std::make_unique<DigestPump>(std::move(hooks), 1'000'000, 100'000'000);
  OffLcoreCpus off_lcores;
  rt.digests->Start();
}

// Several lcores and a program with a control plane behind the CPU port (router interfaces):
// the replicas' agents become one, fed by the pump (cpu_pump.h), whose rounds RunLcores runs.
void ShareCpuPort(Realtime& rt) {
  if (rt.replicas.size() == 1 || !rt.sw().cpu().attached()) return;
  std::vector<CpuPath*> paths;
  for (auto& replica : rt.replicas) paths.push_back(&replica->sw->cpu());
  CpuPump::Share(paths, rt.clock.NowNs());
  CpuPumpHooks hooks;
  hooks.replicas = static_cast<uint32_t>(rt.replicas.size());
  hooks.on_replica = [&rt](uint32_t i, const std::function<void(CpuPath&)>& task) {
    Replica& replica = *rt.replicas[i];
    return replica.mailbox.Call([&replica, &task] { task(replica.sw->cpu()); });
  };
  hooks.now = [&rt] { return rt.clock.NowNs(); };
  hooks.free = [&rt](Packet* pkt) { rt.pool->Free(pkt); };
  hooks.command_lock = &rt.control_lines;
  rt.cpu_pump = std::make_unique<CpuPump>(std::move(hooks));
}

// Loss streams seeded from [switch] seed; delay lines sized for each device port's configured
// delay at its configured rate (port_effects.h).
void InitPortEffects(const LoadedSwitchConfig& loaded, Realtime& rt) {
  const SwitchConfig& config = loaded.config;
  for (PortId p = 0; p < config.num_ports; ++p) {
    const uint64_t rate = config.tm.PortRateBps(p);
    auto it = loaded.port_effects.find(p);
    const PortWireEffects effects =
        it == loaded.port_effects.end() ? PortWireEffects{} : it->second;
    bool device = false;
    for (const auto& devargs : loaded.port_devargs) device = device || devargs.first == p;
    const uint32_t frames =
        device ? PortEffects::DelayLineFrames(effects.delay_ns, rate, config.tm.wire_overhead_bytes,
                                              loaded.mbufs)
               : 0;
    for (auto& replica : rt.replicas) {
      replica->datapath->InitPortEffects(config.seed, p, frames, effects.loss, effects.delay_ns);
    }
  }
}

// --pcap-dir: the listed ports (default every port with devargs) must have devargs.
Status StartRecorder(const CommandLine& cmd, const LoadedSwitchConfig& loaded, Realtime& rt) {
  if (cmd.pcap_dir.empty()) return Status::Ok();
  std::vector<PortId> ports;
  for (const auto& devargs : loaded.port_devargs) ports.push_back(devargs.first);
  if (!cmd.pcap_ports.empty()) {
    for (uint16_t p : cmd.pcap_ports) {
      bool device = false;
      for (PortId q : ports) device = device || q == p;
      if (!device) {
        return Status::Error("--pcap-ports: port " + std::to_string(p) +
                             " has no [port.N] devargs in " + cmd.config);
      }
    }
    ports.assign(cmd.pcap_ports.begin(), cmd.pcap_ports.end());
  }
  const auto lcores = static_cast<uint32_t>(rt.replicas.size());
  Result<std::unique_ptr<PcapRecorder>> recorder = PcapRecorder::Start(
      cmd.pcap_dir, ports, rt.sw().num_ports(), cmd.pcap_snaplen, lcores, cmd.pcap_max_bytes);
  if (!recorder.ok()) return recorder.status();
  rt.recorder = std::move(*recorder);
  // Wall-clock timestamps from the TSC clock: one offset taken now.
  timespec wall = {};
  clock_gettime(CLOCK_REALTIME, &wall);
  const uint64_t wall_ns = uint64_t(wall.tv_sec) * 1'000'000'000ull + uint64_t(wall.tv_nsec);
  for (uint32_t i = 0; i < lcores; ++i) {
    rt.replicas[i]->datapath->SetRecorder(rt.recorder.get(), &rt.recorder->ring(i),
                                          wall_ns - rt.clock.NowNs());
  }
  return Status::Ok();
}

// One switch on the process's pool (rt.pool): replicas, startup script, control, ports.
Status SetUp(const CommandLine& cmd, const LoadedSwitchConfig& loaded, std::ostream& out,
             Realtime& rt) {
  const std::string name = loaded.config.name;
  if (loaded.workers > 1) {
    Result<std::unique_ptr<ShardRings>> rings =
        ShardRings::Create(loaded.workers, static_cast<int>(rte_socket_id()), *rt.pool);
    if (!rings.ok()) return rings.status();
    rt.rings = std::move(*rings);
  }
  for (uint32_t i = 0; i < loaded.workers; ++i) {
    auto replica = std::make_unique<Replica>();
    replica->clock = std::make_unique<LoopClock>(rt.clock);
    Result<std::unique_ptr<Switch>> created =
        Switch::Create(loaded.config, *rt.pool, *replica->clock);
    if (!created.ok()) return Status::Error("switch " + name + ": " + created.message());
    replica->sw = std::move(*created);
    replica->datapath = std::make_unique<Datapath>(
        *replica->sw, *rt.pool, rt.ports, replica->mailbox, rt.clock, *replica->clock, out);
    SWEMU_RETURN_IF_ERROR(replica->datapath->AddCommands());
    if (rt.rings) {
      replica->router = std::make_unique<ShardRouter>(*rt.rings, i, *rt.pool);
      replica->datapath->SetShard(replica->router.get());
    }
    rt.replicas.push_back(std::move(replica));
  }
  InitPortEffects(loaded, rt);
  ShareCpuPort(rt);  // before the startup script: its route_add runs on the shared time
  // The startup script runs before the lcores start, so it needs no mailbox.
  if (!loaded.startup_script.empty()) {
    for (auto& replica : rt.replicas) {
      Status ran = replica->sw->commands().RunScript(loaded.startup_script);
      if (!ran.ok()) return Status::Error("switch " + name + ": " + ran.message());
    }
  }
  SWEMU_RETURN_IF_ERROR(StartControl(cmd, rt));  // a socket in use stops us before any traffic
  // The port the kernel chose for --control-tcp 0 (or ADDR:0) is known only now: say it.
  if (rt.control && !rt.control->tcp_endpoint().empty()) {
    out << "control: listening on tcp " << rt.control->tcp_endpoint() << "\n" << std::flush;
  }
  SWEMU_RETURN_IF_ERROR(StartRecorder(cmd, loaded, rt));
  StartDigestPump(rt);
  return rt.ports.Open(rt.sw().num_ports(), loaded.port_devargs, rt.pool->mempool());
}

// Frees what the stopped switch holds and prints its summary; status 0 or 1. ClosePorts and
// CheckLeaks follow, once every switch of the process is shut down.
int ShutDown(Realtime& rt, bool quiet, std::ostream& out, std::ostream& err) {
  for (auto& replica : rt.replicas) replica->mailbox.Close();  // "switch is shutting down"
  if (rt.digests) rt.digests->Stop();  // after Close: a drain it waits on is refused
  rt.cpu_pump.reset();                 // frees what a round took and no replica took
  if (rt.control) rt.control->Stop();
  uint64_t discarded = rt.datapath().DiscardRx();  // every lcore stopped: one reads all ports
  if (rt.rings) discarded += rt.rings->Discard();
  uint64_t delayed = 0;
  uint64_t backlogged = 0;
  std::vector<const Datapath*> shards;
  for (auto& replica : rt.replicas) {
    delayed += replica->datapath->DiscardDelayed();
    backlogged += replica->datapath->DiscardBacklog();
    shards.push_back(replica->datapath.get());
  }
  int status = 0;
  Status recorded = rt.recorder ? rt.recorder->Stop() : Status::Ok();
  if (!quiet) {
    out << Datapath::Summary(shards);
    if (discarded != 0) out << "  discarded at shutdown from rx queues " << discarded << "\n";
    if (delayed != 0) out << "  discarded at shutdown from delay lines " << delayed << "\n";
    if (backlogged != 0) {
      out << "  discarded at shutdown from tx backlogs " << backlogged << "\n";
    }
    if (rt.recorder) {
      out << "  pcap: recorded " << rt.recorder->recorded() << " frames in " << rt.recorder->dir()
          << ", pcap_dropped " << rt.recorder->dropped();
      if (rt.recorder->capped() != 0) out << ", past --pcap-max-bytes " << rt.recorder->capped();
      out << "\n";
    }
    out << std::flush;
  }
  if (rt.recorder && rt.recorder->dropped() != 0) {
    err << "swemu: --pcap-dir: the recorder fell behind and left out " << rt.recorder->dropped()
        << " frames; record fewer ports (--pcap-ports) or fewer bytes (--pcap-snaplen)\n";
  }
  if (!recorded.ok()) {
    err << "swemu: --pcap-dir: " << recorded.message() << "\n";
    status = 1;
  }
  return status;
}

// The last switch first: a virtio_user port of a later switch says goodbye to its vhost-user
// peer in an earlier one (swemu-atp demo's rack link) while that peer still listens.
void ClosePorts(Process& process) {
  for (auto it = process.switches.rbegin(); it != process.switches.rend(); ++it) {
    (*it)->ports.Close();
    for (auto& replica : (*it)->replicas) replica->sw->FreeQueued();
  }
}

// After every switch shut down: every mbuf and descriptor came back; status 0 or 1.
int CheckLeaks(const MbufPacketPool& pool, std::ostream& err) {
  const std::size_t in_use = pool.InUse();
  const std::size_t descriptors = pool.PacketsInUse();
  if (in_use != 0 || descriptors != 0) {
    err << "swemu: mbuf leak: " << in_use << " mbufs and " << descriptors
        << " packet descriptors still in use after shutdown\n";
    return 1;
  }
  return 0;
}

int Fail(std::ostream& err, const Status& status) {
  err << "swemu: " << status.message() << "\n";
  return 2;
}

// --config's switch, then each --also-switch's, with the command line each runs with (its own
// control socket).
struct SwitchRun {
  CommandLine cmd;
  LoadedSwitchConfig loaded;
};

Result<std::vector<SwitchRun>> LoadSwitches(const CommandLine& cmd) {
  std::vector<SwitchRun> runs;
  Result<LoadedSwitchConfig> first = LoadRealtimeConfig(cmd);
  if (!first.ok()) return first.status();
  runs.push_back({cmd, std::move(*first)});
  for (const AlsoSwitch& also : cmd.also_switches) {
    CommandLine one = cmd;
    one.config = also.config;
    one.control_socket = also.control_socket;
    Result<LoadedSwitchConfig> loaded = LoadRealtimeConfig(one);
    if (!loaded.ok()) return Status::Error("--also-switch: " + loaded.message());
    runs.push_back({std::move(one), std::move(*loaded)});
  }
  for (const SwitchRun& run : runs) {
    if (runs.size() > 1 && run.loaded.workers != 1) {
      return Status::Error(run.loaded.path +
                           ": dpdk.workers: " + std::to_string(run.loaded.workers) +
                           " with --also-switch, which runs every switch on one lcore (set 1)");
    }
  }
  return runs;
}

// One mbuf pool as large as the switches' together ([dpdk] mbuf_cache: the first's), then each
// switch on it.
Status SetUpAll(const std::vector<SwitchRun>& runs, std::ostream& out, Process& process) {
  uint64_t mbufs = 0;
  for (const SwitchRun& run : runs) mbufs += run.loaded.mbufs;
  if (mbufs > UINT32_MAX) return Status::Error("--also-switch: the switches' mbufs exceed 2^32");
  Result<std::unique_ptr<MbufPacketPool>> pool =
      MbufPacketPool::Create(static_cast<uint32_t>(mbufs), runs.front().loaded.mbuf_cache,
                             static_cast<int>(rte_socket_id()));
  if (!pool.ok()) return pool.status();
  process.pool = std::move(*pool);
  for (const SwitchRun& run : runs) {
    process.switches.push_back(std::make_unique<Realtime>());
    process.switches.back()->pool = process.pool.get();
    SWEMU_RETURN_IF_ERROR(SetUp(run.cmd, run.loaded, out, *process.switches.back()));
  }
  return CheckLinksPaired();
}

// [dpdk] workers = N runs on the main lcore and the first N - 1 EAL worker lcores.
Status CheckWorkers(const LoadedSwitchConfig& loaded) {
  if (loaded.workers == 1) return Status::Ok();
  const unsigned lcores = rte_lcore_count();
  if (lcores < loaded.workers) {
    return Status::Error(loaded.path + ": dpdk.workers: " + std::to_string(loaded.workers) +
                         " needs " + std::to_string(loaded.workers) +
                         " EAL lcores (main + workers, EAL -l), have " + std::to_string(lcores));
  }
  return Status::Ok();
}

struct LcoreRun {
  Datapath* datapath = nullptr;
  DatapathOptions options;
};

int RunLcore(void* arg) {
  auto* run = static_cast<LcoreRun*>(arg);
  run->datapath->Run(run->options, g_stop);
  return 0;
}

// A thread that calls tick() at once and then every period (a tick that comes late on a busy
// machine is not made up for), until tick() returns false or the object is destroyed.
class PeriodicThread {
 public:
  // `name` (at most 15 characters) is what ps and /proc show for the thread.
  PeriodicThread(const char* name, uint64_t period_ns, std::function<bool()> tick) {
    if (period_ns == 0) return;
    OffLcoreCpus off_lcores;
    thread_ = std::thread([this, period_ns, tick = std::move(tick)] { Loop(period_ns, tick); });
    pthread_setname_np(thread_.native_handle(), name);
  }
  ~PeriodicThread() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

 private:
  void Loop(uint64_t period_ns, const std::function<bool()>& tick) {
    auto next = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_until(lock, next, [this] { return stop_; })) {
      lock.unlock();
      const bool go_on = tick();
      lock.lock();
      if (!go_on) break;
      next = std::max(next + std::chrono::nanoseconds(period_ns), std::chrono::steady_clock::now());
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

// Several lcores: --stats-interval lines for the whole switch from a thread that takes every
// lcore's counters through its mailbox (each lcore copies its own between bursts).
class StatsPrinter {
 public:
  StatsPrinter(Realtime& rt, uint64_t interval_ns, bool stages, std::ostream& out)
      : rt_(rt),
        out_(out),
        stages_(stages),
        thread_("swemu-stats", interval_ns, [this] { return Tick(); }) {}

 private:
  // Every lcore's sample, or nothing once an lcore has stopped.
  std::optional<StatsSample> Take() {
    std::vector<StatsSample> samples(rt_.replicas.size());
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const Datapath& datapath = *rt_.replicas[i]->datapath;
      StatsSample& sample = samples[i];
      if (!rt_.replicas[i]->mailbox.Call([&] { sample = datapath.Sample(); })) return std::nullopt;
    }
    return Datapath::MergeSamples(samples);
  }

  // The first tick takes the baseline; each later one prints the rates since the one before.
  bool Tick() {
    std::optional<StatsSample> now = Take();
    const auto at = std::chrono::steady_clock::now();
    if (!now) return false;
    if (last_) {
      const double seconds = std::chrono::duration<double>(at - last_at_).count();
      std::string text = Datapath::StatsLine(rt_.ports, *now, *last_, seconds);
      for (std::size_t i = 0; stages_ && i < rt_.replicas.size(); ++i) {
        Datapath& datapath = *rt_.replicas[i]->datapath;
        std::string stages;
        if (!rt_.replicas[i]->mailbox.Call([&] { stages = datapath.StageReport(); })) return false;
        text += "lcore " + std::to_string(i) + ":\n" + stages;
      }
      out_ << text << std::flush;
    }
    last_ = std::move(now);
    last_at_ = at;
    return true;
  }

  Realtime& rt_;
  std::ostream& out_;
  bool stages_;  // --stats-stages: each lcore's per-stage cycles after the line
  std::optional<StatsSample> last_;
  std::chrono::steady_clock::time_point last_at_;
  PeriodicThread thread_;  // last: it stops before the members it reads go
};

constexpr uint64_t kRealtimeTelemetryPeriodNs = 1'000'000;  // 1 ms

// --telemetry in real time: every period a thread asks each lcore, through its mailbox, for a
// snapshot of its replica's queues (taken between bursts: the fast path pays nothing when no
// one asks), adds the replicas up and writes one row per active queue, stamped with the wall
// clock like --pcap-dir's recordings.
class TelemetrySampler {
 public:
  TelemetrySampler(Realtime& rt, std::string name, TelemetryWriter* writer, uint64_t period_ns)
      : rt_(rt),
        name_(std::move(name)),
        writer_(writer),
        period_ns_(period_ns),
        thread_("swemu-telemetry", writer == nullptr ? 0 : period_ns, [this] { return Take(); }) {}

  // A line when the samples came markedly less often than asked, or "": each lcore answers
  // between bursts, and an idle lcore that backs off answers late.
  std::string Shortfall() const {
    if (samples_ < 3) return "";
    const double mean_ns = static_cast<double>(last_ns_ - first_ns_) / (samples_ - 1);
    if (mean_ns <= 1.5 * static_cast<double>(period_ns_)) return "";
    char line[200];
    std::snprintf(line, sizeof line,
                  "swemu: telemetry: one sample every %.0f us on average, not every %.0f us as "
                  "asked (the lcores answer between bursts; --busy-poll answers sooner)\n",
                  mean_ns / 1e3, static_cast<double>(period_ns_) / 1e3);
    return line;
  }

 private:
  bool Take() {
    merged_.clear();
    for (auto& replica : rt_.replicas) {
      part_.clear();
      const Switch& sw = *replica->sw;
      if (!replica->mailbox.Call([&] { SnapshotQueues(sw.tm(), part_); })) return false;
      MergeSnapshots(merged_, part_);
    }
    const auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    writer_->Write(static_cast<TimeNs>(wall.count()), name_, merged_);
    if (samples_++ == 0) first_ns_ = static_cast<TimeNs>(wall.count());
    last_ns_ = static_cast<TimeNs>(wall.count());
    return true;
  }

  Realtime& rt_;
  std::string name_;
  TelemetryWriter* writer_;
  uint64_t period_ns_;
  uint64_t samples_ = 0;  // written by the sampler's thread, read once it has stopped
  TimeNs first_ns_ = 0, last_ns_ = 0;
  std::vector<QueueSnapshot> part_, merged_;
  PeriodicThread thread_;  // last: it stops before the members it uses go
};

// Replica 0 on the main lcore, replica i on the i-th worker lcore; returns when all stopped.
// Several switches (one replica each) take turns on the main lcore.
void RunLcores(Process& process, const std::vector<DatapathOptions>& each, std::ostream& out) {
  Realtime& rt = *process.switches.front();
  const DatapathOptions& options = each.front();
  if (rt.replicas.size() == 1) {
    std::vector<Datapath*> paths;
    for (auto& one : process.switches) paths.push_back(&one->datapath());
    Datapath::RunTogether(paths, each, g_stop);
    return;
  }
  std::vector<LcoreRun> runs(rt.replicas.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    runs[i].datapath = rt.replicas[i]->datapath.get();
    runs[i].options = options;
    runs[i].options.stats_interval_ns = 0;  // the StatsPrinter writes the lines
  }
  StatsPrinter stats(rt, options.stats_interval_ns, options.stats_stages, out);
  PeriodicThread cpu_rounds("swemu-cpu-pump", rt.cpu_pump ? CpuPump::kPeriodNs : 0,
                            [&rt] { return rt.cpu_pump->RunOnce(); });
  std::size_t next = 1;
  unsigned lcore = 0;
  RTE_LCORE_FOREACH_WORKER(lcore) {
    if (next == runs.size()) break;
    rte_eal_remote_launch(RunLcore, &runs[next++], lcore);
  }
  RunLcore(&runs[0]);
  rte_eal_mp_wait_lcore();
}

}  // namespace

int RunRealtime(const CommandLine& cmd, std::ostream& out, std::ostream& err) {
  Result<std::vector<SwitchRun>> runs = LoadSwitches(cmd);
  if (!runs.ok()) return Fail(err, runs.status());
  const LoadedSwitchConfig& first = runs->front().loaded;
  EalArgs eal = MakeEalArgs(first.eal_args, cmd.eal_args, HostHugepagesUsable());
  // What EAL, the drivers and the set-up print is held until the switches are up, so that a
  // set-up that fails says so in one line.
  HeldOutput held;
  Status eal_up = InitEal(eal, err);
  if (!eal_up.ok()) {
    held.Drop();
    return Fail(err, eal_up);
  }
  int status = 0;
  {
    Process process;
    std::unique_ptr<TelemetryWriter> telemetry;
    Status ready = CheckWorkers(first);
    if (ready.ok() && !cmd.telemetry.empty()) ready = CheckOutputPath(cmd.telemetry, "--telemetry");
    // Written in place, as it is sampled: a live run's telemetry is watched while it grows.
    if (ready.ok() && !cmd.telemetry.empty()) {
      Result<std::unique_ptr<TelemetryWriter>> opened = TelemetryWriter::Open(cmd.telemetry);
      ready = opened.status();
      if (opened.ok()) telemetry = std::move(*opened);
    }
    if (ready.ok()) ready = SetUpAll(*runs, out, process);
    out << std::flush;
    if (!ready.ok()) {
      held.Drop();
      status = Fail(err, ready);
    } else {
      held.Release();
      g_stop.store(false);
      InstallSignalHandlers();
      std::vector<DatapathOptions> each;
      for (const SwitchRun& run : *runs) {
        DatapathOptions options;
        options.busy_poll = cmd.busy_poll;
        options.run_for_ns = cmd.run_for_ns;
        options.stats_interval_ns = cmd.stats_interval_ns;
        options.stats_stages = cmd.stats_stages;
        options.cut_through = run.loaded.cut_through;
        each.push_back(options);
      }
      std::string shortfall;
      {
        TelemetrySampler sampler(
            *process.switches.front(), first.config.name, telemetry.get(),
            cmd.telemetry_period_ns != 0 ? cmd.telemetry_period_ns : kRealtimeTelemetryPeriodNs);
        RunLcores(process, each, out);
        shortfall = sampler.Shortfall();
      }
      for (auto& rt : process.switches)
        status = std::max(status, ShutDown(*rt, cmd.quiet, out, err));
      ClosePorts(process);
      status = std::max(status, CheckLeaks(*process.pool, err));
      if (telemetry != nullptr) {
        err << shortfall << std::flush;
        Status closed = telemetry->Close();
        if (!closed.ok() && status == 0) status = Fail(err, closed);
      }
    }
  }
  CleanupEal();
  return status;
}

}  // namespace swemu
