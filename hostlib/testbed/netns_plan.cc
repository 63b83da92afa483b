#include "hostlib/testbed/netns_plan.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "pipeline/wire/address.h"

namespace swemu {
namespace {

// A switch's veth end, in the switch's namespace: up, no IPv6 chatter into the switch.
void SwitchEnd(const std::string& iface, const std::string& netns, std::vector<Argv>& setup) {
  setup.push_back({"ip", "-n", netns, "link", "set", iface, "up"});
  setup.push_back({"ip", "netns", "exec", netns, "sysctl", "-qw",
                   "net.ipv6.conf." + iface + ".disable_ipv6=1"});
}

// Frames must be MTU-sized with full checksums: af_packet reads what the veth carries.
Argv OffloadsOff(const std::string& iface, const std::string& netns) {
  Argv argv{"ethtool", "-K", iface, "tx", "off", "tso", "off", "gso", "off", "gro", "off"};
  if (!netns.empty()) argv.insert(argv.begin(), {"ip", "netns", "exec", netns});
  return argv;
}

std::string SwitchNetns(const std::string& sw) { return "swemu-sw-" + sw; }
std::string HostNetns(const std::string& host) { return "swemu-" + host; }
// A switch port's veth end, in the switch's own namespace.
std::string PortIface(PortId port) { return "p" + std::to_string(port); }

// "A.B.C.D/LEN" -> the address.
std::string Address(const std::string& ip) { return ip.substr(0, ip.find('/')); }

// Whether host address b lies in a's subnet (both "A.B.C.D/LEN", checked at load).
bool SameSubnet(const std::string& a, const std::string& b) {
  Result<Ipv4Addr> a_addr = ParseIpv4(Address(a));
  Result<Ipv4Addr> b_addr = ParseIpv4(Address(b));
  Result<Ipv4Prefix> len = ParseIpv4Prefix("0.0.0.0" + a.substr(a.find('/')));
  if (!a_addr.ok() || !b_addr.ok() || !len.ok()) return false;
  return (*a_addr & len->Mask()) == (*b_addr & len->Mask());
}

NetnsHostPlan PlanHost(const TopologyConfig& topology, const TopologyHost& host) {
  const std::string iface = PortIface(host.port);
  const std::string switch_ns = SwitchNetns(host.sw);
  NetnsHostPlan plan{host.name,
                     HostNetns(host.name),
                     host.sw + ":" + std::to_string(host.port),
                     switch_ns,
                     iface,
                     host.ip,
                     {}};
  const std::string& ns = plan.netns;
  auto& setup = plan.setup;
  setup.push_back({"ip", "link", "add", iface, "netns", switch_ns, "type", "veth", "peer", "name",
                   "eth0", "netns", ns});
  if (!host.mac.empty())
    setup.push_back({"ip", "-n", ns, "link", "set", "eth0", "address", host.mac});
  setup.push_back({"ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                   "net.ipv6.conf.default.disable_ipv6=1"});
  if (!host.ip.empty()) setup.push_back({"ip", "-n", ns, "addr", "add", host.ip, "dev", "eth0"});
  setup.push_back({"ip", "-n", ns, "link", "set", "lo", "up"});
  setup.push_back({"ip", "-n", ns, "link", "set", "eth0", "up"});
  SwitchEnd(iface, switch_ns, setup);
  // Neighbours the switch cannot answer for: hosts of the same subnet, and the gateway.
  for (const TopologyHost& other : topology.hosts) {
    if (other.name == host.name || other.ip.empty() || other.mac.empty() || host.ip.empty())
      continue;
    if (!SameSubnet(host.ip, other.ip)) continue;
    setup.push_back({"ip", "-n", ns, "neigh", "replace", Address(other.ip), "lladdr", other.mac,
                     "dev", "eth0", "nud", "permanent"});
  }
  if (!host.gateway_mac.empty() && !host.gateway.empty()) {
    setup.push_back({"ip", "-n", ns, "neigh", "replace", host.gateway, "lladdr", host.gateway_mac,
                     "dev", "eth0", "nud", "permanent"});
  }
  if (!host.gateway.empty()) {
    setup.push_back({"ip", "-n", ns, "route", "add", "default", "via", host.gateway});
  }
  return plan;
}

// Every port a host or link uses exists and is used once.
Status CheckPorts(const TopologyConfig& topology) {
  std::map<std::string, uint16_t> ports;
  for (const LoadedSwitchConfig& sw : topology.switches)
    ports[sw.config.name] = sw.config.num_ports;
  std::set<std::pair<std::string, PortId>> used;
  auto claim = [&](const std::string& sw, PortId port, const std::string& who) -> Status {
    auto found = ports.find(sw);
    if (found == ports.end()) return Status::Error(who + ": no switch named " + sw);
    if (port >= found->second) {
      return Status::Error(who + ": " + sw + " has " + std::to_string(found->second) +
                           " ports, no port " + std::to_string(port));
    }
    if (!used.emplace(sw, port).second) {
      return Status::Error(who + ": " + sw + ":" + std::to_string(port) + " is already used");
    }
    return Status::Ok();
  };
  for (const TopologyHost& host : topology.hosts) {
    SWEMU_RETURN_IF_ERROR(claim(host.sw, host.port, "host " + host.name));
  }
  for (const LinkSpec& link : topology.links) {
    const std::string who = "link " + link.a + ":" + std::to_string(link.a_port) + " " + link.b +
                            ":" + std::to_string(link.b_port);
    SWEMU_RETURN_IF_ERROR(claim(link.a, link.a_port, who));
    SWEMU_RETURN_IF_ERROR(claim(link.b, link.b_port, who));
  }
  return Status::Ok();
}

// Namespace names are free (unique here, and no /run/netns/NAME left by another run).
Status CheckNamespaces(const NetnsPlan& plan) {
  std::set<std::string> names;
  std::vector<std::string> all;
  for (const NetnsSwitchPlan& sw : plan.switches) all.push_back(sw.netns);
  for (const NetnsHostPlan& host : plan.hosts) all.push_back(host.netns);
  for (const std::string& ns : all) {
    if (!names.insert(ns).second) {
      return Status::Error("two namespaces named " + ns + " (rename a host or switch)");
    }
    if (ns.size() > 64) return Status::Error("namespace name " + ns + ": too long");
    if (std::filesystem::exists("/run/netns/" + ns)) {
      return Status::Error("namespace " + ns +
                           " exists (another run holds it, or remove it: ip netns del " + ns + ")");
    }
  }
  return Status::Ok();
}

// Ports a host or a link uses, in port order.
std::set<PortId> UsedPorts(const TopologyConfig& topology, const std::string& sw) {
  std::set<PortId> used;
  for (const TopologyHost& host : topology.hosts) {
    if (host.sw == sw) used.insert(host.port);
  }
  for (const LinkSpec& link : topology.links) {
    if (link.a == sw) used.insert(link.a_port);
    if (link.b == sw) used.insert(link.b_port);
  }
  return used;
}

NetnsSwitchPlan PlanSwitch(const LoadedSwitchConfig& loaded, std::size_t index,
                           const TopologyConfig& topology, const std::string& out_dir, pid_t tag) {
  const std::string& name = loaded.config.name;
  NetnsSwitchPlan plan{name,
                       SwitchNetns(name),
                       loaded,
                       out_dir + "/" + name + ".ini",
                       out_dir + "/" + name + "-control.sock",
                       out_dir + "/" + name + ".log",
                       ""};
  LoadedSwitchConfig& config = plan.config;
  config.port_devargs.clear();
  for (PortId port : UsedPorts(topology, name)) {
    config.port_devargs.emplace_back(
        port, "net_af_packet" + std::to_string(port) + ",iface=" + PortIface(port));
  }
  // Each port sends through its link's rate, delay and loss (swemu's [port.N] shaping and
  // wire effects, seeded): a link between switches both ways, a host's link toward the host.
  config.port_effects.clear();
  for (const LinkSpec& link : topology.links) {
    for (const auto& end :
         {std::make_pair(link.a, link.a_port), std::make_pair(link.b, link.b_port)}) {
      if (end.first != config.config.name) continue;
      std::erase_if(config.port_rates, [&](const PortRate& r) { return r.port == end.second; });
      config.port_rates.push_back({end.second, link.rate_bps});
      if (link.delay_ns != 0 || link.loss != 0) {
        config.port_effects[end.second] = {link.loss, link.delay_ns};
      }
    }
  }
  for (const TopologyHost& host : topology.hosts) {
    if (host.sw != config.config.name || (host.delay_ns == 0 && host.loss == 0)) continue;
    config.port_effects[host.port] = {host.loss, host.delay_ns};
  }
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  plan.file_prefix = "swemu-tb" + std::to_string(tag) + "-" + name;
  config.eal_args = "--no-pci --no-huge -m 512 -l " + std::to_string(index % cpus) +
                    " --file-prefix " + plan.file_prefix;
  config.workers = 1;
  return plan;
}

// Single quotes for sh -c.
std::string ShellQuoted(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

Result<NetnsRunPlan> PlanReplay(const TopologyConfig& topology, const NetnsReplay& replay,
                                const std::string& out_dir, const std::string& replay_binary) {
  const std::string where = replay.sw + ":" + std::to_string(replay.port);
  const std::string option = "--in " + where + "=" + replay.file + ": ";
  if (replay.sw.empty()) return Status::Error(option + "name the switch (SW:PORT=FILE)");
  if (access(replay.file.c_str(), R_OK) != 0) {
    return Status::Error(option + "cannot read " + replay.file);
  }
  for (const TopologyHost& host : topology.hosts) {
    if (host.sw != replay.sw || host.port != replay.port) continue;
    const std::string rx = out_dir + "/" + host.name + "-rx.pcap";
    return NetnsRunPlan{host.name, HostNetns(host.name),
                        ShellQuoted(replay_binary) + " --iface eth0 --in " +
                            ShellQuoted(replay.file) + " --out " + ShellQuoted(rx),
                        out_dir + "/" + host.name + "-replay.log"};
  }
  return Status::Error(option + where + " is not a host port of the topology");
}

}  // namespace

Result<NetnsPlan> PlanNetnsTestbed(const TopologyConfig& topology, const std::string& out_dir,
                                   pid_t tag, const std::vector<NetnsReplay>& replays,
                                   const std::string& replay_binary) {
  const std::string where = topology.path + ": ";
  Status ports = CheckPorts(topology);
  if (!ports.ok()) return Status::Error(where + ports.message());
  NetnsPlan plan;
  for (std::size_t s = 0; s < topology.switches.size(); ++s) {
    plan.switches.push_back(PlanSwitch(topology.switches[s], s, topology, out_dir, tag));
  }
  for (const TopologyHost& host : topology.hosts) {
    plan.hosts.push_back(PlanHost(topology, host));
    const NetnsHostPlan& planned = plan.hosts.back();
    plan.best_effort.push_back(OffloadsOff(planned.iface, planned.switch_netns));
    plan.best_effort.push_back(OffloadsOff("eth0", planned.netns));
  }
  for (const LinkSpec& link : topology.links) {
    NetnsLinkPlan lp{PortIface(link.a_port),
                     SwitchNetns(link.a),
                     PortIface(link.b_port),
                     SwitchNetns(link.b),
                     {}};
    SwitchEnd(lp.a_iface, lp.a_netns, lp.setup);
    SwitchEnd(lp.b_iface, lp.b_netns, lp.setup);
    plan.best_effort.push_back(OffloadsOff(lp.a_iface, lp.a_netns));
    plan.best_effort.push_back(OffloadsOff(lp.b_iface, lp.b_netns));
    plan.links.push_back(lp);
  }
  for (const TopologyRun& run : topology.runs) {
    plan.runs.push_back(
        {run.host, HostNetns(run.host), run.command,
         out_dir + "/" + run.host + "-run" + std::to_string(plan.runs.size()) + ".log"});
  }
  for (const NetnsReplay& replay : replays) {
    Result<NetnsRunPlan> run = PlanReplay(topology, replay, out_dir, replay_binary);
    if (!run.ok()) return Status::Error(where + run.message());
    plan.runs.push_back(*run);
  }
  Status names = CheckNamespaces(plan);
  if (!names.ok()) return Status::Error(where + names.message());
  return plan;
}

}  // namespace swemu
