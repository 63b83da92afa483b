// The switch frame: program loading against the stage budget, the per-pass register rule,
// recirculation, drop accounting and conservation.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <sstream>

#include "pipeline/wire/address.h"
#include "pipeline/wire/frame_builder.h"
#include "tests/pipeline/switch_harness.h"

namespace swemu {
namespace {

using testing::SentFrame;
using testing::SwitchHarness;

// Test programs: one touches a register twice per pass (at run time), one declares it twice
// (at load time), one recirculates every packet once, one wants more ALUs than a stage has.
class DoubleAccessProgram final : public Program {
 public:
  std::string_view name() const noexcept override { return "test_double_access"; }
  Status Load(ProgramContext& ctx) override {
    Result<RegisterArray*> reg = ctx.builder.AddRegister(Gress::kIngress, 0, {"r", 16, 32, 1});
    if (!reg.ok()) return reg.status();
    reg_ = *reg;
    return Status::Ok();
  }
  void Ingress(Packet& pkt) noexcept override {
    pkt.meta.egress_spec = 1;
    reg_->Rmw(pkt, 0, [](std::span<uint64_t> c) { c[0] += 1; });
    reg_->Rmw(pkt, 1, [](std::span<uint64_t> c) { c[0] += 1; });
  }
  RegisterArray* reg_ = nullptr;
};
SWEMU_REGISTER_PROGRAM("test_double_access", DoubleAccessProgram);

class DeclaredTwiceProgram final : public Program {
 public:
  std::string_view name() const noexcept override { return "test_declared_twice"; }
  Status Load(ProgramContext& ctx) override {
    Result<RegisterArray*> reg = ctx.builder.AddRegister(Gress::kIngress, 2, {"bitmap", 16, 32, 1});
    if (!reg.ok()) return reg.status();
    return ctx.builder.AccessRegister(Gress::kIngress, 5, *reg);
  }
  void Ingress(Packet&) noexcept override {}
};
SWEMU_REGISTER_PROGRAM("test_declared_twice", DeclaredTwiceProgram);

class RecirculateProgram final : public Program {
 public:
  std::string_view name() const noexcept override { return "test_recirculate"; }
  Status Load(ProgramContext&) override { return Status::Ok(); }
  void Ingress(Packet& pkt) noexcept override { pkt.meta.egress_spec = 1; }
  void Egress(Packet& pkt) noexcept override {
    pkt.meta.recirculate = pkt.meta.recirculate_count < passes_;
  }
  uint8_t passes_ = 1;
};
SWEMU_REGISTER_PROGRAM("test_recirculate", RecirculateProgram);

class TooManyAlusProgram final : public Program {
 public:
  std::string_view name() const noexcept override { return "test_too_many_alus"; }
  Status Load(ProgramContext& ctx) override {
    return ctx.builder.AddRegister(Gress::kIngress, 0, {"wide", 64, 32, 8}).status();
  }
  void Ingress(Packet&) noexcept override {}
};
SWEMU_REGISTER_PROGRAM("test_too_many_alus", TooManyAlusProgram);

SwitchConfig Config(const std::string& program) {
  SwitchConfig config;
  config.program = program;
  return config;
}

std::vector<uint8_t> Frame(const std::string& dst_mac, std::size_t payload = 20) {
  return FrameBuilder()
      .Eth(*ParseMac(dst_mac), *ParseMac("00:00:00:00:00:0a"))
      .Ipv4(*ParseIpv4("10.0.0.1"), *ParseIpv4("10.0.0.2"))
      .Udp(1, 2)
      .Payload(payload)
      .Build();
}

TEST(SwitchLoadTest, RefusesUnknownProgram) {
  SwitchHarness h(Config("nonesuch"));
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.error().find("unknown program \"nonesuch\" (known: "), std::string::npos);
  EXPECT_NE(h.error().find("l2l3"), std::string::npos);
}

TEST(SwitchLoadTest, RefusesProgramBeyondTheStageCount) {
  SwitchConfig config = Config("l2l3");
  config.pipeline.ingress_stages = 4;
  SwitchHarness h(config);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error(),
            "program l2l3: table ecmp_member: ingress stage 4 does not exist (the pipeline has 4)");
}

TEST(SwitchLoadTest, RefusesProgramOverTheSramBudgetWithAReport) {
  SwitchConfig config = Config("l2l3");
  config.program_options.Set("dmac_size", "200000");
  SwitchHarness h(config);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().rfind("program l2l3 does not fit: ingress stage 0: SRAM ", 0), 0u)
      << h.error();
}

TEST(SwitchLoadTest, RefusesTooManyStatefulAlusInAStage) {
  SwitchHarness h(Config("test_too_many_alus"));
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error(),
            "program test_too_many_alus does not fit: ingress stage 0: 8 stateful ALUs > 4");
}

TEST(SwitchLoadTest, RefusesASecondAccessToARegisterArrayAtLoad) {
  SwitchHarness h(Config("test_declared_twice"));
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error(),
            "program test_declared_twice: register bitmap is accessed twice in one pass "
            "(ingress stage 2 and ingress stage 5): one read-modify-write per array per pass");
}

TEST(SwitchLoadTest, ShowResourcesReportsUsageAgainstTheBudget) {
  SwitchHarness h(Config("l2l3"));
  ASSERT_TRUE(h.ok()) << h.error();
  Result<std::string> report = h.Cmd("show resources");
  ASSERT_TRUE(report.ok());
  EXPECT_NE(report->find("program l2l3: fits"), std::string::npos) << *report;
  EXPECT_NE(report->find("ingress stage  1"), std::string::npos) << *report;
  EXPECT_NE(report->find("table ipv4_lpm (8192 entries)"), std::string::npos) << *report;
  EXPECT_NE(report->find("register ecmp_rr"), std::string::npos) << *report;
  EXPECT_NE(report->find("ingress total: stages 6/12"), std::string::npos) << *report;
}

// The exact bytes ending a host memory line: "... 1.5 MiB (1572864 B)" or "... 512 B".
uint64_t LineBytes(const std::string& line) {
  const std::size_t end = line.rfind(" B");
  const std::size_t begin = line.find_last_of(" (", end - 1) + 1;
  return std::stoull(line.substr(begin, end - begin));
}

TEST(SwitchLoadTest, ShowResourcesAppendsHostMemoryOfEveryTableRegisterAndTheTm) {
  SwitchHarness h(Config("l2l3"));
  ASSERT_TRUE(h.ok()) << h.error();
  ASSERT_TRUE(h.Cmd("table_add dmac forward 00:00:00:00:00:0b => 1").ok());
  Result<std::string> report = h.Cmd("show resources");
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->rfind("program l2l3: fits", 0), 0u) << *report;  // the stage report first
  const std::size_t at =
      report->find("host memory (allocated by swemu at the configured sizes):\n");
  ASSERT_NE(at, std::string::npos) << *report;
  std::istringstream lines(report->substr(at));
  std::string line;
  std::getline(lines, line);
  std::map<std::string, uint64_t> bytes;  // "table dmac" -> its bytes
  uint64_t sum = 0, total = 0;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string what, name;
    words >> what >> name;
    if (what == "total") {
      total = LineBytes(line);
    } else {
      bytes[what + " " + name] = LineBytes(line);
      sum += LineBytes(line);
    }
  }
  std::size_t expected_lines = 1;  // the TM
  for (const MatchTable* t : h.sw().resources().Tables()) {
    EXPECT_EQ(bytes["table " + t->name()], t->HostBytes()) << t->name();
    ++expected_lines;
  }
  for (const RegisterArray* r : h.sw().resources().Registers()) {
    EXPECT_EQ(bytes["register " + r->name()], r->HostBytes()) << r->name();
    ++expected_lines;
  }
  EXPECT_EQ(bytes["tm queues"], h.sw().tm().HostBytes());
  EXPECT_EQ(bytes.size(), expected_lines) << *report;
  EXPECT_NE(report->find("dmac                 exact, 1/"), std::string::npos) << *report;
  EXPECT_NE(report->find("ecmp_rr"), std::string::npos) << *report;
  EXPECT_GT(total, 0u);
  EXPECT_EQ(total, sum) << *report;
}

TEST(SwitchTest, SecondRegisterAccessInOnePassDropsThePacket) {
  SwitchHarness h(Config("test_double_access"));
  ASSERT_TRUE(h.ok()) << h.error();
  h.Send(0, Frame("00:00:00:00:00:0b"));
  EXPECT_TRUE(h.Drain().empty());
  EXPECT_EQ(h.sw().Drops(DropReason::kRegisterDoubleAccess), 1u);
  EXPECT_EQ(*h.Cmd("register_read r 0"), "r[0]=1");  // the first access happened
  EXPECT_EQ(*h.Cmd("register_read r 1"), "r[1]=0");  // the second did not
}

TEST(SwitchTest, RecirculatesAndCountsAndLimits) {
  SwitchHarness h(Config("test_recirculate"));
  ASSERT_TRUE(h.ok()) << h.error();
  h.Send(0, Frame("00:00:00:00:00:0b"));
  EXPECT_EQ(h.Drain().size(), 1u);
  EXPECT_EQ(h.sw().counters().program.recirculated, 1u);
  EXPECT_EQ(h.sw().counters().program.ingress_packets, 2u);
  static_cast<RecirculateProgram&>(h.sw().program()).passes_ = 100;
  h.Send(0, Frame("00:00:00:00:00:0b"));
  EXPECT_TRUE(h.Drain().empty());
  EXPECT_EQ(h.sw().Drops(DropReason::kRecirculationLimit), 1u);
  EXPECT_EQ(h.sw().counters().program.recirculated, 1u + 4u);
}

TEST(SwitchTest, BadCommandsChangeNothing) {
  SwitchHarness h(Config("l2l3"));
  ASSERT_TRUE(h.ok()) << h.error();
  h.MustCmd("table_add dmac forward 00:00:00:00:00:0b => 1");
  const std::string before = h.sw().CountersJson() + *h.Cmd("table_dump dmac");
  for (const char* bad :
       {"table_add dmac forward 00:00:00:00:00:0c => 99999",
        "table_add dmac forward 00:00:00:00:00:0b => 2", "table_add nosuch forward 1 => 1",
        "table_add dmac fly 1 => 1", "table_delete dmac 42", "set_ecn_threshold all all lots",
        "set_port_rate 9 10G", "set_queue_depth 0", "mc_node_associate 3 0",
        "register_write ecmp_rr 1 70000", "register_read ecmp_rr 99999"}) {
    Result<std::string> r = h.Cmd(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.message().find('\n'), std::string::npos) << r.message();
  }
  EXPECT_EQ(before, h.sw().CountersJson() + *h.Cmd("table_dump dmac"));
  EXPECT_EQ(h.sw().tm().EcnThreshold(0, 0), 0u);
}

// Every packet in is forwarded, consumed or dropped with a reason (or still queued).
TEST(SwitchTest, ConservationUnderMixedAndMalformedTraffic) {
  SwitchConfig config = Config("l2l3");
  config.tm.queue.depth_pkts = 16;
  SwitchHarness h(config);
  ASSERT_TRUE(h.ok()) << h.error();
  h.MustCmd("table_add dmac forward 00:00:00:00:00:0b => 1");
  h.MustCmd("mc_mgrp_create 1");
  h.MustCmd("mc_node_create 0 1 2 3");
  h.MustCmd("mc_node_associate 1 0");
  h.MustCmd("table_add dmac multicast ff:ff:ff:ff:ff:ff => 1");
  h.MustCmd("set_port_rate all 1G");
  std::mt19937 rng(7);
  uint64_t sent = 0;
  for (int i = 0; i < 2000; ++i) {
    int kind = static_cast<int>(rng() % 4);
    std::vector<uint8_t> f = Frame(kind == 0   ? "00:00:00:00:00:0b"
                                   : kind == 1 ? "ff:ff:ff:ff:ff:ff"
                                               : "00:00:00:00:00:0c");
    if (kind == 3) f.resize(rng() % f.size());  // truncated somewhere
    h.Send(static_cast<PortId>(rng() % 4), f);
    ++sent;
    if (i % 50 == 0) h.clock().Advance(2000);
  }
  uint64_t delivered = h.Drain().size();
  const Switch& sw = h.sw();
  uint64_t rx = 0;
  for (const PortCounters& p : sw.counters().ports) rx += p.rx_packets;
  EXPECT_EQ(rx, sent);
  EXPECT_GT(sw.Drops(DropReason::kTmQueueFull), 0u);
  EXPECT_GT(sw.Drops(DropReason::kTableMiss), 0u);
  EXPECT_EQ(sw.tm().TotalQueued(), 0u);
  EXPECT_EQ(sent + sw.tm().multicast_copies(),
            delivered + sw.counters().program.consumed + sw.TotalDrops());
}

// A burst takes the same path through ingress and the TM as its packets one by one (the switch
// hands the TM a burst to one port and queue as a single run, anything else packet by packet),
// and so does a burst received in two halves (StartPass on each packet, then ReceiveStarted).
class BurstPathTest : public ::testing::Test {
 protected:
  static SwitchConfig SmallQueues() {
    SwitchConfig config = Config("l2l3");
    config.tm.queue.depth_pkts = 6;  // a burst of 8 to one queue overflows it
    return config;
  }
  static void Setup(SwitchHarness& h) {
    h.MustCmd("table_add dmac forward 00:00:00:00:00:0b => 1");
    h.MustCmd("table_add dmac forward 00:00:00:00:00:0c => 2");
    h.MustCmd("mc_mgrp_create 1");
    h.MustCmd("mc_node_create 0 1 2 3");
    h.MustCmd("mc_node_associate 1 0");
    h.MustCmd("table_add dmac multicast ff:ff:ff:ff:ff:ff => 1");
  }
  // State that differs if any packet was queued, counted or dropped differently.
  static std::string State(SwitchHarness& h) {
    const TrafficManager& tm = h.sw().tm();
    std::string state = h.sw().CountersJson() + tm.DescribeQueues(true);
    for (PortId p = 0; p < tm.num_ports(); ++p) {
      state += " port " + std::to_string(p) + " " + std::to_string(tm.PortDepthBytes(p)) + " B, " +
               std::to_string(tm.queue_counters(p, 0).enq_bytes) + " B in";
    }
    return state + " shared " + std::to_string(tm.SharedUsedBytes()) + " B";
  }
  // to_tm: how many of the frames ingress hands to the TM (the TM may still drop them).
  void ExpectSamePath(const std::vector<std::vector<uint8_t>>& frames, uint64_t to_tm) {
    SwitchHarness burst(SmallQueues()), single(SmallQueues()), halves(SmallQueues());
    for (SwitchHarness* h : {&burst, &single, &halves}) {
      ASSERT_TRUE(h->ok()) << h->error();
      Setup(*h);
    }
    burst.SendBurst(0, frames);
    for (const std::vector<uint8_t>& frame : frames) single.Send(0, frame);
    std::vector<Packet*> pkts;
    uint64_t bytes = 0;
    for (const std::vector<uint8_t>& frame : frames) {
      pkts.push_back(halves.pool().FromBytes(frame.data(), static_cast<uint32_t>(frame.size())));
      halves.sw().StartPass(*pkts.back(), 0, halves.clock().NowNs());
      bytes += frame.size();
    }
    halves.sw().ReceiveStarted(pkts.data(), static_cast<uint32_t>(pkts.size()), 0, bytes);
    EXPECT_EQ(burst.sw().counters().program.to_tm, to_tm);
    EXPECT_EQ(State(burst), State(single));
    EXPECT_EQ(State(halves), State(single));
    std::vector<SentFrame> out = burst.Drain();
    EXPECT_EQ(out, single.Drain());
    EXPECT_EQ(halves.Drain(), out);
  }
};

TEST_F(BurstPathTest, OneRunThatFitsItsQueue) {
  ExpectSamePath(std::vector<std::vector<uint8_t>>(5, Frame("00:00:00:00:00:0b")), 5);
}

TEST_F(BurstPathTest, OneRunThatOverflowsItsQueue) {
  ExpectSamePath(std::vector<std::vector<uint8_t>>(8, Frame("00:00:00:00:00:0b")), 8);
}

// The run test compares every packet with the burst's first, which here the table drops.
TEST_F(BurstPathTest, ARunBehindAPacketTheProgramDrops) {
  std::vector<std::vector<uint8_t>> frames(5, Frame("00:00:00:00:00:0b"));
  frames.insert(frames.begin(), Frame("00:00:00:00:00:0d"));  // misses the table
  ExpectSamePath(frames, 5);
}

TEST_F(BurstPathTest, MixedPortsMulticastAndMisses) {
  std::vector<std::vector<uint8_t>> frames;
  for (const char* dst :
       {"00:00:00:00:00:0b", "00:00:00:00:00:0c", "00:00:00:00:00:0b", "ff:ff:ff:ff:ff:ff",
        "00:00:00:00:00:0d", "00:00:00:00:00:0b", "00:00:00:00:00:0b", "00:00:00:00:00:0b",
        "00:00:00:00:00:0b", "00:00:00:00:00:0b", "00:00:00:00:00:0c"}) {
    frames.push_back(Frame(dst));
  }
  frames[1].resize(10);                       // truncated: the parser drops it
  ExpectSamePath(frames, frames.size() - 2);  // and 0d misses the table
}

}  // namespace
}  // namespace swemu
