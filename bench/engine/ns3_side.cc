// ns-3's side of the engine benchmark (bench/engine/README.md): the same leaf-spine and flows as
// swemu_side.cc, in ns-3 3.37 as its DCTCP examples build them: PointToPoint links at 100G
// (device queues of one packet, so the queue disc holds the queue), a RedQueueDisc on every
// switch port that marks ECN at K packets (MinTh = MaxTh = K, QW 1, not gentle, no hard drop),
// TcpDctcp with swemu's model's settings (MSS 1448, initial window 10, an ACK per segment, no
// SACK or timestamps, the same minimum RTO), BulkSend flows and PacketSinks.
//
// Routing: Ipv4GlobalRouting, whose ECMP in 3.37 is per-packet random (TCP would see reordering
// that swemu's per-flow ECMP never makes), so each ToR also has static /32 routes that spread
// remote hosts over the spines by destination (static routes come before global ones).
#include <chrono>
#include <cstdio>
#include <map>

#include "bench/engine/workload.h"
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

using namespace ns3;
using swemu_bench::BenchFlow;
using swemu_bench::BenchResult;
using swemu_bench::BenchShape;

namespace {

struct Fabric {
  NodeContainer hosts, tors, spines;
  std::vector<Ipv4Address> host_ip;
  QueueDiscContainer switch_qdiscs;
  uint64_t hops = 0;
  std::map<std::pair<uint32_t, uint16_t>, uint64_t> incast_rx;  // (src ip, src port) -> bytes
  double queue_sum = 0;
  uint64_t samples = 0;
};

// Socket buffers: above the fabric's bandwidth-delay product (100G x ~25 us with K packets
// queued, ~310 KB) so they do not limit a flow, as swemu's model has no buffer limit; below the
// sizes where ns-3's TcpTxBuffer::NextSeg, linear in the buffer, took a third of the run (4 MB).
constexpr uint32_t kTcpBufferBytes = 512 * 1024;

void Defaults(const BenchShape& s) {
  const uint32_t buf = kTcpBufferBytes;
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::TcpDctcp"));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(buf));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(buf));
  Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
  Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(NanoSeconds(s.min_rto_ns)));
  // swemu's model flows have no handshake and start their RTO at the minimum: a lost SYN here
  // waits that long too, not 3 s.
  Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(NanoSeconds(s.min_rto_ns)));
  Config::SetDefault("ns3::RedQueueDisc::UseEcn", BooleanValue(true));
  Config::SetDefault("ns3::RedQueueDisc::UseHardDrop", BooleanValue(false));
  Config::SetDefault("ns3::RedQueueDisc::Gentle", BooleanValue(false));
  Config::SetDefault("ns3::RedQueueDisc::QW", DoubleValue(1.0));
  Config::SetDefault("ns3::RedQueueDisc::MeanPktSize", UintegerValue(1514));
  Config::SetDefault("ns3::RedQueueDisc::MinTh", DoubleValue(s.ecn_k_pkts));
  Config::SetDefault("ns3::RedQueueDisc::MaxTh", DoubleValue(s.ecn_k_pkts));
  Config::SetDefault("ns3::RedQueueDisc::MaxSize",
                     QueueSizeValue(QueueSize(std::to_string(s.queue_pkts) + "p")));
}

// One link; the switch end(s) get RED, a host end a plain FIFO (swemu's hosts have no queue
// that marks). Returns the devices (a's, b's) with addresses from `ip`.
Ipv4InterfaceContainer Link(PointToPointHelper& p2p, Ptr<Node> a, Ptr<Node> b, bool a_is_host,
                            Ipv4AddressHelper& ip, Fabric& f) {
  NetDeviceContainer dev = p2p.Install(a, b);
  TrafficControlHelper red, fifo;
  red.SetRootQueueDisc("ns3::RedQueueDisc");
  fifo.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize("100000p")));
  if (a_is_host) {
    fifo.Install(dev.Get(0));
  } else {
    f.switch_qdiscs.Add(red.Install(dev.Get(0)));
  }
  f.switch_qdiscs.Add(red.Install(dev.Get(1)));
  Ipv4InterfaceContainer ifs = ip.Assign(dev);
  ip.NewNetwork();
  return ifs;
}

void Build(const BenchShape& s, Fabric& f) {
  f.hosts.Create(s.hosts());
  f.tors.Create(s.tors);
  f.spines.Create(s.spines);
  InternetStackHelper stack;
  stack.InstallAll();
  PointToPointHelper p2p;
  p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(s.link_bps)));
  p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(s.link_delay_ns)));
  p2p.SetQueue("ns3::DropTailQueue", "MaxSize", QueueSizeValue(QueueSize("1p")));
  Ipv4AddressHelper ip("10.0.0.0", "255.255.255.252");
  for (uint32_t h = 0; h < s.hosts(); ++h) {
    Ipv4InterfaceContainer ifs =
        Link(p2p, f.hosts.Get(h), f.tors.Get(h / s.hosts_per_tor), true, ip, f);
    f.host_ip.push_back(ifs.GetAddress(0));
  }
  // spine_ip[t][sp]: spine sp's address on its link to ToR t.
  std::vector<std::vector<Ipv4Address>> spine_ip(s.tors);
  std::vector<std::vector<uint32_t>> tor_if(s.tors);
  for (uint32_t t = 0; t < s.tors; ++t) {
    for (uint32_t sp = 0; sp < s.spines; ++sp) {
      Ipv4InterfaceContainer ifs = Link(p2p, f.tors.Get(t), f.spines.Get(sp), false, ip, f);
      spine_ip[t].push_back(ifs.GetAddress(1));
      tor_if[t].push_back(ifs.Get(0).second);
    }
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  Ipv4StaticRoutingHelper statics;
  for (uint32_t t = 0; t < s.tors; ++t) {
    Ptr<Ipv4StaticRouting> rt = statics.GetStaticRouting(f.tors.Get(t)->GetObject<Ipv4>());
    for (uint32_t h = 0; h < s.hosts(); ++h) {
      if (h / s.hosts_per_tor == t) continue;
      const uint32_t sp = (h + h / s.spines) % s.spines;  // spreads h, h + 4, ... too
      rt->AddHostRouteTo(f.host_ip[h], spine_ip[t][sp], tor_if[t][sp]);
    }
  }
  Config::ConnectWithoutContext(
      "/NodeList/*/DeviceList/*/$ns3::PointToPointNetDevice/PhyTxEnd",
      MakeCallback(+[](uint64_t* hops, Ptr<const Packet>) { ++*hops; }).Bind(&f.hops));
}

void Flows(const BenchShape& s, Fabric& f, uint64_t* started) {
  for (uint32_t h = 0; h < s.hosts(); ++h) {
    for (uint16_t port : {swemu_bench::kBenchLongPort, swemu_bench::kBenchIncastPort}) {
      PacketSinkHelper sink("ns3::TcpSocketFactory",
                            InetSocketAddress(Ipv4Address::GetAny(), port));
      ApplicationContainer app = sink.Install(f.hosts.Get(h));
      app.Start(Seconds(0));
      if (port != swemu_bench::kBenchIncastPort) continue;
      app.Get(0)->TraceConnectWithoutContext(
          "Rx", MakeCallback(+[](Fabric* fab, Ptr<const Packet> p, const Address& from) {
                  InetSocketAddress a = InetSocketAddress::ConvertFrom(from);
                  fab->incast_rx[{a.GetIpv4().Get(), a.GetPort()}] += p->GetSize();
                }).Bind(&f));
    }
  }
  for (const BenchFlow& fl : swemu_bench::PlanBenchFlows(s)) {
    BulkSendHelper send("ns3::TcpSocketFactory", InetSocketAddress(f.host_ip[fl.dst], fl.dst_port));
    send.SetAttribute("MaxBytes", UintegerValue(fl.bytes));
    send.SetAttribute("SendSize", UintegerValue(1448));
    ApplicationContainer app = send.Install(f.hosts.Get(fl.src));
    app.Start(NanoSeconds(fl.start_ns));
    if (fl.bytes == 0) app.Stop(NanoSeconds(s.duration_ns));
    if (fl.bytes != 0) ++*started;
  }
}

void Sample(Fabric* f) {
  uint64_t queued = 0;
  for (uint32_t i = 0; i < f->switch_qdiscs.GetN(); ++i) {
    queued += f->switch_qdiscs.Get(i)->GetNPackets();
  }
  f->queue_sum += static_cast<double>(queued);
  ++f->samples;
  Simulator::Schedule(NanoSeconds(swemu_bench::kBenchSampleNs), &Sample, f);
}

void Collect(const BenchShape& s, Fabric& f, BenchResult* r) {
  r->events = Simulator::GetEventCount();
  r->packet_hops = f.hops;
  for (const auto& [key, bytes] : f.incast_rx) r->flows_completed += bytes >= s.incast_bytes;
  for (uint32_t h = 0; h < s.hosts(); ++h) {
    Ptr<Node> n = f.hosts.Get(h);
    for (uint32_t a = 0; a < n->GetNApplications(); ++a) {
      if (Ptr<PacketSink> sink = DynamicCast<PacketSink>(n->GetApplication(a))) {
        r->bytes_delivered += sink->GetTotalRx();
      }
    }
  }
  r->mean_queue_pkts = f.samples ? f.queue_sum / static_cast<double>(f.samples) : 0;
  for (uint32_t i = 0; i < f.switch_qdiscs.GetN(); ++i) {
    const QueueDisc::Stats& st = f.switch_qdiscs.Get(i)->GetStats();
    r->ecn_marks += st.GetNMarkedPackets(RedQueueDisc::FORCED_MARK) +
                    st.GetNMarkedPackets(RedQueueDisc::UNFORCED_MARK);
    r->drops += st.nTotalDroppedPackets;
  }
}

}  // namespace

int main(int argc, char** argv) {
  BenchShape s;
  std::string error;
  if (!swemu_bench::ParseBenchArgs(argc, argv, &s, &error)) {
    std::fprintf(stderr, "ns3_engine_bench: %s\n", error.c_str());
    return 2;
  }
  if (s.partitions != 0) {
    std::fprintf(stderr, "ns3_engine_bench: --partitions: swemu's side only (ns-3 runs its MPI "
                         "module for that)\n");
    return 2;
  }
  Defaults(s);
  Fabric f;
  Build(s, f);
  BenchResult r;
  Flows(s, f, &r.flows_started);
  Simulator::Schedule(NanoSeconds(0), &Sample, &f);
  Simulator::Stop(NanoSeconds(s.duration_ns));
  const auto begin = std::chrono::steady_clock::now();
  Simulator::Run();
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  Collect(s, f, &r);
  Simulator::Destroy();
  std::printf("%s\n", swemu_bench::FormatBenchLine("ns-3", s, r).c_str());
  return 0;
}
