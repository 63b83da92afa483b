// DLCP's experiment's network (hostlib/dlcp/fabric.h): the generated leaf-spine in the order the
// figures were run with, the bundled file equal to it, the checks a --topology file must pass,
// the report's words for a network, and the builder's entries (an ECMP group per set of ports).
#include "hostlib/dlcp/fabric.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "pipeline/wire/address.h"

namespace swemu {
namespace {

DlcpLeafSpineShape Shape() { return {3, 4, 2, 10'000'000'000, 5'000, 1}; }

TEST(DlcpFabric, TheLeafSpineListsToRsSpinesLinksAndHostsInOrder) {
  const TopologyConfig topo = DlcpLeafSpine(Shape());
  ASSERT_EQ(topo.switches.size(), 5u);
  EXPECT_EQ(topo.switches[0].config.name, "tor0");
  EXPECT_EQ(topo.switches[0].config.num_ports, 6);
  EXPECT_EQ(topo.switches[3].config.name, "spine0");
  EXPECT_EQ(topo.switches[4].config.num_ports, 3);
  ASSERT_EQ(topo.links.size(), 6u);
  EXPECT_EQ(topo.links[1].a, "tor0");  // ToR-major: tor0's links to spine0, then spine1
  EXPECT_EQ(topo.links[1].a_port, 5);
  EXPECT_EQ(topo.links[1].b, "spine1");
  EXPECT_EQ(topo.links[1].b_port, 0);
  ASSERT_EQ(topo.hosts.size(), 12u);
  EXPECT_EQ(topo.hosts[5].sw, "tor1");
  EXPECT_EQ(topo.hosts[5].port, 1);
  EXPECT_EQ(topo.hosts[5].delay_ns, 5'000);
  EXPECT_TRUE(CheckDlcpTopology(topo).ok());
  EXPECT_EQ(DescribeDlcpTopology(topo), "3 ToRs x 4 hosts, 2 spines, 10 Gbit/s links");
}

TEST(DlcpFabric, TheBundledFileIsTheDefaultShape) {
  Result<TopologyConfig> file = LoadTopology(SWEMU_SOURCE_DIR "/configs/dlcp_leaf_spine.topo");
  ASSERT_TRUE(file.ok()) << file.message();
  const TopologyConfig made = DlcpLeafSpine(Shape());
  ASSERT_EQ(file->switches.size(), made.switches.size());
  for (std::size_t k = 0; k < made.switches.size(); ++k) {
    EXPECT_EQ(file->switches[k].config.name, made.switches[k].config.name);
    EXPECT_EQ(file->switches[k].config.num_ports, made.switches[k].config.num_ports);
  }
  ASSERT_EQ(file->links.size(), made.links.size());
  for (std::size_t l = 0; l < made.links.size(); ++l) {
    const LinkSpec &a = file->links[l], &b = made.links[l];
    EXPECT_TRUE(a.a == b.a && a.a_port == b.a_port && a.b == b.b && a.b_port == b.b_port &&
                a.rate_bps == b.rate_bps && a.delay_ns == b.delay_ns && a.loss == b.loss)
        << l;
  }
  ASSERT_EQ(file->hosts.size(), made.hosts.size());
  for (std::size_t h = 0; h < made.hosts.size(); ++h) {
    EXPECT_EQ(file->hosts[h].sw, made.hosts[h].sw);
    EXPECT_EQ(file->hosts[h].port, made.hosts[h].port);
    EXPECT_EQ(file->hosts[h].delay_ns, made.hosts[h].delay_ns);
  }
  EXPECT_EQ(DescribeDlcpTopology(*file), DescribeDlcpTopology(made));
}

TEST(DlcpFabric, TooFewHostsAndHostsThatCannotMeetAreRefused) {
  TopologyConfig topo = DlcpLeafSpine({2, 2, 1, 10'000'000'000, 1'000, 1});
  topo.hosts.pop_back();
  Status few = CheckDlcpTopology(topo);
  ASSERT_FALSE(few.ok());
  EXPECT_NE(few.message().find("3 hosts; DLCP's experiment needs at least 4"), std::string::npos)
      << few.message();
  topo = DlcpLeafSpine({2, 2, 1, 10'000'000'000, 1'000, 1});
  topo.links.erase(topo.links.begin() + 1);  // tor1 -- spine0
  Status apart = CheckDlcpTopology(topo);
  ASSERT_FALSE(apart.ok());
  EXPECT_EQ(apart.message(),
            "hosts tor0-p0 and tor1-p0 cannot reach each other (no links from tor0 to tor1)");
  topo = DlcpLeafSpine({2, 2, 1, 0, 1'000, 1});  // unshaped ports: no rate for the hosts
  EXPECT_FALSE(CheckDlcpTopology(topo).ok());
  topo = DlcpLeafSpine({2, 2, 1, 10'000'000'000, 1'000, 1});
  topo.hosts[1].port = 2;  // tor0's uplink
  Status taken = CheckDlcpTopology(topo);
  ASSERT_FALSE(taken.ok());
  EXPECT_NE(taken.message().find("host tor0-p1: port 2 of tor0"), std::string::npos)
      << taken.message();
  topo.hosts[1].port = 3;  // past tor0's 3 ports
  EXPECT_FALSE(CheckDlcpTopology(topo).ok());
  topo.hosts[1].port = 0;  // h0's
  EXPECT_FALSE(CheckDlcpTopology(topo).ok());
}

TEST(DlcpFabric, ANetworkThatIsNotATwoTierLeafSpineIsCountedInstead) {
  TopologyConfig topo = DlcpLeafSpine({2, 2, 1, 10'000'000'000, 1'000, 1});
  topo.links.push_back({"tor0", 3, "tor1", 3, 40'000'000'000, 1'000, 0});
  EXPECT_EQ(DescribeDlcpTopology(topo), "3 switches, 4 hosts, links of 10 to 40 Gbit/s");
  topo = DlcpLeafSpine({2, 2, 1, 10'000'000'000, 1'000, 1});
  topo.hosts.pop_back();
  EXPECT_EQ(DescribeDlcpTopology(topo), "3 switches, 3 hosts, 10 Gbit/s links");
}

// Two spines: each ToR sprays over one group of both uplinks for every remote ToR; a spine has
// one next hop per ToR and no group. Hosts get the experiment's addresses.
TEST(DlcpFabric, EachSetOfEqualCostPortsIsOneEcmpGroup) {
  const TopologyConfig topo = DlcpLeafSpine(Shape());
  Engine engine(1, 1 << 12);
  Result<std::vector<DlcpHostAddress>> hosts = AddDlcpFabric(engine, topo, true, 1, QueueConfig{});
  ASSERT_TRUE(hosts.ok()) << hosts.message();
  ASSERT_EQ(hosts->size(), 12u);
  EXPECT_EQ(FormatIpv4((*hosts)[5].ip), "10.0.2.2");  // tor1, port 1
  EXPECT_EQ(FormatMac((*hosts)[5].mac), "02:00:00:00:02:02");
  EXPECT_EQ(FormatMac((*hosts)[5].gateway), "02:00:00:01:00:02");  // tor1's router
  EXPECT_EQ((*hosts)[5].link_bps, 10'000'000'000u);
  auto dump = [&](const std::string& sw, const std::string& table) {
    Result<std::string> text = engine.FindSwitch(sw)->commands().Execute("table_dump " + table);
    return text.ok() ? *text : text.message();
  };
  auto count = [](const std::string& text, const std::string& what) {
    int n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(dump("tor0", "ecmp_group"), "ecmp_select"), 1) << dump("tor0", "ecmp_group");
  EXPECT_EQ(count(dump("tor0", "ipv4_lpm"), "set_ecmp"), 2) << dump("tor0", "ipv4_lpm");
  EXPECT_EQ(count(dump("tor0", "ipv4_lpm"), "set_nhop"), 4);
  EXPECT_EQ(count(dump("spine1", "ecmp_group"), "ecmp_select"), 0);
  EXPECT_EQ(count(dump("spine1", "ipv4_lpm"), "set_nhop"), 3);
}

// pFabric's scheme pushes out on every switch, with its port buffer; the others do not.
TEST(DlcpFabric, TheSchemesPortBufferAndPushOutReachEverySwitch) {
  const TopologyConfig topo = DlcpLeafSpine(Shape());
  for (bool pushout : {false, true}) {
    Engine engine(1, 1 << 12);
    DlcpFabricScheme scheme;
    scheme.port_buffer_bytes = 124600;
    scheme.pushout = pushout;
    ASSERT_TRUE(AddDlcpFabric(engine, topo, scheme, 1).ok());
    ASSERT_EQ(engine.num_switches(), 5u);
    for (std::size_t k = 0; k < engine.num_switches(); ++k) {
      EXPECT_EQ(engine.switch_at(k).tm().pushout(), pushout) << k;
      EXPECT_EQ(engine.switch_at(k).tm().port_buffer_bytes(), 124600u) << k;
    }
  }
}

}  // namespace
}  // namespace swemu
