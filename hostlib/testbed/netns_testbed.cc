#include "hostlib/testbed/netns_testbed.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <memory>
#include <thread>

#include "hostlib/testbed/netns_plan.h"
#include "hostlib/testbed/swemu_process.h"
#include "hostlib/testbed/system_command.h"
#include "swemu/switch_config_writer.h"

namespace swemu {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void OnStopSignal(int sig) { g_stop_signal = sig; }

// Turns SIGINT and SIGTERM into a flag the run polls, for the life of the run.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction action = {};
    action.sa_handler = OnStopSignal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  static int caught() { return g_stop_signal; }

 private:
  struct sigaction old_int_ = {}, old_term_ = {};
};

// Until the switch answers a command: its lcore then runs, and SIGINT stops it cleanly.
Status WaitUntilAnswering(SwemuProcess& proc, const std::string& control_socket) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  SWEMU_RETURN_IF_ERROR(proc.WaitForPaths({control_socket}, std::chrono::seconds(30)));
  for (;;) {
    Result<std::string> answer = proc.Command(control_socket, "show ports");
    if (answer.ok()) return Status::Ok();
    if (std::optional<int> status = proc.Exited()) {
      return Status::Error("swemu exited with status " + std::to_string(*status) +
                           " before it was ready (log: " + proc.log_path() + ")");
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Status::Error("swemu does not answer on " + control_socket + ": " + answer.message());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// What the run made, removed in reverse on every way out.
class NetnsRun {
 public:
  NetnsRun(const NetnsPlan& plan, const NetnsTestbedOptions& options)
      : plan_(plan), options_(options) {}
  ~NetnsRun() { (void)Teardown(); }

  Status Build();
  Status StartSwitches();
  Status StartHosts();
  void Describe(std::ostream& out) const;
  // Until a signal, --run-for, every run command ended, or a switch died (an error).
  Status Wait();
  // Stops hosts and switches, removes namespaces and links; the first switch that did not stop
  // cleanly.
  Status Teardown();
  // The first run command that ended on its own with a status other than 0.
  Status RunsFailed() const;

 private:
  Status Step(const std::vector<std::string>& argv);
  Status AddNamespace(const std::string& ns);
  Status Interrupted() const;
  const NetnsPlan& plan_;
  const NetnsTestbedOptions& options_;
  std::vector<std::string> namespaces_;                     // made, to delete
  std::vector<std::pair<std::string, std::string>> links_;  // (namespace, veth end) to delete
  std::vector<std::unique_ptr<SwemuProcess>> switches_;
  std::vector<std::unique_ptr<SwemuProcess>> hosts_;
  std::vector<std::optional<int>> run_status_;  // per run command, once it ended on its own
  bool torn_down_ = false;
};

Status NetnsRun::Interrupted() const {
  if (StopSignals::caught() == 0) return Status::Ok();
  return Status::Error(std::string("interrupted by ") +
                       (StopSignals::caught() == SIGINT ? "SIGINT" : "SIGTERM"));
}

Status NetnsRun::Step(const std::vector<std::string>& argv) {
  SWEMU_RETURN_IF_ERROR(Interrupted());
  return RunProgram(argv);
}

Status NetnsRun::AddNamespace(const std::string& ns) {
  SWEMU_RETURN_IF_ERROR(Step({"ip", "netns", "add", ns}));
  namespaces_.push_back(ns);
  return Step({"ip", "-n", ns, "link", "set", "lo", "up"});
}

Status NetnsRun::Build() {
  for (const NetnsSwitchPlan& sw : plan_.switches) SWEMU_RETURN_IF_ERROR(AddNamespace(sw.netns));
  for (const NetnsHostPlan& host : plan_.hosts) {
    SWEMU_RETURN_IF_ERROR(AddNamespace(host.netns));
    // Deleted at once at the end: a namespace's own interfaces go asynchronously.
    links_.emplace_back(host.switch_netns, host.iface);
    for (const std::vector<std::string>& argv : host.setup) SWEMU_RETURN_IF_ERROR(Step(argv));
  }
  for (const NetnsLinkPlan& link : plan_.links) {
    SWEMU_RETURN_IF_ERROR(Step({"ip", "link", "add", link.a_iface, "netns", link.a_netns, "type",
                                "veth", "peer", "name", link.b_iface, "netns", link.b_netns}));
    links_.emplace_back(link.a_netns, link.a_iface);
    for (const std::vector<std::string>& argv : link.setup) SWEMU_RETURN_IF_ERROR(Step(argv));
  }
  for (const std::vector<std::string>& argv : plan_.best_effort) {
    (void)RunProgram(argv);  // offloads: absent on some kernels, harmless when refused
  }
  std::error_code ec;
  std::filesystem::create_directories(options_.out_dir, ec);
  if (ec) return Status::Error(options_.out_dir + ": " + ec.message());
  for (const NetnsSwitchPlan& sw : plan_.switches) {
    SWEMU_RETURN_IF_ERROR(WriteSwitchConfig(sw.config, sw.ini_path));
  }
  return Status::Ok();
}

Status NetnsRun::StartSwitches() {
  Result<std::string> ip = FindProgram("ip");
  if (!ip.ok()) return ip.status();
  for (const NetnsSwitchPlan& sw : plan_.switches) {
    SWEMU_RETURN_IF_ERROR(Interrupted());
    std::filesystem::remove(sw.control_socket);
    // `ip netns exec` execs swemu, so the pid is swemu's and SIGINT stops it cleanly.
    std::vector<std::string> args{
        "netns",    "exec",      sw.netns,           options_.swemu_binary,
        "--config", sw.ini_path, "--control-socket", sw.control_socket};
    if (options_.busy_poll) args.push_back("--busy-poll");
    if (!options_.telemetry.empty()) {
      args.insert(args.end(), {"--telemetry", SwitchTelemetryPath(options_.telemetry, sw.name,
                                                                  plan_.switches.size())});
    }
    if (options_.telemetry_period_ns != 0) {
      args.insert(args.end(),
                  {"--telemetry-period", std::to_string(options_.telemetry_period_ns) + "ns"});
    }
    switches_.push_back(std::make_unique<SwemuProcess>());
    Status started = switches_.back()->Start(*ip, args, sw.log_path);
    if (started.ok()) started = WaitUntilAnswering(*switches_.back(), sw.control_socket);
    if (!started.ok()) return Status::Error("switch " + sw.name + ": " + started.message());
  }
  return Status::Ok();
}

Status NetnsRun::StartHosts() {
  Result<std::string> ip = FindProgram("ip");
  if (!ip.ok()) return ip.status();
  for (const NetnsRunPlan& run : plan_.runs) {
    SWEMU_RETURN_IF_ERROR(Interrupted());
    hosts_.push_back(std::make_unique<SwemuProcess>());
    Status started = hosts_.back()->Start(
        *ip, {"netns", "exec", run.netns, "sh", "-c", run.command}, run.log_path);
    if (!started.ok()) return Status::Error("host " + run.host + ": " + started.message());
    run_status_.emplace_back();
  }
  return Status::Ok();
}

void NetnsRun::Describe(std::ostream& out) const {
  for (const NetnsSwitchPlan& sw : plan_.switches) {
    out << "switch " << sw.name << ": swemu-cli --socket " << sw.control_socket << "  (config "
        << sw.ini_path << ", log " << sw.log_path << ")\n";
  }
  for (const NetnsHostPlan& host : plan_.hosts) {
    out << "host " << host.name << " on " << host.attachment << ": ip netns exec " << host.netns
        << " bash  (eth0" << (host.ip.empty() ? "" : " " + host.ip) << ")\n";
  }
  for (const NetnsRunPlan& run : plan_.runs) {
    out << "run on " << run.host << ": " << run.command << "  (log " << run.log_path << ")\n";
  }
  out << "running: Ctrl-C stops everything" << std::flush;
  out << "\n" << std::flush;
}

Status NetnsRun::Wait() {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    if (StopSignals::caught() != 0) return Status::Ok();
    if (options_.run_for_ns != 0 &&
        std::chrono::steady_clock::now() - start >= std::chrono::nanoseconds(options_.run_for_ns)) {
      return Status::Ok();
    }
    for (std::size_t s = 0; s < switches_.size(); ++s) {
      if (std::optional<int> status = switches_[s]->Exited()) {
        return Status::Error("switch " + plan_.switches[s].name + " exited with status " +
                             std::to_string(*status) + " (log: " + plan_.switches[s].log_path +
                             ")");
      }
    }
    std::size_t done = 0;
    for (std::size_t h = 0; h < hosts_.size(); ++h) {
      if (!run_status_[h].has_value()) run_status_[h] = hosts_[h]->Exited();
      done += run_status_[h].has_value() ? 1 : 0;
    }
    if (!hosts_.empty() && done == hosts_.size()) return Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Status NetnsRun::RunsFailed() const {
  for (std::size_t h = 0; h < run_status_.size(); ++h) {
    if (run_status_[h].value_or(0) == 0) continue;
    return Status::Error("run on " + plan_.runs[h].host + " ended with status " +
                         std::to_string(*run_status_[h]) + " (log: " + plan_.runs[h].log_path +
                         ")");
  }
  return Status::Ok();
}

Status NetnsRun::Teardown() {
  if (torn_down_) return Status::Ok();
  torn_down_ = true;
  // Whatever the hosts' commands started (servers in the background too); switches stop below.
  for (const NetnsHostPlan& host : plan_.hosts) {
    if (std::find(namespaces_.begin(), namespaces_.end(), host.netns) == namespaces_.end())
      continue;
    (void)RunProgram(
        {"sh", "-c", "ip netns pids " + host.netns + " | xargs -r kill 2>/dev/null; true"});
  }
  for (auto& host : hosts_) {
    if (host->pid() > 0) (void)host->Stop(std::chrono::seconds(2));
  }
  Status first;
  for (std::size_t s = switches_.size(); s-- > 0;) {
    if (switches_[s]->pid() <= 0) continue;
    Result<int> stopped = switches_[s]->Stop(std::chrono::seconds(10));
    if (first.ok() && (!stopped.ok() || *stopped != 0)) {
      first = Status::Error("switch " + plan_.switches[s].name +
                            " did not stop cleanly (log: " + plan_.switches[s].log_path + ")");
    }
  }
  for (const auto& [ns, iface] : links_) (void)RunProgram({"ip", "-n", ns, "link", "del", iface});
  for (const std::string& ns : namespaces_) (void)RunProgram({"ip", "netns", "del", ns});
  for (const NetnsSwitchPlan& sw : plan_.switches) {
    std::error_code ignored;  // EAL's runtime directory, left behind by every DPDK process
    std::filesystem::remove_all("/var/run/dpdk/" + sw.file_prefix, ignored);
  }
  return first;
}

}  // namespace

std::string SwitchTelemetryPath(const std::string& file, const std::string& sw,
                                std::size_t switches) {
  if (switches == 1) return file;
  const std::filesystem::path path(file);
  return (path.parent_path() / (path.stem().string() + "-" + sw + path.extension().string()))
      .string();
}

int RunNetnsTestbed(const TopologyConfig& topology, const NetnsTestbedOptions& options,
                    std::ostream& out, std::ostream& err) {
  if (geteuid() != 0) {
    err << "swemu: --backend netns: needs root (it makes network namespaces and veth pairs)\n";
    return 2;
  }
  Result<NetnsPlan> plan =
      PlanNetnsTestbed(topology, options.out_dir, getpid(), options.replays, options.replay_binary);
  if (!plan.ok()) {
    err << "swemu: " << plan.message() << "\n";
    return 2;
  }
  StopSignals signals;
  NetnsRun run(*plan, options);
  Status status = run.Build();
  if (!status.ok()) {
    (void)run.Teardown();
    err << "swemu: " << topology.path << ": setting up namespaces: " << status.message() << "\n";
    return StopSignals::caught() != 0 ? 128 + StopSignals::caught() : 2;
  }
  status = run.StartSwitches();
  if (status.ok()) status = run.StartHosts();
  if (status.ok()) {
    run.Describe(out);
    status = run.Wait();
  }
  Status stopped = run.Teardown();
  if (status.ok()) status = stopped;
  if (status.ok()) status = run.RunsFailed();
  if (!status.ok()) err << "swemu: " << status.message() << "\n";
  if (StopSignals::caught() != 0) {
    err << "swemu: stopped by " << (StopSignals::caught() == SIGINT ? "SIGINT" : "SIGTERM")
        << "; namespaces and links removed\n";
    return 128 + StopSignals::caught();
  }
  return status.ok() ? 0 : 1;
}

}  // namespace swemu
