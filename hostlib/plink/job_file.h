#pragma once
// A PLink job as text: what every node of an all-reduce on servers needs (`swemu-plink node`):
// the buffer, its chunks, the plan (2LHA over the nodes' groups, or flat aggregation) and every
// node's address. Every node reads the same file, so every node derives the same AggPlan.
//
//   [job]
//   id = 1                # 1-255: the high byte of every reduction's plan epoch
//   port = 9200           # UDP port of every node
//   floats = 262144       # float32 values each node reduces
//   chunk = 65536         # bytes per chunk (whole floats; the last one shorter)
//   plan = 2lha           # 2lha (over the groups) or flat
//   node = h0 00:00:00:00:01:01 10.0.1.1 leaf1 gw_mac=00:00:00:00:01:fe
//                         # name mac ip group [gw_mac=M], in node-id order
//
// '#' starts a comment; `node` repeats, every other key appears once (hostlib/common/job_text.h).
// A group is a word (for 2LHA: the rack, the switch the node is on); groups are numbered in the
// order they first appear. A MAC may be `learn` (not known: MacAddr{}), only a label on kernel
// sockets. `gw_mac` is the node's router: a node on a DPDK port sends every frame there (the
// switch routes it, as the kernel's frames to other subnets); without it, to each peer's MAC.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hostlib/plink/agg_plan.h"
#include "hostlib/plink/prober.h"
#include "pipeline/core/status.h"
#include "pipeline/wire/address.h"

namespace swemu {

inline constexpr uint32_t kPlinkJobMaxNodes = 256;

struct PlinkJobNode {
  std::string name;
  MacAddr mac;  // MacAddr{}: learn
  Ipv4Addr ip = 0;
  std::string group;
  MacAddr gateway_mac;  // MacAddr{}: none (one L2 network)
};

struct PlinkJob {
  uint16_t job_id = 1;
  uint16_t udp_port = kPlinkDefaultUdpPort;
  uint64_t floats = 0;
  uint64_t chunk_bytes = 65536;
  bool flat = false;
  std::vector<PlinkJobNode> nodes;  // in node-id order

  uint32_t num_nodes() const { return static_cast<uint32_t>(nodes.size()); }
  // The node with this name, or -1.
  int Find(const std::string& name) const;
  // Every node's group as a label 0..k-1, numbered by first appearance.
  std::vector<uint32_t> GroupLabels() const;
  std::vector<PlinkNodeAddr> Addresses() const;
  // The addresses node `me` sends to on a DPDK port, where it writes whole frames: every other
  // node's MAC replaced by `me`'s gw_mac when it has one.
  std::vector<PlinkNodeAddr> FrameAddresses(uint32_t me) const;
  // The plan every node runs: 2LHA over GroupLabels(), or FA.
  Result<AggPlan> Plan() const;
  // One line naming the problem: no nodes or too many, a name or address twice, a bad size.
  Status Validate() const;
};

std::string FormatPlinkJob(const PlinkJob& job);
// Errors name the line and the problem ("plink job line 4: ..."); the job is validated.
Result<PlinkJob> ParsePlinkJob(std::string_view text);

}  // namespace swemu
