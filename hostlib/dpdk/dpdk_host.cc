#include "hostlib/dpdk/dpdk_host.h"

#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "swemu/dpdk/eal.h"
#include "swemu/dpdk/mbuf_pool.h"
#include "swemu/dpdk/ports.h"

namespace swemu {
namespace {

bool g_eal_initialised = false;

TimeNs MonotonicNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Frees whatever the port still has to give, so its mbufs return to the pool before it closes.
void DrainRx(uint16_t port_id) {
  rte_mbuf* mbufs[DpdkPortTransport::kBurst];
  for (int rounds = 0; rounds < 1024; ++rounds) {
    const uint16_t n = rte_eth_rx_burst(port_id, 0, mbufs, DpdkPortTransport::kBurst);
    if (n == 0) return;
    rte_pktmbuf_free_bulk(mbufs, n);
  }
}

}  // namespace

std::string DpdkPortCounters::ToString() const {
  return "rx " + std::to_string(rx_frames) + " tx " + std::to_string(tx_frames) + " tx_no_buffer " +
         std::to_string(tx_no_buffer) + " tx_port_full " + std::to_string(tx_port_full);
}

bool DpdkPortTransport::Send(std::span<const uint8_t> frame) noexcept {
  rte_mbuf* m = rte_pktmbuf_alloc(pool_);
  if (m == nullptr || frame.size() > rte_pktmbuf_tailroom(m)) {
    rte_pktmbuf_free(m);  // null-safe
    ++counters_.tx_no_buffer;
    return false;
  }
  std::memcpy(rte_pktmbuf_mtod(m, uint8_t*), frame.data(), frame.size());
  m->data_len = static_cast<uint16_t>(frame.size());
  m->pkt_len = static_cast<uint32_t>(frame.size());
  tx_[queued_++] = m;
  if (queued_ == kBurst) Flush();
  return true;
}

void DpdkPortTransport::Flush() noexcept {
  if (queued_ == 0) return;
  const uint16_t sent = rte_eth_tx_burst(port_id_, 0, tx_.data(), queued_);
  counters_.tx_frames += sent;
  if (sent < queued_) {
    // A full ring means the peer is not keeping up: the frames are lost, as on a wire.
    rte_pktmbuf_free_bulk(tx_.data() + sent, queued_ - sent);
    counters_.tx_port_full += queued_ - sent;
  }
  queued_ = 0;
}

uint32_t DpdkPortTransport::Poll(const std::function<void(std::span<const uint8_t>)>& on_frame,
                                 uint32_t max) noexcept {
  rte_mbuf* mbufs[kBurst];
  uint32_t handed = 0;
  while (handed < max) {
    const uint16_t want = static_cast<uint16_t>(std::min<uint32_t>(kBurst, max - handed));
    const uint16_t n = rte_eth_rx_burst(port_id_, 0, mbufs, want);
    for (uint16_t i = 0; i < n; ++i) {
      rte_mbuf* m = mbufs[i];
      if (m->nb_segs == 1) {
        on_frame({rte_pktmbuf_mtod(m, const uint8_t*), m->data_len});
        ++handed;
      } else {
        ++counters_.rx_multi_segment;
      }
    }
    rte_pktmbuf_free_bulk(mbufs, n);
    if (n < want) break;
  }
  counters_.rx_frames += handed;
  return handed;
}

Status DpdkHost::InitEal(const std::vector<std::string>& eal_args, std::ostream& err) {
  if (g_eal_initialised) return Status::Error("EAL: already initialised in this process");
  EalArgs eal = MakeEalArgs("", eal_args, HostHugepagesUsable());
  if (eal.added_no_huge) err << "dpdk host: no free hugepages; running with --no-huge\n";
  eal.added_no_huge = false;  // said above, in our own words
  SWEMU_RETURN_IF_ERROR(swemu::InitEal(eal, err));
  g_eal_initialised = true;
  return Status::Ok();
}

std::vector<std::string> DpdkHost::PortEalArgs(const std::string& devargs, uint32_t memory_mb) {
  if (devargs.rfind("net_", 0) != 0) return {};
  return {"--no-pci", "--no-huge", "-m", std::to_string(memory_mb)};
}

void DpdkHost::CleanupEal() {
  if (!g_eal_initialised) return;
  swemu::CleanupEal();
  g_eal_initialised = false;  // DPDK still refuses a second rte_eal_init
}

Result<std::unique_ptr<DpdkHost>> DpdkHost::Open(const DpdkHostConfig& config) {
  if (!g_eal_initialised) return Status::Error("dpdk host: EAL is not initialised (InitEal)");
  if (config.ports.empty()) return Status::Error("dpdk host: no ports");
  std::unique_ptr<DpdkHost> host(new DpdkHost());
  // Every port's RX ring stays full of empty mbufs and its TX ring can hold as many sent ones
  // until the device frees them: a pool smaller than all the rings runs dry under a burst of
  // sends, RX can no longer refill, and the hosts stop hearing anything (the GOAT demo did, with
  // 9 ports and 16383 mbufs). So the pool is at least the rings, the cache and a margin.
  const uint64_t rings =
      uint64_t{config.ports.size()} * (config.queues.rx_descriptors + config.queues.tx_descriptors);
  const auto mbufs =
      static_cast<uint32_t>(std::max<uint64_t>(config.mbufs, rings + 2 * config.mbuf_cache + 1024));
  Result<MbufPool> pool =
      MbufPool::Create(mbufs, config.mbuf_cache, static_cast<int>(rte_socket_id()));
  if (!pool.ok()) return pool.status();
  host->pool_ = std::make_unique<MbufPool>(std::move(*pool));
  host->ports_ = std::make_unique<DpdkPorts>();
  std::vector<std::pair<PortId, std::string>> devargs;
  for (std::size_t i = 0; i < config.ports.size(); ++i) {
    devargs.emplace_back(static_cast<PortId>(i), config.ports[i]);
  }
  const auto num_ports = static_cast<uint16_t>(config.ports.size());
  host->num_ports_ = num_ports;
  if (Status opened = host->ports_->Open(num_ports, devargs, host->pool_->mempool(), config.queues);
      !opened.ok()) {
    (void)host->Close();  // a leak report would only hide the real error
    return opened;
  }
  for (uint16_t i = 0; i < num_ports; ++i) {
    host->transports_.push_back(
        std::make_unique<DpdkPortTransport>(host->ports_->dpdk_port(i), host->pool_->mempool()));
  }
  const TimeNs deadline = MonotonicNs() + config.link_wait_ns;
  for (uint16_t i = 0; i < num_ports; ++i) {
    while (!host->link_up(i) && MonotonicNs() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  return host;
}

DpdkHost::~DpdkHost() { (void)Close(); }

bool DpdkHost::link_up(std::size_t index) const {
  rte_eth_link link;
  std::memset(&link, 0, sizeof(link));
  // Ports that cannot tell are taken as up.
  if (rte_eth_link_get_nowait(transports_[index]->port_id(), &link) != 0) return true;
  return link.link_status == RTE_ETH_LINK_UP;
}

std::size_t DpdkHost::mbufs_in_use() const { return pool_ == nullptr ? 0 : pool_->InUse(); }

Status DpdkHost::Close() {
  if (pool_ == nullptr) return Status::Ok();
  std::vector<rte_device*> devices;
  for (auto& transport : transports_) {
    transport->Flush();
    DrainRx(transport->port_id());
  }
  transports_.clear();
  if (ports_ != nullptr) {
    for (PortId p = 0; p < num_ports_; ++p) {
      const uint16_t id = ports_->dpdk_port(p);
      if (id == kNoDpdkPort) continue;
      rte_eth_dev_info info;
      if (rte_eth_dev_info_get(id, &info) == 0 && info.device != nullptr) {
        devices.push_back(info.device);
      }
    }
    ports_->Close();
    ports_.reset();
  }
  for (rte_device* device : devices) (void)rte_dev_remove(device);
  const std::size_t leaked = pool_->InUse();
  pool_.reset();
  if (leaked > 0) return Status::Error("dpdk host: " + std::to_string(leaked) + " mbufs leaked");
  return Status::Ok();
}

}  // namespace swemu
