#include "swemu/switch_config.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace swemu {
namespace {

// Each test writes its files into its own directory.
std::string TestDir() {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = testing::TempDir() + "switch_config_test_" + info->name() + "/";
  std::filesystem::create_directories(dir);
  return dir;
}

std::string Write(const std::string& name, const std::string& text) {
  std::string path = TestDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(SwitchConfigTest, EmptyFileGivesTheDocumentedDefaults) {
  Result<LoadedSwitchConfig> loaded = LoadSwitchConfig(Write("empty.ini", "# nothing\n"));
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  const SwitchConfig& c = loaded->config;
  EXPECT_EQ(c.name, "sw0");
  EXPECT_EQ(c.num_ports, 4);
  EXPECT_EQ(c.program, "l2l3");
  EXPECT_EQ(c.seed, 1u);
  EXPECT_EQ(c.pipeline.ingress_stages, 12);
  EXPECT_EQ(c.pipeline.egress_stages, 12);
  EXPECT_EQ(c.pipeline.max_recirculations, 4);
  EXPECT_EQ(c.parser.parse_depth, 512);
  EXPECT_TRUE(c.parser.verify_ipv4_checksum);
  EXPECT_FALSE(c.deparser.zero_udp_checksum);
  EXPECT_EQ(c.pipeline.budget.sram_bytes, 1280u * 1024);
  EXPECT_EQ(c.pipeline.budget.tcam_entries, 12288u);
  EXPECT_EQ(c.pipeline.budget.tables, 16u);
  EXPECT_EQ(c.pipeline.budget.stateful_alus, 4u);
  EXPECT_EQ(c.tm.shared_buffer_bytes, 16u << 20);
  EXPECT_EQ(c.tm.port_buffer_bytes, 0u);
  EXPECT_EQ(c.tm.port_rate_bps, 10'000'000'000u);
  EXPECT_EQ(c.tm.wire_overhead_bytes, 24u);
  EXPECT_EQ(c.tm.scheduler, SchedulerKind::kStrict);
  EXPECT_EQ(c.tm.queue.depth_pkts, 1024u);
  EXPECT_EQ(c.tm.queue.ecn_threshold_bytes, 0u);
  EXPECT_EQ(c.tm.queue.drop_threshold_bytes, 0u);
  EXPECT_EQ(c.tm.quantum_bytes, 1536u);
  EXPECT_TRUE(loaded->startup_script.empty());
  EXPECT_TRUE(loaded->config.tm.port_rates.empty());
  EXPECT_TRUE(c.program_options.values().empty());
}

TEST(SwitchConfigTest, EveryKeyIsRead) {
  Write("start.cli", "# empty\n");
  const std::string path = Write("all.ini", R"([switch]
name = tor1
ports = 8
program = wire
seed = 99
cli = start.cli
ingress_stages = 10
egress_stages = 6
parse_depth = 256
max_recirculations = 2
verify_ipv4_checksum = false
zero_udp_checksum = yes
[budget]
sram = 640KiB
tcam = 1024
tables = 8
alus = 2
[tm]
shared_buffer = 4MiB
port_buffer = 256KB
port_rate = 25G
wire_overhead = 20
scheduler = weighted
queue_depth = 64
ecn_threshold = 30KB
drop_threshold = 100KB
quantum = 9000
[port.3]
rate = 40G
queue_depth = 60
ecn_threshold = 64KiB
[port.7]
rate = 100M
drop_threshold = 12000
[port.5]
queue_depth = 2048
[program]
ecmp_groups = 64
udp.port = 5000
)");
  Result<LoadedSwitchConfig> loaded = LoadSwitchConfig(path);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  const SwitchConfig& c = loaded->config;
  EXPECT_EQ(c.name, "tor1");
  EXPECT_EQ(c.num_ports, 8);
  EXPECT_EQ(c.program, "wire");
  EXPECT_EQ(c.seed, 99u);
  EXPECT_EQ(loaded->startup_script, TestDir() + "start.cli");
  EXPECT_EQ(c.pipeline.ingress_stages, 10);
  EXPECT_EQ(c.pipeline.egress_stages, 6);
  EXPECT_EQ(c.parser.parse_depth, 256);
  EXPECT_EQ(c.pipeline.max_recirculations, 2);
  EXPECT_FALSE(c.parser.verify_ipv4_checksum);
  EXPECT_TRUE(c.deparser.zero_udp_checksum);
  EXPECT_EQ(c.pipeline.budget.sram_bytes, 640u * 1024);
  EXPECT_EQ(c.pipeline.budget.tcam_entries, 1024u);
  EXPECT_EQ(c.pipeline.budget.tables, 8u);
  EXPECT_EQ(c.pipeline.budget.stateful_alus, 2u);
  EXPECT_EQ(c.tm.shared_buffer_bytes, 4u << 20);
  EXPECT_EQ(c.tm.port_buffer_bytes, 256'000u);
  EXPECT_EQ(c.tm.port_rate_bps, 25'000'000'000u);
  EXPECT_EQ(c.tm.wire_overhead_bytes, 20u);
  EXPECT_EQ(c.tm.scheduler, SchedulerKind::kWeighted);
  EXPECT_EQ(c.tm.queue.depth_pkts, 64u);
  EXPECT_EQ(c.tm.queue.ecn_threshold_bytes, 30'000u);
  EXPECT_EQ(c.tm.queue.drop_threshold_bytes, 100'000u);
  EXPECT_EQ(c.tm.quantum_bytes, 9000u);
  EXPECT_EQ(c.tm.port_rates, (std::vector<PortRate>{{3, 40'000'000'000}, {7, 100'000'000}}));
  EXPECT_EQ(c.tm.PortRateBps(0), 25'000'000'000u);  // the TM starts port 0 at tm.port_rate
  EXPECT_EQ(c.tm.port_queues,
            (std::map<PortId, PortQueueOverrides>{
                {3, {.depth_pkts = 60, .ecn_threshold_bytes = 64 << 10}},
                {5, {.depth_pkts = 2048}},
                {7, {.drop_threshold_bytes = 12'000}}}));
  EXPECT_EQ(c.tm.QueueFor(3).depth_pkts, 60u);
  EXPECT_EQ(c.tm.QueueFor(3).drop_threshold_bytes, 100'000u);  // [tm]'s where the port says none
  EXPECT_EQ(c.tm.QueueFor(7).ecn_threshold_bytes, 30'000u);
  EXPECT_EQ(c.tm.QueueFor(0).depth_pkts, 64u);  // the other ports' queues start at [tm]'s
  EXPECT_EQ(c.program_options.values(),
            (std::map<std::string, std::string>{{"ecmp_groups", "64"}, {"udp.port", "5000"}}));
}

// [port.N] queue_depth, ecn_threshold and drop_threshold are every queue's on that port from the
// switch's creation, before its startup script runs; the script's set_queue_depth and
// set_ecn_threshold (the runtime path) change one queue after.
TEST(SwitchConfigTest, PortQueueSettingsAreTheTmsFromCreation) {
  Write("depth.cli", "set_queue_depth 5 2 1\nset_ecn_threshold 2 3 1500\n");
  const std::string path = Write("depth.ini", R"([switch]
ports = 4
cli = depth.cli
[tm]
queue_depth = 100
ecn_threshold = 30KB
[port.2]
queue_depth = 60
ecn_threshold = 64KiB
drop_threshold = 96KiB
)");
  Result<LoadedSwitchConfig> loaded = LoadSwitchConfig(path);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  Engine engine(1, 64);
  Status added = engine.AddSwitch(loaded->config, loaded->startup_script);
  ASSERT_TRUE(added.ok()) << added.message();
  const TrafficManager& tm = engine.FindSwitch(loaded->config.name)->tm();
  EXPECT_EQ(tm.QueueDepthLimit(2, 0), 60u);
  EXPECT_EQ(tm.QueueDepthLimit(2, 1), 5u);
  EXPECT_EQ(tm.QueueDepthLimit(2, 7), 60u);
  EXPECT_EQ(tm.QueueDepthLimit(1, 0), 100u);
  EXPECT_EQ(tm.EcnThreshold(2, 0), 64u << 10);
  EXPECT_EQ(tm.EcnThreshold(2, 3), 1500u);
  EXPECT_EQ(tm.EcnThreshold(1, 3), 30'000u);
  EXPECT_EQ(tm.DropThreshold(2, 7), 96u << 10);
  EXPECT_EQ(tm.DropThreshold(3, 7), 0u);
}

// A [port.N] threshold reads a value as [tm]'s does: the same number, or the same error.
TEST(SwitchConfigTest, PortThresholdsParseAsTheTmsDo) {
  for (const char* key : {"ecn_threshold", "drop_threshold"}) {
    for (const char* value : {"64KiB", "30KB", "1500", "1500B", "0", "2MiB", "1.5.5K", "x", "-1",
                              "64KB5", "99999999999999999999"}) {
      const std::string tm_path = Write("tm.ini", "[tm]\n" + std::string(key) + " = " + value);
      const std::string port_path =
          Write("port.ini", "[port.1]\n" + std::string(key) + " = " + value);
      Result<LoadedSwitchConfig> tm = LoadSwitchConfig(tm_path);
      Result<LoadedSwitchConfig> port = LoadSwitchConfig(port_path);
      ASSERT_EQ(tm.ok(), port.ok()) << key << " = " << value;
      if (!tm.ok()) {
        EXPECT_EQ(port.message(), port_path + ": port.1." + key +
                                      tm.message().substr(tm_path.size() + 5 + strlen(key)))
            << value;
        continue;
      }
      const QueueConfig& want = tm->config.tm.queue;
      const QueueConfig got = port->config.tm.QueueFor(1);
      EXPECT_EQ(got.ecn_threshold_bytes, want.ecn_threshold_bytes) << key << " = " << value;
      EXPECT_EQ(got.drop_threshold_bytes, want.drop_threshold_bytes) << key << " = " << value;
    }
  }
}

// alpha and guaranteed_min in [tm] and [port.N]: the same setters, the same values.
TEST(SwitchConfigTest, AlphaAndGuaranteedMinReadInTmAndPortSections) {
  const std::string path = Write("dt.ini",
                                 "[tm]\nalpha = 2^-3\nguaranteed_min = 2KB\n"
                                 "[port.2]\nalpha = 0.75\n[port.3]\nguaranteed_min = 0\nalpha = 0\n");
  Result<LoadedSwitchConfig> loaded = LoadSwitchConfig(path);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  const TmConfig& tm = loaded->config.tm;
  EXPECT_EQ(tm.QueueFor(0).alpha, 0.125);
  EXPECT_EQ(tm.QueueFor(0).guaranteed_min_bytes, 2000u);
  EXPECT_EQ(tm.QueueFor(2).alpha, 0.75);
  EXPECT_EQ(tm.QueueFor(2).guaranteed_min_bytes, 2000u);
  EXPECT_EQ(tm.QueueFor(3).alpha, 0.0);
  EXPECT_EQ(tm.QueueFor(3).guaranteed_min_bytes, 0u);
  EXPECT_EQ(tm.ReservedBytes(), 3u * 8 * 2000);
}

TEST(SwitchConfigTest, MissingFileIsAnErrorNamingIt) {
  Result<LoadedSwitchConfig> loaded = LoadSwitchConfig("/nonexistent/sw.ini");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.message(),
            "/nonexistent/sw.ini: cannot open config (No such file or directory)");
}

struct BadCase {
  const char* text;
  const char* expected;  // after "PATH: "
};

class SwitchConfigErrorTest : public testing::TestWithParam<BadCase> {};

TEST_P(SwitchConfigErrorTest, GivesOneLineNamingFileAndKey) {
  const std::string path = Write("bad.ini", GetParam().text);
  Result<LoadedSwitchConfig> loaded = LoadSwitchConfig(path);
  ASSERT_FALSE(loaded.ok()) << GetParam().text;
  const std::string prefix = path + ": " + GetParam().expected;
  EXPECT_EQ(loaded.message().substr(0, prefix.size()), prefix) << loaded.message();
  EXPECT_EQ(loaded.message().find('\n'), std::string::npos) << loaded.message();
}

INSTANTIATE_TEST_SUITE_P(
    Keys, SwitchConfigErrorTest,
    testing::Values(
        BadCase{"[switch]\nname =\n", "switch.name: must not be empty"},
        BadCase{"[switch]\nports = 0\n", "switch.ports: \"0\" is out of range"},
        BadCase{"[switch]\nports = four\n", "switch.ports: \"four\" is not an unsigned integer"},
        BadCase{"[switch]\nprogram =\n", "switch.program: must not be empty"},
        BadCase{"[switch]\nseed = -1\n", "switch.seed: "},
        BadCase{"[switch]\ncli = missing.cli\n", "switch.cli: "},
        BadCase{"[switch]\ningress_stages = 0\n", "switch.ingress_stages: "},
        BadCase{"[switch]\negress_stages = 65\n", "switch.egress_stages: "},
        BadCase{"[switch]\nparse_depth = 10\n", "switch.parse_depth: "},
        BadCase{"[switch]\nmax_recirculations = 300\n", "switch.max_recirculations: "},
        BadCase{"[switch]\nverify_ipv4_checksum = maybe\n", "switch.verify_ipv4_checksum: "},
        BadCase{"[switch]\nzero_udp_checksum = 2\n", "switch.zero_udp_checksum: "},
        BadCase{"[budget]\nsram = 12XB\n", "budget.sram: "},
        BadCase{"[budget]\ntcam = lots\n", "budget.tcam: "},
        BadCase{"[budget]\ntables = -3\n", "budget.tables: "},
        BadCase{"[budget]\nalus = 5000000000\n", "budget.alus: "},
        BadCase{"[tm]\nshared_buffer = 0\n", "tm.shared_buffer: "},
        BadCase{"[tm]\nport_buffer = big\n", "tm.port_buffer: "},
        BadCase{"[tm]\nport_rate = fast\n", "tm.port_rate: "},
        BadCase{"[tm]\nport_rate = 100T\n", "tm.port_rate: "},
        BadCase{"[tm]\nwire_overhead = 5000\n", "tm.wire_overhead: "},
        BadCase{"[tm]\nscheduler = fifo\n", "tm.scheduler: \"fifo\" is not strict or weighted"},
        BadCase{"[tm]\npushout = maybe\n", "tm.pushout: "},
        BadCase{"[tm]\nscheduler = weighted\npushout = on\n",
                "tm pushout needs the strict scheduler: weighted queues have no lowest priority "
                "to drop from"},
        BadCase{"[tm]\nqueue_depth = 0\n", "tm.queue_depth: "},
        BadCase{"[tm]\necn_threshold = 1.5.5K\n", "tm.ecn_threshold: "},
        BadCase{"[tm]\ndrop_threshold = x\n", "tm.drop_threshold: "},
        BadCase{"[tm]\nquantum = 0\n", "tm.quantum: "},
        BadCase{"[port.9]\nrate = 1G\n", "port.9.rate: port 9 out of range (switch.ports is 4)"},
        BadCase{"[port.1]\nrate = slow\n", "port.1.rate: "},
        BadCase{"[port.x]\nrate = 1G\n", "port.x.rate: unknown key"},
        BadCase{"[port.1]\nqueue_depth = 0\n", "port.1.queue_depth: "},
        BadCase{"[port.1]\nqueue_depth = deep\n", "port.1.queue_depth: "},
        BadCase{"[port.1]\nqueue_depth = 2000000\n", "port.1.queue_depth: "},
        BadCase{"[port.4]\nqueue_depth = 8\n",
                "port.4.queue_depth: port 4 out of range (switch.ports is 4)"},
        BadCase{"[port.1]\nqueue_depth = 8\n[port.01]\nqueue_depth = 9\n",
                "port.01.queue_depth: port queue depth given twice"},
        BadCase{"[port.1]\necn_threshold = 1.5.5K\n", "port.1.ecn_threshold: "},
        BadCase{"[port.1]\necn_threshold = -1\n", "port.1.ecn_threshold: "},
        BadCase{"[port.1]\ndrop_threshold = x\n", "port.1.drop_threshold: "},
        BadCase{"[port.4]\necn_threshold = 64KiB\n",
                "port.4.ecn_threshold: port 4 out of range (switch.ports is 4)"},
        BadCase{"[port.9]\ndrop_threshold = 64KiB\n",
                "port.9.drop_threshold: port 9 out of range (switch.ports is 4)"},
        BadCase{"[port.1]\necn_threshold = 1K\n[port.01]\necn_threshold = 2K\n",
                "port.01.ecn_threshold: port ecn threshold given twice"},
        BadCase{"[port.2]\ndrop_threshold = 1K\n[port.002]\ndrop_threshold = 2K\n",
                "port.002.drop_threshold: port drop threshold given twice"},
        BadCase{"[port.1]\nthreshold = 1K\n",
                "port.1.threshold: unknown key (a [port.N] section has only rate, queue_depth, "
                "ecn_threshold, drop_threshold, alpha, guaranteed_min, devargs, loss and delay)"},
        BadCase{"[tm]\nalpha = 3^2\n",
                "tm.alpha: alpha \"3^2\" is not a number such as 1/8, 2^-3, 0.125 or 0 (off)"},
        BadCase{"[port.1]\nalpha = 2^11\n",
                "port.1.alpha: alpha 2048 out of range: 0 (off) or 2^-10 .. 2^10"},
        BadCase{"[port.1]\nalpha = 1/2\n[port.01]\nalpha = 1/4\n",
                "port.01.alpha: port alpha given twice"},
        BadCase{"[switch]\nports = 2\n[tm]\nshared_buffer = 16000\nguaranteed_min = 1001\n",
                "tm guaranteed_min: the queues' minimums (16016 B) exceed shared_buffer_bytes 16000"},
        BadCase{"[port.5]\nguaranteed_min = 1K\n",
                "port.5.guaranteed_min: port 5 out of range (switch.ports is 4)"},
        BadCase{"[port.1]\nspeed = 1G\n", "port.1.speed: unknown key"},
        BadCase{"[switch]\ncolour = red\n", "switch.colour: unknown key"},
        BadCase{"[tm]\nport_rates = 1G\n", "tm.port_rates: unknown key"},
        BadCase{"[bogus]\na = 1\n", "bogus.a: unknown section [bogus]"},
        BadCase{"name = x\n", "name: unknown key (every key belongs in a section"},
        BadCase{"[switch]\nports = 4\nports = 8\n", "switch.ports: given twice"},
        BadCase{"[switch]\nports\n", "the options configuration file contains an invalid line"}));

}  // namespace
}  // namespace swemu
