#pragma once
// Kernel UDP sockets as a host port, for machines without DPDK. Endpoints still speak whole
// Ethernet frames: on send, the transport takes the frame's IPv4 destination and UDP
// destination port and sends the UDP payload there; on receive, it wraps each datagram into
// Ethernet + IPv4 + UDP again, so an endpoint sees the same frames as on any other transport.
//
// Synthesised frames: destination MAC = the configured local MAC, or 01:00:5e + the low 23 bits
// of a multicast destination; source MAC = 02:00 + the sender's IPv4 address (the kernel does
// not tell the real one); IPv4 TOS as received (ECN included), TTL 64, real source and
// destination addresses and ports; UDP checksum 0. On send, the frame's TOS byte (DSCP and
// ECN: PCN's signals ride in it) becomes the datagram's, through IP_TOS when it changes.
// Non-blocking throughout.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "hostlib/common/endpoint.h"
#include "hostlib/common/frame_source.h"
#include "pipeline/core/status.h"
#include "pipeline/wire/address.h"

namespace swemu {

struct UdpSocketConfig {
  Ipv4Addr bind_ip = 0;       // 0 = any address
  uint16_t port = 0;          // 0 = an ephemeral port (see local_port())
  Ipv4Addr multicast_if = 0;  // interface address for sending to and joining groups; 0 = default
  MacAddr local_mac;          // destination MAC of synthesised unicast frames
  int socket_buffer_bytes = 4 << 20;  // SO_RCVBUF and SO_SNDBUF
  // Without SO_REUSEADDR: while this socket is open, binding another to the same address and
  // port fails (EADDRINUSE), so one process at a time holds a host's place in a job.
  bool exclusive = false;
};

struct UdpSocketCounters {
  uint64_t datagrams_sent = 0;
  uint64_t send_errors = 0;  // would block, unreachable, ...
  uint64_t unsendable = 0;   // not Ethernet + IPv4 + UDP, or truncated
  uint64_t datagrams_received = 0;
};

// Whether a process may take ip:port as a host's place in a job: a bind without SO_REUSEADDR,
// closed at once. 0 when this machine owns `ip` and no socket holds `port` on it, else the bind's
// errno (EADDRNOTAVAIL: not an address of this machine; EADDRINUSE: taken).
int TryBindUdp(Ipv4Addr ip, uint16_t port);

class UdpSocketTransport final : public Transport, public FrameSource {
 public:
  static Result<std::unique_ptr<UdpSocketTransport>> Open(const UdpSocketConfig& config);
  ~UdpSocketTransport() override;
  UdpSocketTransport(const UdpSocketTransport&) = delete;
  UdpSocketTransport& operator=(const UdpSocketTransport&) = delete;

  // IP_ADD_MEMBERSHIP on config.multicast_if.
  Status JoinGroup(Ipv4Addr group);
  // Software replication for networks without multicast routing (e.g. loopback): a frame for
  // `group` is sent as one unicast datagram to each member added here instead of to the group.
  void AddGroupMember(Ipv4Addr group, Ipv4Addr ip, uint16_t port);

  uint16_t local_port() const { return local_port_; }
  const UdpSocketCounters& counters() const { return counters_; }

  bool Send(std::span<const uint8_t> frame) noexcept override;
  uint32_t Poll(FrameHandler handler, uint32_t max) noexcept override;

 private:
  struct Member {
    Ipv4Addr group;
    Ipv4Addr ip;
    uint16_t port;
  };
  UdpSocketTransport(int fd, const UdpSocketConfig& config, uint16_t port);
  bool SendTo(Ipv4Addr ip, uint16_t port, const uint8_t* data, std::size_t len) noexcept;
  // IP_TOS for the next datagrams, when it differs from the last one set.
  void UseTos(uint8_t tos) noexcept;

  int fd_;
  int tos_ = 0;  // the socket's IP_TOS
  UdpSocketConfig config_;
  uint16_t local_port_;
  std::vector<Member> members_;
  std::vector<uint8_t> rx_frame_;  // one synthesised frame, reused
  UdpSocketCounters counters_;
};

}  // namespace swemu
