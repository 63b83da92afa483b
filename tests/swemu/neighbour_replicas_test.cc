// Router interfaces with [dpdk] workers = 2, as real time runs them without DPDK: two replicas
// of l2l3, each with its own neighbour agent, and the CPU pump (swemu/cpu_pump.h) feeding both
// agents every packet-in and tick. One control plane in effect: an ARP reply taken in on
// replica 1 resolves a packet held from replica 0, both replicas' tables are programmed, and
// every request, reply and held packet leaves once.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>

#include "pipeline/wire/arp.h"
#include "pipeline/wire/byte_order.h"
#include "pipeline/wire/frame_builder.h"
#include "swemu/cpu_pump.h"
#include "swemu/replica_merge.h"
#include "swemu/switch_config.h"
#include "tests/swemu/multicore_replicas.h"

namespace swemu {
namespace {

constexpr uint64_t kGw1Mac = 0x02000000FE01;
constexpr uint64_t kGw2Mac = 0x02000000FE02;
const MacAddr kHostA = MacAddr::FromU64(0x02000000000A);
const MacAddr kHostB = MacAddr::FromU64(0x02000000000B);
const Ipv4Addr kIpA = *ParseIpv4("10.1.1.2");
const Ipv4Addr kIpB = *ParseIpv4("10.2.2.2");
const Ipv4Addr kGw1 = *ParseIpv4("10.1.1.1");
const Ipv4Addr kGw2 = *ParseIpv4("10.2.2.1");
constexpr TimeNs kMs = 1'000'000;

RouterInterface Rif(uint32_t id, uint64_t mac, Ipv4Addr ip, std::vector<PortId> ports) {
  RouterInterface rif;
  rif.id = id;
  rif.mac = mac;
  rif.ipv4 = ip;
  rif.prefix_len = 24;
  rif.ports = std::move(ports);
  return rif;
}

// Two subnets: 10.1.1.0/24 on ports 0-1 (host A on 0), 10.2.2.0/24 on ports 2-3 (B on 2).
SwitchConfig RouterConfig() {
  SwitchConfig config;
  config.num_ports = 4;
  config.program = "l2l3";
  config.interfaces = {Rif(1, kGw1Mac, kGw1, {0, 1}), Rif(2, kGw2Mac, kGw2, {2, 3})};
  return config;
}

std::vector<uint8_t> Arp(uint16_t oper, MacAddr eth_dst, MacAddr sender, Ipv4Addr sender_ip,
                         uint64_t target_mac, Ipv4Addr target_ip) {
  std::vector<uint8_t> frame(kEthernetMinFrameLen, 0);
  std::vector<uint8_t> head = FrameBuilder().Eth(eth_dst, sender).EtherType(kEtherTypeArp).Build();
  std::copy(head.begin(), head.begin() + kEthernetHeaderLen, frame.begin());
  ArpFields{oper, sender.ToU64(), sender_ip, target_mac, target_ip}.Encode(frame.data() + 14);
  return frame;
}

// A to `dst_ip` through its gateway; `sport` tells the flows (and so the lcores) apart.
std::vector<uint8_t> UdpFromA(Ipv4Addr dst_ip, uint16_t sport) {
  return FrameBuilder()
      .Eth(MacAddr::FromU64(kGw1Mac), kHostA)
      .Ipv4(kIpA, dst_ip)
      .Udp(sport, 2000)
      .Payload(32)
      .Build();
}

std::optional<ArpFields> ArpOf(const testing::Sent& f) {
  if (f.bytes.size() < 42 || LoadBe16(f.bytes.data() + 12) != kEtherTypeArp) return std::nullopt;
  return ArpFields::Decode(f.bytes.data() + 14, f.bytes.size() - 14);
}

uint64_t MacAt(const testing::Sent& f, std::size_t at) {
  return uint64_t{LoadBe16(f.bytes.data() + at)} << 32 | LoadBe32(f.bytes.data() + at + 2);
}
uint64_t DstMac(const testing::Sent& f) { return MacAt(f, 0); }

// A table_dump without its hit counts.
std::string WithoutHits(const std::string& dump) {
  return std::regex_replace(dump, std::regex("hits [0-9]+"), "hits");
}

class NeighbourReplicas : public ::testing::Test {
 protected:
  NeighbourReplicas() : r_(RouterConfig(), 2) {
    CpuPump::Share({&r_.sw(0).cpu(), &r_.sw(1).cpu()}, now_);
    CpuPumpHooks hooks;
    hooks.replicas = 2;
    hooks.on_replica = [this](uint32_t i, const std::function<void(CpuPath&)>& task) {
      task(r_.sw(i).cpu());
      return true;
    };
    hooks.now = [this] { return now_; };
    hooks.free = [this](Packet* pkt) { r_.pool().Free(pkt); };
    pump_ = std::make_unique<CpuPump>(std::move(hooks));
  }
  ~NeighbourReplicas() override {
    pump_.reset();
    for (uint32_t i = 0; i < r_.size(); ++i) r_.sw(i).FreeQueued();
  }

  // A frame from `port` whose ingress runs on `lcore`: flows `sport` and up until one does.
  void FromAOn(uint32_t lcore, Ipv4Addr dst_ip) {
    for (uint16_t sport = 1000; sport < 1100; ++sport) {
      std::vector<uint8_t> frame = UdpFromA(dst_ip, sport);
      Packet* pkt = r_.pool().FromBytes(frame.data(), static_cast<uint32_t>(frame.size()));
      if (r_.sw(0).ShardKeyOf(*pkt, 0) % 2 == lcore) {
        r_.sw(lcore).ReceiveParsedBurst(&pkt, 1);
        return;
      }
      r_.pool().Free(pkt);
    }
    FAIL() << "no flow of 100 runs its ingress on lcore " << lcore;
  }
  // A frame taken in on `lcore` (its port's owner parses it, as the datapath does).
  void ReceiveOn(uint32_t lcore, PortId port, const std::vector<uint8_t>& frame) {
    Packet* pkt = r_.pool().FromBytes(frame.data(), static_cast<uint32_t>(frame.size()));
    ASSERT_NE(pkt, nullptr);
    (void)r_.sw(port % 2).ShardKeyOf(*pkt, port);
    r_.sw(lcore).ReceiveParsedBurst(&pkt, 1);
  }
  // One pump round `ms` later, then everything the replicas send.
  std::vector<testing::Sent> Round(TimeNs ms = 1) {
    now_ += ms * kMs;
    EXPECT_TRUE(pump_->RunOnce());
    return r_.Drain();
  }
  uint64_t CpuCounter(const std::string& name) {
    const std::string merged = MergeCountersJson(r_.Answers("show counters"));
    const std::size_t cpu = merged.find("\"cpu\"");
    const std::size_t at = merged.find("\"" + name + "\":", cpu);
    EXPECT_NE(at, std::string::npos) << merged;
    return at == std::string::npos ? 0 : std::stoull(merged.substr(merged.find(':', at) + 1));
  }

  TimeNs now_ = 1'000 * kMs;
  testing::Replicas r_;
  std::unique_ptr<CpuPump> pump_;
};

TEST_F(NeighbourReplicas, AReplyOnReplicaOneResolvesAPacketHeldFromReplicaZero) {
  FromAOn(0, kIpB);  // glean: held by the control plane until B answers
  ASSERT_EQ(r_.sw(0).cpu().counters().packet_in, 1u);
  std::vector<testing::Sent> out = Round();
  // One request out of each port of B's subnet: the primary's; the secondary's copy stays in.
  ASSERT_EQ(out.size(), 2u);
  for (const testing::Sent& f : out) {
    ASSERT_TRUE(ArpOf(f)) << f.port;
    EXPECT_EQ(ArpOf(f)->target_ip, kIpB);
  }
  EXPECT_EQ(out[0].port + out[1].port, 2u + 3u);

  ReceiveOn(1, 2, Arp(kArpReply, MacAddr::FromU64(kGw2Mac), kHostB, kIpB, kGw2Mac, kGw2));
  EXPECT_EQ(r_.sw(1).cpu().counters().packet_in, 1u);
  out = Round();
  // The held packet, once, routed to B: its MAC, the gateway's, TTL 63.
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 2u);
  EXPECT_EQ(DstMac(out[0]), kHostB.ToU64());
  EXPECT_EQ(MacAt(out[0], 6), kGw2Mac);
  EXPECT_EQ(out[0].bytes[14 + 8], 63);

  // Both replicas resolved B and programmed the same entries.
  const std::vector<std::string> arp = r_.Answers("show arp");
  EXPECT_EQ(arp[0], arp[1]);
  EXPECT_NE(arp[0].find("10.2.2.2         02:00:00:00:00:0b  2     2         REACHABLE"),
            std::string::npos)
      << arp[0];
  for (const char* table : {"table_dump nexthop", "table_dump ipv4_lpm"}) {
    const std::vector<std::string> dump = r_.Answers(table);
    EXPECT_EQ(WithoutHits(dump[0]), WithoutHits(dump[1])) << table;  // hits: each lcore its own
  }
  // Now B's flows are routed on either lcore without the control plane.
  for (uint32_t lcore : {0u, 1u}) {
    FromAOn(lcore, kIpB);
    out = r_.Drain();
    ASSERT_EQ(out.size(), 1u) << "lcore " << lcore;
    EXPECT_EQ(out[0].port, 2u);
    EXPECT_EQ(DstMac(out[0]), kHostB.ToU64());
  }
  // The switch's CPU counts add up as one control plane's: 2 in, 1 back to ingress, 1 freed
  // (the reply), 2 requests made and sent, nothing held.
  EXPECT_EQ(CpuCounter("packet_in"), 2u);
  EXPECT_EQ(CpuCounter("to_ingress"), 1u);
  EXPECT_EQ(CpuCounter("created"), 2u);
  EXPECT_EQ(CpuCounter("packet_out"), 2u);
  EXPECT_EQ(CpuCounter("held"), 0u);
}

TEST_F(NeighbourReplicas, AGatewayRequestOnReplicaOneIsAnsweredOnceAndLearnedByBoth) {
  ReceiveOn(1, 0, Arp(kArpRequest, MacAddr::FromU64(0xFFFFFFFFFFFF), kHostA, kIpA, 0, kGw1));
  std::vector<testing::Sent> out = Round();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 0u);
  ASSERT_TRUE(ArpOf(out[0]));
  EXPECT_EQ(ArpOf(out[0])->oper, kArpReply);
  EXPECT_EQ(ArpOf(out[0])->sender_mac, kGw1Mac);
  const std::vector<std::string> arp = r_.Answers("show arp");
  EXPECT_EQ(arp[0], arp[1]);
  EXPECT_NE(arp[0].find("10.1.1.2 "), std::string::npos) << arp[0];
  EXPECT_NE(arp[0].find("replies sent 1;"), std::string::npos) << arp[0];
}

TEST_F(NeighbourReplicas, TimersRunOnceForTheSwitchAndASilentHostFailsOnBoth) {
  const Ipv4Addr silent = *ParseIpv4("10.2.2.9");
  FromAOn(1, silent);
  std::size_t requests = Round().size();  // the first, out of ports 2 and 3
  for (int i = 0; i < 40; ++i) requests += Round(100).size();  // 4 s: every retry and failure
  // Three probes (neighbour_probes' default) out of two ports, each sent once.
  EXPECT_EQ(requests, 3u * 2);
  const std::vector<std::string> arp = r_.Answers("show arp");
  EXPECT_EQ(arp[0], arp[1]);
  EXPECT_NE(arp[0].find("FAILED"), std::string::npos) << arp[0];
  // The held packet was dropped once, by the primary.
  const std::vector<std::string> drops = r_.Answers("show drops");
  EXPECT_NE(drops[0].find("neighbour_unresolved 1"), std::string::npos) << drops[0];
  EXPECT_EQ(drops[1].find("neighbour_unresolved"), std::string::npos) << drops[1];
  EXPECT_EQ(CpuCounter("held"), 0u);
}

TEST(NeighbourReplicasConfig, RouterInterfacesLoadWithTwoWorkers) {
  const std::string path = ::testing::TempDir() + "neighbour_replicas_workers.ini";
  std::ofstream(path) << "[switch]\nports = 4\nprogram = l2l3\n[dpdk]\nworkers = 2\n"
                      << "[interface.1]\nmac = 02:00:00:00:fe:01\nip = 10.1.1.1/24\nports = 0-1\n";
  Result<LoadedSwitchConfig> loaded = LoadSwitchConfig(path);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  EXPECT_EQ(loaded->workers, 2u);
  EXPECT_EQ(loaded->config.interfaces.size(), 1u);
}

}  // namespace
}  // namespace swemu
