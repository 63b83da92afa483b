#include "hostlib/testbed/netns_plan.h"

#include <filesystem>
#include <set>

#include "pipeline/wire/address.h"

namespace swemu {
namespace {

// A switch's veth end, in the switch's namespace: up, no IPv6 chatter into the switch.
void SwitchEnd(const std::string& iface, const std::string& netns,
               std::vector<TestbedStep>& setup) {
  setup.push_back({{"ip", "-n", netns, "link", "set", iface, "up"}, {}});
  setup.push_back({{"ip", "netns", "exec", netns, "sysctl", "-qw",
                    "net.ipv6.conf." + iface + ".disable_ipv6=1"},
                   {}});
}

// Frames must be MTU-sized with full checksums: af_packet reads what the veth carries.
TestbedStep OffloadsOff(const std::string& iface, const std::string& netns) {
  return {{"ip", "netns", "exec", netns, "ethtool", "-K", iface, "tx", "off", "tso", "off", "gso",
           "off", "gro", "off"},
          {},
          true};
}

// A namespace, made with its loopback up, deleted at the end.
void AddNamespace(const std::string& ns, std::vector<TestbedStep>& steps) {
  steps.push_back({{"ip", "netns", "add", ns}, {"ip", "netns", "del", ns}});
  steps.push_back({{"ip", "-n", ns, "link", "set", "lo", "up"}, {}});
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

// A host's namespace, its veth pair to the switch, its addressing and neighbours.
void PlanHost(const TopologyConfig& topology, const TopologyHost& host, TestbedPlan& plan) {
  const std::string iface = PortIface(host.port);
  const std::string switch_ns = SwitchNetns(host.sw);
  const std::string ns = HostNetns(host.name);
  auto& steps = plan.steps;
  AddNamespace(ns, steps);
  // Deleted explicitly at the end: a deleted namespace's interfaces go asynchronously.
  steps.push_back({{"ip", "link", "add", iface, "netns", switch_ns, "type", "veth", "peer", "name",
                    "eth0", "netns", ns},
                   {"ip", "-n", switch_ns, "link", "del", iface}});
  auto add = [&](Argv argv) { steps.push_back({std::move(argv), {}}); };
  if (!host.mac.empty()) add({"ip", "-n", ns, "link", "set", "eth0", "address", host.mac});
  add({"ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
       "net.ipv6.conf.default.disable_ipv6=1"});
  if (!host.ip.empty()) add({"ip", "-n", ns, "addr", "add", host.ip, "dev", "eth0"});
  add({"ip", "-n", ns, "link", "set", "eth0", "up"});
  SwitchEnd(iface, switch_ns, steps);
  // Neighbours the switch cannot answer for: hosts of the same subnet, and the gateway.
  for (const TopologyHost& other : topology.hosts) {
    if (other.name == host.name || other.ip.empty() || other.mac.empty() || host.ip.empty()) {
      continue;
    }
    if (!SameSubnet(host.ip, other.ip)) continue;
    add({"ip", "-n", ns, "neigh", "replace", Address(other.ip), "lladdr", other.mac, "dev", "eth0",
         "nud", "permanent"});
  }
  if (!host.gateway_mac.empty() && !host.gateway.empty()) {
    add({"ip", "-n", ns, "neigh", "replace", host.gateway, "lladdr", host.gateway_mac, "dev",
         "eth0", "nud", "permanent"});
  }
  if (!host.gateway.empty()) add({"ip", "-n", ns, "route", "add", "default", "via", host.gateway});
  steps.push_back(OffloadsOff(iface, switch_ns));
  steps.push_back(OffloadsOff("eth0", ns));
  plan.hosts.push_back(
      {host.name, host.sw + ":" + std::to_string(host.port),
       "ip netns exec " + ns + " bash  (eth0" + (host.ip.empty() ? "" : " " + host.ip) + ")"});
  plan.host_namespaces.push_back(ns);
}

void PlanLink(const LinkSpec& link, TestbedPlan& plan) {
  const std::string a = PortIface(link.a_port), b = PortIface(link.b_port);
  const std::string a_ns = SwitchNetns(link.a), b_ns = SwitchNetns(link.b);
  plan.steps.push_back(
      {{"ip", "link", "add", a, "netns", a_ns, "type", "veth", "peer", "name", b, "netns", b_ns},
       {"ip", "-n", a_ns, "link", "del", a}});
  SwitchEnd(a, a_ns, plan.steps);
  SwitchEnd(b, b_ns, plan.steps);
  plan.steps.push_back(OffloadsOff(a, a_ns));
  plan.steps.push_back(OffloadsOff(b, b_ns));
}

// Namespace names are free (unique here, and no /run/netns/NAME left by another run).
Status CheckNamespaces(const TopologyConfig& topology) {
  std::set<std::string> names;
  std::vector<std::string> all;
  for (const LoadedSwitchConfig& sw : topology.switches) all.push_back(SwitchNetns(sw.config.name));
  for (const TopologyHost& host : topology.hosts) all.push_back(HostNetns(host.name));
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

}  // namespace

Result<TestbedPlan> PlanNetnsTestbed(const TopologyConfig& topology, const std::string& out_dir,
                                     pid_t tag, const std::vector<TestbedReplay>& replays,
                                     const std::string& replay_binary, uint32_t workers) {
  const std::string where = topology.path + ": ";
  Status checked = CheckTopologyPorts(topology);
  if (checked.ok()) checked = CheckNamespaces(topology);
  if (!checked.ok()) return Status::Error(where + checked.message());
  TestbedPlan plan;
  plan.backend = "netns";
  for (std::size_t s = 0; s < topology.switches.size(); ++s) {
    const auto devargs = [](PortId port) {
      return "net_af_packet" + std::to_string(port) + ",iface=" + PortIface(port);
    };
    plan.switches.push_back(
        PlanTestbedSwitch(topology, s, out_dir, tag, devargs, "--no-pci --no-huge -m 512",
                          workers));
    plan.switches.back().launch = {"ip", "netns", "exec", SwitchNetns(plan.switches.back().name)};
    plan.file_prefixes.push_back(plan.switches.back().file_prefix);
    AddNamespace(SwitchNetns(plan.switches.back().name), plan.steps);
  }
  for (const TopologyHost& host : topology.hosts) PlanHost(topology, host, plan);
  for (const LinkSpec& link : topology.links) PlanLink(link, plan);
  const auto launch = [](const std::string& host) {
    return Argv{"ip", "netns", "exec", HostNetns(host)};
  };
  AddTopologyRuns(
      topology, out_dir, launch, [](const std::string&) { return std::vector<std::string>{}; },
      plan);
  for (const TestbedReplay& replay : replays) {
    Result<TopologyHost> host = ReplayHost(topology, replay);
    if (!host.ok()) return Status::Error(where + host.message());
    plan.runs.push_back({host->name,
                         ShellQuoted(replay_binary) + " --iface eth0 --in " +
                             ShellQuoted(replay.file) + " --out " +
                             ShellQuoted(out_dir + "/" + host->name + "-rx.pcap"),
                         out_dir + "/" + host->name + "-replay.log",
                         launch(host->name),
                         {}});
  }
  return plan;
}

}  // namespace swemu
