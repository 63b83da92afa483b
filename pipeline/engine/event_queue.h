#pragma once
// The engine's agenda: events ordered by (time, seq). Push numbers them in insertion order, so
// events at the same virtual time run in the order they were scheduled and every run replays
// identically; PushKeyed keeps a seq the caller chose (the partitioned engine's key: the node
// that scheduled the event and that node's own count, which no partitioning changes).
#include <cstdint>
#include <span>
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

// 32 bytes: the arrivals carry a packet, the others a cookie, never both.
struct Event {
  TimeNs time = 0;
  uint64_t seq = 0;
  union {
    Packet* pkt = nullptr;  // kSwitchArrival, kHostArrival
    uint64_t cookie;        // kPortService, kHostTimer, kCpuService
  };
  uint32_t node = 0;
  PortId port = 0;
  EventKind kind = EventKind::kHostTimer;
};
static_assert(sizeof(Event) == 32);

// A 4-ary min-heap: half the levels of a binary heap, and a node's four children share a cache
// line pair, so a pop's sift-down touches fewer lines. The order is total (seq is unique), so
// the events come out exactly as from any other priority queue.
class EventQueue {
 public:
  void Push(Event event) {
    event.seq = next_seq_++;
    PushKeyed(event);
  }
  // `event.seq` as given: unique among the queued events, or their order is not total.
  void PushKeyed(const Event& event) {
    std::size_t at = heap_.size();
    heap_.push_back(event);
    while (at > 0) {
      const std::size_t parent = (at - 1) / kArity;
      if (!Before(event, heap_[parent])) break;
      heap_[at] = heap_[parent];
      at = parent;
    }
    heap_[at] = event;
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }
  // The root's children: the one due first comes out after top(), unless an event pushed
  // meanwhile comes before it (what the engine prefetches for).
  std::span<const Event> after_top() const {
    const std::size_t n = heap_.size();
    if (n < 2) return {};
    return {heap_.data() + 1, n < 1 + kArity ? n - 1 : kArity};
  }
  Event Pop() {
    const Event first = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) SiftDown(last);
    return first;
  }

 private:
  static constexpr std::size_t kArity = 4;
  static bool Before(const Event& a, const Event& b) {
    return a.time != b.time ? a.time < b.time : a.seq < b.seq;
  }
  // Puts `event` at the root's place, moving the earliest child up until it fits.
  void SiftDown(const Event& event) {
    const std::size_t n = heap_.size();
    std::size_t at = 0;
    for (;;) {
      const std::size_t first = at * kArity + 1;
      if (first >= n) break;
      const std::size_t end = first + kArity < n ? first + kArity : n;
      std::size_t best = first;
      for (std::size_t c = first + 1; c < end; ++c) {
        if (Before(heap_[c], heap_[best])) best = c;
      }
      if (!Before(heap_[best], event)) break;
      heap_[at] = heap_[best];
      at = best;
    }
    heap_[at] = event;
  }

  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace swemu
