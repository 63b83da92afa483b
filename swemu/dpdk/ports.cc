// rte_devargs_reset is still "experimental" in DPDK 22.11 (stable since 23.x).
#define ALLOW_EXPERIMENTAL_API
#include "swemu/dpdk/ports.h"

#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string_view>

#include "swemu/dpdk/eal.h"

namespace swemu {
namespace {

std::string ErrnoText(int error) { return rte_strerror(error < 0 ? -error : error); }

// The device name in devargs, when some bus (vdev, PCI) has a driver for it.
Result<std::string> DeviceName(const std::string& where, const std::string& devargs) {
  rte_devargs parsed;
  std::memset(&parsed, 0, sizeof(parsed));
  if (rte_devargs_parse(&parsed, devargs.c_str()) != 0) {
    return Status::Error(where + ": no such driver");
  }
  std::string name = parsed.name;
  rte_devargs_reset(&parsed);
  return name;
}

// Probes the device (unless EAL already did, from a --vdev) and returns its ethdev name.
Result<std::string> Probe(const std::string& where, const std::string& devargs) {
  Result<std::string> name = DeviceName(where, devargs);
  if (!name.ok()) return name;
  int probed = rte_dev_probe(devargs.c_str());
  if (probed != 0 && probed != -EEXIST) {
    // Drivers often return a bare -1; their own log line above says why.
    return Status::Error(where + ": probe failed: " +
                         (probed == -1 ? "the driver refused the device" : ErrnoText(probed)));
  }
  return name;
}

// How many entries the TX ring really has. Most drivers size it from nb_desc; virtio_user sizes
// its virtqueues from its own queue_size devarg (256 when absent) and ignores nb_desc.
uint16_t TxRingEntries(const std::string& devargs, uint16_t tx_desc) {
  if (devargs.rfind("net_virtio_user", 0) != 0) return tx_desc;
  constexpr std::string_view kKey = ",queue_size=";
  const std::size_t at = devargs.find(kKey);
  if (at == std::string::npos) return 256;
  const unsigned long size = std::strtoul(devargs.c_str() + at + kKey.size(), nullptr, 10);
  return size > 0 && size <= 0xFFFF ? static_cast<uint16_t>(size) : 0;
}

constexpr std::string_view kLinkPrefix = "swemu_link:";
constexpr std::size_t kLinkNameMax = 20;  // "swl_NAME_0" fits a ring name (RTE_RING_NAMESIZE)
constexpr unsigned kLinkRingSize = 1024;  // as a port's 1024 RX descriptors

// Which ends of each link this process opened (bit 0: end 0, bit 1: end 1).
std::map<std::string, unsigned>& LinkEnds() {
  static std::map<std::string, unsigned> ends;
  return ends;
}

struct LinkEnd {
  std::string name;
  unsigned end = 0;
};

// "swemu_link:NAME:END", END 0 or 1, NAME of letters, digits, '-' and '_'.
Result<LinkEnd> ParseLink(const std::string& where, const std::string& devargs) {
  const std::string rest = devargs.substr(kLinkPrefix.size());
  const std::size_t colon = rest.rfind(':');
  LinkEnd link;
  link.name = rest.substr(0, colon == std::string::npos ? 0 : colon);
  const std::string end = colon == std::string::npos ? "" : rest.substr(colon + 1);
  bool good = !link.name.empty() && link.name.size() <= kLinkNameMax && (end == "0" || end == "1");
  for (char c : link.name)
    good = good && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_');
  if (!good) {
    return Status::Error(where +
                         ": expected swemu_link:NAME:0 or swemu_link:NAME:1 (NAME of at most " +
                         std::to_string(kLinkNameMax) + " letters, digits, - and _)");
  }
  link.end = end == "1" ? 1 : 0;
  return link;
}

// The ring that end `from` of link `name` sends on (and the other end receives from), made by
// whichever end opens first.
rte_ring* LinkRing(const std::string& name, unsigned from, int socket) {
  const std::string ring = "swl_" + name + "_" + std::to_string(from);
  rte_ring* found = rte_ring_lookup(ring.c_str());
  if (found != nullptr) return found;
  // One lcore runs both ends: single producer, single consumer.
  return rte_ring_create(ring.c_str(), kLinkRingSize, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
}

// One end of a link between two switches of this process: a net_ring ethdev on the pair of
// rings; its ethdev name.
Result<std::string> OpenLink(const std::string& where, const std::string& devargs) {
  Result<LinkEnd> link = ParseLink(where, devargs);
  if (!link.ok()) return link.status();
  unsigned& ends = LinkEnds()[link->name];
  if ((ends & (1u << link->end)) != 0) {
    return Status::Error(where + ": end " + std::to_string(link->end) + " of link " + link->name +
                         " is already a port");
  }
  const int socket = static_cast<int>(rte_socket_id());
  rte_ring* tx = LinkRing(link->name, link->end, socket);
  rte_ring* rx = LinkRing(link->name, 1 - link->end, socket);
  if (tx == nullptr || rx == nullptr) {
    return Status::Error(where + ": cannot make the link's rings: " + ErrnoText(rte_errno));
  }
  const std::string name = "swl_" + link->name + "_" + std::to_string(link->end);
  if (rte_eth_from_rings(name.c_str(), &rx, 1, &tx, 1, static_cast<unsigned>(socket)) < 0) {
    return Status::Error(where + ": cannot make the link's port: " + ErrnoText(rte_errno));
  }
  ends |= 1u << link->end;
  return "net_ring_" + name;  // what rte_eth_from_rings named the ethdev
}

bool IsLink(const std::string& devargs) { return devargs.rfind(kLinkPrefix, 0) == 0; }

}  // namespace

Status CheckLinksPaired() {
  for (const auto& [name, ends] : LinkEnds()) {
    if (ends != 3u) {
      return Status::Error("link " + name + ": only end " + std::to_string(ends == 1u ? 0 : 1) +
                           " is a port; end " + std::to_string(ends == 1u ? 1 : 0) +
                           " must be a port of another switch of this process (swemu_link:" + name +
                           ":" + std::to_string(ends == 1u ? 1 : 0) + ", --also-switch)");
    }
  }
  return Status::Ok();
}

Status DpdkPorts::Open(uint16_t num_switch_ports,
                       const std::vector<std::pair<PortId, std::string>>& devargs,
                       rte_mempool* mempool, const PortQueues& queues) {
  dpdk_ports_.assign(num_switch_ports, kNoDpdkPort);
  devices_.assign(num_switch_ports, "-");
  // Every devargs names a known driver before the first device is probed (and, for net_pcap,
  // creates its output file).
  for (const auto& [port, args] : devargs) {
    if (IsLink(args)) continue;
    Result<std::string> name =
        DeviceName("port " + std::to_string(port) + ": devargs " + args, args);
    if (!name.ok()) return name.status();
  }
  for (const auto& one : devargs) {  // clang 14 cannot capture structured bindings
    SWEMU_RETURN_IF_ERROR(
        QuietDpdkStep([&] { return OpenOne(one.first, one.second, mempool, queues); }));
  }
  return Status::Ok();
}

Status DpdkPorts::OpenOne(PortId port, const std::string& devargs, rte_mempool* mempool,
                          const PortQueues& queues) {
  const std::string where = "port " + std::to_string(port) + ": devargs " + devargs;
  Result<std::string> name = IsLink(devargs) ? OpenLink(where, devargs) : Probe(where, devargs);
  if (!name.ok()) return name.status();
  uint16_t id = 0;
  if (rte_eth_dev_get_port_by_name(name->c_str(), &id) != 0) {
    return Status::Error(where + ": device " + *name + " is not an Ethernet port");
  }
  for (uint16_t used : dpdk_ports_) {
    if (used == id) return Status::Error(where + ": device " + *name + " is already a port");
  }
  const std::string failed = "port " + std::to_string(port) + " failed to start: ";
  rte_eth_conf conf;
  std::memset(&conf, 0, sizeof(conf));
  int rc = rte_eth_dev_configure(id, 1, 1, &conf);
  if (rc != 0) return Status::Error(failed + "configure: " + ErrnoText(rc));
  uint16_t rx_desc = queues.rx_descriptors;
  uint16_t tx_desc = queues.tx_descriptors;
  rc = rte_eth_dev_adjust_nb_rx_tx_desc(id, &rx_desc, &tx_desc);
  if (rc != 0) return Status::Error(failed + "descriptors: " + ErrnoText(rc));
  const int socket = rte_eth_dev_socket_id(id);
  const unsigned queue_socket = socket < 0 ? 0 : static_cast<unsigned>(socket);
  rc = rte_eth_rx_queue_setup(id, 0, rx_desc, queue_socket, nullptr, mempool);
  if (rc != 0) return Status::Error(failed + "rx queue: " + ErrnoText(rc));
  // Drivers reclaim sent mbufs once fewer than tx_free_thresh entries are free; they refuse a
  // threshold within 3 of the ring's size, so a ring too small for the wish keeps the default.
  const uint16_t entries = TxRingEntries(devargs, tx_desc);
  rte_eth_dev_info info;
  if (queues.tx_reclaim_after != 0 && entries > queues.tx_reclaim_after + 3u &&
      rte_eth_dev_info_get(id, &info) == 0) {
    rte_eth_txconf txconf = info.default_txconf;
    txconf.tx_free_thresh = static_cast<uint16_t>(entries - queues.tx_reclaim_after);
    rc = rte_eth_tx_queue_setup(id, 0, tx_desc, queue_socket, &txconf);
    // A driver with further rules on the threshold (tx_rs_thresh, alignment) keeps its default.
    if (rc == -EINVAL) rc = rte_eth_tx_queue_setup(id, 0, tx_desc, queue_socket, nullptr);
  } else {
    rc = rte_eth_tx_queue_setup(id, 0, tx_desc, queue_socket, nullptr);
  }
  if (rc != 0) return Status::Error(failed + "tx queue: " + ErrnoText(rc));
  rc = rte_eth_dev_start(id);
  if (rc != 0) return Status::Error(failed + ErrnoText(rc));
  started_.push_back(id);
  // A switch port sees every frame on its wire; PMDs without the feature just refuse.
  (void)rte_eth_promiscuous_enable(id);
  dpdk_ports_[port] = id;
  devices_[port] = *name;
  return Status::Ok();
}

void DpdkPorts::Close() {
  for (uint16_t id : started_) {
    (void)rte_eth_dev_stop(id);
    (void)rte_eth_dev_close(id);
  }
  started_.clear();
}

}  // namespace swemu
