#pragma once
// Decodes a captured frame's standard headers (Ethernet, 802.1Q/802.1ad tags, IPv4 with DSCP and
// ECN, UDP, TCP) with the header definitions of pipeline/wire/, as far as the capture goes, and
// hands the UDP payload to the protocol registered on its destination port.
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
bool IsDecodableLinkType(int link_type);

class FrameDecoder {
 public:
  // Program headers by UDP destination port.
  void Register(uint16_t udp_port, ProtocolAnalyzer* protocol);

  // Fills `frame` (its number, ts, caplen and len set by the caller) from `bytes`.
  void Decode(int link_type, std::span<const uint8_t> bytes, DecodedFrame& frame) const;

 private:
  void DecodeEthernet(std::span<const uint8_t> bytes, DecodedFrame& frame) const;
  void DecodeSll(std::span<const uint8_t> bytes, DecodedFrame& frame) const;
  void DecodeL3(uint16_t ether_type, std::span<const uint8_t> bytes, DecodedFrame& frame) const;
  void DecodeIpv4(std::span<const uint8_t> bytes, DecodedFrame& frame) const;

  std::vector<std::pair<uint16_t, ProtocolAnalyzer*>> ports_;
};

}  // namespace swemu
