#pragma once
// Switch-wide counters: per port, per drop reason and per program. Queue counters live in the
// TM. Conservation (tests check it): rx + multicast copies + recirculated
//   == tx + consumed + dropped (all reasons) + still queued + recirculated
#include <array>
#include <cstdint>
#include <vector>

#include "pipeline/core/drop_reason.h"

namespace swemu {

struct PortCounters {
  uint64_t rx_packets = 0;
  uint64_t rx_bytes = 0;
  uint64_t tx_packets = 0;
  uint64_t tx_bytes = 0;
};

struct ProgramCounters {
  uint64_t ingress_packets = 0;  // passes through ingress (includes recirculations)
  uint64_t egress_packets = 0;   // passes through egress
  uint64_t to_tm = 0;            // packets handed to the TM (before replication)
  uint64_t consumed = 0;         // absorbed by the program (e.g. aggregated)
  uint64_t recirculated = 0;
  uint64_t multicast_copies = 0;  // extra copies made before the TM (sharded real time)
};

struct SwitchCounters {
  std::vector<PortCounters> ports;
  std::array<uint64_t, kDropReasonCount> pipeline_drops = {};  // drops outside the TM
  ProgramCounters program;

  void CountDrop(DropReason reason) noexcept { ++pipeline_drops[static_cast<std::size_t>(reason)]; }
};

}  // namespace swemu
