#pragma once
// swemu.AtpFabric's C++ side: what a training launcher runs once, before its worker processes.
//
// transport "dpdk": swemu-atp demo's one-rack layout (hostlib/testbed/demo_layout.h): the switch's
// .ini/.cli and two job files in out_dir, swemu started as a child process (the `atp` program on
// net_vhost ports; hostlib/testbed/swemu_process.h), and the PS on its own virtio_user port, in this
// process (its own EAL, dpdk_process.h), on a loop thread. Workers attach to their switch ports
// from their own processes (swemu.Worker).
// transport "udp": no switch. The PS on a kernel UDP socket on a loopback address of its own
// (127.A.B.254; worker w on 127.A.B.(w+1), same port); its parameter packets are replicated to
// the workers in software. All aggregation is at the PS.
//
// topology + job (transport "dpdk" only): the topology file's switches as swemu processes on
// vhost-user sockets in out_dir (hostlib/testbed's processes back end, as `swemu-atp demo
// --topology` runs them), the job file's hosts on the ports it names (hostlib/testbed/
// atp_job_file.h): the PS in this process, each worker from its own. The job file gives the
// workers, elements and job ids; the topology's switch configs the aggregators and link rates.
//
// The PS serves both of the layout's jobs: 1 (the switch aggregates: `atp_job aggregate`) and
// 2 (`atp_job forward_only`: the switch forwards, the PS aggregates); `aggregate` picks the
// one the workers join.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "hostlib/atp/job_config.h"
#include "hostlib/python/loop_thread.h"
#include "hostlib/python/worker.h"
#include "pipeline/core/status.h"

namespace swemu {
class DemoLayout;
class SwemuProcess;
class TestbedRunner;
struct AtpTopologyJob;
struct TestbedOptions;
struct TestbedPlan;
class DpdkHost;
class UdpSocketTransport;
}  // namespace swemu

namespace swemu::python {

struct FabricOptions {
  uint32_t workers = 4;
  std::string transport = "dpdk";
  std::string out_dir;  // "": a new directory under /tmp, removed by a clean stop
  bool aggregate = true;
  std::string swemu_binary;  // "": the one this module was built with
  uint32_t elements = kAtpDefaultElements;
  uint32_t aggregators = kAtpDefaultAggregators;
  std::string link_rate = "0";  // every switch port's shaping rate ("0": unshaped)
  bool busy_poll = false;       // swemu and the PS poll without backing off
  double start_timeout_s = 20;
  uint32_t ps_memory_mb = 128;
  // Both or neither: a topology file and the ATP job file that runs on it.
  std::string topology;
  std::string job;
};

class Fabric {
 public:
  // Options a caller can get wrong (the module raises ValueError): "workers must be 1..32".
  static Status Validate(const FabricOptions& options);

  explicit Fabric(FabricOptions options);
  // With options.topology: reads the topology and job files (errors name the file and what is
  // wrong) and takes the workers and elements from the job. Start() calls it if not yet done.
  Status LoadFiles();
  ~Fabric();
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  Status Start();
  // Stops the PS and swemu (SIGINT: it drains and checks for leaks). Errors: swemu's exit
  // status, leaked mbufs. Idempotent.
  Status Stop();
  // Forgets every job's progress: a new PS, and (dpdk) the switch's aggregators freed. For a
  // new group of worker processes after the previous one ended (e.g. one died): seqs restart.
  Status Reset();

  bool started() const { return started_; }
  // The spec for swemu.Worker; rank -1: for any rank.
  Result<std::string> WorkerSpec(int rank) const;
  // One line to a switch's control socket; its reply. `sw`: a switch of the topology by name;
  // "": the first (the only one without a topology).
  Result<std::string> SwitchCommand(const std::string& line, const std::string& sw = "");
  // The PS's counters for the workers' job.
  Result<Counters> Stats();

  const FabricOptions& options() const { return options_; }
  const std::string& out_dir() const { return dir_; }
  uint16_t job_id() const;
  std::string control_socket() const;
  int swemu_pid() const;

 private:
  Status StartDpdk();
  Status StartTopology();
  Status StartUdp();
  Status StartPs();
  Status WriteJobs();
  std::string SwemuBinary() const;
  // The switches' names and control sockets, the first first.
  std::vector<std::pair<std::string, std::string>> Switches() const;
  Status MakePsContext(std::unique_ptr<Context>* out) const;
  Counters Snapshot() const;  // loop thread

  FabricOptions options_;
  // Python threads may call start/stop/reset/stats/switch_command at once (each releases the
  // GIL), and the interpreter's exit stops every fabric: one at a time.
  mutable std::recursive_mutex mu_;
  std::atomic<bool> started_{false};
  bool created_dir_ = false;
  bool failed_ = false;  // something went wrong: keep out_dir for its logs
  std::string dir_;
  std::string prefix_;
  uint32_t serial_ = 0;  // this fabric's start among the process's
  std::unique_ptr<DemoLayout> layout_;           // without a topology
  std::unique_ptr<AtpTopologyJob> files_;        // with one
  std::unique_ptr<TestbedPlan> plan_;            // its switches' processes
  std::unique_ptr<TestbedOptions> testbed_;
  std::unique_ptr<TestbedRunner> switches_;
  AtpJobConfig jobs_[2];  // aggregate, forward_only
  std::string job_files_[2];
  std::unique_ptr<SwemuProcess> swemu_;
  std::unique_ptr<DpdkHost> dpdk_;
  std::unique_ptr<UdpSocketTransport> udp_;
  Ipv4Addr udp_base_ = 0;  // udp: 127.A.B.0
  class PsEndpoint;
  std::unique_ptr<PsEndpoint> ps_;
  LoopThread loop_;
};

// Stops every fabric and closes every worker still open (interpreter exit), then EAL.
void ShutdownAll();
// Registry for ShutdownAll (the module's objects register themselves).
void RegisterWorker(FabricWorker* worker);
void UnregisterWorker(FabricWorker* worker);

}  // namespace swemu::python
