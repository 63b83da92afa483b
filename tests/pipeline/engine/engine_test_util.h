#pragma once
// Shared by the engine tests: a tiny patch-panel program, frame and pcap helpers.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/engine/engine.h"
#include "pipeline/engine/pcap_io.h"
#include "pipeline/wire/frame_builder.h"

namespace swemu::engine_test {

// Special last bytes of the destination MAC understood by PatchProgram.
inline constexpr uint8_t kToMulticast = 0xFF;  // multicast group 1
inline constexpr uint8_t kConsume = 0xFE;      // absorbed by the program
inline constexpr uint8_t kToPort2 = 0xFD;      // egress port 2
inline constexpr uint8_t kToPort9 = 0xFC;      // egress port 9 (out of range)

// A frame of `size` bytes; the destination MAC's 5th byte is the queue id.
inline std::vector<uint8_t> Frame(uint8_t dst_last = 0, uint8_t queue = 0, std::size_t size = 100,
                                  uint16_t id = 0) {
  const MacAddr dst = MacAddr::FromU64(0x020000000000ull | uint64_t{queue} << 8 | dst_last);
  return FrameBuilder()
      .Eth(dst, MacAddr::FromU64(0x020000000001ull))
      .Ipv4(MakeIpv4Addr(10, 0, 0, 1), MakeIpv4Addr(10, 0, 0, 2))
      .Identification(id)
      .Udp(1000, 2000)
      .Payload(size - 42)
      .Build();
}

using Records = std::vector<std::pair<TimeNs, std::vector<uint8_t>>>;

inline std::string TempPath(const std::string& name) {
  return testing::TempDir() + "engine_test_" + name;
}

inline void WritePcap(const std::string& path, const Records& records) {
  auto writer = PcapWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.message();
  for (const auto& [ts, bytes] : records) {
    (*writer)->Write(ts, bytes.data(), static_cast<uint32_t>(bytes.size()));
  }
  ASSERT_TRUE((*writer)->Close().ok());
}

inline std::vector<PcapRecord> ReadPcap(const std::string& path) {
  auto records = ReadPcapFile(path);
  EXPECT_TRUE(records.ok()) << records.message();
  return records.ok() ? *records : std::vector<PcapRecord>{};
}

// Two runs' captures, one per host, are the same frame for frame: time and bytes.
inline void ExpectSameCaptures(const std::vector<std::vector<PcapRecord>>& a,
                               const std::vector<std::vector<PcapRecord>>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t h = 0; h < a.size(); ++h) {
    ASSERT_EQ(a[h].size(), b[h].size()) << "host " << h;
    for (std::size_t i = 0; i < a[h].size(); ++i) {
      EXPECT_EQ(a[h][i].ts_ns, b[h][i].ts_ns) << "host " << h << " frame " << i;
      EXPECT_EQ(a[h][i].bytes, b[h][i].bytes) << "host " << h << " frame " << i;
    }
  }
}

inline std::vector<TimeNs> Timestamps(const std::vector<PcapRecord>& records) {
  std::vector<TimeNs> out;
  for (const PcapRecord& r : records) out.push_back(r.ts_ns);
  return out;
}

inline std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A switch running PatchProgram (see engine_test.cc), shaped to rate_bps on every port.
inline SwitchConfig PatchSwitch(const std::string& name, uint64_t rate_bps, uint16_t ports = 4) {
  SwitchConfig config;
  config.name = name;
  config.num_ports = ports;
  config.program = "engine_test_patch";
  config.tm.port_rate_bps = rate_bps;
  return config;
}

// Sends a `frame_bytes` frame to port 2 in `queue` every `gap_ns` from time 0 until `until_ns`:
// line rate when the gap is the frame's serialization time (the incast and push-out tests).
class LineRateSender final : public EngineHost {
 public:
  LineRateSender(uint8_t queue, uint32_t frame_bytes, TimeNs gap_ns, TimeNs until_ns)
      : frame_(Frame(kToPort2, queue, frame_bytes)), gap_ns_(gap_ns), until_ns_(until_ns) {}
  Status Start(HostContext& ctx) override {
    ctx_ = &ctx;
    ctx.ScheduleTimer(0, 0);
    return Status::Ok();
  }
  void OnFrame(TimeNs, Packet* pkt) override { ctx_->pool().Free(pkt); }
  void OnTimer(TimeNs now, uint64_t) override {
    ctx_->SendFrame(frame_.data(), static_cast<uint32_t>(frame_.size()));
    if (now + gap_ns_ < until_ns_) ctx_->ScheduleTimer(now + gap_ns_, 0);
  }

 private:
  std::vector<uint8_t> frame_;
  TimeNs gap_ns_;
  TimeNs until_ns_;
  HostContext* ctx_ = nullptr;
};

}  // namespace swemu::engine_test
