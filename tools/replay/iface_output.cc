#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "tools/replay/output.h"

namespace swemu::replay {
namespace {

constexpr uint32_t kEthernetAndVlan = 14 + 4;  // the MTU counts neither

TimeNs WallNs() {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<TimeNs>(now.tv_sec) * 1'000'000'000 + static_cast<TimeNs>(now.tv_nsec);
}

bool Busy(int error) { return error == EAGAIN || error == EWOULDBLOCK || error == ENOBUFS; }

}  // namespace

Result<std::unique_ptr<IfaceOutput>> IfaceOutput::Open(const std::string& name, bool capture) {
  const std::string what = "--iface " + name + ": ";
  if (name.empty() || name.size() >= IFNAMSIZ) return Status::Error(what + "not an interface name");
  const unsigned index = if_nametoindex(name.c_str());
  if (index == 0) return Status::Error(what + "no such interface");
  // Protocol 0 receives nothing: a socket that only sends never queues copies of the traffic.
  const uint16_t protocol = capture ? htons(ETH_P_ALL) : 0;
  const int fd = socket(AF_PACKET, SOCK_RAW, protocol);
  if (fd < 0) {
    return Status::Error(what + "AF_PACKET socket: " + std::strerror(errno) +
                         (errno == EPERM ? " (needs root or CAP_NET_RAW)" : ""));
  }
  auto fail = [&](const std::string& message) {
    close(fd);
    return Status::Error(what + message);
  };
  ifreq request = {};
  std::memcpy(request.ifr_name, name.c_str(), name.size());
  if (ioctl(fd, SIOCGIFFLAGS, &request) != 0)
    return fail(std::string("flags: ") + std::strerror(errno));
  if ((request.ifr_flags & IFF_UP) == 0) return fail("interface is down");
  if (ioctl(fd, SIOCGIFMTU, &request) != 0)
    return fail(std::string("MTU: ") + std::strerror(errno));
  const auto max_len = static_cast<uint32_t>(request.ifr_mtu) + kEthernetAndVlan;
  sockaddr_ll address = {};
  address.sll_family = AF_PACKET;
  address.sll_protocol = protocol;
  address.sll_ifindex = static_cast<int>(index);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    return fail(std::string("bind: ") + std::strerror(errno));
  }
  if (capture) {
#ifdef PACKET_IGNORE_OUTGOING
    const int one = 1;  // older kernels refuse it: Receive() skips outgoing frames itself
    (void)setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
#endif
    const int buffer = 4 << 20;
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
  }
  return std::unique_ptr<IfaceOutput>(new IfaceOutput(fd, max_len, capture));
}

IfaceOutput::IfaceOutput(int fd, uint32_t max_len, bool capture)
    : fd_(fd), max_len_(max_len), capture_on_(capture), slots_(kMaxBurst * max_len) {}

IfaceOutput::~IfaceOutput() { close(fd_); }

bool IfaceOutput::Stage(const uint8_t* data, uint32_t len) {
  if (count_ == kMaxBurst || len > max_len_) return false;
  const std::size_t slot = (head_ + count_) % kMaxBurst;
  std::memcpy(slots_.data() + slot * max_len_, data, len);
  lens_[slot] = len;
  ++count_;
  return true;
}

SendResult IfaceOutput::Send(std::size_t n) {
  n = std::min(n, count_);
  if (n == 0) return {};
  std::size_t sent = 0;
  int error = 0;
  if (n == 1) {
    if (send(fd_, slots_.data() + head_ * max_len_, lens_[head_], MSG_DONTWAIT) >= 0) {
      sent = 1;
    } else {
      error = errno;
    }
  } else {
    iovec iov[kMaxBurst];
    mmsghdr messages[kMaxBurst] = {};
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t slot = (head_ + i) % kMaxBurst;
      iov[i] = {slots_.data() + slot * max_len_, lens_[slot]};
      messages[i].msg_hdr.msg_iov = &iov[i];
      messages[i].msg_hdr.msg_iovlen = 1;
    }
    const int done = sendmmsg(fd_, messages, static_cast<unsigned>(n), MSG_DONTWAIT);
    if (done > 0) {
      sent = static_cast<std::size_t>(done);
    } else {
      error = errno;
    }
  }
  head_ = (head_ + sent) % kMaxBurst;
  count_ -= sent;
  if (sent > 0 || Busy(error)) return {sent, 0};
  error_ = std::strerror(error);  // refused for good (too long, interface down): drop it
  Drop(1);
  return {0, 1};
}

void IfaceOutput::Drop(std::size_t n) {
  n = std::min(n, count_);
  head_ = (head_ + n) % kMaxBurst;
  count_ -= n;
}

uint32_t IfaceOutput::Receive() {
  if (!capture_on_) return 0;
  uint32_t received = 0;
  for (std::size_t i = 0; i < kMaxBurst; ++i) {
    sockaddr_ll from = {};
    socklen_t from_len = sizeof(from);
    const ssize_t len =
        recvfrom(fd_, rx_buffer_.data(), rx_buffer_.size(), MSG_DONTWAIT | MSG_TRUNC,
                 reinterpret_cast<sockaddr*>(&from), &from_len);
    if (len < 0) break;
    if (from.sll_pkttype == PACKET_OUTGOING) continue;  // our own (or another sender's) frame
    if (capture_ != nullptr) {
      const auto caplen = static_cast<uint32_t>(std::min<std::size_t>(len, rx_buffer_.size()));
      capture_->Write(WallNs(), rx_buffer_.data(), caplen, static_cast<uint32_t>(len));
    }
    ++received;
  }
  return received;
}

}  // namespace swemu::replay
