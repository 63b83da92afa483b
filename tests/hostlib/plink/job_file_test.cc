// PLink's job file (hostlib/plink/job_file.h): the written form reads back as the same job, the
// groups become labels by first appearance and give 2LHA's plan (flat: FA's), and bad files are
// refused with one line naming the line or the problem.
#include "hostlib/plink/job_file.h"

#include <gtest/gtest.h>

namespace swemu {
namespace {

PlinkJob TwoRacks() {
  PlinkJob job;
  job.job_id = 7;
  job.udp_port = 9300;
  job.floats = 1000;
  job.chunk_bytes = 1024;
  for (int h = 0; h < 4; ++h) {
    job.nodes.push_back({"h" + std::to_string(h), MacAddr::FromU64(0x0200000001u + h),
                         MakeIpv4Addr(10, 0, h < 2 ? 1 : 2, static_cast<uint8_t>(h % 2 + 1)),
                         h < 2 ? "leaf1" : "leaf2", MacAddr{}});
  }
  return job;
}

TEST(PlinkJobFile, RoundTrips) {
  for (bool flat : {false, true}) {
    PlinkJob job = TwoRacks();
    job.flat = flat;
    const std::string text = FormatPlinkJob(job);
    Result<PlinkJob> back = ParsePlinkJob(text);
    ASSERT_TRUE(back.ok()) << back.message() << "\n" << text;
    EXPECT_EQ(FormatPlinkJob(*back), text);
    EXPECT_EQ(back->job_id, 7);
    EXPECT_EQ(back->udp_port, 9300);
    EXPECT_EQ(back->floats, 1000u);
    EXPECT_EQ(back->chunk_bytes, 1024u);
    EXPECT_EQ(back->flat, flat);
    ASSERT_EQ(back->num_nodes(), 4u);
    EXPECT_EQ(back->nodes[2].name, "h2");
    EXPECT_EQ(back->nodes[2].ip, MakeIpv4Addr(10, 0, 2, 1));
    EXPECT_EQ(back->nodes[2].mac, MacAddr::FromU64(0x0200000003u));
    EXPECT_EQ(back->Find("h3"), 3);
    EXPECT_EQ(back->Find("h9"), -1);
  }
}

// `learn` (an unknown MAC) and a router's gw_mac read back; on a DPDK port a node with gw_mac
// writes every frame to it, one without it to each peer's own MAC.
TEST(PlinkJobFile, LearnAndGatewayMacsRoundTripAndAddressTheFrames) {
  PlinkJob job = TwoRacks();
  job.nodes[1].mac = MacAddr{};
  job.nodes[2].gateway_mac = MacAddr::FromU64(0x02000000fe02u);
  const std::string text = FormatPlinkJob(job);
  EXPECT_NE(text.find("node = h1 learn 10.0.1.2 leaf1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("node = h2 00:02:00:00:00:03 10.0.2.1 leaf2 gw_mac=02:00:00:00:fe:02\n"),
            std::string::npos)
      << text;
  Result<PlinkJob> back = ParsePlinkJob(text);
  ASSERT_TRUE(back.ok()) << back.message() << "\n" << text;
  EXPECT_EQ(FormatPlinkJob(*back), text);
  EXPECT_EQ(back->nodes[1].mac, MacAddr{});
  EXPECT_EQ(back->nodes[0].gateway_mac, MacAddr{});
  const std::vector<PlinkNodeAddr> routed = back->FrameAddresses(2);
  const std::vector<PlinkNodeAddr> direct = back->FrameAddresses(0);
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(routed[i].ip, back->nodes[i].ip);
    EXPECT_EQ(routed[i].mac, i == 2 ? back->nodes[2].mac : back->nodes[2].gateway_mac) << i;
    EXPECT_EQ(direct[i].mac, back->nodes[i].mac) << i;
  }
}

TEST(PlinkJobFile, GroupsAreLabelledByFirstAppearanceAndGiveThePlan) {
  Result<PlinkJob> job = ParsePlinkJob(
      "# comment\n[job]\nid = 1\nfloats = 4096   # 16 KiB\nchunk = 4KB\n"
      "node = a 02:00:00:00:00:01 10.0.0.1 rackB\nnode = b 02:00:00:00:00:02 10.0.0.2 rackA\n"
      "node = c 02:00:00:00:00:03 10.0.0.3 rackB\n");
  ASSERT_TRUE(job.ok()) << job.message();
  EXPECT_EQ(job->udp_port, kPlinkDefaultUdpPort);
  EXPECT_FALSE(job->flat);
  EXPECT_EQ(job->GroupLabels(), (std::vector<uint32_t>{0, 1, 0}));
  Result<AggPlan> plan = job->Plan();
  ASSERT_TRUE(plan.ok()) << plan.message();
  EXPECT_EQ(plan->groups, 2u);
  EXPECT_FALSE(plan->flat);
  EXPECT_EQ(plan->chunk_bytes, (std::vector<uint64_t>{4000, 4000, 4000, 4000, 384}));  // 4KB: SI
  job->flat = true;
  plan = job->Plan();
  ASSERT_TRUE(plan.ok()) << plan.message();
  EXPECT_TRUE(plan->flat);
}

TEST(PlinkJobFile, BadFilesAreRefusedWithOneLine) {
  const std::string head = "[job]\nid = 1\nfloats = 64\n";
  const std::string a = "node = a 02:00:00:00:00:01 10.0.0.1 r0\n";
  const std::string b = "node = b 02:00:00:00:00:02 10.0.0.2 r0\n";
  const struct {
    std::string text, want;
  } cases[] = {
      {"id = 1\n", "plink job line 1: expected [job] first"},
      {head + "floats = 2\n" + a + b, "plink job line 4: floats given twice"},
      {head + "chunk 4\n" + a + b, "plink job line 4: expected KEY = VALUE"},
      {head + "speed = 4\n" + a + b, "plink job line 4: unknown key speed"},
      {head + "plan = tree\n" + a + b, "plink job line 4: plan: 2lha or flat"},
      {head + "node = a 02:00:00:00:00:01 10.0.0.1\n" + b, "line 4: node: expected NAME MAC IP"},
      {head + "node = a 02:00 10.0.0.1 r0\n" + b, "line 4: node a: "},
      {head + "node = a 02:00:00:00:00:01 10.0.0.1 r0 gw=02:00:00:00:00:fe\n" + b,
       "line 4: node a: gw=02:00:00:00:00:fe: expected gw_mac=M"},
      {head + "node = a 02:00:00:00:00:01 10.0.0.1 r0 gw_mac=x\n" + b, "line 4: node a: gw_mac: "},
      {head + "node = a 02:00:00:00:00:01 10.0.0.1 r0 gw_mac=02:00:00:00:00:fe x\n" + b,
       "line 4: node: expected NAME MAC IP GROUP [gw_mac=M]"},
      {head + a, "2 to 256 nodes, not 1"},
      {head + a + a, "node a twice"},
      {head + a + "node = b 02:00:00:00:00:02 10.0.0.1 r0\n", "address 10.0.0.1 twice"},
      {head + "chunk = 6\n" + a + b, "chunk 6: whole floats"},
      {"[job]\nid = 300\nfloats = 64\n" + a + b, "id 1 to 255"},
      {"[job]\nid = 1\n" + a + b, "plink job: no floats"},
  };
  for (const auto& c : cases) {
    Result<PlinkJob> job = ParsePlinkJob(c.text);
    ASSERT_FALSE(job.ok()) << c.text;
    EXPECT_NE(job.message().find(c.want), std::string::npos) << job.message();
    EXPECT_EQ(job.message().find('\n'), std::string::npos) << job.message();
  }
}

}  // namespace
}  // namespace swemu
