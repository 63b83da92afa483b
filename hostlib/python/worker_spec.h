#pragma once
// What a worker process needs to join an AtpFabric's job, as one line of text (AtpFabric's
// worker_spec(), swemu.Worker's first argument), e.g.
//   swemu-atp-worker;transport=dpdk;workers=4;job=/tmp/f/job1.atp;dir=/tmp/f;prefix=swemu-py-42-1
// Keys: transport (dpdk or udp), workers (the job's worker count), job (the job file: hostlib's
// ATP job text, hostlib/atp/job_config.h), and with dpdk: dir (where the switch's vhost-user
// sockets are, hostlib/testbed/demo_layout.h) and prefix (the fabric's DPDK --file-prefix stem;
// each worker adds its rank and pid). Optional: rank (a spec made for one rank only); ports (a
// fabric on a topology: each rank's switch port, "rack_a:0,rack_a:1,...", whose socket is
// hostlib/testbed/processes_plan.h's; without it, the one-rack layout's).
// transport=net: a job published for hosts on their own machines (`swemu-atp publish`'s job
// file): the rank's address from the job is one of this machine's, its datagrams go through
// the switch over the kernel's UDP sockets, its results come to the job's multicast group
// (docs/wire.md); workers= may be left out (the job file's count). With port= (DPDK devargs:
// a PCI address, net_af_packet0,iface=eth0, ...) the rank sends and takes whole frames on that
// port instead, as `swemu-atp worker --port` does (EAL in this process, dpdk_process.h).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hostlib/atp/job_config.h"
#include "pipeline/core/status.h"

namespace swemu::python {

inline constexpr std::string_view kWorkerSpecMagic = "swemu-atp-worker";

struct WorkerPort {
  std::string sw;
  uint16_t port = 0;
};

struct WorkerSpec {
  std::string transport;  // "dpdk", "udp" or "net"
  uint32_t workers = 0;   // 0 with net: the job file's
  std::string job_file;
  std::string socket_dir;         // dpdk
  std::string file_prefix;        // dpdk
  int rank = -1;                  // -1: any rank
  std::vector<WorkerPort> ports;  // dpdk on a topology: per rank; empty: the one-rack layout
  std::string port;               // net: a DPDK port's devargs; empty: kernel UDP sockets
};

std::string FormatWorkerSpec(const WorkerSpec& spec);
// Errors say what is wrong with the text ("bad worker spec: no job= in '...'").
Result<WorkerSpec> ParseWorkerSpec(std::string_view text);

// The job's text form (ParseAtpJobConfig reads it back).
std::string FormatAtpJobText(const AtpJobSpec& spec);

}  // namespace swemu::python
