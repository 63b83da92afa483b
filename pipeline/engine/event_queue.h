#pragma once
// The engine's agenda: events ordered by (time, insertion sequence), so events at the same
// virtual time run in the order they were scheduled and every run replays identically.
#include <cstdint>
#include <queue>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/packet.h"

namespace swemu {

enum class EventKind : uint8_t {
  kSwitchArrival,  // pkt reaches switch `node` on `port`
  kPortService,    // switch `node` may transmit on `port` (cookie = service generation)
  kHostArrival,    // pkt reaches host `node`
  kHostTimer,      // host `node`'s timer with `cookie` fires
  kCpuService,     // switch `node`'s control plane has work (cookie = its generation)
  kControlPlane,   // switch `node`'s control plane takes the digests due now
};

struct Event {
  TimeNs time = 0;
  uint64_t seq = 0;
  Packet* pkt = nullptr;
  uint64_t cookie = 0;
  uint32_t node = 0;
  PortId port = 0;
  EventKind kind = EventKind::kHostTimer;
};

class EventQueue {
 public:
  void Push(Event event) {
    event.seq = next_seq_++;
    heap_.push(event);
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.top(); }
  Event Pop() {
    Event event = heap_.top();
    heap_.pop();
    return event;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace swemu
