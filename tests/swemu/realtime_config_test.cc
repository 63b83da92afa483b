// The real-time keys of a switch config ([eal], [dpdk], [port.N] devargs) and how swemu builds
// DPDK's EAL arguments from them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "swemu/dpdk/eal.h"
#include "swemu/switch_config.h"

namespace swemu {
namespace {

std::string WriteIni(const std::string& text) {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = testing::TempDir() + "realtime_config_test_" + info->name() + "/";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "sw.ini") << text;
  return dir + "sw.ini";
}

using Args = std::vector<std::string>;

TEST(RealtimeConfigTest, DefaultsWithoutRealTimeKeys) {
  Result<LoadedSwitchConfig> loaded = LoadSwitchConfig(WriteIni("[switch]\nports = 2\n"));
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  EXPECT_EQ(loaded->eal_args, "");
  EXPECT_EQ(loaded->mbufs, 16383u);
  EXPECT_EQ(loaded->mbuf_cache, 256u);
  EXPECT_TRUE(loaded->cut_through);
  EXPECT_TRUE(loaded->port_devargs.empty());
}

TEST(RealtimeConfigTest, ReadsEalDpdkAndDevargs) {
  Result<LoadedSwitchConfig> loaded = LoadSwitchConfig(
      WriteIni("[switch]\nports = 2\n[eal]\nargs = -l 0 --no-pci\n[dpdk]\nmbufs = 4095\n"
               "mbuf_cache = 64\ncut_through = off\n[port.1]\ndevargs = "
               "net_pcap0,rx_pcap=a.pcap\nrate = 1G\n"
               "[port.0]\ndevargs = net_ring0\n"));
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  EXPECT_EQ(loaded->eal_args, "-l 0 --no-pci");
  EXPECT_EQ(loaded->mbufs, 4095u);
  EXPECT_EQ(loaded->mbuf_cache, 64u);
  EXPECT_FALSE(loaded->cut_through);
  ASSERT_EQ(loaded->port_devargs.size(), 2u);
  EXPECT_EQ(loaded->port_devargs[0],
            std::make_pair(PortId{1}, std::string("net_pcap0,rx_pcap=a.pcap")));
  EXPECT_EQ(loaded->port_devargs[1], std::make_pair(PortId{0}, std::string("net_ring0")));
  ASSERT_EQ(loaded->config.tm.port_rates.size(), 1u);
}

TEST(RealtimeConfigTest, BadRealTimeKeysNameTheKey) {
  struct Case {
    std::string ini;
    std::string expected;
  } cases[] = {
      {"[switch]\nports = 2\n[port.2]\ndevargs = net_ring0\n",
       "port.2.devargs: port 2 out of range (switch.ports is 2)"},
      {"[port.0]\ndevargs =\n", "port.0.devargs: must not be empty"},
      {"[port.0]\nspeed = 1G\n",
       "port.0.speed: unknown key (a [port.N] section has only rate, queue_depth, ecn_threshold, "
       "drop_threshold, alpha, guaranteed_min, devargs, loss and delay)"},
      {"[dpdk]\nmbufs = 10\n", "dpdk.mbufs: "},
      {"[dpdk]\nmbuf_cache = 1024\n", "dpdk.mbuf_cache: "},
      {"[dpdk]\npools = 2\n", "dpdk.pools: unknown key"},
      {"[dpdk]\ncut_through = sometimes\n", "dpdk.cut_through: "},
      {"[eal]\nargs =\n", "eal.args: must not be empty"},
  };
  for (const Case& c : cases) {
    Result<LoadedSwitchConfig> loaded = LoadSwitchConfig(WriteIni(c.ini));
    ASSERT_FALSE(loaded.ok()) << c.ini;
    EXPECT_NE(loaded.message().find(c.expected), std::string::npos) << loaded.message();
  }
}

TEST(RealtimeConfigTest, ReadsPortLossAndDelay) {
  Result<LoadedSwitchConfig> loaded = LoadSwitchConfig(
      WriteIni("[switch]\nports = 2\n[port.0]\nloss = 0.1%\n[port.1]\nloss = 0.25\n"
               "delay = 50us\n"));
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  ASSERT_EQ(loaded->port_effects.size(), 2u);
  EXPECT_DOUBLE_EQ(loaded->port_effects[0].loss, 0.001);
  EXPECT_EQ(loaded->port_effects[0].delay_ns, 0u);
  EXPECT_DOUBLE_EQ(loaded->port_effects[1].loss, 0.25);
  EXPECT_EQ(loaded->port_effects[1].delay_ns, 50'000u);
}

TEST(RealtimeConfigTest, BadLossOrDelayNamesTheKey) {
  const std::pair<std::string, std::string> cases[] = {
      {"[port.0]\nloss = 1.5\n", "port.0.loss: "},
      {"[port.0]\nloss = often\n", "port.0.loss: "},
      {"[port.0]\ndelay = soon\n", "port.0.delay: "},
      {"[port.0]\ndelay = 2s\n", "port.0.delay: \"2s\" is over 1s"},
      {"[switch]\nports = 2\n[port.5]\ndelay = 1us\n",
       "port.5: port 5 out of range (switch.ports is 2)"},
  };
  for (const auto& [ini, expected] : cases) {
    Result<LoadedSwitchConfig> loaded = LoadSwitchConfig(WriteIni(ini));
    ASSERT_FALSE(loaded.ok()) << ini;
    EXPECT_NE(loaded.message().find(expected), std::string::npos) << loaded.message();
  }
}

TEST(EalArgsTest, FileArgsThenCommandLineThenLogLevel) {
  EalArgs eal = MakeEalArgs("-l 0  --no-pci", {"--vdev", "net_ring0"}, true);
  EXPECT_EQ(eal.args, (Args{"-l", "0", "--no-pci", "--vdev", "net_ring0", "--log-level=notice"}));
  EXPECT_FALSE(eal.added_no_huge);
}

TEST(EalArgsTest, WithoutHugepagesAddsNoHugeAndMemory) {
  EalArgs eal = MakeEalArgs("", {"-l", "1"}, false);
  EXPECT_EQ(eal.args, (Args{"-l", "1", "--no-huge", "-m", "256", "--log-level=notice"}));
  EXPECT_TRUE(eal.added_no_huge);
}

TEST(EalArgsTest, UserChoicesAreKept) {
  EalArgs eal = MakeEalArgs("--no-huge -m 64", {"--log-level=debug"}, false);
  EXPECT_EQ(eal.args, (Args{"--no-huge", "-m", "64", "--log-level=debug"}));
  EXPECT_FALSE(eal.added_no_huge);
  EXPECT_EQ(MakeEalArgs("-m 512", {}, false).args,
            (Args{"-m", "512", "--no-huge", "--log-level=notice"}));
}

TEST(EalArgsTest, HugepagesNeedFreePagesAndAMount) {
  const std::string free_pages =
      "MemTotal: 1 kB\nHugePages_Total:     512\nHugePages_Free:      100\n";
  const std::string no_free = "HugePages_Total:     512\nHugePages_Free:        0\n";
  const std::string mounted = "proc /proc proc rw 0 0\nhugetlbfs /dev/hugepages hugetlbfs rw 0 0\n";
  const std::string unmounted = "proc /proc proc rw 0 0\n";
  EXPECT_TRUE(HugepagesUsable(free_pages, mounted));
  EXPECT_FALSE(HugepagesUsable(no_free, mounted));
  EXPECT_FALSE(HugepagesUsable(free_pages, unmounted));
  EXPECT_FALSE(HugepagesUsable("", ""));
}

}  // namespace
}  // namespace swemu
