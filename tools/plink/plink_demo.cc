// swemu-plink demo: PLink in real time. It writes a tree of l2l3 switches (racks under one spine,
// all in one swemu process that busy-polls one lcore; host ports net_vhost sockets, each rack's
// uplink a swemu_link of rings in that process: hostlib/testbed/swemu_network.h) into --out-dir,
// starts it, attaches every host from this process over virtio_user (DPDK, one lcore), and
// runs on every host PLink's endpoints: ProbeEmbed's echo probes in rounds of disjoint pairs
// (hostlib/plink/probe_rounds.h), then the embedding, the groups, and three reductions of a float
// buffer by AggEngine: flat aggregation, 2LHA over the true racks and 2LHA over ProbeEmbed's
// groups, each checked against the exact sum on every host. With --transport kernel-udp the hosts
// are kernel UDP sockets on loopback (127.A.B.N, A.B from the pid) instead, driven by one event
// loop: the paper's kernel fallback for probes, with no switch and no locality to find. With
// --topology FILE the switches, links and hosts are the file's (the default tree is made as a
// topology too): every switch an l2l3 switch of the one swemu process, a host's rack the switch
// it is on.
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hostlib/common/endpoint_set.h"
#include "hostlib/common/event_loop.h"
#include "hostlib/common/udp_socket_transport.h"
#include "hostlib/dpdk/dpdk_host.h"
#include "hostlib/dpdk/host_runner.h"
#include "hostlib/plink/agg_engine.h"
#include "hostlib/plink/agg_plan.h"
#include "hostlib/plink/datacenter.h"
#include "hostlib/plink/embed.h"
#include "hostlib/plink/grouping.h"
#include "hostlib/plink/probe_rounds.h"
#include "hostlib/plink/prober.h"
#include "pipeline/control/units.h"
#include "pipeline/core/hash.h"
#include "pipeline/core/output_files.h"
#include "pipeline/core/text_file.h"
#include "pipeline/engine/engine.h"
#include "swemu/dpdk/eal.h"
#include "hostlib/testbed/swemu_process.h"
#include "hostlib/testbed/swemu_network.h"
#include "hostlib/testbed/testbed_plan.h"
#include "tools/option_values.h"
#include "tools/plink/plink_tool.h"

namespace swemu {
namespace po = boost::program_options;
using opt::Check;
using opt::CheckUint;
using opt::Text;

po::options_description PlinkDemoOptions() {
  po::options_description options("swemu-plink demo options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("topology", po::value<std::string>()->value_name("FILE"), "the switches (l2l3, all in one swemu process), links (their rates) and hosts (2-32; a host's rack: its switch) of a topology file, instead of the four shape options below")
      ("racks", po::value<std::string>()->default_value("2"), "racks (an l2l3 switch each) under one spine switch, 1-8")
      ("per-rack", po::value<std::string>()->default_value("4"), "hosts per rack, 1-16 (2-32 hosts in all)")
      ("buffer", po::value<std::string>()->default_value("1MB"), "the float32 buffer every host reduces")
      ("chunk", po::value<std::string>()->default_value("64KB"), "chunk size (whole floats)")
      ("host-rate", po::value<std::string>()->default_value("100M"), "each host's link: its rack port's shaping, and the host's pacing")
      ("uplink-rate", po::value<std::string>()->default_value("100M"), "each rack's link to the spine, both ends (below per-rack x host-rate: oversubscribed)")
      ("transport", po::value<std::string>()->default_value("dpdk"), "dpdk (swemu switches, hosts over virtio_user) or kernel-udp (loopback sockets, no swemu)")
      ("out-dir", po::value<std::string>()->default_value("out/plink_demo"), "the switches' configs, startup scripts, sockets and logs")
      ("timeout", po::value<std::string>()->default_value("60s"), "for the probes, and for each reduction")
      ("swemu", po::value<std::string>(), "the swemu binary (default: ../swemu/swemu next to this one)")
      ("seed", po::value<std::string>()->default_value("1"), "seed (the values reduced, the embedding, the grouping)")
      ("verbose,v", "also print DPDK's routine log lines (telemetry, virtio_user's random MAC), here and in the switches' logs");
  // clang-format on
  return options;
}

namespace {

// Probes per pair (the least RTT counts), their spacing, and how long a request may wait for its
// reply: a process sharing its cores sees ms of scheduling delay, so the wait is long.
constexpr uint32_t kProbeSamples = 16;
constexpr TimeNs kProbeGapNs = 500'000;
constexpr TimeNs kProbeTimeoutNs = 200'000'000;
// AggEngine's retransmission timer floor and first value. The virtual-time engine's 1 ms and
// 5 ms are far below what a real-time run sees on a shared 2-core machine: the hosts poll one
// core and the switches' process the other, and another process taking either for a slice of a
// few ms delays every packet in flight, and a timer that fires before would retransmit what is
// only late. (Measured when each switch was its own backing-off swemu process, whose cross-rack
// round trips took 3-5 ms; with one busy-polling process they take tens of us.) With a 20 ms floor a default run retransmitted
// 3-4% of its packets, with 40 ms about 1% (2LHA over the racks: almost none); AggEngine's
// Jacobson/Karels estimate raises the timer further when queues build.
constexpr TimeNs kMinRtoNs = 40'000'000;
constexpr TimeNs kInitialRtoNs = 80'000'000;
constexpr uint32_t kPayloadBytes = 1400;  // chunk bytes per packet: frames of 1466 bytes
// The default tree's uplinks (spine to rack) delay every frame this much each way, as the
// virtual-time datacenter's top tier does: the locality the probes are to find.
constexpr TimeNs kUplinkDelayNs = 20'000;

struct DemoOptions {
  uint32_t racks = 0, per_rack = 0, hosts = 0;
  uint64_t buffer = 0, chunk = 0, host_rate = 0, uplink_rate = 0, seed = 0;
  TimeNs timeout = 0;
  bool kernel = false;
  bool verbose = false;  // DPDK's routine log lines too
  std::string buffer_text, timeout_text, dir, binary;
  std::string topology_path;  // --topology, or empty: the tree of --racks and --per-rack
  TopologyConfig topo;        // the switches, links and hosts, from the file or the tree
  TopologyRoutes routes;
  PlinkPlacement place;
};

std::string RackName(uint32_t r) { return "rack" + std::to_string(r); }

// The tree as a topology: the spine first (port r to rack r), then the racks (ports 0.. their
// hosts, the last port the uplink), so each uplink's swemu_link end 0 is on the spine.
TopologyConfig TreeTopology(const DemoOptions& o) {
  TopologyConfig topo;
  auto add_switch = [&](const std::string& name, uint32_t ports, uint64_t rate) {
    LoadedSwitchConfig sw;
    sw.config.name = name;
    sw.config.num_ports = static_cast<uint16_t>(ports);
    sw.config.program = "l2l3";
    sw.config.tm.port_rate_bps = rate;
    topo.switches.push_back(sw);
  };
  add_switch("spine", o.racks, o.uplink_rate);
  for (uint32_t r = 0; r < o.racks; ++r) add_switch(RackName(r), o.per_rack + 1, o.host_rate);
  for (uint32_t r = 0; r < o.racks; ++r) {
    topo.links.push_back({"spine", static_cast<PortId>(r), RackName(r),
                          static_cast<PortId>(o.per_rack), o.uplink_rate, kUplinkDelayNs, 0});
  }
  for (uint32_t h = 0; h < o.racks * o.per_rack; ++h) {
    TopologyHost host;
    host.sw = RackName(h / o.per_rack);
    host.port = static_cast<PortId>(h % o.per_rack);
    host.name = "h" + std::to_string(h);
    topo.hosts.push_back(host);
  }
  return topo;
}

// The topology (--topology, or the tree of the shape options), its routes and the racks.
Status ReadNetwork(const po::variables_map& vm, DemoOptions* o) {
  if (vm.count("topology")) {
    o->topology_path = Text(vm, "topology");
    Result<TopologyConfig> topo =
        PlinkTopology(vm, {"racks", "per-rack", "host-rate", "uplink-rate"});
    if (!topo.ok()) return topo.status();
    o->topo = std::move(*topo);
  } else {
    uint64_t racks = 0, per_rack = 0;
    SWEMU_RETURN_IF_ERROR(CheckUint(vm, "racks", 1, 8, &racks));
    SWEMU_RETURN_IF_ERROR(CheckUint(vm, "per-rack", 1, 16, &per_rack));
    o->racks = static_cast<uint32_t>(racks);
    o->per_rack = static_cast<uint32_t>(per_rack);
    if (o->racks * o->per_rack < 2 || o->racks * o->per_rack > 32) {
      return Status::Error("--racks x --per-rack: 2 to 32 hosts, not " +
                           std::to_string(o->racks * o->per_rack));
    }
    SWEMU_RETURN_IF_ERROR(Check("host-rate", ParseRate(Text(vm, "host-rate")), &o->host_rate));
    SWEMU_RETURN_IF_ERROR(
        Check("uplink-rate", ParseRate(Text(vm, "uplink-rate")), &o->uplink_rate));
    if (o->host_rate < 1'000'000 || o->uplink_rate < 1'000'000) {
      return Status::Error("--host-rate and --uplink-rate: at least 1M");
    }
    o->topo = TreeTopology(*o);
  }
  const std::string option = o->topology_path.empty() ? "--racks x --per-rack"
                                                      : "--topology " + o->topology_path;
  Result<TopologyRoutes> routes = TopologyRoutes::Compute(o->topo);
  if (!routes.ok()) return Status::Error(option + ": " + routes.message());
  o->routes = std::move(*routes);
  Result<PlinkPlacement> place = PlacePlinkHosts(o->topo, o->routes, 32);
  if (!place.ok()) return Status::Error(option + ": " + place.message());
  o->place = std::move(*place);
  o->hosts = static_cast<uint32_t>(o->topo.hosts.size());
  return Status::Ok();
}

// Host h's link rate: its switch port's.
uint64_t HostRate(const DemoOptions& o, uint32_t h) {
  const TopologyHost& host = o.topo.hosts[h];
  return o.topo.switches[o.routes.HostSwitch(h)].config.tm.PortRateBps(host.port);
}

Status ParseOptions(const po::variables_map& vm, DemoOptions* o) {
  SWEMU_RETURN_IF_ERROR(ReadNetwork(vm, o));
  o->buffer_text = Text(vm, "buffer");
  SWEMU_RETURN_IF_ERROR(Check("buffer", ParseBytes(o->buffer_text), &o->buffer));
  SWEMU_RETURN_IF_ERROR(Check("chunk", ParseBytes(Text(vm, "chunk")), &o->chunk));
  if (o->buffer == 0 || o->buffer % 4 != 0 || o->buffer > (64u << 20)) {
    return Status::Error("--buffer " + Text(vm, "buffer") + ": whole floats, 4 B to 64 MiB");
  }
  if (o->buffer * o->hosts > (512u << 20)) {
    return Status::Error("--buffer " + Text(vm, "buffer") + ": at most 512 MiB over all " +
                         std::to_string(o->hosts) + " hosts");
  }
  if (o->chunk == 0 || o->chunk % 4 != 0) {
    return Status::Error("--chunk " + Text(vm, "chunk") + ": whole floats, above 0");
  }
  if ((o->buffer + o->chunk - 1) / o->chunk > 65536) {
    return Status::Error("--chunk " + Text(vm, "chunk") + ": at most 65536 chunks per buffer");
  }
  o->timeout_text = Text(vm, "timeout");
  SWEMU_RETURN_IF_ERROR(Check("timeout", ParseDurationOption(o->timeout_text), &o->timeout));
  if (o->timeout == 0) return Status::Error("--timeout must be above 0");
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "seed", 0, UINT64_MAX, &o->seed));
  const std::string transport = Text(vm, "transport");
  if (transport != "dpdk" && transport != "kernel-udp") {
    return Status::Error("--transport " + transport + ": dpdk or kernel-udp");
  }
  o->kernel = transport == "kernel-udp";
  o->verbose = vm.count("verbose") != 0;
  if (o->kernel) return Status::Ok();
  o->binary = vm.count("swemu") ? Text(vm, "swemu") : SelfDirectory() + "/../swemu/swemu";
  if (access(o->binary.c_str(), X_OK) != 0) {
    return Status::Error("--swemu " + o->binary + ": not an executable");
  }
  o->dir = std::filesystem::absolute(Text(vm, "out-dir")).lexically_normal().string();
  // The longest socket path must fit a Unix socket address (107 characters).
  for (const LoadedSwitchConfig& sw : o->topo.switches) {
    const std::string longest = o->dir + "/plink-" + sw.config.name + "-port" +
                                std::to_string(sw.config.num_ports) + ".sock";
    if (longest.size() > 107) {
      return Status::Error("--out-dir " + o->dir + " is too long for Unix socket paths");
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(o->dir, ec);
  if (ec || !std::filesystem::is_directory(o->dir)) {
    return Status::Error("--out-dir " + o->dir + ": cannot create it (" + ec.message() + ")");
  }
  return Status::Ok();
}

// "1 rack", "2 racks".
std::string Count(uint64_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// The switches and links in the topology's order (the first switch is swemu's --config, each
// link a swemu_link with end 0 on its switch listed first).
SwemuNetwork MakeNetwork(const DemoOptions& o) {
  SwemuNetwork network(o.dir, o.dir, "plink", "swemu-plink-" + std::to_string(getpid()));
  for (const LoadedSwitchConfig& sw : o.topo.switches) {
    network.AddSwitch(sw.config.name, sw.config.num_ports);
  }
  for (const LinkSpec& l : o.topo.links) {
    network.AddLink(l.a, l.a_port, l.b, l.b_port, {.loss = l.loss, .delay_ns = l.delay_ns});
  }
  return network;
}

// Switch s's shaping, as its file says it (tm.port_rate, [port.N] rate) with each link's rate at
// its end: in the ini it runs from, so that the TM starts with it.
void ShapePorts(const DemoOptions& o, uint32_t s, SwitchConfig& ini) {
  const TmConfig& tm = o.topo.switches[s].config.tm;
  ini.tm.port_rate_bps = tm.port_rate_bps;
  ini.tm.port_rates = tm.port_rates;
  ApplyLinkRates(o.topo.links, ini);
}

// Every switch's config, with the ports' shaping, and startup script: dmac for every host along
// the shortest paths.
Status WriteSwitchFiles(const DemoOptions& o, const SwemuNetwork& network,
                        const std::vector<PlinkNodeAddr>& addrs, const std::string& command) {
  const std::string header =
      "# Generated by " + command + "\n# (" +
      (o.topology_path.empty()
           ? Count(o.racks, "rack") + " of " + Count(o.per_rack, "host") + ", host links " +
                 FormatRate(o.host_rate) + ", uplinks " + FormatRate(o.uplink_rate)
           : "from " + o.topology_path) +
      ").\n";
  for (const SwemuNetwork::Switch& sw : network.switches()) {
    const uint32_t s = o.routes.SwitchIndex(sw.name);
    std::string cli = header;
    for (uint32_t h = 0; h < o.hosts; ++h) {
      const int32_t port = o.routes.PortToHost(s, h);
      if (port < 0) continue;  // a switch no host can reach
      cli += "table_add dmac forward " + FormatMac(addrs[h].mac) + " => " + std::to_string(port) +
             "\n";
    }
    SWEMU_RETURN_IF_ERROR(WriteTextFile(o.dir + "/" + sw.name + ".cli", cli));
    LoadedSwitchConfig ini;
    ini.config.name = sw.name;
    ini.config.num_ports = sw.ports;
    ini.config.program = "l2l3";
    ini.startup_script = o.dir + "/" + sw.name + ".cli";
    ShapePorts(o, s, ini.config);
    // Every port's rings (1024 RX and TX descriptors) and queues of windows in flight.
    ini.config.tm.queue.depth_pkts = 4096;
    ini.mbufs = 2048u * sw.ports + 8191;
    ini.mbuf_cache = 128;
    SWEMU_RETURN_IF_ERROR(network.WriteSwitchIni(sw.name, ini, header));
  }
  return Status::Ok();
}

// Runs the hosts until done() (true) or until timeout_ns has passed (false).
using RunFn = std::function<bool(const std::function<bool()>& done, TimeNs timeout_ns)>;

std::string HostList(const std::vector<uint32_t>& hosts) {
  std::string list;
  for (uint32_t h : hosts) list += (list.empty() ? "h" : " h") + std::to_string(h);
  return list;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Host h's value at element i of reduction r: an integer in [-1000, 1000], so that any order of
// float32 additions over 32 hosts is exact.
float Value(uint64_t seed, uint32_t r, uint32_t h, uint64_t i) {
  return static_cast<float>(
      static_cast<int64_t>(HashPair(HashPair(seed, r), HashPair(h, i)) % 2001) - 1000);
}

// PLink's endpoints on every host: a prober and an aggregation node on one port.
struct PlinkHosts {
  std::vector<std::unique_ptr<PlinkProber>> probers;
  std::vector<std::unique_ptr<PlinkAggNode>> aggs;
  std::vector<std::unique_ptr<EndpointSet>> sets;
};

// ProbeEmbed's probes, in real time: the distance matrix, and a line of the median least RTTs.
Result<DistanceMatrix> Probe(const DemoOptions& o, PlinkHosts& hosts,
                             const std::function<TimeNs()>& now, const RunFn& run,
                             std::ostream& out) {
  const uint32_t n = o.hosts;
  const std::vector<uint32_t>& racks = o.place.rack_of;
  std::vector<PlinkProber*> probers;
  for (const auto& p : hosts.probers) probers.push_back(p.get());
  const auto rounds = static_cast<uint32_t>(CircleRounds(n).size());
  const TimeNs probe_deadline = now() + o.timeout;
  ProbeRoundsDriver driver;
  driver.now = now;
  driver.run = [&](uint32_t round, const std::function<bool()>& all_idle) -> Status {
    const TimeNs t = now();
    if (run(all_idle, probe_deadline > t ? probe_deadline - t : 1)) return Status::Ok();
    std::vector<uint32_t> busy;
    for (uint32_t h = 0; h < n; ++h) {
      if (!probers[h]->idle()) busy.push_back(h);
    }
    return Status::Error("probes: not done within --timeout " + o.timeout_text + ": round " +
                         std::to_string(round + 1) + " of " + std::to_string(rounds) + ", " +
                         HostList(busy) + " still probing");
  };
  uint16_t probe_round = 0;
  uint32_t unanswered = 0;
  Result<DistanceMatrix> probes = RunProbeRounds(probers, driver, &probe_round, &unanswered);
  if (!probes.ok()) return probes.status();
  std::vector<double> in_rack, across;
  for (uint32_t a = 0; a < n; ++a) {
    for (uint32_t b = a + 1; b < n; ++b) {
      (racks[a] == racks[b] ? in_rack : across).push_back(probes->at(a, b));
    }
  }
  const uint32_t pairs = n * (n - 1) / 2;
  char line[320];
  std::snprintf(line, sizeof(line),
                "probes: %u rounds of disjoint pairs, %u probes per pair, %u of %u pairs "
                "answered; least RTT, median:",
                rounds, kProbeSamples, pairs - unanswered, pairs);
  out << line;
  if (!in_rack.empty()) {
    std::snprintf(line, sizeof(line), " %.0f us in a rack%s", Median(in_rack),
                  across.empty() ? "" : ",");
    out << line;
  }
  if (!across.empty()) {
    std::snprintf(line, sizeof(line), " %.0f us across racks", Median(across));
    out << line;
  }
  out << "\n";
  return probes;
}

// The embedding and the groups; prints PAIA, the groups' AMI with the racks and the groups.
Result<Grouping> EmbedAndGroup(const DemoOptions& o, const DistanceMatrix& probes,
                               std::ostream& out) {
  const std::vector<uint32_t>& racks = o.place.rack_of;
  EmbedOptions eo;
  eo.startup_cost = true;
  eo.seed = o.seed;
  Result<Embedding> e = EmbedProbes(probes, eo);
  if (!e.ok()) return e.status();
  GroupingOptions go;
  go.seed = o.seed;
  Result<Grouping> groups = ConstrainedKMeans(e->coords, e->dims, go);
  if (!groups.ok()) return groups.status();
  Result<PaiaScore> raw = Paia(o.place.where, probes);
  Result<PaiaScore> embedded = Paia(o.place.where, e->Distances());
  if (!raw.ok()) return raw.status();
  if (!embedded.ok()) return embedded.status();
  char line[320];
  if (raw->triplets == 0) {
    out << "PAIA: none (every pair of hosts is as far apart: one rack, or one host per rack)\n";
  } else {
    std::snprintf(line, sizeof(line),
                  "PAIA: raw probes %.3f, embedded (alpha %.1f, %u dims) %.3f\n", raw->paia(),
                  eo.alpha, eo.dims, embedded->paia());
    out << line;
  }
  std::snprintf(line, sizeof(line), "groups: %u (k = round(sqrt(n))); AMI with the racks %.3f\n",
                groups->k, AdjustedMutualInformation(groups->group_of, racks));
  out << line;
  for (uint32_t g = 0; g < groups->k; ++g) {
    out << "  group " << g << ":";
    for (uint32_t h = 0; h < o.hosts; ++h) {
      if (groups->group_of[h] == g) out << " h" << h << "(r" << racks[h] << ")";
    }
    out << "\n";
  }
  return groups;
}

// Reduction r (its values, its epoch r + 1) under `plan` on every host; prints its line and
// returns the hosts whose result differs from the exact sum.
Result<std::vector<uint32_t>> Reduce(const DemoOptions& o, PlinkHosts& hosts, uint32_t r,
                                     const char* name, const AggPlan& plan,
                                     const std::function<TimeNs()>& now, const RunFn& run,
                                     std::ostream& out) {
  const uint32_t n = o.hosts;
  const std::vector<std::unique_ptr<PlinkAggNode>>& aggs = hosts.aggs;
  const std::size_t floats = o.buffer / 4;
  std::vector<std::vector<float>> in(n, std::vector<float>(floats)),
      res(n, std::vector<float>(floats, 0.0f));
  std::vector<float> exact(floats, 0.0f);
  for (uint32_t h = 0; h < n; ++h) {
    for (std::size_t i = 0; i < floats; ++i) {
      in[h][i] = Value(o.seed, r, h, i);
      exact[i] += in[h][i];  // integers far below 2^24: exact
    }
  }
  std::vector<uint64_t> retx_before(n);
  for (uint32_t h = 0; h < n; ++h) retx_before[h] = aggs[h]->stats().retransmissions;
  const auto epoch = static_cast<uint16_t>(r + 1);
  const TimeNs start = now();
  for (uint32_t h = 0; h < n; ++h) {
    SWEMU_RETURN_IF_ERROR(
        aggs[h]->AllReduce(plan, epoch, in[h].data(), res[h].data(), floats, start));
  }
  auto all_done = [&] {
    return std::all_of(aggs.begin(), aggs.end(), [](const auto& a) { return a->done(); });
  };
  if (!run(all_done, o.timeout)) {
    std::vector<uint32_t> left;
    for (uint32_t h = 0; h < n; ++h) {
      if (!aggs[h]->done()) left.push_back(h);
    }
    return Status::Error(std::string(name) + ": not done within --timeout " + o.timeout_text +
                         ": " + std::to_string(left.size()) + " of " + std::to_string(n) +
                         " hosts waiting (" + HostList(left) + ")");
  }
  TimeNs latency = 0;
  uint64_t retx = 0, cross = 0, total = 0;
  std::vector<uint32_t> differ;
  for (uint32_t h = 0; h < n; ++h) {
    const AggNodeReport& rep = aggs[h]->report();
    latency = std::max(latency, rep.finish_ns - start);
    retx += aggs[h]->stats().retransmissions - retx_before[h];
    for (uint32_t j = 0; j < n; ++j) {
      total += rep.sent_to[j];
      if (o.place.rack_of[h] != o.place.rack_of[j]) cross += rep.sent_to[j];
    }
    if (!std::equal(res[h].begin(), res[h].end(), exact.begin())) differ.push_back(h);
  }
  char line[320];
  std::snprintf(line, sizeof(line),
                "  %-24s %9.1f ms %6llu retransmissions %10llu bytes across racks (%llu in "
                "all)%s\n",
                name, static_cast<double>(latency) / 1e6, static_cast<unsigned long long>(retx),
                static_cast<unsigned long long>(cross), static_cast<unsigned long long>(total),
                differ.empty() ? "" : "  WRONG SUMS");
  out << line;
  return differ;
}

// Everything after the hosts are attached: probes, embedding, groups, the three reductions.
Status RunHosts(const DemoOptions& o, const std::vector<PlinkNodeAddr>& addrs,
                std::vector<Transport*> transports,
                const std::function<void(Endpoint&, uint32_t)>& attach,
                const std::function<TimeNs()>& now, const RunFn& run, std::ostream& out) {
  const uint32_t n = o.hosts;
  PlinkHosts hosts;
  ProberOptions po;
  po.samples = kProbeSamples;
  po.gap_ns = kProbeGapNs;
  po.timeout_ns = kProbeTimeoutNs;
  AggEngineOptions ao;
  ao.payload_bytes = kPayloadBytes;
  ao.min_rto_ns = kMinRtoNs;
  ao.initial_rto_ns = kInitialRtoNs;
  for (uint32_t h = 0; h < n; ++h) {
    ao.nic_rate_bps = HostRate(o, h);  // paced to the host's link: two cores are not flooded
    hosts.probers.push_back(
        std::make_unique<PlinkProber>(static_cast<uint16_t>(h), addrs, transports[h], po));
    hosts.aggs.push_back(
        std::make_unique<PlinkAggNode>(static_cast<uint16_t>(h), addrs, transports[h], ao));
    hosts.sets.push_back(std::make_unique<EndpointSet>());
    hosts.sets.back()->Add(hosts.probers.back().get());
    hosts.sets.back()->Add(hosts.aggs.back().get());
    attach(*hosts.sets.back(), h);
  }
  Result<DistanceMatrix> probes = Probe(o, hosts, now, run, out);
  if (!probes.ok()) return probes.status();
  Result<Grouping> groups = EmbedAndGroup(o, *probes, out);
  if (!groups.ok()) return groups.status();
  const std::vector<uint64_t> chunks = CutChunks(o.buffer, o.chunk);
  struct Reduction {
    const char* name;
    Result<AggPlan> plan;
  };
  Reduction reductions[] = {
      {"flat aggregation", MakeFlatPlan(n, chunks)},
      {"2LHA, the racks", MakeTwoLevelPlan(o.place.rack_of, chunks)},
      {"2LHA, ProbeEmbed groups", MakeTwoLevelPlan(groups->group_of, chunks)}};
  for (const Reduction& r : reductions) {
    if (!r.plan.ok()) return r.plan.status();
  }
  out << "\nreducing " << o.buffer_text << " (" << Count(chunks.size(), "chunk")
      << ") on every host: "
      << "latency, retransmissions, payload bytes across racks (and in all)\n";
  std::string wrong;
  for (uint32_t r = 0; r < std::size(reductions); ++r) {
    Result<std::vector<uint32_t>> differ =
        Reduce(o, hosts, r, reductions[r].name, *reductions[r].plan, now, run, out);
    if (!differ.ok()) return differ.status();
    if (!differ->empty() && wrong.empty()) {
      wrong = std::string(reductions[r].name) + ": the result of " + HostList(*differ) +
              " differs from the exact sum";
    }
  }
  if (!wrong.empty()) return Status::Error(wrong);
  out << "every host's result equals the exact sum in all three reductions\n";
  return Status::Ok();
}

Status RunKernelUdp(const DemoOptions& o, std::ostream& out) {
  std::vector<PlinkNodeAddr> addrs;
  std::vector<std::unique_ptr<UdpSocketTransport>> sockets;
  std::vector<Transport*> transports;
  // A /24 of 127/8 of this run's own (from the pid), so that two runs at once do not share
  // addresses (the sockets reuse addresses, and would take each other's datagrams).
  const uint32_t mix = static_cast<uint32_t>(getpid()) * 2654435761u;
  const auto net_a = static_cast<uint8_t>(1 + mix % 250), net_b = static_cast<uint8_t>(mix >> 8);
  for (uint32_t h = 0; h < o.hosts; ++h) {
    addrs.push_back({MacAddr::FromU64(0x020000000300ULL + h),
                     MakeIpv4Addr(127, net_a, net_b, static_cast<uint8_t>(h + 1))});
    UdpSocketConfig config;
    config.bind_ip = addrs[h].ip;
    config.port = kPlinkDefaultUdpPort;
    config.local_mac = addrs[h].mac;
    Result<std::unique_ptr<UdpSocketTransport>> t = UdpSocketTransport::Open(config);
    if (!t.ok()) return Status::Error("host h" + std::to_string(h) + ": " + t.message());
    sockets.push_back(std::move(*t));
    transports.push_back(sockets.back().get());
  }
  out << "swemu-plink demo: " << o.hosts << " hosts over kernel UDP on loopback (127."
      << unsigned{net_a} << "." << unsigned{net_b} << ".1-" << o.hosts << ", port "
      << kPlinkDefaultUdpPort << "), no swemu: locality is flat here, the racks ("
      << (o.topology_path.empty()
              ? Count(o.racks, "rack") + " of " + std::to_string(o.per_rack)
              : Count(o.place.rack_names.size(), "rack") + " of " + o.topology_path)
      << ") are labels only; host sends paced to "
      << (o.topology_path.empty() ? FormatRate(o.host_rate) : "their links' rates") << "\n";
  EventLoop loop;
  auto attach = [&](Endpoint& e, uint32_t h) { loop.Add(sockets[h].get(), &e); };
  RunFn run = [&](const std::function<bool()>& done, TimeNs timeout) {
    return loop.RunUntil(done, timeout);
  };
  return RunHosts(
      o, addrs, transports, attach, [&] { return loop.Now(); }, run, out);
}

Status RunDpdk(const DemoOptions& o, std::ostream& out) {
  std::vector<PlinkNodeAddr> addrs;
  for (uint32_t h = 0; h < o.hosts; ++h) {
    addrs.push_back({MacAddr::FromU64(0x020000000300ULL + h),
                     MakeIpv4Addr(10, 3, 0, static_cast<uint8_t>(h + 1))});
  }
  const SwemuNetwork network = MakeNetwork(o);
  SWEMU_RETURN_IF_ERROR(WriteSwitchFiles(o, network, addrs, "swemu-plink demo"));
  SwemuProcesses switches;
  // One swemu process runs every switch, busy-polling lcore 0, the hosts lcore 1; its one mbuf
  // pool is the switches' together (2048 per port and 8191 each: 4 MB per 1000 mbufs, with room).
  uint64_t mbufs = 0;
  for (const SwemuNetwork::Switch& sw : network.switches()) mbufs += 2048u * sw.ports + 8191;
  const std::string memory_mb = std::to_string(std::max<uint64_t>(256, 128 + mbufs * 4 / 1000));
  SWEMU_RETURN_IF_ERROR(switches.Start(
      network, o.binary, WithDpdkLog({"-l", "0", "--no-huge", "-m", memory_mb}, o.verbose), true));
  SWEMU_RETURN_IF_ERROR(DpdkHost::InitEal(
      WithDpdkLog({"-l", "1", "--no-pci", "--no-huge", "-m", "1024", "--no-telemetry",
                   "--file-prefix", "swemu-plink-" + std::to_string(getpid()) + "-hosts"},
                  o.verbose),
      out));
  const EalCleanupAtScopeExit eal_cleanup;
  DpdkHostConfig host_config;
  // Each port's rings (1024 RX and TX descriptors) and windows in flight.
  host_config.mbufs = 3072 * o.hosts + 8191;
  host_config.mbuf_cache = 256;
  for (uint32_t h = 0; h < o.hosts; ++h) {
    // The host's own MAC on its device (else virtio_user draws one and says so).
    host_config.ports.push_back(network.HostDevargs(h, o.topo.hosts[h].sw, o.topo.hosts[h].port) +
                                ",mac=" + FormatMac(addrs[h].mac));
  }
  Result<std::unique_ptr<DpdkHost>> dpdk = DpdkHost::Open(host_config);
  if (!dpdk.ok()) return dpdk.status();
  if (o.topology_path.empty()) {
    out << "swemu-plink demo: " << o.hosts << " hosts in " << Count(o.racks, "rack") << " of "
        << o.per_rack << " under one spine (" << network.switches().size()
        << " switches in one swemu process, l2l3), hosts "
        << "over virtio_user; host links " << FormatRate(o.host_rate) << ", uplinks "
        << FormatRate(o.uplink_rate) << "\n";
  } else {
    out << "swemu-plink demo: " << o.hosts << " hosts in "
        << Count(o.place.rack_names.size(), "rack") << " of " << o.topology_path << " ("
        << network.switches().size()
        << " switches in one swemu process, l2l3), hosts over virtio_user; the file's link and "
           "port rates\n";
  }
  // Watches the swemu process's busy-polling lcore: a starved switch holds the timers.
  HostRunner runner(HostRunnerOptions{.busy_peers = {switches.process().pid()}});
  std::vector<Transport*> transports;
  for (uint32_t h = 0; h < o.hosts; ++h) transports.push_back(&(*dpdk)->port(h));
  auto attach = [&](Endpoint& e, uint32_t h) { runner.Add(e, (*dpdk)->port(h)); };
  RunFn run = [&](const std::function<bool()>& done, TimeNs timeout) {
    return runner.RunUntil(done, timeout, nullptr).ok();
  };
  Status ran = RunHosts(
      o, addrs, transports, attach, [&] { return runner.NowNs(); }, run, out);
  out << HostContentionLine(runner.stats(), true);
  Status closed = (*dpdk)->Close();
  Status stopped = switches.Stop();
  SWEMU_RETURN_IF_ERROR(ran);
  SWEMU_RETURN_IF_ERROR(closed);
  SWEMU_RETURN_IF_ERROR(stopped);
  out << "configs, startup scripts and switch logs: " << o.dir << "\n";
  return Status::Ok();
}

}  // namespace

Status RunPlinkDemo(const po::variables_map& vm, std::ostream& out) {
  DemoOptions o;
  SWEMU_RETURN_IF_ERROR(ParseOptions(vm, &o));
  return o.kernel ? RunKernelUdp(o, out) : RunDpdk(o, out);
}

}  // namespace swemu
