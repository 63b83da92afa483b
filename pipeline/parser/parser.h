#pragma once
// The programmable parser of the emulated ASIC: Ethernet, up to two 802.1Q/802.1ad tags, IPv4
// (with options) or IPv6 (skipping up to kMaxIpv6ExtHeaders extension headers), UDP or TCP,
// and one program header after UDP chosen by the UDP destination port (ATP, GOAT, ...). It fills
// Packet::hdr with header offsets and drops malformed packets with a named DropReason. docs/wire.md
// lists every check. FlowHash is the flow hash programs compute from what it parsed, where they
// need one (ECMP, a shard key), as a P4 program calls a hash extern: packets whose program never
// asks pay nothing for it.
#include <array>
#include <cstdint>

#include "pipeline/core/packet.h"
#include "pipeline/core/status.h"

namespace swemu {

struct ParserConfig {
  // Bytes the parser may extract from the front of a frame; a header ending beyond them drops
  // the packet (parse_depth_exceeded). 512 B = 4096 bits, the size of Tofino's packet header
  // vector (PHV), so a program that parses here fits a real parser's budget.
  uint16_t parse_depth = 512;
  bool verify_ipv4_checksum = true;
  uint8_t max_vlan_tags = 2;  // 0..kMaxVlanTags; more tags drop the packet (too_many_vlan_tags)
};

// Slow-path check of a config (Parser's constructor clamps instead of failing).
Status ValidateParserConfig(const ParserConfig& config);

class Parser {
 public:
  static constexpr int kMaxUdpApps = 16;
  // IPv6 extension headers (hop-by-hop, routing, destination options, fragment) skipped before
  // the upper layer; one more drops the packet (ipv6_too_many_exts). A real parser
  // unrolls its loop a fixed number of times; the parse depth bounds the bytes as well.
  static constexpr int kMaxIpv6ExtHeaders = 4;

  explicit Parser(ParserConfig config = {});

  // Registers a program header of header_len bytes right after the UDP header of datagrams to
  // udp_dst_port; the parser then records it in hdr.app / hdr.app_id. app_id must be >= 1.
  Status AddUdpApp(uint16_t udp_dst_port, uint16_t header_len, uint16_t app_id);

  // Fast path. Resets and fills pkt.hdr. On a malformed packet it marks the drop reason and
  // returns false; hdr then holds the headers accepted before.
  bool Parse(Packet& pkt) const noexcept;

  const ParserConfig& config() const noexcept { return config_; }

 private:
  struct AppSlot {
    uint16_t port = 0;
    uint16_t header_len = 0;
    uint16_t app_id = 0;  // 0 = empty slot
  };
  // Open addressing, at most a quarter full, so a lookup touches one or two slots.
  static constexpr uint32_t kAppSlots = 64;
  static uint32_t AppSlotOf(uint16_t port) noexcept {
    return static_cast<uint16_t>(port * 40503u) >> 10;  // top 6 bits of a Fibonacci hash
  }
  const AppSlot* FindApp(uint16_t port) const noexcept;
  bool ParseIpv4(Packet& pkt, uint32_t ip) const noexcept;
  bool ParseIpv6(Packet& pkt, uint32_t ip) const noexcept;
  bool ParseUdp(Packet& pkt, uint32_t udp, uint32_t ip_end, bool first_fragment) const noexcept;
  bool ParseTcp(Packet& pkt, uint32_t tcp, uint32_t ip_end) const noexcept;

  ParserConfig config_;
  int app_count_ = 0;
  std::array<AppSlot, kAppSlots> apps_{};
};

// The flow hash of a parsed packet: for IPv4, of (src_addr, dst_addr, protocol and, when UDP
// or TCP was parsed and the packet is no fragment, the ports); for IPv6 the same of its
// addresses, upper-layer next header and ports (no ports with a fragment header); for other
// ethertypes, of the MAC
// addresses and the ethertype after the tags; 0 for a packet without a parsed Ethernet header.
// Deterministic across runs and machines. Reads the headers as they are now: a program that
// rewrites addresses or ports before asking hashes the new ones.
uint32_t FlowHash(const Packet& pkt) noexcept;

}  // namespace swemu
