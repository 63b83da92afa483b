#pragma once
// Real time's CPU port with several replicas ([dpdk] workers > 1): one control plane for the
// switch. Each round (every millisecond, from one thread) it moves the packet-ins waiting on
// every replica's lcore, in the order they entered ingress, and hands all of them, with one
// time, to every replica's agent (CpuPath::RunShared): the secondaries get copies first, then
// the primary (replica 0) takes the packets themselves. The agents thus see the same inputs and
// timer ticks at the same times and program the same entries into their own replica's tables,
// as commands do, while only the primary's packets leave (ARP replies and requests, the held
// packets it sends back into replica 0's ingress). A round and a command line never interleave:
// both hold the lock that keeps the replicas' command order alike. The fast path takes no lock.
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "pipeline/switch/cpu_path.h"

namespace swemu {

struct CpuPumpHooks {
  uint32_t replicas = 1;
  // Runs `task` on replica i's lcore with its CpuPath; false once the replica stopped.
  std::function<bool(uint32_t i, const std::function<void(CpuPath&)>& task)> on_replica;
  std::function<TimeNs()> now;  // the switch's clock
  // Frees a packet a stopped replica could not take (shutdown; the lcores have stopped).
  std::function<void(Packet*)> free;
  std::mutex* command_lock = nullptr;  // the lock every command line on the replicas holds
};

class CpuPump {
 public:
  static constexpr uint64_t kPeriodNs = 1'000'000;

  explicit CpuPump(CpuPumpHooks hooks) : hooks_(std::move(hooks)) {}
  // Frees what a round took and no replica took in the end.
  ~CpuPump();
  CpuPump(const CpuPump&) = delete;
  CpuPump& operator=(const CpuPump&) = delete;

  // Before traffic, before the lcores start: every replica's CpuPath becomes shared, replica 0
  // the primary, the control plane's time `now`.
  static void Share(const std::vector<CpuPath*>& paths, TimeNs now);
  // One round; false once a replica stopped.
  bool RunOnce();

 private:
  CpuPumpHooks hooks_;
  std::vector<Packet*> moving_;  // taken from the replicas, not yet taken by the primary
};

}  // namespace swemu
