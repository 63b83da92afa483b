#include "hostlib/common/udp_socket_transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "pipeline/wire/checksum.h"
#include "pipeline/wire/ethernet.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/udp.h"

namespace swemu {
namespace {

constexpr std::size_t kHeadersLen = kEthernetHeaderLen + kIpv4MinHeaderLen + kUdpHeaderLen;
constexpr std::size_t kMaxDatagram = 65507;

sockaddr_in SockAddr(Ipv4Addr ip, uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(ip);
  addr.sin_port = htons(port);
  return addr;
}

Status Errno(const std::string& what) {
  return Status::Error("udp socket: " + what + ": " + std::strerror(errno));
}

}  // namespace

int TryBindUdp(Ipv4Addr ip, uint16_t port) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(ip);
  addr.sin_port = htons(port);
  const int rc = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  const int error = errno;
  close(fd);
  return rc == 0 ? 0 : error;
}

Result<std::unique_ptr<UdpSocketTransport>> UdpSocketTransport::Open(
    const UdpSocketConfig& config) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket");
  auto fail = [fd](const std::string& what) {
    Status status = Errno(what);
    close(fd);
    return status;
  };
  const int one = 1;
  if ((!config.exclusive && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) ||
      setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)) != 0 ||
      setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one)) != 0) {
    return fail("setsockopt");
  }
  // Best effort: the kernel caps these at net.core.{r,w}mem_max.
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &config.socket_buffer_bytes, sizeof(int));
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &config.socket_buffer_bytes, sizeof(int));
  if (config.multicast_if != 0) {
    in_addr ifaddr{htonl(config.multicast_if)};
    if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &ifaddr, sizeof(ifaddr)) != 0) {
      return fail("IP_MULTICAST_IF " + FormatIpv4(config.multicast_if));
    }
  }
  sockaddr_in addr = SockAddr(config.bind_ip, config.port);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return fail("bind " + FormatIpv4(config.bind_ip) + ":" + std::to_string(config.port));
  }
  socklen_t len = sizeof(addr);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return fail("getsockname");
  return std::unique_ptr<UdpSocketTransport>(
      new UdpSocketTransport(fd, config, ntohs(addr.sin_port)));
}

UdpSocketTransport::UdpSocketTransport(int fd, const UdpSocketConfig& config, uint16_t port)
    : fd_(fd), config_(config), local_port_(port), rx_frame_(kHeadersLen + kMaxDatagram) {}

UdpSocketTransport::~UdpSocketTransport() { close(fd_); }

Status UdpSocketTransport::JoinGroup(Ipv4Addr group) {
  ip_mreq mreq{};
  mreq.imr_multiaddr.s_addr = htonl(group);
  mreq.imr_interface.s_addr = htonl(config_.multicast_if);
  if (setsockopt(fd_, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof(mreq)) != 0) {
    return Errno("IP_ADD_MEMBERSHIP " + FormatIpv4(group));
  }
  return Status::Ok();
}

void UdpSocketTransport::AddGroupMember(Ipv4Addr group, Ipv4Addr ip, uint16_t port) {
  members_.push_back({group, ip, port});
}

bool UdpSocketTransport::SendTo(Ipv4Addr ip, uint16_t port, const uint8_t* data,
                                std::size_t len) noexcept {
  const sockaddr_in to = SockAddr(ip, port);
  if (sendto(fd_, data, len, 0, reinterpret_cast<const sockaddr*>(&to), sizeof(to)) < 0) {
    ++counters_.send_errors;
    return false;
  }
  ++counters_.datagrams_sent;
  return true;
}

void UdpSocketTransport::UseTos(uint8_t tos) noexcept {
  if (tos == tos_) return;
  const int value = tos;
  // A refusal leaves the old TOS; the datagram still goes (counted as it is sent).
  if (setsockopt(fd_, IPPROTO_IP, IP_TOS, &value, sizeof(value)) == 0) tos_ = tos;
}

bool UdpSocketTransport::Send(std::span<const uint8_t> frame) noexcept {
  if (frame.size() < kHeadersLen ||
      HeaderAt<EthernetHeader>(frame.data())->EtherType() != kEtherTypeIpv4) {
    ++counters_.unsendable;
    return false;
  }
  const auto* ip = HeaderAt<Ipv4Header>(frame.data() + kEthernetHeaderLen);
  const std::size_t udp_at = kEthernetHeaderLen + ip->HeaderLen();
  if (ip->Version() != 4 || ip->protocol != kIpProtoUdp || ip->HeaderLen() < kIpv4MinHeaderLen ||
      udp_at + kUdpHeaderLen > frame.size()) {
    ++counters_.unsendable;
    return false;
  }
  const auto* udp = HeaderAt<UdpHeader>(frame.data() + udp_at);
  const std::size_t payload_at = udp_at + kUdpHeaderLen;
  if (udp->Length() < kUdpHeaderLen || payload_at + udp->Length() - kUdpHeaderLen > frame.size()) {
    ++counters_.unsendable;
    return false;
  }
  const uint8_t* payload = frame.data() + payload_at;
  const std::size_t len = udp->Length() - kUdpHeaderLen;
  const Ipv4Addr dst = ip->DstAddr();
  UseTos(ip->tos);
  bool replicated = false, ok = true;
  for (const Member& m : members_) {
    if (m.group != dst) continue;
    replicated = true;
    ok = SendTo(m.ip, m.port, payload, len) && ok;
  }
  return replicated ? ok : SendTo(dst, udp->DstPort(), payload, len);
}

uint32_t UdpSocketTransport::Poll(FrameHandler handler, uint32_t max) noexcept {
  uint32_t n = 0;
  for (; n < max; ++n) {
    sockaddr_in from{};
    iovec iov{rx_frame_.data() + kHeadersLen, kMaxDatagram};
    alignas(cmsghdr) uint8_t control[128];
    msghdr msg{};
    msg.msg_name = &from;
    msg.msg_namelen = sizeof(from);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    const ssize_t got = recvmsg(fd_, &msg, MSG_DONTWAIT);
    if (got < 0) break;  // EAGAIN: nothing more; other errors end the poll too
    Ipv4Addr dst = config_.bind_ip;
    uint8_t tos = 0;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != IPPROTO_IP) continue;
      if (c->cmsg_type == IP_PKTINFO) {
        in_pktinfo info;
        std::memcpy(&info, CMSG_DATA(c), sizeof(info));
        dst = ntohl(info.ipi_addr.s_addr);
      } else if (c->cmsg_type == IP_TOS) {
        tos = *CMSG_DATA(c);
      }
    }
    const Ipv4Addr src = ntohl(from.sin_addr.s_addr);
    uint8_t* f = rx_frame_.data();
    const bool multicast = (dst >> 28) == 0xE;
    EthernetFields{multicast ? Ipv4MulticastMac(dst) : config_.local_mac,
                   MacAddr::FromU64(0x020000000000ull | src), kEtherTypeIpv4}
        .Encode(f);
    Ipv4Fields ip;
    ip.tos = tos;
    ip.total_length = static_cast<uint16_t>(kIpv4MinHeaderLen + kUdpHeaderLen + got);
    ip.protocol = kIpProtoUdp;
    ip.src_addr = src;
    ip.dst_addr = dst;
    ip.Encode(f + kEthernetHeaderLen);
    HeaderAt<Ipv4Header>(f + kEthernetHeaderLen)
        ->SetHeaderChecksum(Ipv4HeaderChecksum(f + kEthernetHeaderLen, kIpv4MinHeaderLen));
    UdpFields{ntohs(from.sin_port), local_port_, static_cast<uint16_t>(kUdpHeaderLen + got), 0}
        .Encode(f + kEthernetHeaderLen + kIpv4MinHeaderLen);
    ++counters_.datagrams_received;
    handler(std::span<const uint8_t>(f, kHeadersLen + static_cast<std::size_t>(got)));
  }
  return n;
}

}  // namespace swemu
