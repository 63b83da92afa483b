#include "pipeline/tm/multicast.h"

#include <algorithm>

namespace swemu {

Status McTable::CheckGroup(uint16_t grp) const {
  if (!groups_.contains(grp)) {
    return Status::Error("multicast group " + std::to_string(grp) + " does not exist");
  }
  return Status::Ok();
}

Status McTable::CheckNode(uint32_t handle) const {
  if (!nodes_.contains(handle)) {
    return Status::Error("multicast node handle " + std::to_string(handle) + " does not exist");
  }
  return Status::Ok();
}

Result<uint16_t> McTable::GroupCreate(uint16_t grp) {
  if (grp == 0) return Status::Error("multicast group 0 is reserved for unicast; use 1..65535");
  if (groups_.contains(grp)) {
    return Status::Error("multicast group " + std::to_string(grp) + " already exists");
  }
  groups_[grp];
  return grp;
}

Status McTable::GroupDestroy(uint16_t grp) {
  SWEMU_RETURN_IF_ERROR(CheckGroup(grp));
  for (uint32_t handle : groups_[grp]) nodes_[handle].grp = 0;
  groups_.erase(grp);
  Rebuild();
  return Status::Ok();
}

Result<uint32_t> McTable::NodeCreate(uint16_t rid, std::vector<PortId> ports) {
  std::sort(ports.begin(), ports.end());
  for (std::size_t i = 0; i < ports.size(); ++i) {
    if (ports[i] >= num_ports_) {
      return Status::Error("multicast node port " + std::to_string(ports[i]) +
                           " out of range [0, " + std::to_string(num_ports_ - 1) + "]");
    }
    if (i > 0 && ports[i] == ports[i - 1]) {
      return Status::Error("multicast node port " + std::to_string(ports[i]) + " listed twice");
    }
  }
  uint32_t handle = next_handle_++;
  nodes_[handle] = Node{rid, std::move(ports), 0};
  return handle;
}

Status McTable::NodeDestroy(uint32_t handle) {
  SWEMU_RETURN_IF_ERROR(CheckNode(handle));
  uint16_t grp = nodes_[handle].grp;
  if (grp != 0) std::erase(groups_[grp], handle);
  nodes_.erase(handle);
  if (grp != 0) Rebuild();
  return Status::Ok();
}

Status McTable::NodeAssociate(uint16_t grp, uint32_t handle) {
  SWEMU_RETURN_IF_ERROR(CheckGroup(grp));
  SWEMU_RETURN_IF_ERROR(CheckNode(handle));
  Node& node = nodes_[handle];
  if (node.grp != 0) {
    return Status::Error("multicast node " + std::to_string(handle) +
                         " is already associated with group " + std::to_string(node.grp));
  }
  node.grp = grp;
  groups_[grp].push_back(handle);
  Rebuild();
  return Status::Ok();
}

Status McTable::NodeDissociate(uint16_t grp, uint32_t handle) {
  SWEMU_RETURN_IF_ERROR(CheckGroup(grp));
  SWEMU_RETURN_IF_ERROR(CheckNode(handle));
  Node& node = nodes_[handle];
  if (node.grp != grp) {
    return Status::Error("multicast node " + std::to_string(handle) +
                         " is not associated with group " + std::to_string(grp));
  }
  node.grp = 0;
  std::erase(groups_[grp], handle);
  Rebuild();
  return Status::Ok();
}

void McTable::Rebuild() {
  std::vector<McCopy> copies;
  std::vector<Span> spans(groups_.empty() ? 0 : groups_.rbegin()->first + 1u);
  for (const auto& [grp, handles] : groups_) {
    spans[grp].offset = static_cast<uint32_t>(copies.size());
    for (uint32_t handle : handles) {
      const Node& node = nodes_.at(handle);
      for (PortId port : node.ports) copies.push_back({port, node.rid});
    }
    spans[grp].count = static_cast<uint32_t>(copies.size()) - spans[grp].offset;
  }
  copies_ = std::move(copies);
  spans_ = std::move(spans);
}

uint64_t McTable::HostBytes() const {
  constexpr uint64_t kMapLinkBytes = 4 * sizeof(void*);
  uint64_t bytes = copies_.capacity() * sizeof(McCopy) + spans_.capacity() * sizeof(Span);
  for (const auto& [grp, handles] : groups_) {
    bytes += kMapLinkBytes + sizeof(*groups_.begin()) + handles.capacity() * sizeof(uint32_t);
  }
  for (const auto& [handle, node] : nodes_) {
    bytes += kMapLinkBytes + sizeof(*nodes_.begin()) + node.ports.capacity() * sizeof(PortId);
  }
  return bytes;
}

std::string McTable::Dump() const {
  std::string out;
  for (const auto& [grp, handles] : groups_) {
    out += "mgrp " + std::to_string(grp) + ":";
    for (uint32_t handle : handles) {
      const Node& node = nodes_.at(handle);
      out += " node " + std::to_string(handle) + " (rid " + std::to_string(node.rid) + " ports";
      for (PortId port : node.ports) out.append(" ").append(std::to_string(port));
      out += ")";
    }
    out += "\n";
  }
  for (const auto& [handle, node] : nodes_) {
    if (node.grp != 0) continue;
    out += "node " + std::to_string(handle) + " (rid " + std::to_string(node.rid) +
           ") not associated\n";
  }
  return out;
}

}  // namespace swemu
