#pragma once
// One captured frame as swemu-analyze decodes it: every layer it could read, the program header
// (bytes and the protocol that owns them) and, when the frame itself is wrong, why. A frame cut
// by the capture's snap length is not malformed: its headers are read as far as they were kept.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pipeline/core/clock.h"
#include "pipeline/wire/address.h"

namespace swemu {

class ProtocolAnalyzer;

struct DecodedFrame {
  uint64_t number = 0;  // 1-based within its file, as Wireshark's frame.number
  TimeNs ts_ns = 0;
  uint32_t caplen = 0;  // bytes captured
  uint32_t len = 0;     // bytes on the wire
  bool snapped() const { return caplen < len; }

  bool has_eth = false;
  MacAddr eth_src, eth_dst;
  uint16_t ether_type = 0;  // after the VLAN tags (or from the SLL header; 0x0800 for raw IP)
  uint8_t vlan_tags = 0;
  uint16_t vlan_id = 0;  // of the first (outer) tag

  bool has_ipv4 = false;
  Ipv4Addr ip_src = 0, ip_dst = 0;
  uint8_t tos = 0;
  uint8_t ip_proto = 0;
  uint16_t ip_id = 0;
  bool ip_fragment = false;  // any piece of a fragmented datagram

  bool has_l4 = false;  // UDP or TCP ports were read
  uint16_t sport = 0, dport = 0;
  bool has_tcp = false;
  uint32_t tcp_seq = 0;
  uint8_t tcp_flags = 0;
  uint32_t l4_payload_len = 0;  // UDP/TCP payload bytes as the headers declare them

  // The payload after UDP as captured (empty without UDP), and the program whose port it is.
  const uint8_t* app = nullptr;
  std::size_t app_len = 0;
  ProtocolAnalyzer* protocol = nullptr;

  std::string_view malformed;  // empty: well formed (as far as it was captured)
};

}  // namespace swemu
