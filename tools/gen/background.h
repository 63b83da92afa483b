#pragma once
// Background TCP-like flows sharing a worker's link: SYN, data segments of MSS 1448 (1514-byte
// frames with the timestamp option) carrying ACK, then FIN|ACK, paced at the flow's rate.
#include <cstdint>
#include <vector>

#include "pipeline/wire/address.h"
#include "tools/gen/gen_common.h"
#include "tools/gen/link.h"

namespace swemu::gen {

inline constexpr uint16_t kBackgroundFirstPort = 40000;
inline constexpr uint16_t kBackgroundDstPort = 5001;
inline constexpr uint32_t kBackgroundMss = 1448;

struct BackgroundSpec {
  uint32_t flows = 0;  // per link
  uint64_t rate_bps = 100'000'000;
  uint64_t bytes = 1'000'000;  // payload per flow
  bool ecn = false;            // ECT(0) instead of Not-ECT
};

po::options_description BackgroundOptions();
Status FillBackgroundSpec(const po::variables_map& vm, BackgroundSpec& spec);

// Frames a flow of `bytes` sends: SYN, the data segments, FIN.
constexpr uint64_t BackgroundFrames(uint64_t bytes) {
  return 2 + (bytes + kBackgroundMss - 1) / kBackgroundMss;
}

struct BackgroundEnds {
  MacAddr src_mac, dst_mac;
  Ipv4Addr src_ip = 0, dst_ip = 0;
};

class BackgroundFlow final : public FrameSource {
 public:
  // Flow `index` (source port 40000 + index) has its SYN due at start_ns and its first data
  // segment one RTT after the SYN went (the handshake); every later frame is due one gap at the
  // flow's rate (the previous frame + 24 bytes) after the previous frame went.
  BackgroundFlow(const BackgroundSpec& spec, uint32_t index, const BackgroundEnds& ends,
                 TimeNs start_ns, TimeNs rtt_ns);

  bool Done() const override { return phase_ == Phase::kDone; }
  TimeNs Due() const override { return due_; }
  void Next(TimeNs at, std::vector<uint8_t>* frame) override;

 private:
  enum class Phase { kSyn, kData, kFin, kDone };

  BackgroundSpec spec_;
  uint16_t src_port_;
  BackgroundEnds ends_;
  TimeNs rtt_ns_;
  Pacer pacer_;
  Phase phase_ = Phase::kSyn;
  TimeNs due_;
  uint64_t sent_bytes_ = 0;
  uint16_t ip_id_ = 0;
};

}  // namespace swemu::gen
