#include "hostlib/testbed/testbed_run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <thread>

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

// Where EAL keeps a process's runtime directory (/var/run/dpdk as root).
std::string DpdkRuntimeDir() {
  if (geteuid() == 0) return "/var/run/dpdk";
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  return std::string(xdg != nullptr ? xdg : "/tmp") + "/dpdk";
}

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


}  // namespace

Status TestbedRunner::Interrupted() const {
  if (StopSignals::caught() == 0) return Status::Ok();
  return Status::Error(std::string("interrupted by ") +
                       (StopSignals::caught() == SIGINT ? "SIGINT" : "SIGTERM"));
}

Status TestbedRunner::Step(const std::vector<std::string>& argv) {
  SWEMU_RETURN_IF_ERROR(Interrupted());
  return RunProgram(argv);
}

Status TestbedRunner::Build() {
  for (const TestbedStep& step : plan_.steps) {
    if (step.best_effort) {
      (void)RunProgram(step.make);  // offloads: absent on some kernels, harmless when refused
      continue;
    }
    SWEMU_RETURN_IF_ERROR(Step(step.make));
    if (!step.undo.empty()) made_.push_back(step.undo);
  }
  std::error_code ec;
  std::filesystem::create_directories(options_.out_dir, ec);
  if (ec) return Status::Error(options_.out_dir + ": " + ec.message());
  for (const TestbedSwitch& sw : plan_.switches) {
    SWEMU_RETURN_IF_ERROR(WriteSwitchConfig(sw.config, sw.ini_path));
  }
  return Status::Ok();
}

// Starts `launch` + `command` (the first word found on PATH) with its output in `log`.
Status StartLaunched(SwemuProcess& proc, const Argv& launch, const Argv& command,
                     const std::string& log, const std::vector<std::string>& env = {}) {
  Argv full = launch;
  full.insert(full.end(), command.begin(), command.end());
  Result<std::string> program = FindProgram(full.at(0));
  if (!program.ok()) return program.status();
  return proc.Start(*program, Argv(full.begin() + 1, full.end()), log, env);
}

Argv TestbedRunner::SwitchCommand(const TestbedSwitch& sw) const {
  Argv command{options_.swemu_binary, "--config", sw.ini_path, "--control-socket",
               sw.control_socket};
  if (options_.busy_poll) command.push_back("--busy-poll");
  if (!options_.telemetry.empty()) {
    command.insert(command.end(), {"--telemetry", SwitchTelemetryPath(options_.telemetry, sw.name,
                                                                      plan_.switches.size())});
  }
  if (options_.telemetry_period_ns != 0) {
    command.insert(command.end(),
                   {"--telemetry-period", std::to_string(options_.telemetry_period_ns) + "ns"});
  }
  return command;
}

Status TestbedRunner::StartSwitches() {
  for (const TestbedSwitch& sw : plan_.switches) {
    SWEMU_RETURN_IF_ERROR(Interrupted());
    std::filesystem::remove(sw.control_socket);
    for (const std::string& path : sw.served) std::filesystem::remove(path);
    // `ip netns exec` execs swemu, so the pid is swemu's and SIGINT stops it cleanly.
    switches_.push_back(std::make_unique<SwemuProcess>());
    Status started = StartLaunched(*switches_.back(), sw.launch, SwitchCommand(sw), sw.log_path);
    if (started.ok()) started = switches_.back()->WaitForPaths(sw.served, std::chrono::seconds(30));
    if (started.ok()) started = WaitUntilAnswering(*switches_.back(), sw.control_socket);
    if (!started.ok()) return Status::Error("switch " + sw.name + ": " + started.message());
  }
  return Status::Ok();
}

std::vector<std::string> TestbedRunner::HostEnv(const TestbedRun& run) const {
  std::vector<std::string> env = run.env;
  if (!options_.tools_dir.empty()) {
    const char* path = std::getenv("PATH");
    env.push_back("PATH=" + options_.tools_dir + ":" + (path != nullptr ? path : "/usr/bin:/bin"));
  }
  return env;
}

Status TestbedRunner::StartHosts() {
  for (const TestbedRun& run : plan_.runs) {
    SWEMU_RETURN_IF_ERROR(Interrupted());
    hosts_.push_back(std::make_unique<SwemuProcess>());
    Status started = StartLaunched(*hosts_.back(), run.launch, {"sh", "-c", run.command},
                                   run.log_path, HostEnv(run));
    if (!started.ok()) return Status::Error("host " + run.host + ": " + started.message());
    run_status_.emplace_back();
  }
  return Status::Ok();
}

void TestbedRunner::Describe(std::ostream& out) const {
  for (const TestbedSwitch& sw : plan_.switches) {
    out << "switch " << sw.name << ": swemu-cli --socket " << sw.control_socket << "  (config "
        << sw.ini_path << ", log " << sw.log_path << ")\n";
  }
  for (const TestbedHost& host : plan_.hosts) {
    out << "host " << host.name << " on " << host.attachment << ": " << host.reach << "\n";
  }
  for (const TestbedRun& run : plan_.runs) {
    out << "run on " << run.host << ": " << run.command << "  (log " << run.log_path << ")\n";
  }
  out << "running: Ctrl-C stops everything\n" << std::flush;
}

Status TestbedRunner::Wait() {
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

Status TestbedRunner::RunsFailed() const {
  for (std::size_t h = 0; h < run_status_.size(); ++h) {
    if (run_status_[h].value_or(0) == 0) continue;
    return Status::Error("run on " + plan_.runs[h].host + " ended with status " +
                         std::to_string(*run_status_[h]) + " (log: " + plan_.runs[h].log_path +
                         ")");
  }
  return Status::Ok();
}

Status TestbedRunner::Teardown() {
  if (torn_down_) return Status::Ok();
  torn_down_ = true;
  // Whatever the hosts' commands started (servers in the background too); switches stop below.
  for (const std::string& ns : plan_.host_namespaces) {
    if (std::find(made_.begin(), made_.end(), Argv{"ip", "netns", "del", ns}) == made_.end()) {
      continue;  // not made by this run: not ours to empty
    }
    (void)RunProgram({"sh", "-c", "ip netns pids " + ns + " | xargs -r kill 2>/dev/null; true"});
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
  for (std::size_t i = made_.size(); i-- > 0;) (void)RunProgram(made_[i]);
  for (const std::string& prefix : plan_.file_prefixes) {
    std::error_code ignored;  // EAL's runtime directory, left behind by every DPDK process
    std::filesystem::remove_all(DpdkRuntimeDir() + "/" + prefix, ignored);
  }
  return first;
}

std::string SwitchTelemetryPath(const std::string& file, const std::string& sw,
                                std::size_t switches) {
  if (switches == 1) return file;
  const std::filesystem::path path(file);
  return (path.parent_path() / (path.stem().string() + "-" + sw + path.extension().string()))
      .string();
}

int RunTestbed(const TestbedPlan& plan, const TestbedOptions& options, const std::string& path,
               std::ostream& out, std::ostream& err) {
  StopSignals signals;
  TestbedRunner run(plan, options);
  Status status = run.Build();
  if (!status.ok()) {
    (void)run.Teardown();
    err << "swemu: " << path << ": setting up the " << plan.backend
        << " back end: " << status.message() << "\n";
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
        << "; everything the run made is removed\n";
    return 128 + StopSignals::caught();
  }
  return status.ok() ? 0 : 1;
}

}  // namespace swemu
