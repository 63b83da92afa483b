#pragma once
// --pcap-dir: records chosen ports' rx and tx off the fast path. Each lcore copies each frame
// (its first snaplen bytes, the wire length and a wall-clock timestamp) into its own fixed ring
// of slots allocated at start, single producer / single consumer, and one writer thread drains
// the rings into DIR/port<N>-rx.pcap and DIR/port<N>-tx.pcap. When the ring is full the frame is
// not recorded and `dropped` counts it: recording never slows or drops traffic. The files can
// grow by hundreds of MB a second: the writer says so on stderr once they pass kWarnBytes, and
// with a cap (--pcap-max-bytes) stops writing, and says so, before they would pass it.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/core/packet.h"
#include "pipeline/core/status.h"
#include "pipeline/engine/pcap_io.h"

namespace swemu {

// One lcore's ring of fixed slots, single producer (the lcore) / single consumer (the writer).
class PcapRing {
 public:
  struct SlotHeader {
    uint64_t ts_ns;     // wall clock
    uint32_t orig_len;  // length on the wire
    uint16_t caplen;    // bytes that follow the header
    uint16_t file;      // port * 2 + direction
  };

  PcapRing(uint64_t slots, std::size_t stride)
      : ring_(std::make_unique<uint8_t[]>(slots * stride)),
        slots_(slots),
        mask_(slots - 1),
        stride_(stride) {}

  // Fast path (the lcore only). Slots free for new records right now.
  uint32_t Room() noexcept {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_cache_ >= slots_) tail_cache_ = tail_.load(std::memory_order_acquire);
    return static_cast<uint32_t>(slots_ - (head - tail_cache_));
  }
  // The i-th slot after those published (i < Room()): header and caplen bytes of data to fill.
  SlotHeader* Pending(uint32_t i, uint8_t** data) noexcept {
    uint8_t* slot = ring_.get() + ((head_.load(std::memory_order_relaxed) + i) & mask_) * stride_;
    *data = slot + sizeof(SlotHeader);
    return reinterpret_cast<SlotHeader*>(slot);
  }
  // Hands the first n pending slots to the writer.
  void Publish(uint32_t n) noexcept {
    head_.store(head_.load(std::memory_order_relaxed) + n, std::memory_order_release);
  }
  void CountDropped(uint64_t n) noexcept { dropped_ += n; }
  // After the lcore stopped.
  uint64_t dropped() const { return dropped_; }

 private:
  friend class PcapRecorder;

  std::unique_ptr<uint8_t[]> ring_;
  uint64_t slots_;
  uint64_t mask_;
  std::size_t stride_;
  // The producer's and the consumer's indices on their own cache lines.
  alignas(64) std::atomic<uint64_t> head_{0};  // written by the lcore
  uint64_t tail_cache_ = 0;
  uint64_t dropped_ = 0;
  alignas(64) std::atomic<uint64_t> tail_{0};  // written by the writer
};

class PcapRecorder {
 public:
  enum Direction : uint8_t { kRx = 0, kTx = 1 };
  using SlotHeader = PcapRing::SlotHeader;
  static constexpr uint32_t kMaxSlots = 8192;              // per ring
  static constexpr std::size_t kMaxRingBytes = 32u << 20;  // all rings together
  static constexpr uint64_t kWarnBytes = 1'000'000'000;    // all files together

  // Opens DIR (created if missing) and the two files of each port in `ports`, allocates one ring
  // per lcore, then starts the writer thread. Errors name the file:
  // "--pcap-dir: DIR/port0-rx.pcap: ...". `max_bytes` caps the files' bytes together (0: no cap).
  static Result<std::unique_ptr<PcapRecorder>> Start(const std::string& dir,
                                                     const std::vector<PortId>& ports,
                                                     uint16_t num_ports, uint32_t snaplen,
                                                     uint32_t lcores = 1, uint64_t max_bytes = 0);
  ~PcapRecorder();
  PcapRecorder(const PcapRecorder&) = delete;
  PcapRecorder& operator=(const PcapRecorder&) = delete;

  bool records(PortId port) const noexcept { return port < recorded_.size() && recorded_[port]; }
  uint32_t snaplen() const noexcept { return snaplen_; }
  // Lcore i's ring: only lcore i fills it. A port's frames all come from its owner, so each
  // file's records stay in order.
  PcapRing& ring(uint32_t lcore) { return *rings_[lcore]; }

  // Drains the rings, stops the writer and closes the files; the first write error, if any.
  Status Stop();
  uint64_t recorded() const { return recorded_count_; }
  uint64_t capped() const { return capped_; }  // frames not written: the cap was reached
  uint64_t dropped() const;  // over every ring, after the lcores stopped
  const std::string& dir() const { return dir_; }

 private:
  PcapRecorder() = default;
  void WriterLoop();
  uint64_t Drain();
  uint64_t Drain(PcapRing& ring);
  // Whether a record of `caplen` bytes may still be written; counts its bytes when it may.
  bool Admit(uint32_t caplen);

  std::string dir_;
  uint32_t snaplen_ = 0;
  std::vector<bool> recorded_;
  std::vector<std::unique_ptr<PcapWriter>> writers_;  // by file index; null when not recorded
  std::vector<std::unique_ptr<PcapRing>> rings_;
  uint64_t recorded_count_ = 0;
  uint64_t max_bytes_ = 0;
  uint64_t bytes_ = 0;  // in the files, headers included
  uint64_t capped_ = 0;
  bool warned_ = false;
  alignas(64) std::atomic<bool> stop_{false};
  std::thread writer_;
  bool stopped_ = false;
};

}  // namespace swemu
