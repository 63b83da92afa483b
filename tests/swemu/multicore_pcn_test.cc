// `show pcn` and `pcn_stats` on two replicas ([dpdk] workers = 2) merged by the rules the pcn
// program declares: for the same traffic they equal one unsharded switch's answers. A port's
// job lanes live on the replica that owns the port (its egress runs there): with PS A behind
// port 1, replica 0 alone shows nothing of PS A's jobs.
#include <gtest/gtest.h>

#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/pcn.h"
#include "tests/swemu/multicore_replicas.h"

namespace swemu {
namespace {

const MacAddr kPsA = MacAddr::FromU64(0x301);  // port 1: replica 1's
const MacAddr kPsB = MacAddr::FromU64(0x302);  // port 2: replica 0's
const MacAddr kWorkers = MacAddr::FromU64(0x1);

SwitchConfig Config() {
  SwitchConfig config;
  config.num_ports = 4;
  config.program = "pcn";
  return config;
}

std::vector<uint8_t> Start(uint8_t worker, MacAddr ps, uint32_t threshold) {
  return FrameBuilder()
      .Eth(ps, kWorkers)
      .Ipv4(MakeIpv4Addr(10, 0, 0, worker), MakeIpv4Addr(10, 0, 3, ps == kPsA ? 1 : 2))
      .Tos(PcnTos{true, false, threshold}.Encode(kEcnEct0))
      .Udp(40000, kPcnDefaultUdpPort)
      .Payload(16)
      .Build();
}

std::vector<uint8_t> Data(uint8_t worker, MacAddr ps) {
  return FrameBuilder()
      .Eth(ps, kWorkers)
      .Ipv4(MakeIpv4Addr(10, 0, 0, worker), MakeIpv4Addr(10, 0, 3, ps == kPsA ? 1 : 2))
      .Tos(kEcnEct0)
      .Tcp(50000, 5201)
      .Payload(1448)
      .Build();
}

class MulticorePcnTest : public ::testing::Test {
 protected:
  MulticorePcnTest() : twin_(Config(), 2) {
    for (const char* line :
         {"table_add dmac forward 00:00:00:00:03:01 => 1",
          "table_add dmac forward 00:00:00:00:03:02 => 2", "table_add pcn_job job 10.0.3.1 => 0",
          "table_add pcn_job job 10.0.3.2 => 1", "pcn_initial 2 30"}) {
      twin_.Cmd(line);
    }
    // PS A: three workers announce, one burst arrives; PS B: one worker announces.
    for (uint8_t w : {1, 2, 3}) twin_.Send(w % 2 == 0 ? 3 : 0, Start(w, kPsA, 10));
    twin_.Send(0, Start(4, kPsB, 20));
    twin_.Send(3, Data(2, kPsA));
    twin_.DrainReference();
    twin_.replicas().Drain();
  }

  testing::ReplicasAndReference twin_;
};

TEST_F(MulticorePcnTest, ShowPcnIsTheWholeSwitch) {
  Result<std::string> whole = twin_.reference().commands().Execute("show pcn");
  ASSERT_TRUE(whole.ok()) << whole.message();
  EXPECT_NE(whole->find("port 1: initial 40, active 10, job 0: 2 pending"), std::string::npos)
      << *whole;
  EXPECT_NE(whole->find("port 2: initial 30, active 20, job 1: 1 pending"), std::string::npos)
      << *whole;
  const std::vector<std::string> answers = twin_.replicas().Answers("show pcn");
  EXPECT_EQ(answers[0].find("port 1: initial 40, active 10"), std::string::npos)
      << "replica 0 holds no lane of port 1:\n"
      << answers[0];
  twin_.ExpectMergedEqualsReference("show pcn");
}

TEST_F(MulticorePcnTest, PcnStatsIsTheWholeSwitch) {
  twin_.ExpectMergedEqualsReference("pcn_stats");
}

}  // namespace
}  // namespace swemu
