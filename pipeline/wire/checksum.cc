#include "pipeline/wire/checksum.h"

#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/ipv6.h"
#include "pipeline/wire/tcp.h"
#include "pipeline/wire/udp.h"

namespace swemu {
namespace {

// Sum over `len` bytes with the 16-bit field at even offset `skip` read as zero.
uint32_t SumSkipping(const uint8_t* data, std::size_t len, std::size_t skip) noexcept {
  uint32_t sum = OnesComplementSum(data, skip);
  return OnesComplementSum(data + skip + 2, len - skip - 2, sum);
}

constexpr std::size_t kIpv4ChecksumAt = offsetof(Ipv4Header, header_checksum);
constexpr std::size_t kUdpChecksumAt = offsetof(UdpHeader, checksum);
constexpr std::size_t kTcpChecksumAt = offsetof(TcpHeader, checksum);
constexpr std::size_t kIcmpv6ChecksumAt = 2;  // type, code, checksum

uint16_t Upper6Checksum(const uint8_t* ip6, uint8_t next_header, const uint8_t* l4, std::size_t len,
                        std::size_t checksum_at) noexcept {
  const uint32_t sum = Ipv6PseudoHeaderSum(ip6, next_header, static_cast<uint32_t>(len));
  return ChecksumFromSum(sum + SumSkipping(l4, len, checksum_at));
}

}  // namespace

uint16_t Ipv4HeaderChecksum(const uint8_t* ip, std::size_t header_len) noexcept {
  return ChecksumFromSum(SumSkipping(ip, header_len, kIpv4ChecksumAt));
}

uint32_t Ipv4PseudoHeaderSum(const uint8_t* ip, uint8_t protocol, uint16_t l4_len) noexcept {
  const auto* h = HeaderAt<Ipv4Header>(ip);
  // src and dst are 8 contiguous bytes; protocol sits in the low byte of a zero-led word.
  return OnesComplementSum(h->src_addr, 8, uint32_t{protocol} + l4_len);
}

uint16_t UdpChecksum(const uint8_t* ip, const uint8_t* udp, std::size_t udp_len) noexcept {
  uint32_t sum = Ipv4PseudoHeaderSum(ip, kIpProtoUdp, static_cast<uint16_t>(udp_len));
  sum += SumSkipping(udp, udp_len, kUdpChecksumAt);
  const uint16_t csum = ChecksumFromSum(sum);
  return csum == 0 ? 0xFFFF : csum;
}

bool UdpChecksumOk(const uint8_t* ip, const uint8_t* udp, std::size_t udp_len) noexcept {
  if (HeaderAt<UdpHeader>(udp)->Checksum() == 0) return true;
  uint32_t sum = Ipv4PseudoHeaderSum(ip, kIpProtoUdp, static_cast<uint16_t>(udp_len));
  return FoldSum(sum + OnesComplementSum(udp, udp_len)) == 0xFFFF;
}

uint16_t TcpChecksum(const uint8_t* ip, const uint8_t* tcp, std::size_t tcp_len) noexcept {
  uint32_t sum = Ipv4PseudoHeaderSum(ip, kIpProtoTcp, static_cast<uint16_t>(tcp_len));
  return ChecksumFromSum(sum + SumSkipping(tcp, tcp_len, kTcpChecksumAt));
}

bool TcpChecksumOk(const uint8_t* ip, const uint8_t* tcp, std::size_t tcp_len) noexcept {
  uint32_t sum = Ipv4PseudoHeaderSum(ip, kIpProtoTcp, static_cast<uint16_t>(tcp_len));
  return FoldSum(sum + OnesComplementSum(tcp, tcp_len)) == 0xFFFF;
}

uint32_t Ipv6PseudoHeaderSum(const uint8_t* ip6, uint8_t next_header, uint32_t l4_len) noexcept {
  const auto* h = HeaderAt<Ipv6Header>(ip6);
  // src and dst are 32 contiguous bytes; the length and next header are 32-bit fields.
  const uint32_t rest = FoldSum(uint64_t{l4_len >> 16} + (l4_len & 0xFFFF) + next_header);
  return OnesComplementSum(h->src_addr, 32, rest);
}

uint16_t Udp6Checksum(const uint8_t* ip6, const uint8_t* udp, std::size_t udp_len) noexcept {
  const uint16_t csum = Upper6Checksum(ip6, kIpProtoUdp, udp, udp_len, kUdpChecksumAt);
  return csum == 0 ? 0xFFFF : csum;
}

uint16_t Tcp6Checksum(const uint8_t* ip6, const uint8_t* tcp, std::size_t tcp_len) noexcept {
  return Upper6Checksum(ip6, kIpProtoTcp, tcp, tcp_len, kTcpChecksumAt);
}

uint16_t Icmpv6Checksum(const uint8_t* ip6, const uint8_t* icmp, std::size_t len) noexcept {
  return Upper6Checksum(ip6, kIpProtoIcmpv6, icmp, len, kIcmpv6ChecksumAt);
}

}  // namespace swemu
