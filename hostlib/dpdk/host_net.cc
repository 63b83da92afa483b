#include "hostlib/dpdk/host_net.h"

#include <sched.h>
#include <unistd.h>

#include <sstream>
#include <vector>

#include "swemu/dpdk/eal.h"

namespace swemu {
namespace {

int FirstAllowedCpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) return cpu;
  }
  return 0;
}

}  // namespace

HostNet::~HostNet() {
  if (dpdk_ == nullptr) return;
  runner_.reset();
  (void)dpdk_->Close();
  dpdk_.reset();
  DpdkHost::CleanupEal();
}

Status HostNet::OpenUdp(const UdpSocketConfig& config) {
  auto udp = UdpSocketTransport::Open(config);
  if (!udp.ok()) return udp.status();
  udp_ = std::move(*udp);
  loop_ = std::make_unique<EventLoop>();
  return Status::Ok();
}

Status HostNet::OpenDpdk(const std::string& devargs, const std::string& prefix) {
  std::vector<std::string> eal = {"-l", std::to_string(FirstAllowedCpu()), "--file-prefix",
                                  prefix + "-" + std::to_string(getpid()), "--no-telemetry"};
  for (std::string& arg : DpdkHost::PortEalArgs(devargs, 256)) eal.push_back(std::move(arg));
  // What EAL's scan and the driver print about a device that fails: the error says it once.
  HeldOutput held;
  std::ostringstream log;
  if (Status init = DpdkHost::InitEal(WithDpdkLog(eal, false), log); !init.ok()) {
    return Status::Error("--port: " + init.message());
  }
  DpdkHostConfig config;
  config.ports = {devargs};
  auto dpdk = DpdkHost::Open(config);
  if (!dpdk.ok()) {
    held.Drop();
    DpdkHost::CleanupEal();
    return Status::Error("--port " + devargs + ": " + dpdk.message());
  }
  held.Release();
  dpdk_ = std::move(*dpdk);
  runner_ = std::make_unique<HostRunner>();
  return Status::Ok();
}

Transport* HostNet::transport() {
  return udp_ != nullptr ? static_cast<Transport*>(udp_.get()) : &dpdk_->port(0);
}

void HostNet::Add(Endpoint& endpoint) {
  if (loop_ != nullptr) loop_->Add(udp_.get(), &endpoint);
  if (runner_ != nullptr) runner_->Add(endpoint, dpdk_->port(0));
}

bool HostNet::RunUntil(const std::function<bool()>& done, TimeNs timeout_ns) {
  if (loop_ != nullptr) return loop_->RunUntil(done, timeout_ns);
  return runner_->RunUntil(done, timeout_ns, nullptr).ok();
}

TimeNs HostNet::Now() const { return loop_ != nullptr ? loop_->Now() : runner_->NowNs(); }

Status NeedMacError(const std::string& name) {
  return Status::Error("--port: the job file gives " + name +
                       "'s MAC as learn; a host on a DPDK port sends whole frames and needs it "
                       "(publish it in the hosts list)");
}

}  // namespace swemu
