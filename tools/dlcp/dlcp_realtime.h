#pragma once
// `swemu-dlcp realtime`: DLCP's incast in real time through a swemu child process (the dlcp
// program on vhost-user ports) with DLCP hosts on virtio_user ports, as a smoke test.
#include <cstdint>
#include <ostream>
#include <string>

#include "pipeline/core/clock.h"
#include "pipeline/core/status.h"

namespace swemu {

struct DlcpRealtimeOptions {
  uint32_t senders = 3;
  uint64_t bytes = 1'000'000;       // per sender
  std::string receiver_rate = "1G";  // the receiver's port
  uint64_t host_bps = 2'000'000'000;  // the senders' line rate (rate control's start)
  double bound = 0.1;
  std::string out_dir = "out/dlcp_realtime";
  std::string swemu_binary;  // empty: next to this tool
  bool verbose = false;      // DPDK's routine log lines too
  TimeNs timeout_ns = 60'000'000'000;
};

// *bad_input: the failure came from the options (exit status 2) rather than the run (1).
Status RunDlcpRealtime(const DlcpRealtimeOptions& options, std::ostream& out, bool* bad_input);

}  // namespace swemu
