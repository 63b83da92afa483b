// swemu-plink node: one PLink node of a job (hostlib/plink/job_file.h) on this machine, over
// kernel UDP sockets (AggEngine's PlinkAggNode on a UdpSocketTransport bound, alone, to the
// node's address and the job's port) or, with --port DEVARGS, over one DPDK port (HostNet: whole
// frames with the job file's MACs, to the node's gw_mac when it has one). Every packet of the plan
// is a unicast datagram from one node's address to another's (docs/wire.md, "PLink on servers"),
// so any NIC carries it and the switches forward it as any IPv4/UDP packet. Each iteration
// all-reduces the job's floats (values every node can compute for every node, so each checks its
// result against the exact sum) and prints its time and goodput.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <vector>

#include "hostlib/common/udp_socket_transport.h"
#include "hostlib/dpdk/host_net.h"
#include "hostlib/plink/agg_engine.h"
#include "hostlib/plink/job_file.h"
#include "pipeline/control/units.h"
#include "pipeline/core/hash.h"
#include "pipeline/core/text_file.h"
#include "tools/option_values.h"
#include "tools/plink/plink_tool.h"

namespace swemu {
namespace po = boost::program_options;
using opt::Check;
using opt::Text;

po::options_description PlinkNodeOptions() {
  po::options_description options("swemu-plink node options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("job", po::value<std::string>(), "the job file (every node reads the same one)")
      ("name", po::value<std::string>(), "this node's name in the job file (its `node =` line)")
      ("iterations", po::value<std::string>()->default_value("3"), "all-reduces of the job's floats, 1-255 (values every node knows, so that each checks the exact sums)")
      ("timeout", po::value<std::string>()->default_value("10s"), "per iteration (the first one also waits for the other nodes to start): longer ends with one line, exit 1")
      ("rto", po::value<std::string>()->default_value("40ms"), "AggEngine's retransmission timer floor (its first timer: twice this)")
      ("rate", po::value<std::string>()->default_value("0"), "pace this node's sends to this rate (e.g. 1G; 0: unpaced)")
      ("port", po::value<std::string>(), "a DPDK port's devargs (a PCI address, net_af_packet0,iface=eth0, ...) instead of kernel UDP sockets");
  // clang-format on
  return options;
}

namespace {

volatile std::sig_atomic_t g_stop = 0;
void OnStopSignal(int) { g_stop = 1; }

// After the last iteration, how long a node still answers retransmissions of the others (an
// acknowledgement of its that was lost), so that they finish too.
constexpr TimeNs kLingerNs = 500'000'000;
constexpr uint32_t kPayloadBytes = 1400;  // chunk bytes per datagram: 1452-byte IP packets
// The EAL file prefix of a node on a DPDK port.
constexpr char kEalPrefix[] = "swemu-plink";

struct NodeRun {
  PlinkJob job;
  AggPlan plan;
  uint32_t me = 0;
  std::string port;  // DPDK devargs; empty: kernel UDP sockets
  uint32_t iterations = 0;
  TimeNs timeout = 0;
  AggEngineOptions engine;
};

Status ReadRun(const po::variables_map& vm, NodeRun* run) {
  for (const char* name : {"job", "name"}) {
    if (!vm.count(name)) return Status::Error(std::string("--") + name + " is required");
  }
  const std::string path = Text(vm, "job");
  Result<std::string> text = ReadTextFile(path, "the job file");
  if (!text.ok()) return Status::Error("--job " + text.message());
  Result<PlinkJob> job = ParsePlinkJob(*text);
  if (!job.ok()) return Status::Error("--job " + path + ": " + job.message());
  run->job = std::move(*job);
  Result<AggPlan> plan = run->job.Plan();
  if (!plan.ok()) return Status::Error("--job " + path + ": " + plan.message());
  run->plan = std::move(*plan);
  const std::string name = Text(vm, "name");
  const int me = run->job.Find(name);
  if (me < 0) {
    std::string names;
    for (const PlinkJobNode& n : run->job.nodes) names += (names.empty() ? "" : ", ") + n.name;
    return Status::Error("--name " + name + ": not a node of " + path + " (its nodes: " + names +
                         ")");
  }
  run->me = static_cast<uint32_t>(me);
  uint64_t iterations = 0, rate = 0;
  SWEMU_RETURN_IF_ERROR(opt::CheckUint(vm, "iterations", 1, 255, &iterations));
  run->iterations = static_cast<uint32_t>(iterations);
  SWEMU_RETURN_IF_ERROR(Check("timeout", ParseDurationOption(Text(vm, "timeout")), &run->timeout));
  if (run->timeout == 0) return Status::Error("--timeout must be above 0");
  SWEMU_RETURN_IF_ERROR(
      Check("rto", ParseDurationOption(Text(vm, "rto")), &run->engine.min_rto_ns));
  if (run->engine.min_rto_ns == 0) return Status::Error("--rto must be above 0");
  run->engine.initial_rto_ns = 2 * run->engine.min_rto_ns;
  SWEMU_RETURN_IF_ERROR(Check("rate", ParseRate(Text(vm, "rate")), &rate));
  run->engine.nic_rate_bps = rate;
  run->engine.udp_port = run->job.udp_port;
  run->engine.payload_bytes = kPayloadBytes;
  if (vm.count("port")) run->port = Text(vm, "port");
  return Status::Ok();
}

// The node's network. Kernel UDP: its socket on the job's port, held alone, refused when this
// machine does not own the node's address or another process holds the port on it. A DPDK port
// (--port): the MACs it writes must be known (its own, and its gw_mac's or every peer's).
Status OpenNodeNet(const NodeRun& run, HostNet* net) {
  const PlinkJobNode& me = run.job.nodes[run.me];
  if (!run.port.empty()) {
    std::vector<PlinkJobNode> needed = {me};
    if (me.gateway_mac == MacAddr{}) needed = run.job.nodes;
    SWEMU_RETURN_IF_ERROR(NeedMacs(needed));
    return net->OpenDpdk(run.port, kEalPrefix);
  }
  const std::string where = FormatIpv4(me.ip) + ":" + std::to_string(run.job.udp_port);
  const int error = TryBindUdp(me.ip, run.job.udp_port);
  if (error == EADDRNOTAVAIL) {
    return Status::Error("--name " + me.name + ": node " + me.name + " is " + FormatIpv4(me.ip) +
                         ", not an address of this machine");
  }
  if (error == EADDRINUSE) {
    return Status::Error("--name " + me.name + ": " + where +
                         " is taken: this node of the job already runs here");
  }
  if (error != 0) {
    return Status::Error("--name " + me.name + ": cannot bind " + where + " (" +
                         std::strerror(error) + ")");
  }
  UdpSocketConfig config;
  config.bind_ip = me.ip;
  config.port = run.job.udp_port;
  config.local_mac = me.mac;
  config.exclusive = true;
  Status opened = net->OpenUdp(config);
  if (!opened.ok()) return Status::Error("--name " + me.name + ": " + opened.message());
  return Status::Ok();
}

// Node h's value at element i of iteration k: an integer in [-1000, 1000], so that float32 sums
// over 256 nodes in any order are exact.
float NodeValue(const PlinkJob& job, uint32_t k, uint32_t h, uint64_t i) {
  return static_cast<float>(
      static_cast<int64_t>(HashPair(HashPair(job.job_id, k), HashPair(h, i)) % 2001) - 1000);
}

// Why an iteration did not finish in time, in one line.
Status IterationFailed(const NodeRun& run, const PlinkAggNode& node, uint32_t k,
                       const AggEngineStats& before) {
  if (g_stop) return Status::Error("stopped by a signal");
  char head[96];
  std::snprintf(head, sizeof(head), "iteration %u: not done in %g s (", k,
                static_cast<double>(run.timeout) * 1e-9);
  const AggNodeReport& rep = node.report();
  uint32_t heard = 0;
  for (uint32_t j = 0; j < run.job.num_nodes(); ++j) heard += rep.received_from[j] > 0 ? 1 : 0;
  return Status::Error(std::string(head) +
                       std::to_string(node.stats().packets_sent - before.packets_sent) +
                       " packets sent, chunks from " + std::to_string(heard) + " of " +
                       std::to_string(run.job.num_nodes() - 1) +
                       " other nodes): is every node of the job started, the switch up, and this "
                       "job file every node's (id, floats, chunk, plan, port)?");
}

Status RunIteration(const NodeRun& run, PlinkAggNode& node, HostNet& net, uint32_t k,
                    std::ostream& out) {
  const uint64_t n = run.job.floats;
  const uint32_t nodes = run.job.num_nodes();
  std::vector<float> in(n), result(n, 0.0f), exact(n, 0.0f);
  for (uint64_t i = 0; i < n; ++i) {
    in[i] = NodeValue(run.job, k, run.me, i);
    for (uint32_t h = 0; h < nodes; ++h) exact[i] += NodeValue(run.job, k, h, i);
  }
  const AggEngineStats before = node.stats();
  const auto epoch = static_cast<uint16_t>((run.job.job_id << 8) | (k + 1));
  const TimeNs start = net.Now();
  SWEMU_RETURN_IF_ERROR(node.AllReduce(run.plan, epoch, in.data(), result.data(), n, start));
  const bool done = net.RunUntil([&] { return node.done() || g_stop != 0; }, run.timeout);
  if (!done || !node.done()) return IterationFailed(run, node, k, before);
  const double seconds = static_cast<double>(node.report().finish_ns - start) * 1e-9;
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < n; ++i) wrong += result[i] != exact[i] ? 1 : 0;
  char line[200];
  std::snprintf(
      line, sizeof(line), "iteration %u: %.1f ms, goodput %.3g Gbit/s, %llu retransmissions; ", k,
      seconds * 1e3, static_cast<double>(n) * 4 * 8 / seconds * 1e-9,
      static_cast<unsigned long long>(node.stats().retransmissions - before.retransmissions));
  out << line
      << (wrong == 0 ? "every sum exact\n"
                     : "SUMS WRONG (" + std::to_string(wrong) + " elements)\n")
      << std::flush;
  if (wrong != 0) {
    return Status::Error("iteration " + std::to_string(k) + ": " + std::to_string(wrong) +
                         " result elements differ from the exact sums");
  }
  return Status::Ok();
}

}  // namespace

Status RunPlinkNode(const po::variables_map& vm, std::ostream& out) {
  NodeRun run;
  SWEMU_RETURN_IF_ERROR(ReadRun(vm, &run));
  HostNet net;
  SWEMU_RETURN_IF_ERROR(OpenNodeNet(run, &net));
  g_stop = 0;
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
  const PlinkJobNode& me = run.job.nodes[run.me];
  PlinkAggNode node(static_cast<uint16_t>(run.me),
                    net.dpdk() ? run.job.FrameAddresses(run.me) : run.job.Addresses(),
                    net.transport(), run.engine);
  net.Add(node);
  out << "PLink node " << me.name << " (" << run.me << " of " << run.job.num_nodes() << ", group "
      << me.group << ") at " << FormatIpv4(me.ip) << ":" << run.job.udp_port << ", job "
      << run.job.job_id << ": " << run.job.floats << " floats in " << run.plan.chunk_bytes.size()
      << " chunks, " << (run.job.flat ? "flat aggregation" : "2LHA over ")
      << (run.job.flat ? "" : std::to_string(run.plan.groups) + " groups")
      << (run.port.empty() ? "" : ", over DPDK port " + run.port) << "\n"
      << std::flush;
  for (uint32_t k = 0; k < run.iterations; ++k) {
    Status it = RunIteration(run, node, net, k, out);
    if (!it.ok()) return Status::Error("node " + me.name + ": " + it.message());
  }
  net.RunUntil([] { return g_stop != 0; }, kLingerNs);
  return Status::Ok();
}

}  // namespace swemu
