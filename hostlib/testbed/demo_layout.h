#pragma once
// The layout of swemu-atp's real-time demo: W workers and a PS in one rack (one swemu) or two
// racks (two switches of one swemu process, swemu --also-switch, joined by a swemu_link of
// rings in it, the PS in rack 0), the
// switch configs and startup scripts that go with it, and the virtio_user devargs the hosts use.
// The demo writes the generated files next to its output so a user can rerun them by hand.
#include <cstdint>
#include <string>
#include <vector>

#include "hostlib/atp/job_config.h"
#include "pipeline/core/status.h"
#include "pipeline/wire/address.h"

namespace swemu {

struct DemoHost {
  std::string name;  // "w0".., "ps"
  uint32_t rack = 0;
  uint16_t port = 0;  // switch port in its rack
  MacAddr mac;
  Ipv4Addr ip = 0;
  bool ps = false;
};

struct DemoJob {
  uint16_t id = 0;
  Ipv4Addr group_ip = 0;
  bool aggregate = true;  // false: the switch forwards the job's packets (aggregation at the PS)
};

// One ATP switch's startup script, the demo's and `swemu-atp publish`'s: a dmac entry per
// (MAC, port), multicast group 1 of `group_ports` (where parameter packets are replicated), and
// per job its group's MAC => group 1 and its atp_job entry.
std::string AtpSwitchScript(const std::vector<std::pair<MacAddr, uint16_t>>& dmac,
                            const std::vector<uint16_t>& group_ports,
                            const std::vector<DemoJob>& jobs);

class DemoLayout {
 public:
  // workers 1..32, racks 1 or 2 (with 2, workers are split evenly, rack 0 gets the odd one).
  // file_prefix: DPDK --file-prefix stem, unique per demo run (runs may overlap in tests).
  DemoLayout(uint32_t workers, uint32_t racks, std::string socket_dir, std::string file_prefix);

  uint32_t workers() const { return workers_; }
  uint32_t racks() const { return racks_; }
  const std::vector<DemoHost>& hosts() const { return hosts_; }  // workers, then the PS
  const DemoHost& ps() const { return hosts_.back(); }
  const std::vector<DemoJob>& jobs() const { return jobs_; }  // aggregate, forward_only
  // A job's spec: every worker (in worker-id order) and the PS, `elements` per packet.
  AtpJobSpec JobSpec(const DemoJob& job, uint32_t elements) const;
  uint16_t RackPorts(uint32_t rack) const;  // hosts + uplink/downlink
  uint16_t LinkPort(uint32_t rack) const;   // the rack-to-rack port

  std::string VhostSocket(uint32_t rack, uint16_t port) const;
  std::string ControlSocket(uint32_t rack) const;
  // The devargs a host uses to attach to its switch port (index = virtio_user device number).
  std::string HostDevargs(const DemoHost& host, uint32_t index) const;

  // Config (FormatSwitchConfig's text, its startup script `cli_path` made absolute) and startup
  // script of one rack's swemu.
  // link_rate: every port's shaping rate in swemu's rate syntax ("1G"; "0" = unshaped); an
  // error says "link rate: ..." when it is not one.
  Result<std::string> SwitchIni(uint32_t rack, const std::string& cli_path, uint32_t elements,
                                uint32_t aggregators, const std::string& link_rate) const;
  std::string SwitchCli(uint32_t rack) const;

 private:
  uint32_t workers_;
  uint32_t racks_;
  std::string socket_dir_;
  std::string file_prefix_;
  std::vector<DemoHost> hosts_;
  std::vector<DemoJob> jobs_;
};

}  // namespace swemu
