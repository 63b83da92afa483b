// Issue 37's proof in virtual time: configs/tor.ini itself, loaded as swemu loads it, in the
// engine with four pcap hosts that speak as the namespace hosts of the real-time tests do (ARP
// for their gateway, ICMP echo within and across subnets, one host moving to another port, a
// flood of 10,000 source MACs from the uplink). The same outcomes: bridged and routed echoes
// reach their hosts, the moved host is reached on its new port (with or without its ARP there:
// routed traffic follows the MAC table), the table fills to mac_limit and the rest is refused
// and counted (in `show mac` and counters.json); two runs give byte-identical pcaps and
// counters.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipeline/engine/engine.h"
#include "pipeline/wire/arp.h"
#include "pipeline/wire/checksum.h"
#include "pipeline/wire/frame_builder.h"
#include "swemu/switch_config.h"
#include "tests/pipeline/engine/engine_test_util.h"

namespace swemu {
namespace {

using engine_test::FileBytes;
using engine_test::ReadPcap;
using engine_test::Records;
using engine_test::TempPath;
using engine_test::WritePcap;

constexpr uint64_t kGw = 0x0200000000FE;  // tor.ini's router MAC, all three interfaces
constexpr uint64_t kA = 0x02000000370A;   // 10.1.1.2, port 0, then port 1
constexpr uint64_t kB = 0x02000000370B;   // 10.1.1.3, port 1
constexpr uint64_t kC = 0x02000000370C;   // 10.1.2.2, port 2
constexpr TimeNs kMs = 1'000'000;
constexpr TimeNs kMoveAt = 4'000 * kMs;
constexpr int kFloodMacs = 10'000;

Ipv4Addr Ip(const char* text) { return *ParseIpv4(text); }

// The kernel's "who has <gateway>" from a host.
std::vector<uint8_t> ArpForGateway(uint64_t mac, const char* ip, const char* gateway) {
  uint8_t arp[kArpLen];
  ArpFields{kArpRequest, mac, Ip(ip), 0, Ip(gateway)}.Encode(arp);
  return FrameBuilder()
      .Eth(kBroadcastMac, MacAddr::FromU64(mac))
      .EtherType(kEtherTypeArp)
      .Payload(arp)
      .PadTo(kEthernetMinFrameLen)
      .Build();
}

// ICMP echo (type 8) or echo reply (type 0), 16 bytes of ICMP.
std::vector<uint8_t> Echo(uint8_t type, uint64_t dst_mac, uint64_t src_mac, const char* src,
                          const char* dst, uint16_t seq) {
  uint8_t icmp[16] = {type, 0, 0, 0, 0, 77, static_cast<uint8_t>(seq >> 8),
                      static_cast<uint8_t>(seq), 's', 'w', 'e', 'm', 'u', '3', '7', '!'};
  StoreBe16(icmp + 2, InternetChecksum(icmp, sizeof icmp));
  return FrameBuilder()
      .Eth(MacAddr::FromU64(dst_mac), MacAddr::FromU64(src_mac))
      .Ipv4(Ip(src), Ip(dst))
      .Protocol(kIpProtoIcmp)
      .Payload(icmp)
      .Build();
}

// From the uplink (port 3): distinct random unicast source MACs, one every 200 us (5,000 a
// second, under the digest rate limit), to a MAC nobody has.
Records Flood() {
  Records flood;
  uint64_t x = 37;
  for (int i = 0; i < kFloodMacs; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint64_t mac = ((x >> 16) & 0xFCFF'FFFF'FFFFULL) | 0x0200'0000'0000ULL;
    flood.push_back({10 * kMs + uint64_t(i) * 200'000,
                     FrameBuilder()
                         .Eth(MacAddr::FromU64(0x02000000FFFF), MacAddr::FromU64(mac))
                         .EtherType(0x88B5)
                         .PadTo(kEthernetMinFrameLen)
                         .Build()});
  }
  return flood;
}

// What each port's host sends. A talks from port 0 until it moves to port 1 at kMoveAt, where
// its kernel ARPs for the gateway on the new link (unless `arp_after_move` is false: a host
// whose gateway entry is still valid sends none) and pings C again.
std::vector<Records> Scripts(bool arp_after_move = true) {
  const TimeNs later = 3'000 * kMs;  // after the flood
  std::vector<Records> scripts = {
      {{1'000, ArpForGateway(kA, "10.1.1.2", "10.1.1.1")},
       {100'000, Echo(8, kB, kA, "10.1.1.2", "10.1.1.3", 1)},
       {300'000, Echo(8, kGw, kA, "10.1.1.2", "10.1.2.2", 2)},
       {later, Echo(8, kB, kA, "10.1.1.2", "10.1.1.3", 3)},
       {later + 100'000, Echo(8, kGw, kA, "10.1.1.2", "10.1.2.2", 4)}},
      {{2'000, ArpForGateway(kB, "10.1.1.3", "10.1.1.1")},
       {200'000, Echo(0, kA, kB, "10.1.1.3", "10.1.1.2", 1)},
       {later + 50'000, Echo(0, kA, kB, "10.1.1.3", "10.1.1.2", 3)},
       {kMoveAt, ArpForGateway(kA, "10.1.1.2", "10.1.1.1")},
       {kMoveAt + 100'000, Echo(8, kGw, kA, "10.1.1.2", "10.1.2.2", 5)}},
      {{3'000, ArpForGateway(kC, "10.1.2.2", "10.1.2.1")},
       {400'000, Echo(0, kGw, kC, "10.1.2.2", "10.1.1.2", 2)},
       {later + 200'000, Echo(0, kGw, kC, "10.1.2.2", "10.1.1.2", 4)},
       {kMoveAt + 200'000, Echo(0, kGw, kC, "10.1.2.2", "10.1.1.2", 5)}},
      Flood(),
  };
  if (!arp_after_move) scripts[1].erase(scripts[1].begin() + 3);
  return scripts;
}

struct TorRun {
  std::vector<std::vector<PcapRecord>> out;  // per port
  std::vector<std::string> out_bytes;        // per port: the pcap file
  std::string show_mac;
  std::string counters;
};

TorRun RunTor(const std::string& tag, bool arp_after_move = true) {
  Result<LoadedSwitchConfig> tor = LoadSwitchConfig(SWEMU_SOURCE_DIR "/configs/tor.ini");
  EXPECT_TRUE(tor.ok()) << tor.message();
  Engine engine(1);
  Status added = engine.AddSwitch(tor->config, tor->startup_script);
  EXPECT_TRUE(added.ok()) << added.message();
  const std::vector<Records> scripts = Scripts(arp_after_move);
  for (PortId p = 0; p < 4; ++p) {
    const std::string n = tag + std::to_string(p);
    WritePcap(TempPath("tor_in" + n + ".pcap"), scripts[p]);
    HostPortSpec spec{"tor", p, TempPath("tor_in" + n + ".pcap"),
                      TempPath("tor_out" + n + ".pcap"), 1'000, 0};
    EXPECT_TRUE(engine.AddHostPort(spec).ok());
  }
  Status ran = engine.Run();
  EXPECT_TRUE(ran.ok()) << ran.message();
  EXPECT_TRUE(engine.CheckConservation().ok()) << engine.CheckConservation().message();
  TorRun run;
  for (PortId p = 0; p < 4; ++p) {
    const std::string path = TempPath("tor_out" + tag + std::to_string(p) + ".pcap");
    run.out.push_back(ReadPcap(path));
    run.out_bytes.push_back(FileBytes(path));
  }
  run.show_mac = *engine.FindSwitch("tor")->commands().Execute("show mac");
  run.counters = engine.CountersJson();
  return run;
}

uint64_t MacAt(const uint8_t* p) { return (uint64_t{LoadBe16(p)} << 32) | LoadBe32(p + 2); }
uint64_t DstMac(const PcapRecord& r) { return MacAt(r.bytes.data()); }
uint64_t SrcMac(const PcapRecord& r) { return MacAt(r.bytes.data() + 6); }
uint16_t EtherTypeOf(const PcapRecord& r) { return LoadBe16(r.bytes.data() + 12); }
// An ICMP echo's sequence number (Echo's frames: no VLAN tag, a 20-byte IPv4 header).
uint16_t EchoSeq(const PcapRecord& r) { return LoadBe16(r.bytes.data() + 14 + 20 + 6); }

// JSON without its whitespace (JsonWriter's keys and values hold none).
std::string Compact(const std::string& json) {
  std::string out;
  for (char c : json) {
    if (c != ' ' && c != '\n') out += c;
  }
  return out;
}

// The frames a port's host got before `until`, addressed to `mac`.
std::vector<PcapRecord> To(const std::vector<PcapRecord>& frames, uint64_t mac, TimeNs until) {
  std::vector<PcapRecord> out;
  for (const PcapRecord& r : frames) {
    if (r.ts_ns < until && DstMac(r) == mac) out.push_back(r);
  }
  return out;
}

TEST(TorEngine, TheBundledTorBridgesRoutesRelearnsAMovedHostAndBoundsAFlood) {
  const TorRun run = RunTor("a");
  const TimeNs end = kMoveAt + 10 * kMs;  // the neighbours' later re-probes aside
  // A, port 0: the gateway's ARP answer, B's bridged replies, C's routed ones (source the
  // router MAC, TTL 63); nothing after the move.
  const std::vector<PcapRecord> a = To(run.out[0], kA, kNever);
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(EtherTypeOf(a[0]), kEtherTypeArp);
  EXPECT_EQ(SrcMac(a[0]), kGw);
  for (int i : {1, 3}) EXPECT_EQ(SrcMac(a[i]), kB);
  for (int i : {2, 4}) {
    EXPECT_EQ(SrcMac(a[i]), kGw);
    EXPECT_EQ(a[i].bytes[14 + 8], 63);
  }
  for (const PcapRecord& r : run.out[0]) EXPECT_LT(r.ts_ns, kMoveAt);
  // B, port 1: its ARP answer and A's two echoes, bridged.
  const std::vector<PcapRecord> b = To(run.out[1], kB, end);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(EchoSeq(b[1]), 1);
  EXPECT_EQ(EchoSeq(b[2]), 3);
  // A on port 1 after the move: the gateway's ARP answer, then C's reply to echo 5, routed to
  // the new port by its first packets there.
  const std::vector<PcapRecord> moved = To(run.out[1], kA, end);
  ASSERT_EQ(moved.size(), 2u);
  EXPECT_GT(moved[0].ts_ns, kMoveAt);
  EXPECT_EQ(EtherTypeOf(moved[0]), kEtherTypeArp);
  EXPECT_EQ(EchoSeq(moved[1]), 5);
  // C, port 2: its ARP answer and A's echoes 2, 4 and 5, routed.
  const std::vector<PcapRecord> c = To(run.out[2], kC, end);
  ASSERT_EQ(c.size(), 4u);
  for (int i : {1, 2, 3}) EXPECT_EQ(SrcMac(c[i]), kGw);
  // The uplink's port is the flood's VLAN alone: no host's frame reaches it.
  for (const PcapRecord& r : run.out[3]) {
    EXPECT_TRUE(DstMac(r) != kA && DstMac(r) != kB && DstMac(r) != kC);
  }
  // The table: A (moved to port 1), B, C, then flood MACs up to mac_limit; the rest refused.
  const std::string& mac = run.show_mac;
  EXPECT_NE(mac.find("02:00:00:00:37:0a  10    1 "), std::string::npos) << mac.substr(0, 400);
  EXPECT_NE(mac.find("02:00:00:00:37:0b  10    1 "), std::string::npos);
  EXPECT_NE(mac.find("02:00:00:00:37:0c  20    2 "), std::string::npos);
  const std::string totals = mac.substr(mac.rfind("learned "));
  EXPECT_EQ(totals,
            "learned 4096, refreshed 0, moved 1, aged 0, refused (table full) " +
                std::to_string(kFloodMacs - (4096 - 3)) +
                "; entries 4096 of mac_limit 4096, mac_age 300 s\n");
  // counters.json says the same, with the digests: one per new source or move, none limited.
  const std::string counters = Compact(run.counters);
  const std::string refused = std::to_string(kFloodMacs - (4096 - 3));
  EXPECT_NE(counters.find("\"control_plane\":{\"learning\":{\"entries\":4096,\"mac_limit\":4096,"
                          "\"learned\":4096,\"refreshed\":0,\"moved\":1,\"aged\":0,"
                          "\"refused_full\":" + refused + "}}"),
            std::string::npos)
      << run.counters.substr(0, 4000);
  const std::string digests = std::to_string(kFloodMacs + 4);
  EXPECT_NE(counters.find("\"digests\":{\"emitted\":" + digests +
                          ",\"deduplicated\":0,\"dropped_by_limit\":0,\"delivered\":" + digests +
                          "}"),
            std::string::npos)
      << run.counters.substr(0, 4000);
  // Deterministic: a second run writes the same bytes.
  const TorRun again = RunTor("b");
  for (PortId p = 0; p < 4; ++p) EXPECT_EQ(run.out_bytes[p], again.out_bytes[p]) << "port " << p;
  EXPECT_EQ(run.counters, again.counters);
  EXPECT_EQ(run.show_mac, again.show_mac);
}

// A ToR takes a neighbour's port from its MAC table: A's first frame on port 1 (its echo 5 to
// C, routed) moves it there, and C's routed reply follows it, with no ARP from A.
TEST(TorEngine, AMovedHostsRoutedRepliesFollowItBeforeItArps) {
  const TorRun run = RunTor("m", false);
  const TimeNs end = kMoveAt + 10 * kMs;
  for (const PcapRecord& r : run.out[0]) EXPECT_LT(r.ts_ns, kMoveAt);
  const std::vector<PcapRecord> moved = To(run.out[1], kA, end);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(SrcMac(moved[0]), kGw);
  EXPECT_EQ(EchoSeq(moved[0]), 5);
  EXPECT_LT(moved[0].ts_ns, kMoveAt + 1 * kMs);
  EXPECT_EQ(EchoSeq(To(run.out[2], kC, end).back()), 5);  // A's echo reached C
  EXPECT_NE(run.show_mac.find("02:00:00:00:37:0a  10    1 "), std::string::npos);
}

}  // namespace
}  // namespace swemu
