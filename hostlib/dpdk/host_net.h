#pragma once
// A server host's network, for the commands that run one protocol host on a training server
// (swemu-atp worker/ps, swemu-goat worker/ps, swemu-plink node): kernel UDP sockets driven by an
// EventLoop (the default: any NIC, no DPDK), or one DPDK port driven by a HostRunner (--port
// DEVARGS, kernel bypass: the host sends and takes whole frames). It names no protocol: it runs
// Endpoints over whichever Transport it opened.
#include <functional>
#include <memory>
#include <string>

#include "hostlib/common/endpoint.h"
#include "hostlib/common/event_loop.h"
#include "hostlib/common/udp_socket_transport.h"
#include "hostlib/dpdk/dpdk_host.h"
#include "hostlib/dpdk/host_runner.h"
#include "pipeline/core/status.h"
#include "pipeline/wire/address.h"

namespace swemu {

class HostNet {
 public:
  HostNet() = default;
  HostNet(const HostNet&) = delete;
  HostNet& operator=(const HostNet&) = delete;
  ~HostNet();

  // A kernel UDP socket as UdpSocketTransport::Open makes it; its error as Open gives it.
  Status OpenUdp(const UdpSocketConfig& config);
  // One DPDK port. The EAL runs on this thread's first allowed CPU with the file prefix
  // "<prefix>-<pid>", so several hosts share a machine; a virtual device (net_*) needs no PCI
  // bus or hugepages. Errors are one line beginning "--port" (the driver's own lines dropped).
  Status OpenDpdk(const std::string& devargs, const std::string& prefix);

  bool dpdk() const { return dpdk_ != nullptr; }
  // The socket (for JoinGroup); null on a DPDK port.
  UdpSocketTransport* udp() { return udp_.get(); }
  // Where the endpoints send. Valid once a network is open.
  Transport* transport();
  // The endpoint receives this network's frames; it must outlive the runs.
  void Add(Endpoint& endpoint);
  // True when done() became true within timeout_ns.
  bool RunUntil(const std::function<bool()>& done, TimeNs timeout_ns);
  // The clock the endpoints see.
  TimeNs Now() const;

 private:
  std::unique_ptr<UdpSocketTransport> udp_;
  std::unique_ptr<EventLoop> loop_;
  std::unique_ptr<DpdkHost> dpdk_;
  std::unique_ptr<HostRunner> runner_;
};

// A host on a DPDK port builds whole frames: it needs the MACs of the hosts it sends to. Each
// Host has `name` and `mac` (MacAddr{} for a job file's `learn`). The error begins "--port".
Status NeedMacError(const std::string& name);
template <typename Hosts>
Status NeedMacs(const Hosts& hosts) {
  for (const auto& h : hosts) {
    if (h.mac == MacAddr{}) return NeedMacError(h.name);
  }
  return Status::Ok();
}

}  // namespace swemu
