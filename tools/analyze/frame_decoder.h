#pragma once
// Decodes a captured frame's standard headers (Ethernet, 802.1Q/802.1ad tags, IPv4 with DSCP and
// ECN, UDP, TCP) with the header definitions of pipeline/wire/, as far as the capture goes, and
// hands the UDP payload to the protocol registered on its destination port (or, for a protocol
// read both ways, on its source port).
#include <cstdint>
#include <span>
#include <vector>

#include "tools/analyze/decoded_frame.h"

namespace swemu {

// libpcap link types swemu-analyze reads (DLT_* values).
inline constexpr int kLinkEthernet = 1;  // DLT_EN10MB
inline constexpr int kLinkRaw = 101;     // LINKTYPE_RAW (IPv4 or IPv6, no link header)
inline constexpr int kLinkRawAlt = 12;   // DLT_RAW on most systems
inline constexpr int kLinkLinuxSll = 113;
inline constexpr int kLinkLinuxSll2 = 276;  // what tcpdump -i any writes today
bool IsDecodableLinkType(int link_type);

class FrameDecoder {
 public:
  // Program headers by UDP destination port.
  void Register(uint16_t udp_port, ProtocolAnalyzer* protocol);
  // A protocol of the datagrams to and from `udp_port` (PCN). A registration by destination port
  // comes first: a datagram from this port to another protocol's port is that protocol's.
  void RegisterBothWays(uint16_t udp_port, ProtocolAnalyzer* protocol);

  // Fills `frame` (its number, ts, caplen and len set by the caller) from `bytes`.
  void Decode(int link_type, std::span<const uint8_t> bytes, DecodedFrame& frame) const;

 private:
  void DecodeEthernet(std::span<const uint8_t> bytes, DecodedFrame& frame) const;
  void DecodeSll(std::span<const uint8_t> bytes, DecodedFrame& frame) const;
  void DecodeSll2(std::span<const uint8_t> bytes, DecodedFrame& frame) const;
  void DecodeL3(uint16_t ether_type, std::span<const uint8_t> bytes, DecodedFrame& frame) const;
  void DecodeIpv4(std::span<const uint8_t> bytes, DecodedFrame& frame) const;

  struct PortEntry {
    uint16_t port;
    ProtocolAnalyzer* protocol;
    bool both_ways;
  };
  ProtocolAnalyzer* Lookup(uint16_t sport, uint16_t dport) const;

  std::vector<PortEntry> ports_;
};

}  // namespace swemu
