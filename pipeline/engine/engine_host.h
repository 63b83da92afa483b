#pragma once
// A host on a switch port in virtual time. The pcap source/sink is one; hostlib endpoints (ATP
// workers, parameter servers, ...) become others, so hosts and switches co-simulate in one
// deterministic run.
#include <cstdint>

#include "pipeline/core/clock.h"
#include "pipeline/core/packet.h"
#include "pipeline/core/packet_pool.h"
#include "pipeline/core/status.h"

namespace swemu {

// What the engine offers a host: its port's side of the wire, a clock and timers.
class HostContext {
 public:
  virtual ~HostContext() = default;
  virtual TimeNs Now() const = 0;
  virtual HeapPacketPool& pool() = 0;
  // Sends a frame towards the switch; it arrives after the host link's delay (or is lost).
  // Takes ownership of pkt.
  virtual void Send(Packet* pkt) = 0;
  // Copies a frame into a pool packet and sends it; false (counted as an engine drop) when the
  // frame is too long or the pool is exhausted.
  virtual bool SendFrame(const uint8_t* data, uint32_t len) = 0;
  // OnTimer(cookie) runs at `at` (or now, if `at` is already past).
  virtual void ScheduleTimer(TimeNs at, uint64_t cookie) = 0;
  // Stops the run with this error (e.g. a corrupt input file).
  virtual void Fail(Status status) = 0;
};

class EngineHost {
 public:
  virtual ~EngineHost() = default;
  // Called once when the run starts; schedule the first sends or timers here.
  virtual Status Start(HostContext& ctx) = 0;
  // A frame from the switch reached the host; the host owns pkt and frees it to ctx.pool().
  virtual void OnFrame(TimeNs now, Packet* pkt) = 0;
  virtual void OnTimer(TimeNs now, uint64_t cookie) = 0;
  // Called once when no events remain (flush and close files).
  virtual Status Finish() { return Status::Ok(); }
};

}  // namespace swemu
