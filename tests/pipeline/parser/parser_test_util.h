#pragma once
// Shared by the parser-area tests: packets from bytes, and the frames the tests start from.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "pipeline/core/packet_pool.h"
#include "pipeline/parser/parser.h"
#include "pipeline/wire/checksum.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/ipv4.h"

namespace swemu::testing {

inline const MacAddr kMacA = MacAddr::FromU64(0x020000000001);
inline const MacAddr kMacB = MacAddr::FromU64(0x020000000002);
inline const Ipv4Addr kIpA = MakeIpv4Addr(10, 0, 0, 1);
inline const Ipv4Addr kIpB = MakeIpv4Addr(10, 0, 0, 2);

inline const Ipv6Addr kIp6A = {0x20010DB800010000ULL, 1};  // 2001:db8:1::1
inline const Ipv6Addr kIp6B = {0x20010DB800020000ULL, 2};  // 2001:db8:2::2

inline FrameBuilder Udp6Frame(uint16_t sport = 1000, uint16_t dport = 2000) {
  FrameBuilder b;
  b.Eth(kMacB, kMacA).Ipv6(kIp6A, kIp6B).Udp(sport, dport).Payload(16);
  return b;
}

inline FrameBuilder Tcp6Frame(uint16_t sport = 1000, uint16_t dport = 80) {
  FrameBuilder b;
  b.Eth(kMacB, kMacA).Ipv6(kIp6A, kIp6B).Tcp(sport, dport).Payload(16);
  return b;
}

inline FrameBuilder UdpFrame(uint16_t sport = 1000, uint16_t dport = 2000) {
  FrameBuilder b;
  b.Eth(kMacB, kMacA).Ipv4(kIpA, kIpB).Udp(sport, dport).Payload(16);
  return b;
}

inline FrameBuilder TcpFrame(uint16_t sport = 1000, uint16_t dport = 80) {
  FrameBuilder b;
  b.Eth(kMacB, kMacA).Ipv4(kIpA, kIpB).Tcp(sport, dport).Payload(16);
  return b;
}

// Rewrites the IPv4 header checksum after a test corrupted another field on purpose.
inline void FixIpv4Checksum(std::vector<uint8_t>& frame, std::size_t ip_at) {
  auto* ip = HeaderAt<Ipv4Header>(frame.data() + ip_at);
  ip->SetHeaderChecksum(Ipv4HeaderChecksum(frame.data() + ip_at, ip->HeaderLen()));
}

// Owns the packets a test makes and frees them at the end.
class PacketTest : public ::testing::Test {
 protected:
  ~PacketTest() override {
    for (Packet* p : packets_) pool_.Free(p);
  }

  // Never a null source, even for an empty frame (memcpy's arguments must not be null).
  static const uint8_t* DataOf(const std::vector<uint8_t>& bytes) {
    static const uint8_t kNothing = 0;
    return bytes.empty() ? &kNothing : bytes.data();
  }
  Packet* Make(const std::vector<uint8_t>& bytes) {
    Packet* p = pool_.FromBytes(DataOf(bytes), static_cast<uint32_t>(bytes.size()));
    EXPECT_NE(p, nullptr);
    packets_.push_back(p);
    return p;
  }
  Packet* MakeParsed(const Parser& parser, const std::vector<uint8_t>& bytes) {
    Packet* p = Make(bytes);
    EXPECT_TRUE(parser.Parse(*p)) << DropReasonName(p->meta.drop_reason);
    return p;
  }
  // Parses a copy of bytes; kNone when it parsed.
  DropReason ParseReason(const Parser& parser, const std::vector<uint8_t>& bytes) {
    Packet* p = pool_.FromBytes(DataOf(bytes), static_cast<uint32_t>(bytes.size()));
    if (p == nullptr) {
      ADD_FAILURE() << "pool exhausted";
      return DropReason::kFirstProgramReason;  // no reason the parser gives
    }
    const bool ok = parser.Parse(*p);
    const DropReason reason = p->meta.drop_reason;
    pool_.Free(p);
    EXPECT_EQ(ok, reason == DropReason::kNone);
    return reason;
  }
  std::vector<uint8_t> Bytes(const Packet& p) { return {p.data, p.data + p.len}; }

  HeapPacketPool pool_{256};
  std::vector<Packet*> packets_;
};

}  // namespace swemu::testing
