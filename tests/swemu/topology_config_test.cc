#include "swemu/topology_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace swemu {
namespace {

std::string TestDir() {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = testing::TempDir() + "topology_config_test_" + info->name() + "/";
  std::filesystem::create_directories(dir + "sw");
  return dir;
}

std::string Write(const std::string& name, const std::string& text) {
  std::string path = TestDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(TopologyConfigTest, ReadsSwitchesLinksHostsAndSeed) {
  Write("sw/leaf.ini", "[switch]\nname = ignored\nports = 6\n");
  Write("sw/spine.ini", "[switch]\nports = 2\n");
  const std::string path = Write("fabric.topo", R"([topology]
switch = leaf1 sw/leaf.ini
switch = spine sw/spine.ini
link = leaf1:4 spine:0 rate=40G delay=2us loss=0.01
link = leaf1:5 spine:1
host = leaf1:0
host = leaf1:1 delay=300ns loss=0.5%
seed = 42
)");
  Result<TopologyConfig> topo = LoadTopology(path);
  ASSERT_TRUE(topo.ok()) << topo.message();
  EXPECT_EQ(topo->seed, 42u);
  ASSERT_EQ(topo->switches.size(), 2u);
  EXPECT_EQ(topo->switches[0].config.name, "leaf1");  // the topology names the switch
  EXPECT_EQ(topo->switches[0].config.num_ports, 6);
  EXPECT_EQ(topo->switches[1].config.name, "spine");
  ASSERT_EQ(topo->links.size(), 2u);
  const LinkSpec& l0 = topo->links[0];
  EXPECT_EQ(l0.a, "leaf1");
  EXPECT_EQ(l0.a_port, 4);
  EXPECT_EQ(l0.b, "spine");
  EXPECT_EQ(l0.b_port, 0);
  EXPECT_EQ(l0.rate_bps, 40'000'000'000u);
  EXPECT_EQ(l0.delay_ns, 2000u);
  EXPECT_DOUBLE_EQ(l0.loss, 0.01);
  const LinkSpec& l1 = topo->links[1];  // defaults
  EXPECT_EQ(l1.rate_bps, 10'000'000'000u);
  EXPECT_EQ(l1.delay_ns, 0u);
  EXPECT_EQ(l1.loss, 0.0);
  ASSERT_EQ(topo->hosts.size(), 2u);
  EXPECT_EQ(topo->hosts[0].sw, "leaf1");
  EXPECT_EQ(topo->hosts[0].port, 0);
  EXPECT_EQ(topo->hosts[0].delay_ns, 0u);
  EXPECT_EQ(topo->hosts[1].port, 1);
  EXPECT_EQ(topo->hosts[1].delay_ns, 300u);
  EXPECT_DOUBLE_EQ(topo->hosts[1].loss, 0.005);
}

struct BadCase {
  const char* line;
  const char* expected;
};

class TopologyErrorTest : public testing::TestWithParam<BadCase> {};

TEST_P(TopologyErrorTest, GivesOneLineNamingTheLine) {
  Write("a.ini", "[switch]\nports = 4\n");
  Write("bad.ini", "[switch]\nports = many\n");
  const std::string path =
      Write("bad.topo", std::string("[topology]\nswitch = a a.ini\n") + GetParam().line + "\n");
  Result<TopologyConfig> topo = LoadTopology(path);
  ASSERT_FALSE(topo.ok()) << GetParam().line;
  EXPECT_NE(topo.message().find(GetParam().expected), std::string::npos) << topo.message();
  EXPECT_EQ(topo.message().rfind(path + ": ", 0), 0u) << topo.message();
  EXPECT_EQ(topo.message().find('\n'), std::string::npos) << topo.message();
}

INSTANTIATE_TEST_SUITE_P(
    Lines, TopologyErrorTest,
    testing::Values(
        BadCase{"switch = a a.ini", "duplicate switch name a"},
        BadCase{"switch = b", "expected NAME PATH.ini"},
        BadCase{"switch = b missing.ini",
                "missing.ini: cannot open config (No such file or directory)"},
        BadCase{"switch = b bad.ini", "bad.ini: switch.ports: \"many\" is not an unsigned integer"},
        BadCase{"link = a:1", "expected A:PORT B:PORT"},
        BadCase{"link = a1 b:0", "\"a1\" is not SWITCH:PORT"},
        BadCase{"link = a:x b:0", "\"a:x\": port"},
        BadCase{"link = a:1 a:2 rate=fast", "rate: \"fast\" is not a rate"},
        BadCase{"link = a:1 a:2 delay=forever", "delay: "},
        BadCase{"link = a:1 a:2 loss=2", "loss: "},
        BadCase{"link = a:1 a:2 colour=red", "unknown attribute colour"},
        BadCase{"link = a:1 a:2 rate", "\"rate\" is not name=value"},
        BadCase{"host = a:0 rate=1G",
                "unknown attribute rate (expected delay, loss, name, ip, mac, gw, gw_mac or role)"},
        BadCase{"host = a:0 ip=10.0.1.1", "ip: \"10.0.1.1\" is not A.B.C.D/LEN"},
        BadCase{"host = a:0 ip=10.0.1.1/33", "is not A.B.C.D/LEN"},
        BadCase{"host = a:0 mac=02:00", "mac: \"02:00\" is not a MAC address"},
        BadCase{"host = a:0 gw=10.0.1.254", "gw and gw_mac need ip="},
        BadCase{"host = a:0 ip=10.0.1.1/24 gw=x", "gw: \"x\" is not A.B.C.D"},
        BadCase{"host = a:0 name=h0\nhost = a:1 name=h0", "duplicate host name h0"},
        BadCase{"host = a:0\nhost = a:1 name=a-p0", "duplicate host name a-p0"},
        BadCase{"run = h0 iperf3 -s", "no host named h0 above this line"},
        BadCase{"host = a:0 name=h0\nrun = h0", "expected HOST COMMAND..."},
        BadCase{"host =", "expected SW:PORT"}, BadCase{"seed = x", "topology.seed \"x\": "},
        BadCase{"seed = 1\nseed = 2", "given twice"},
        BadCase{"router = a", "topology.router \"a\": unknown key"},
        BadCase{"include =", "expected PATH.topo"}, BadCase{"[other]\nx = 1", "other.x"}));

TEST(TopologyConfigTest, ReadsHostAddressesAndRunLines) {
  Write("a.ini", "[switch]\nports = 4\n");
  const std::string path = Write("hosts.topo", R"([topology]
switch = a a.ini
host = a:0 name=h0 ip=10.0.1.1/24 mac=02:00:00:00:01:01 gw=10.0.1.254 gw_mac=02:00:00:00:01:fe delay=1us
host = a:1
run = h0 sleep 1;  iperf3 -c 10.0.1.2 -t "2"
run = a-p1   iperf3 -s
)");
  Result<TopologyConfig> topo = LoadTopology(path);
  ASSERT_TRUE(topo.ok()) << topo.message();
  ASSERT_EQ(topo->hosts.size(), 2u);
  const TopologyHost& h0 = topo->hosts[0];
  EXPECT_EQ(h0.name, "h0");
  EXPECT_EQ(h0.ip, "10.0.1.1/24");
  EXPECT_EQ(h0.mac, "02:00:00:00:01:01");
  EXPECT_EQ(h0.gateway, "10.0.1.254");
  EXPECT_EQ(h0.gateway_mac, "02:00:00:00:01:fe");
  EXPECT_EQ(h0.delay_ns, 1000u);
  EXPECT_EQ(topo->hosts[1].name, "a-p1");  // the default name: SW-pPORT
  EXPECT_TRUE(topo->hosts[1].ip.empty());
  ASSERT_EQ(topo->runs.size(), 2u);
  EXPECT_EQ(topo->runs[0].host, "h0");
  // The command is the rest of the line as written, quotes and separators kept for sh -c.
  EXPECT_EQ(topo->runs[0].command, "sleep 1;  iperf3 -c 10.0.1.2 -t \"2\"");
  EXPECT_EQ(topo->runs[1].host, "a-p1");
  EXPECT_EQ(topo->runs[1].command, "iperf3 -s");
}

TEST(TopologyConfigTest, ReadsARoleAndRefusesTwoWords) {
  Write("a.ini", "[switch]\nports = 4\n");
  Result<TopologyConfig> topo =
      LoadTopology(Write("roles.topo", "[topology]\nswitch = a a.ini\nhost = a:0 role=ps\n"
                                       "host = a:1\n"));
  ASSERT_TRUE(topo.ok()) << topo.message();
  EXPECT_EQ(topo->hosts[0].role, "ps");
  EXPECT_EQ(topo->hosts[1].role, "");
  Result<TopologyConfig> bad =
      LoadTopology(Write("bad.topo", "[topology]\nswitch = a a.ini\nhost = a:0 role=a/b\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("role: one word"), std::string::npos) << bad.message();
}

TEST(TopologyConfigTest, BundledLeafSpineNamesItsHosts) {
  Result<TopologyConfig> topo = LoadTopology(SWEMU_SOURCE_DIR "/configs/leaf_spine.topo");
  ASSERT_TRUE(topo.ok()) << topo.message();
  ASSERT_EQ(topo->hosts.size(), 4u);
  EXPECT_EQ(topo->hosts[2].name, "h2");
  EXPECT_EQ(topo->hosts[2].ip, "10.0.2.1/24");
  EXPECT_EQ(topo->hosts[2].gateway_mac, "00:00:00:00:02:fe");  // leaf2's router MAC
}

TEST(TopologyConfigTest, IncludeReadsAnotherFileAsIfWrittenThere) {
  Write("sw/a.ini", "[switch]\nports = 4\n");
  Write("sw/net.topo", "[topology]\nswitch = a a.ini\nhost = a:0 name=h0\nseed = 5\n");
  const std::string path = Write("mine.topo",
                                 "[topology]\ninclude = sw/net.topo\n"
                                 "host = a:1 name=h1\nrun = h0 iperf3 -s\n");
  Result<TopologyConfig> topo = LoadTopology(path);
  ASSERT_TRUE(topo.ok()) << topo.message();
  ASSERT_EQ(topo->switches.size(), 1u);  // sw/a.ini: relative to the included file
  EXPECT_EQ(topo->seed, 5u);
  ASSERT_EQ(topo->hosts.size(), 2u);
  EXPECT_EQ(topo->runs.at(0).host, "h0");
  EXPECT_EQ(topo->path, path);
}

TEST(TopologyConfigTest, IncludeErrorsNameTheFileAndLine) {
  Write("a.ini", "[switch]\nports = 4\n");
  Write("loop.topo", "[topology]\ninclude = loop.topo\n");
  Write("bad.topo", "[topology]\nswitch = a a.ini\nhost = a:9 mac=x\n");
  const std::string loop = TestDir() + "loop.topo";
  struct Case {
    std::string text, expected;
  };
  for (const Case& c : {Case{"include = loop.topo", "includes nested too deep (a cycle?)"},
                        Case{"include = missing.topo", "missing.topo: cannot open"},
                        Case{"include = bad.topo", "bad.topo: topology.host \"a:9 mac=x\": mac:"},
                        Case{"include = a.topo b.topo", "expected PATH.topo"}}) {
    Result<TopologyConfig> topo = LoadTopology(Write("t.topo", "[topology]\n" + c.text + "\n"));
    ASSERT_FALSE(topo.ok()) << c.text;
    EXPECT_NE(topo.message().find(c.expected), std::string::npos) << topo.message();
    EXPECT_EQ(topo.message().find('\n'), std::string::npos);
  }
}

TEST(TopologyConfigTest, NoSwitchIsAnError) {
  Result<TopologyConfig> topo = LoadTopology(Write("empty.topo", "[topology]\nseed = 3\n"));
  ASSERT_FALSE(topo.ok());
  EXPECT_NE(topo.message().find("no switch"), std::string::npos);
}

TEST(ParseSwitchPortTest, AcceptsNameColonPort) {
  std::string sw;
  PortId port = 0;
  ASSERT_TRUE(ParseSwitchPort("leaf-1:12", &sw, &port).ok());
  EXPECT_EQ(sw, "leaf-1");
  EXPECT_EQ(port, 12);
  EXPECT_FALSE(ParseSwitchPort(":1", &sw, &port).ok());
  EXPECT_FALSE(ParseSwitchPort("a:", &sw, &port).ok());
  EXPECT_FALSE(ParseSwitchPort("a:65535", &sw, &port).ok());
}

}  // namespace
}  // namespace swemu
