#pragma once
// Where swemu-replay's frames go and where it captures from: a DPDK port (--port) or a kernel
// interface through an AF_PACKET socket (--iface). Frames are staged (copied into the device's
// buffers) ahead of their deadlines, so that at a deadline only the hand-over remains.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/core/status.h"
#include "pipeline/engine/pcap_io.h"

struct rte_mbuf;
struct rte_mempool;

namespace swemu::replay {

inline constexpr std::size_t kMaxBurst = 32;

struct SendResult {
  std::size_t sent = 0;    // the first `sent` staged frames were taken
  std::size_t failed = 0;  // then this many were refused for good and dropped (see error())
};

class ReplayOutput {
 public:
  virtual ~ReplayOutput() = default;

  // The longest frame it sends.
  virtual uint32_t max_frame_len() const = 0;
  // Copies a frame behind the staged ones (at most kMaxBurst); false when no buffer is free.
  virtual bool Stage(const uint8_t* data, uint32_t len) = 0;
  // Hands the first n staged frames to the device in one call. Nothing sent and nothing failed:
  // the device is busy, try again.
  virtual SendResult Send(std::size_t n) = 0;
  // Frees the first n staged frames unsent.
  virtual void Drop(std::size_t n) = 0;
  // Polls for received frames, writing them to the capture (if any) with the wall-clock time;
  // returns how many arrived.
  virtual uint32_t Receive() = 0;
  // False when Receive() never returns anything (an interface opened without capture).
  virtual bool receives() const = 0;
  // Why the last failed frame was refused.
  const std::string& error() const { return error_; }

  void set_capture(PcapWriter* writer) { capture_ = writer; }

 protected:
  PcapWriter* capture_ = nullptr;
  std::string error_;
};

// A started DPDK port (queue 0 each way). Frames longer than one mbuf's data room are not sent.
class DpdkOutput final : public ReplayOutput {
 public:
  DpdkOutput(uint16_t port, rte_mempool* pool) : port_(port), pool_(pool) {}
  ~DpdkOutput() override;

  uint32_t max_frame_len() const override { return MaxFrameLen(); }
  static uint32_t MaxFrameLen();
  bool Stage(const uint8_t* data, uint32_t len) override;
  SendResult Send(std::size_t n) override;
  void Drop(std::size_t n) override;
  uint32_t Receive() override;
  bool receives() const override { return true; }

 private:
  uint16_t port_;
  rte_mempool* pool_;
  rte_mbuf* staged_[kMaxBurst] = {};
  std::size_t count_ = 0;
  std::vector<uint8_t> scratch_ = std::vector<uint8_t>(65536);
};

// A kernel interface (a veth or TAP end, a NIC) through a raw AF_PACKET socket: frames go out
// as they are, one send() each (sendmmsg() for a burst). With capture, the socket also receives
// every frame arriving on the interface (not the ones it sends).
class IfaceOutput final : public ReplayOutput {
 public:
  // Errors: "--iface NAME: no such interface", "--iface NAME: interface is down", a socket
  // error (needs root or CAP_NET_RAW).
  static Result<std::unique_ptr<IfaceOutput>> Open(const std::string& name, bool capture);
  ~IfaceOutput() override;

  uint32_t max_frame_len() const override { return max_len_; }
  bool Stage(const uint8_t* data, uint32_t len) override;
  SendResult Send(std::size_t n) override;
  void Drop(std::size_t n) override;
  uint32_t Receive() override;
  bool receives() const override { return capture_on_; }

 private:
  IfaceOutput(int fd, uint32_t max_len, bool capture);
  int fd_;
  uint32_t max_len_;
  bool capture_on_;
  std::vector<uint8_t> slots_;  // kMaxBurst frames of max_len_ bytes, a ring
  uint32_t lens_[kMaxBurst] = {};
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  std::vector<uint8_t> rx_buffer_ = std::vector<uint8_t>(65536);
};

}  // namespace swemu::replay
