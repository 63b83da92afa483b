// [interface.N] sections (router interfaces) and the [switch] cpu_* keys: read, written back by
// the one INI writer, and refused with one line naming the file and the problem, also through
// the swemu binary (exit 2).
#include <gtest/gtest.h>

#include <fstream>

#include "swemu/switch_config.h"
#include "swemu/switch_config_writer.h"
#include "tests/swemu/swemu_subprocess.h"

namespace swemu {
namespace {

constexpr const char* kTwoSubnets =
    "[switch]\nports = 8\nprogram = l2l3\ncpu_latency = 50us\ncpu_queue = 64\n"
    "[interface.2]\nmac = 02:00:00:00:fe:02\nip = 10.2.2.1/24\nports = 4-7\n"
    "[interface.1]\nmac = 02:00:00:00:fe:01\nip = 10.1.1.1/24\nports = 0,1,3\n";

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "switch_config_interfaces_" + name + ".ini";
  std::ofstream(path) << text;
  return path;
}

TEST(SwitchConfigInterfacesTest, ReadSortedByNumberAndWrittenBackEqual) {
  Result<LoadedSwitchConfig> loaded = LoadSwitchConfig(Write("two", kTwoSubnets));
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  const SwitchConfig& c = loaded->config;
  ASSERT_EQ(c.interfaces.size(), 2u);
  EXPECT_EQ(c.interfaces[0], (RouterInterface{1, 0x02000000FE01, 0x0A010101, 24, {0, 1, 3}}));
  EXPECT_EQ(c.interfaces[1], (RouterInterface{2, 0x02000000FE02, 0x0A020201, 24, {4, 5, 6, 7}}));
  EXPECT_EQ(c.cpu.latency_ns, 50'000u);
  EXPECT_EQ(c.cpu.queue_packets, 64u);
  const std::string text = FormatSwitchConfig(*loaded);
  EXPECT_NE(text.find("[interface.1]\nmac = 02:00:00:00:fe:01\nip = 10.1.1.1/24\nports = 0-1,3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("cpu_latency = 50us\n"), std::string::npos) << text;
  const std::string path = ::testing::TempDir() + "switch_config_interfaces_again.ini";
  ASSERT_TRUE(WriteSwitchConfig(*loaded, path).ok());
  Result<LoadedSwitchConfig> again = LoadSwitchConfig(path);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->config.interfaces, c.interfaces);
  EXPECT_EQ(again->config.cpu, c.cpu);
  EXPECT_EQ(FormatSwitchConfig(*again), text);
}

TEST(SwitchConfigInterfacesTest, Ip6ReadBesideIpAndWrittenBack) {
  Result<LoadedSwitchConfig> loaded = LoadSwitchConfig(
      Write("ip6", "[switch]\nports = 8\nprogram = l2l3\n[interface.1]\nmac = 02:00:00:00:fe:01\n"
                   "ip = 10.1.1.1/24\nip6 = 2001:DB8:1:0::1/64\nports = 0-3\n"
                   "[interface.2]\nmac = 02:00:00:00:fe:02\nip = 10.2.2.1/24\nports = 4-7\n"));
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  const std::vector<RouterInterface>& rifs = loaded->config.interfaces;
  ASSERT_EQ(rifs.size(), 2u);
  EXPECT_EQ(rifs[0].ipv6, *ParseIpv6("2001:db8:1::1"));
  EXPECT_EQ(rifs[0].prefix6_len, 64);
  EXPECT_TRUE(rifs[0].Contains6(*ParseIpv6("2001:db8:1::abcd")));
  EXPECT_FALSE(rifs[0].Contains6(*ParseIpv6("2001:db8:2::1")));
  EXPECT_FALSE(rifs[1].HasIpv6());
  EXPECT_EQ(FormatIpv6(rifs[0].LinkLocal()), "fe80::ff:fe00:fe01");
  const std::string text = FormatSwitchConfig(*loaded);
  EXPECT_NE(text.find("ip = 10.1.1.1/24\nip6 = 2001:db8:1::1/64\nports = 0-3\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("ip = 10.2.2.1/24\nports = 4-7\n"), std::string::npos) << text;
  const std::string path = ::testing::TempDir() + "switch_config_interfaces_ip6_again.ini";
  ASSERT_TRUE(WriteSwitchConfig(*loaded, path).ok());
  Result<LoadedSwitchConfig> again = LoadSwitchConfig(path);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->config.interfaces, rifs);
}

struct BadCase {
  const char* name;
  const char* sections;  // after a [switch] of 8 ports
  const char* message;   // after "PATH: "
};

class SwitchConfigInterfacesBadTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(SwitchConfigInterfacesBadTest, OneLineNamingFileAndInterface) {
  const BadCase& bad = GetParam();
  const std::string path =
      Write(bad.name, std::string("[switch]\nports = 8\n") + bad.sections);
  Result<LoadedSwitchConfig> loaded = LoadSwitchConfig(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.message(), path + ": " + bad.message);
}

constexpr const char* kIf1 = "[interface.1]\nmac = 02:00:00:00:fe:01\nip = 10.1.1.1/24\nports = 0\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, SwitchConfigInterfacesBadTest,
    ::testing::Values(
        BadCase{"outside",
                "[interface.1]\nmac = 02:00:00:00:fe:01\nip = 10.1.1.0/24\nports = 0\n",
                "interface.1: ip 10.1.1.0/24: the gateway 10.1.1.0 is outside the hosts of its "
                "subnet 10.1.1.0/24 (it is the subnet's own address)"},
        BadCase{"broadcast",
                "[interface.1]\nmac = 02:00:00:00:fe:01\nip = 10.1.1.255/24\nports = 0\n",
                "interface.1: ip 10.1.1.255/24: the gateway 10.1.1.255 is outside the hosts of "
                "its subnet 10.1.1.0/24 (it is the subnet's broadcast address)"},
        BadCase{"duplicate", "[interface.1]\nmac = 02:00:00:00:fe:01\nip = 10.1.1.1/24\nports = 0\n"
                             "[interface.2]\nmac = 02:00:00:00:fe:02\nip = 10.1.1.1/16\nports = 1\n",
                "interface.2: ip: the gateway 10.1.1.1 is also interface.1's"},
        BadCase{"overlap", "[interface.1]\nmac = 02:00:00:00:fe:01\nip = 10.1.1.1/24\nports = 0\n"
                           "[interface.2]\nmac = 02:00:00:00:fe:02\nip = 10.1.0.1/16\nports = 1\n",
                "interface.2: ip 10.1.0.1/16: its subnet overlaps interface.1's (10.1.1.1/24)"},
        BadCase{"port_twice", "[interface.1]\nmac = 02:00:00:00:fe:01\nip = 10.1.1.1/24\nports = 0\n"
                              "[interface.2]\nmac = 02:00:00:00:fe:02\nip = 10.2.2.1/24\nports = 0\n",
                "interface.2: ports: port 0 is also in interface.1"},
        BadCase{"port_range", "[interface.1]\nmac = 02:00:00:00:fe:01\nip = 10.1.1.1/24\nports = 8\n",
                "interface.1: ports: port 8 out of range (switch.ports is 8)"},
        BadCase{"no_prefix", "[interface.1]\nip = 10.1.1.1\n",
                "interface.1.ip: \"10.1.1.1\" is not a gateway address with its prefix (such as "
                "10.1.1.1/24)"},
        BadCase{"missing_mac", "[interface.1]\nip = 10.1.1.1/24\nports = 0\n",
                "interface.1: mac missing"},
        BadCase{"unknown_key", "[interface.1]\nvlan = 10\n",
                "interface.1.vlan: unknown key (an [interface.N] section has only mac, ip, ip6 "
                "and ports)"},
        BadCase{"ip6_subnet_address", "[interface.1]\nmac = 02:00:00:00:fe:01\nip = 10.1.1.1/24\n"
                                      "ip6 = 2001:db8:1::/64\nports = 0\n",
                "interface.1: ip6 2001:db8:1::/64: the gateway 2001:db8:1:: is the subnet's own "
                "address (its interface id is all zeros: the subnet-router anycast address)"},
        BadCase{"ip6_duplicate", "[interface.1]\nmac = 02:00:00:00:fe:01\nip = 10.1.1.1/24\n"
                                 "ip6 = 2001:db8:1::1/64\nports = 0\n"
                                 "[interface.2]\nmac = 02:00:00:00:fe:02\nip = 10.2.2.1/24\n"
                                 "ip6 = 2001:db8:1::1/48\nports = 1\n",
                "interface.2: ip6: the gateway 2001:db8:1::1 is also interface.1's"},
        BadCase{"ip6_overlap", "[interface.1]\nmac = 02:00:00:00:fe:01\nip = 10.1.1.1/24\n"
                               "ip6 = 2001:db8:1::1/64\nports = 0\n"
                               "[interface.2]\nmac = 02:00:00:00:fe:02\nip = 10.2.2.1/24\n"
                               "ip6 = 2001:db8::2/32\nports = 1\n",
                "interface.2: ip6 2001:db8::2/32: its subnet overlaps interface.1's "
                "(2001:db8:1::1/64)"},
        BadCase{"ip6_prefix_128", "[interface.1]\nmac = 02:00:00:00:fe:01\nip = 10.1.1.1/24\n"
                                  "ip6 = 2001:db8:1::1/128\nports = 0\n",
                "interface.1: ip6 2001:db8:1::1/128: the prefix must be 1..127 (a subnet with "
                "hosts besides the gateway)"},
        BadCase{"ip6_prefix_0", "[interface.1]\nip6 = 2001:db8:1::1/0\n",
                "interface.1.ip6: \"2001:db8:1::1/0\" is not an IPv6 gateway address with its "
                "prefix (such as 2001:db8:1::1/64)"},
        BadCase{"ip6_malformed", "[interface.1]\nip6 = 2001:db8::1::1/64\n",
                "interface.1.ip6: \"2001:db8::1::1/64\" is not an IPv6 gateway address with its "
                "prefix (such as 2001:db8:1::1/64)"},
        BadCase{"ip6_twice", "[interface.1]\nip6 = 2001:db8:1::1/64\nip6 = 2001:db8:2::1/64\n",
                "interface.1.ip6: given twice"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

TEST(SwitchConfigInterfacesTest, TheBinaryRefusesADuplicateGatewayWithOneLineAndStatus2) {
  const std::string dir = testing::TestDirFor("switch_config_interfaces");
  std::filesystem::create_directories(dir);
  const std::string path = Write("binary", std::string("[switch]\nports = 4\nprogram = l2l3\n") +
                                               kIf1 +
                                               "[interface.2]\nmac = 02:00:00:00:fe:02\n"
                                               "ip = 10.1.1.1/16\nports = 1\n");
  const testing::RunResult run =
      testing::RunSwemuIn(dir, "--offline --config " + path + " --out-dir " + dir + "out");
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, "swemu: " + path + ": interface.2: ip: the gateway 10.1.1.1 is also "
                     "interface.1's\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "out"));
}

}  // namespace
}  // namespace swemu
