#pragma once
// ATP job setup from a topology: who the workers are, which rack (edge switch) each sits under,
// where the PS is -> each worker's id and fan-ins (docs: the team's ATP semantics):
//   - a worker under the PS's rack: fan_in0 = W, fan_in1 = 0 (one aggregation level);
//   - a worker under another rack:  fan_in0 = that rack's worker count, fan_in1 = W.
// Worker ids are the workers' positions in the list (0 .. W-1).
//
// Text form (INI-like; '#' starts a comment; every key once except `worker`):
//   [job]
//   id = 7
//   group = 239.1.1.7        # multicast group of the job's parameter packets
//   elements = 64            # int32 elements per packet (default 64)
//   port = 9000              # UDP port (default 9000)
//   scale = 1048576          # quantization scale (default 2^20)
//   ps = ps0 02:00:00:00:00:10 10.0.0.16 rack1
//   worker = w0 02:00:00:00:00:01 10.0.0.1 rack0     # name mac ip rack, in worker-id order
// A host's MAC may be `learn` (read as 00:00:00:00:00:00): a host on kernel sockets whose MAC
// the publisher did not know (`swemu-atp publish`); its kernel uses its own.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hostlib/atp/quantize.h"
#include "pipeline/core/status.h"
#include "pipeline/wire/address.h"
#include "pipeline/wire/atp.h"

namespace swemu {

// The largest element count whose frame fits a 1500-byte IP MTU.
inline constexpr uint16_t kAtpMaxElementsPerMtu = (1500 - 20 - 8 - kAtpHeaderLen) / 4;

struct AtpHost {
  std::string name;
  MacAddr mac;
  Ipv4Addr ip = 0;
  std::string rack;  // the edge switch the host is attached to
};

struct AtpJobSpec {
  uint16_t job_id = 0;
  std::vector<AtpHost> workers;  // in worker-id order
  AtpHost ps;
  Ipv4Addr group_ip = 0;
  uint16_t elements = kAtpDefaultElements;
  uint16_t udp_port = kAtpDefaultUdpPort;
  double scale = kAtpDefaultScale;
};

struct AtpWorkerSetup {
  uint8_t worker_id = 0;
  uint8_t fan_in0 = 0;
  uint8_t fan_in1 = 0;
};

struct AtpJobConfig {
  AtpJobSpec spec;
  std::vector<AtpWorkerSetup> workers;  // one per spec.workers entry
  uint32_t full_bitmap = 0;             // bit w for every worker
  MacAddr group_mac;                    // 01:00:5e + low 23 bits of the group

  uint32_t num_workers() const { return static_cast<uint32_t>(workers.size()); }
  // The worker index of the host with this IP, or -1.
  int FindWorker(Ipv4Addr ip) const;
};

// Validates the spec and derives the per-worker setup.
Result<AtpJobConfig> MakeAtpJobConfig(const AtpJobSpec& spec);
// Parses the text form, then MakeAtpJobConfig. Errors name the line and the problem.
Result<AtpJobConfig> ParseAtpJobConfig(std::string_view text);
// The text form of `spec` (every key; a zero MAC as `learn`), which ParseAtpJobConfig reads back.
std::string FormatAtpJobSpec(const AtpJobSpec& spec);

}  // namespace swemu
