// PCN's network from a topology (hostlib/pcn/network.h): the bundled file is the default shape
// and runs byte for byte as it does; the roles are checked (one PS, a worker, every worker able
// to reach the PS); and the experiment runs on another system's topology (the leaf-spine of
// configs/leaf_spine.topo, with PCN's hosts on its free ports).
#include "hostlib/pcn/network.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "hostlib/pcn/experiment.h"

namespace swemu {
namespace {

const std::string kBundled = SWEMU_SOURCE_DIR "/configs/pcn_experiment.topo";

// A short run: 2 bursts per worker from 1 s, 1 s idle.
PcnExperimentOptions Short() {
  PcnExperimentOptions o;
  o.duration_ns = 6'000'000'000;
  o.ddl_start_ns = 1'000'000'000;
  o.idle_ns = 1'000'000'000;
  o.iterations = 2;
  return o;
}

// `lines` as a .topo in the test's directory (after the bundled file's switches, links and
// hosts with `include`, when include_bundled).
std::string WriteTopology(const std::string& lines) {
  const std::string dir = ::testing::TempDir() + "pcn_network_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/network.topo";
  std::ofstream(path) << "[topology]\n" << lines;
  return path;
}

Result<PcnNetwork> FromFile(const std::string& path) {
  Result<TopologyConfig> topo = LoadTopology(path);
  if (!topo.ok()) return topo.status();
  return PcnNetworkFromTopology(std::move(*topo));
}

TEST(PcnNetwork, TheDefaultShapeFollowsTheOptions) {
  PcnExperimentOptions o;
  o.workers = 3;
  o.background_per_leaf = 1;
  Result<PcnNetwork> net = DefaultPcnNetwork(o);
  ASSERT_TRUE(net.ok()) << net.message();
  EXPECT_EQ(net->shape, "root + 2 leaves, 1 background hosts per leaf");
  EXPECT_EQ(net->ps_switch_name(), "root");
  EXPECT_EQ(net->host(net->ps).port, 2u);
  ASSERT_EQ(net->workers.size(), 3u);
  EXPECT_EQ(net->host(net->workers[0]).name, "w0");  // leaf1: w0 and w2, then leaf2: w1
  EXPECT_EQ(net->host(net->workers[1]).name, "w2");
  EXPECT_EQ(net->host(net->workers[2]).sw, "leaf2");
  for (const PcnHost& w : net->workers) EXPECT_EQ(w.rtt_ns, o.rtt_ns);
  EXPECT_EQ(net->nic_bps, o.edge_bps);
  const TmConfig& root_tm = net->topo.switches[0].config.tm;  // the bottleneck: root's port 2
  EXPECT_EQ(root_tm.PortRateBps(2), o.bottleneck_bps);
  EXPECT_EQ(root_tm.QueueFor(2).depth_pkts, 60u);
}

TEST(PcnNetwork, TheBundledFileIsTheDefaultShape) {
  const PcnExperimentOptions o = Short();
  Result<PcnNetwork> file = FromFile(kBundled);
  ASSERT_TRUE(file.ok()) << file.message();
  for (bool pcn : {false, true}) {
    Result<PcnRunResult> a = RunPcnExperiment(o, pcn);
    Result<PcnRunResult> b = RunPcnExperiment(o, *file, pcn);
    ASSERT_TRUE(a.ok() && b.ok()) << a.message() << b.message();
    EXPECT_EQ(PcnRunJson(*a), PcnRunJson(*b));
    EXPECT_EQ(FormatPcnComparison(o, *a, *a), FormatPcnComparison(o, *b, *b));
    EXPECT_EQ(b->network.bottleneck_bps, o.bottleneck_bps);
    EXPECT_EQ(b->network.queue_pkts, o.queue_pkts);
  }
}

TEST(PcnNetwork, RolesAreChecked) {
  const std::string ini = SWEMU_SOURCE_DIR "/configs/pcn_experiment/";
  const std::string switches = "switch = root " + ini + "root.ini\nswitch = leaf1 " + ini +
                               "leaf1.ini\nswitch = leaf2 " + ini + "leaf2.ini\n" +
                               "link = root:0 leaf1:0 rate=1G delay=1ms\n";
  struct Case {
    std::string hosts;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {"host = leaf1:1 name=w0 role=worker\n", "no PS: one host should say role=ps"},
           {"host = root:2 name=a role=ps\nhost = leaf1:1 name=b role=ps\n"
            "host = leaf1:2 name=w0 role=worker\n",
            "more than one host says role=ps (a, b)"},
           {"host = root:2 name=ps role=ps\n", "no workers"},
           {"host = root:2 name=ps role=ps\nhost = leaf2:1 name=w0 role=worker\n",
            "worker w0 on leaf2 cannot reach the PS's switch root"},
           {"host = root:2 name=ps role=ps\nhost = leaf1:9 name=w0 role=worker\n",
            "leaf1 has ports 0..4"},
           {"host = root:0 name=ps role=ps\nhost = leaf1:1 name=w0 role=worker\n",
            "already a link's or another host's"},
           {"host = leaf1:1 name=ps role=ps\nhost = leaf1:2 name=w0 role=worker\n",
            "worker w0 is no time away from the PS"},
       }) {
    Result<PcnNetwork> net = FromFile(WriteTopology(switches + c.hosts));
    ASSERT_FALSE(net.ok()) << c.hosts;
    EXPECT_NE(net.message().find(c.error), std::string::npos) << net.message();
    EXPECT_EQ(net.message().find('\n'), std::string::npos) << net.message();
  }
}

TEST(PcnNetwork, AnUnshapedPsPortIsRefused) {
  const std::string ini = SWEMU_SOURCE_DIR "/configs/pcn_experiment/";
  Result<PcnNetwork> net = FromFile(
      WriteTopology("switch = leaf1 " + ini + "leaf1.ini\nhost = leaf1:0 name=ps role=ps\n"
                    "host = leaf1:1 delay=1ms name=w0 role=worker\n"));
  ASSERT_TRUE(net.ok()) << net.message();
  Status built = CheckPcnNetwork(Short(), *net);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.message().find("leaf1:0 is the bottleneck and must be shaped"),
            std::string::npos)
      << built.message();
}

// GOAT's and the main job's leaf-spine (two leaves, a spine, 10G links, l2l3 switch scripts)
// with the PS on the spine and a worker on each leaf: both runs complete every burst.
TEST(PcnNetwork, RunsOnTheLeafSpine) {
  Result<PcnNetwork> net = FromFile(WriteTopology(
      "include = " SWEMU_SOURCE_DIR "/configs/leaf_spine.topo\n"
      "host = spine:2 delay=100us name=ps role=ps\n"
      "host = spine:3 delay=100us name=bg role=background\n"
      "host = leaf1:3 delay=100us name=w0 role=worker\n"
      "host = leaf2:3 delay=100us name=w1 role=worker\n"));
  ASSERT_TRUE(net.ok()) << net.message();
  EXPECT_EQ(net->shape, "3 switches (the PS on spine), 1 background hosts");
  // 10 Gbit/s links carry millions of background frames per second of virtual time: keep the
  // run short enough for the sanitizer build (a burst takes a few ms at that rate).
  PcnExperimentOptions o = Short();
  o.duration_ns = 600'000'000;
  o.ddl_start_ns = 100'000'000;
  o.idle_ns = 50'000'000;
  for (bool pcn : {false, true}) {
    Result<PcnRunResult> run = RunPcnExperiment(o, *net, pcn);
    ASSERT_TRUE(run.ok()) << run.message();
    EXPECT_EQ(run->bursts.size(), 4u);
    EXPECT_EQ(run->network.bottleneck_bps, 10'000'000'000u);  // spine.ini's port rate
    EXPECT_EQ(run->network.queue_pkts, 512u);                 // and queue depth
    EXPECT_GT(run->background_mbps, 0);
    EXPECT_EQ(run->pcn_starts, pcn ? 4u : 0u);
    EXPECT_EQ(run->pcn_bursts_arrived, pcn ? 4u : 0u);
  }
}

}  // namespace
}  // namespace swemu
