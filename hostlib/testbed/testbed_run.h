#pragma once
// Carries out a TestbedPlan (testbed_plan.h) in real time: makes the network step by step,
// writes each switch's config and starts it (waiting until it answers on its control socket),
// starts the hosts' commands, prints how to reach each switch and host, runs until done, and
// undoes every step it made, on success, on an error and on SIGINT or SIGTERM.
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "hostlib/testbed/swemu_process.h"
#include "hostlib/testbed/testbed_plan.h"

namespace swemu {

struct TestbedOptions {
  std::string swemu_binary;  // the swemu to run per switch
  std::string out_dir;       // switch configs, logs and control sockets; host logs
  uint64_t run_for_ns = 0;   // at most this long (0: no bound); also ends when every run ends
  bool busy_poll = false;    // passed to each swemu
  uint32_t workers = 1;      // each switch's [dpdk] workers: lcores on consecutive CPUs
  std::vector<TestbedReplay> replays;  // --in SW:PORT=FILE: swemu-replay on that host
  std::string replay_binary;           // swemu-replay
  // Put first on the PATH of the hosts' `run` commands, so that they name swemu's tools
  // (swemu-dlcp, swemu-replay, ...) without a path; empty: the PATH as it is.
  std::string tools_dir;
  // --telemetry FILE: each switch samples its queues into FILE (one switch) or, with several,
  // into FILE with "-<switch>" before its extension; every telemetry_period_ns (0: swemu's).
  std::string telemetry;
  uint64_t telemetry_period_ns = 0;
};

// The telemetry file of switch `sw` of `switches` for --telemetry `file`.
std::string SwitchTelemetryPath(const std::string& file, const std::string& sw,
                                std::size_t switches);

// What the run made, removed in reverse on every way out.
class TestbedRunner {
 public:
  TestbedRunner(const TestbedPlan& plan, const TestbedOptions& options)
      : plan_(plan), options_(options) {}
  ~TestbedRunner() { (void)Teardown(); }

  // Makes the network (every step of the plan) and writes the switches' configs.
  Status Build();
  Status StartSwitches();
  Status StartHosts();
  void Describe(std::ostream& out) const;
  // The switches started so far, in the plan's order (a front end that runs its own hosts
  // samples their CPU time).
  const std::vector<std::unique_ptr<SwemuProcess>>& switches() const { return switches_; }
  // Until a signal, --run-for, every run command ended, or a switch died (an error).
  Status Wait();
  // Stops hosts and switches, removes namespaces and links; the first switch that did not stop
  // cleanly.
  Status Teardown();
  // The first run command that ended on its own with a status other than 0.
  Status RunsFailed() const;

 private:
  Status Step(const std::vector<std::string>& argv);
  Argv SwitchCommand(const TestbedSwitch& sw) const;
  std::vector<std::string> HostEnv(const TestbedRun& run) const;
  Status Interrupted() const;
  const TestbedPlan& plan_;
  const TestbedOptions& options_;
  std::vector<Argv> made_;  // the undo of every step made, in order
  std::vector<std::unique_ptr<SwemuProcess>> switches_;
  std::vector<std::unique_ptr<SwemuProcess>> hosts_;
  std::vector<std::optional<int>> run_status_;  // per run command, once it ended on its own
  bool torn_down_ = false;
};

// Runs `plan` with a TestbedRunner, SIGINT and SIGTERM turned into a clean stop. Returns the exit
// status: 0; 1 (a switch died or did not stop cleanly, or a run command ended
// with a status other than 0: one line on `err`); 2 (a set-up step refused: one line, every
// step undone); 128 + the signal that stopped it.
int RunTestbed(const TestbedPlan& plan, const TestbedOptions& options, const std::string& path,
               std::ostream& out, std::ostream& err);

}  // namespace swemu
