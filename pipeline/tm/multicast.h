#pragma once
// The TM's packet replication engine, with BMv2's vocabulary: a multicast group (mgrp) holds
// nodes, a node holds a replication id (rid) and a set of egress ports. Control changes rebuild
// a flattened (port, rid) list per group that the fast path walks without allocation.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "pipeline/core/packet.h"
#include "pipeline/core/status.h"

namespace swemu {

struct McCopy {
  PortId port;
  uint16_t rid;
};

class McTable {
 public:
  explicit McTable(uint16_t num_ports) : num_ports_(num_ports) {}

  // Fast path: the copies of `grp` in replication order (nodes in association order, each
  // node's ports ascending); empty for an unknown or empty group.
  std::span<const McCopy> Copies(uint16_t grp) const noexcept {
    if (grp >= spans_.size()) return {};
    const Span& span = spans_[grp];
    return {copies_.data() + span.offset, span.count};
  }

  // Control path. grp is 1..65535 (0 means unicast); node handles count up from 0 as in BMv2
  // and are never reused. A node belongs to at most one group at a time.
  Result<uint16_t> GroupCreate(uint16_t grp);
  Status GroupDestroy(uint16_t grp);  // its nodes survive, dissociated
  Result<uint32_t> NodeCreate(uint16_t rid, std::vector<PortId> ports);
  Status NodeDestroy(uint32_t handle);  // dissociates it first
  Status NodeAssociate(uint16_t grp, uint32_t handle);
  Status NodeDissociate(uint16_t grp, uint32_t handle);
  std::string Dump() const;
  // Host memory of the groups, nodes and flattened copies (map nodes as libstdc++ lays them out:
  // three pointers and a colour before the value; malloc's headers not counted).
  uint64_t HostBytes() const;

 private:
  struct Node {
    uint16_t rid = 0;
    std::vector<PortId> ports;  // ascending, no duplicates
    uint16_t grp = 0;           // 0 = not associated
  };
  struct Span {
    uint32_t offset = 0;
    uint32_t count = 0;
  };

  Status CheckGroup(uint16_t grp) const;
  Status CheckNode(uint32_t handle) const;
  void Rebuild();

  uint16_t num_ports_;
  std::map<uint16_t, std::vector<uint32_t>> groups_;  // grp -> node handles, association order
  std::map<uint32_t, Node> nodes_;
  uint32_t next_handle_ = 0;
  std::vector<McCopy> copies_;
  std::vector<Span> spans_;  // indexed by grp
};

}  // namespace swemu
