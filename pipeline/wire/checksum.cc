#include "pipeline/wire/checksum.h"

#include "pipeline/wire/ipv4.h"
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

}  // namespace swemu
