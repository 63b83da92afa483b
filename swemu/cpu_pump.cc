#include "swemu/cpu_pump.h"

#include <algorithm>
#include <span>

namespace swemu {

CpuPump::~CpuPump() {
  for (Packet* pkt : moving_) hooks_.free(pkt);
}

void CpuPump::Share(const std::vector<CpuPath*>& paths, TimeNs now) {
  for (std::size_t i = 0; i < paths.size(); ++i) paths[i]->Share(i == 0, now);
}

bool CpuPump::RunOnce() {
  std::unique_lock<std::mutex> lock;
  if (hooks_.command_lock != nullptr) lock = std::unique_lock<std::mutex>(*hooks_.command_lock);
  for (uint32_t i = 0; i < hooks_.replicas; ++i) {
    if (!hooks_.on_replica(i, [this](CpuPath& cpu) { cpu.TakeQueued(&moving_); })) return false;
  }
  // In the order they entered ingress, whichever lcore ran it.
  std::stable_sort(moving_.begin(), moving_.end(), [](const Packet* a, const Packet* b) {
    return a->meta.ingress_ts < b->meta.ingress_ts;
  });
  const TimeNs now = hooks_.now();
  const std::span<Packet* const> pkts(moving_);
  for (uint32_t i = hooks_.replicas; i-- > 1;) {  // copies first: the primary may change a packet
    if (!hooks_.on_replica(i, [&](CpuPath& cpu) { cpu.RunShared(pkts, now); })) return false;
  }
  if (!hooks_.on_replica(0, [&](CpuPath& cpu) { cpu.RunShared(pkts, now); })) return false;
  moving_.clear();
  return true;
}

}  // namespace swemu
