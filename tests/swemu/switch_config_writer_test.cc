#include "swemu/switch_config_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

namespace swemu {
namespace {

// Differences lists these structs field by field: a new field must be added there (and to the
// writer, if a key sets it), which these sizes remind whoever adds one.
static_assert(sizeof(QueueConfig) == 56, "a QueueConfig field: compare it in Differences");
static_assert(sizeof(PortQueueOverrides) == 72,
              "a PortQueueOverrides field: compare it in Differences");
static_assert(sizeof(TmConfig) == 176, "a TmConfig field: compare it in Differences");
static_assert(sizeof(StageBudget) == 24, "a StageBudget field: compare it in Differences");
static_assert(sizeof(ParserConfig) == 4, "a ParserConfig field: compare it in Differences");
static_assert(sizeof(PortWireEffects) == 16, "a PortWireEffects field: compare it in Differences");

std::string TestDir() {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = testing::TempDir() + "switch_config_writer_test_" + info->name() + "/";
  std::filesystem::create_directories(dir);
  return dir;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Collects the names of the fields where two configs differ.
class FieldDiff {
 public:
  template <typename T>
  void Field(const char* name, const T& a, const T& b) {
    if (!(a == b)) names_.push_back(name);
  }
  std::vector<std::string> names() const { return names_; }

 private:
  std::vector<std::string> names_;
};

std::map<PortId, std::pair<double, uint64_t>> Effects(const LoadedSwitchConfig& c) {
  std::map<PortId, std::pair<double, uint64_t>> effects;
  for (const auto& entry : c.port_effects) {
    effects[entry.first] = {entry.second.loss, entry.second.delay_ns};
  }
  return effects;
}

void SwitchFields(FieldDiff& d, const SwitchConfig& a, const SwitchConfig& b) {
  d.Field("name", a.name, b.name);
  d.Field("num_ports", a.num_ports, b.num_ports);
  d.Field("program", a.program, b.program);
  d.Field("seed", a.seed, b.seed);
  d.Field("program_options", a.program_options.values(), b.program_options.values());
  d.Field("ingress_stages", a.pipeline.ingress_stages, b.pipeline.ingress_stages);
  d.Field("egress_stages", a.pipeline.egress_stages, b.pipeline.egress_stages);
  d.Field("max_recirculations", a.pipeline.max_recirculations, b.pipeline.max_recirculations);
  d.Field("budget.sram", a.pipeline.budget.sram_bytes, b.pipeline.budget.sram_bytes);
  d.Field("budget.tcam", a.pipeline.budget.tcam_entries, b.pipeline.budget.tcam_entries);
  d.Field("budget.tables", a.pipeline.budget.tables, b.pipeline.budget.tables);
  d.Field("budget.alus", a.pipeline.budget.stateful_alus, b.pipeline.budget.stateful_alus);
  d.Field("parse_depth", a.parser.parse_depth, b.parser.parse_depth);
  d.Field("verify_ipv4_checksum", a.parser.verify_ipv4_checksum, b.parser.verify_ipv4_checksum);
  d.Field("max_vlan_tags", a.parser.max_vlan_tags, b.parser.max_vlan_tags);
  d.Field("zero_udp_checksum", a.deparser.zero_udp_checksum, b.deparser.zero_udp_checksum);
  d.Field("cpu", a.cpu, b.cpu);
  d.Field("interfaces", a.interfaces, b.interfaces);
}

// One field of every port_queues entry, by port.
template <typename T>
std::map<PortId, std::optional<T>> PortQueueField(const TmConfig& c,
                                                  std::optional<T> PortQueueOverrides::*field) {
  std::map<PortId, std::optional<T>> by_port;
  for (const auto& [port, queues] : c.port_queues) by_port[port] = queues.*field;
  return by_port;
}

void TmFields(FieldDiff& d, const TmConfig& a, const TmConfig& b) {
  d.Field("tm.num_ports", a.num_ports, b.num_ports);
  d.Field("tm.shared_buffer", a.shared_buffer_bytes, b.shared_buffer_bytes);
  d.Field("tm.port_buffer", a.port_buffer_bytes, b.port_buffer_bytes);
  d.Field("tm.port_rate", a.port_rate_bps, b.port_rate_bps);
  d.Field("tm.wire_overhead", a.wire_overhead_bytes, b.wire_overhead_bytes);
  d.Field("tm.quantum", a.quantum_bytes, b.quantum_bytes);
  d.Field("tm.scheduler", a.scheduler, b.scheduler);
  d.Field("tm.pushout", a.pushout, b.pushout);
  d.Field("tm.queue_depth", a.queue.depth_pkts, b.queue.depth_pkts);
  d.Field("tm.ecn_threshold", a.queue.ecn_threshold_bytes, b.queue.ecn_threshold_bytes);
  d.Field("tm.drop_threshold", a.queue.drop_threshold_bytes, b.queue.drop_threshold_bytes);
  d.Field("tm.queue.weight", a.queue.weight, b.queue.weight);
  d.Field("tm.queue.rate_pps", a.queue.rate_pps, b.queue.rate_pps);
  d.Field("tm.alpha", a.queue.alpha, b.queue.alpha);
  d.Field("tm.guaranteed_min", a.queue.guaranteed_min_bytes, b.queue.guaranteed_min_bytes);
  d.Field("tm.port_rates", a.port_rates, b.port_rates);
  d.Field("tm.port_queues.depth_pkts", PortQueueField(a, &PortQueueOverrides::depth_pkts),
          PortQueueField(b, &PortQueueOverrides::depth_pkts));
  d.Field("tm.port_queues.ecn_threshold_bytes",
          PortQueueField(a, &PortQueueOverrides::ecn_threshold_bytes),
          PortQueueField(b, &PortQueueOverrides::ecn_threshold_bytes));
  d.Field("tm.port_queues.drop_threshold_bytes",
          PortQueueField(a, &PortQueueOverrides::drop_threshold_bytes),
          PortQueueField(b, &PortQueueOverrides::drop_threshold_bytes));
  d.Field("tm.port_queues.alpha", PortQueueField(a, &PortQueueOverrides::alpha),
          PortQueueField(b, &PortQueueOverrides::alpha));
  d.Field("tm.port_queues.guaranteed_min_bytes",
          PortQueueField(a, &PortQueueOverrides::guaranteed_min_bytes),
          PortQueueField(b, &PortQueueOverrides::guaranteed_min_bytes));
}

// Every field of the two configs but `path` (the file each came from).
std::vector<std::string> Differences(const LoadedSwitchConfig& a, const LoadedSwitchConfig& b) {
  FieldDiff d;
  SwitchFields(d, a.config, b.config);
  TmFields(d, a.config.tm, b.config.tm);
  d.Field("startup_script", a.startup_script, b.startup_script);
  d.Field("eal_args", a.eal_args, b.eal_args);
  d.Field("mbufs", a.mbufs, b.mbufs);
  d.Field("mbuf_cache", a.mbuf_cache, b.mbuf_cache);
  d.Field("workers", a.workers, b.workers);
  d.Field("cut_through", a.cut_through, b.cut_through);
  d.Field("port_devargs", a.port_devargs, b.port_devargs);
  d.Field("port_effects", Effects(a), Effects(b));
  return d.names();
}

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// Formats `config`, writes it with WriteSwitchConfig, loads it back: equal, and formatted again
// the same text.
void ExpectRoundTrip(const LoadedSwitchConfig& config, const std::string& path) {
  const std::string text = FormatSwitchConfig(config);
  Status written = WriteSwitchConfig(config, path);
  ASSERT_TRUE(written.ok()) << written.message();
  EXPECT_EQ(ReadAll(path), text);
  Result<LoadedSwitchConfig> again = LoadSwitchConfig(path);
  ASSERT_TRUE(again.ok()) << again.message() << "\n" << text;
  EXPECT_EQ(Joined(Differences(config, *again)), "") << text;
  EXPECT_EQ(FormatSwitchConfig(*again), text);
}

std::vector<std::string> ConfigFiles() {
  std::vector<std::string> files;
  const std::string configs = std::string(SWEMU_SOURCE_DIR) + "/configs";
  for (const auto& entry : std::filesystem::recursive_directory_iterator(configs)) {
    if (entry.is_regular_file() && entry.path().extension() == ".ini") {
      files.push_back(entry.path().lexically_normal().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(SwitchConfigWriterTest, EveryConfigFileRoundTrips) {
  int covered = 0;
  for (const std::string& file : ConfigFiles()) {
    SCOPED_TRACE(file);
    Result<LoadedSwitchConfig> loaded = LoadSwitchConfig(file);
    if (!loaded.ok()) continue;  // not a switch file LoadSwitchConfig takes
    ExpectRoundTrip(*loaded, TestDir() + std::to_string(covered) + ".ini");
    ++covered;
  }
  EXPECT_GE(covered, 15);
}

// Not a default left: every key of every section, and a port with loss but no rate.
LoadedSwitchConfig NonDefaultConfig(const std::string& dir) {
  std::ofstream(dir + "start.cli") << "# empty\n";
  LoadedSwitchConfig c;
  c.config.name = "tor-9";
  c.config.num_ports = 16;
  c.config.program = "atp";
  c.config.seed = 18446744073709551615u;
  c.startup_script = dir + "start.cli";
  PipelineConfig& pipeline = c.config.pipeline;
  pipeline.ingress_stages = 20;
  pipeline.egress_stages = 0;
  pipeline.max_recirculations = 0;
  pipeline.budget = {.sram_bytes = 3 << 20, .tcam_entries = 100, .tables = 3, .stateful_alus = 9};
  c.config.parser.parse_depth = 14;
  c.config.parser.verify_ipv4_checksum = false;
  c.config.deparser.zero_udp_checksum = true;
  TmConfig& tm = c.config.tm;
  tm.shared_buffer_bytes = 1000001;
  tm.port_buffer_bytes = 64 << 10;
  tm.port_rate_bps = 25'500'000'000;
  tm.wire_overhead_bytes = 0;
  tm.quantum_bytes = 9000;
  tm.scheduler = SchedulerKind::kWeighted;
  tm.queue.depth_pkts = 77;
  tm.queue.ecn_threshold_bytes = 1500;
  tm.queue.drop_threshold_bytes = 3 << 20;
  tm.queue.alpha = 0.3;  // not a power of two: written as a decimal
  tm.queue.guaranteed_min_bytes = 1000;
  c.config.program_options.Set("aggregators", "4096");
  c.config.program_options.Set("flag", "");
  c.config.program_options.Set("label", "a b=c");
  c.eal_args = "--no-pci --file-prefix x -l 0-1";
  c.mbufs = 1023;
  c.mbuf_cache = 0;
  c.workers = 7;
  c.cut_through = false;
  c.config.tm.port_rates = {{0, 0}, {3, 40'000'000'000}, {15, 123456789}};
  c.config.tm.port_queues = {
      {3, {.depth_pkts = 60, .ecn_threshold_bytes = 64 << 10}},
      {7, {.depth_pkts = 1, .alpha = 0.125, .guaranteed_min_bytes = 3000}},
      {9, {.drop_threshold_bytes = 1500}},
      {15, {kTmMaxQueueDepthPkts, 0, (3 << 20) + 1}},  // 0: no marking where [tm] marks
  };
  c.port_devargs = {{0, "net_vhost0,iface=/tmp/a b.sock,queues=1"}, {2, "net_ring_x"}};
  c.port_effects = {{0, {0.001, 0}}, {2, {0, 50'000}}, {9, {1e-7, 1234}}, {15, {0.3, 2'000'000}}};
  return c;
}

TEST(SwitchConfigWriterTest, NonDefaultValuesEverywhereRoundTrip) {
  const std::string dir = TestDir();
  const LoadedSwitchConfig config = NonDefaultConfig(dir);
  ExpectRoundTrip(config, dir + "switch.ini");
  const std::string text = FormatSwitchConfig(config);
  EXPECT_NE(text.find("devargs = net_vhost0,iface=/tmp/a b.sock,queues=1\n"), std::string::npos);
  EXPECT_NE(text.find("loss = 0.0000001\n"), std::string::npos) << text;
  EXPECT_NE(text.find("port_rate = 25500M\n"), std::string::npos) << text;
  EXPECT_NE(text.find("workers = 7\n"), std::string::npos) << text;
  EXPECT_NE(text.find("[port.3]\nrate = 40G\nqueue_depth = 60\necn_threshold = 64KiB\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("[port.7]\nqueue_depth = 1\nalpha = 1/8\nguaranteed_min = 3000B\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("alpha = 0.3\nguaranteed_min = 1000B\n"), std::string::npos) << text;
  EXPECT_NE(text.find("[port.9]\ndrop_threshold = 1500B\nloss = "), std::string::npos) << text;
  EXPECT_NE(text.find("ecn_threshold = 0B\ndrop_threshold = 3145729B\n"), std::string::npos)
      << text;
}

TEST(SwitchConfigWriterTest, PushoutRoundTrips) {
  LoadedSwitchConfig config;
  config.config.tm.port_rate_bps = kDefaultPortRateBps;
  config.config.tm.port_buffer_bytes = 124600;
  config.config.tm.pushout = true;
  const std::string text = FormatSwitchConfig(config);
  EXPECT_NE(text.find("port_buffer = 124600B\npushout = true\n"), std::string::npos) << text;
  ExpectRoundTrip(config, TestDir() + "pushout.ini");
}

TEST(SwitchConfigWriterTest, DefaultsWriteOnlyTheSwitchAndItsPortRate) {
  LoadedSwitchConfig config;
  config.config.tm.port_rate_bps = kDefaultPortRateBps;
  EXPECT_EQ(FormatSwitchConfig(config),
            "[switch]\nname = sw0\nports = 4\nprogram = l2l3\n\n[tm]\nport_rate = 10G\n");
  ExpectRoundTrip(config, TestDir() + "defaults.ini");
}

// Ports listed out of order keep their order in both lists (a port may get two sections).
TEST(SwitchConfigWriterTest, PortListsOutOfOrderKeepTheirOrder) {
  LoadedSwitchConfig config;
  config.config.tm.port_rate_bps = kDefaultPortRateBps;
  config.config.tm.port_rates = {{3, 1'000'000'000}, {1, 2'000'000'000}, {0, 5'000'000}};
  config.port_devargs = {{1, "net_null1"}, {3, "net_null3"}, {0, "net_null0"}};
  config.port_effects = {{3, {0.5, 0}}};
  config.config.tm.port_queues = {{3, {.depth_pkts = 30}}, {2, {.ecn_threshold_bytes = 20}}};
  ExpectRoundTrip(config, TestDir() + "order.ini");
}

// A relative startup script is written as an absolute path: the file may go anywhere.
TEST(SwitchConfigWriterTest, RelativeStartupScriptIsWrittenAbsolute) {
  const std::string dir = TestDir();
  std::ofstream(dir + "rel.cli") << "# empty\n";
  LoadedSwitchConfig config = NonDefaultConfig(dir);
  config.startup_script = std::filesystem::relative(dir + "rel.cli").string();
  ASSERT_FALSE(std::filesystem::path(config.startup_script).is_absolute());
  std::filesystem::create_directories(dir + "elsewhere");
  ASSERT_TRUE(WriteSwitchConfig(config, dir + "elsewhere/switch.ini").ok());
  Result<LoadedSwitchConfig> again = LoadSwitchConfig(dir + "elsewhere/switch.ini");
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_TRUE(std::filesystem::equivalent(again->startup_script, dir + "rel.cli"));
  config.startup_script = again->startup_script;
  EXPECT_EQ(Joined(Differences(config, *again)), "");
}

// With cli_relative_to the file's directory, `cli` is the script's path from there: the file and
// its script move together (a bundled config); the header comes first, and [program] keeps the
// order its keys were set in, read back too.
TEST(SwitchConfigWriterTest, StartupScriptRelativeToTheFileMovesWithIt) {
  const std::string dir = TestDir();
  std::filesystem::create_directories(dir + "bundle/scripts");
  std::ofstream(dir + "bundle/scripts/s.cli") << "# empty\n";
  LoadedSwitchConfig config = NonDefaultConfig(dir);
  config.startup_script = dir + "bundle/scripts/s.cli";
  config.config.program_options.Set("before", "1");  // set last: written last
  const SwitchConfigFormat format{.header = "# A bundle.\n# Two lines.\n",
                                  .cli_relative_to = dir + "bundle"};
  const std::string text = FormatSwitchConfig(config, format);
  EXPECT_EQ(text.rfind("# A bundle.\n# Two lines.\n[switch]\n", 0), 0u) << text;
  EXPECT_NE(text.find("\ncli = scripts/s.cli\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nlabel = a b=c\nbefore = 1\n"), std::string::npos) << text;
  Status written = WriteSwitchConfig(config, dir + "bundle/switch.ini", format);
  ASSERT_TRUE(written.ok()) << written.message();
  EXPECT_EQ(ReadAll(dir + "bundle/switch.ini"), text);
  std::filesystem::remove_all(dir + "moved");  // from an earlier run
  std::filesystem::rename(dir + "bundle", dir + "moved");
  Result<LoadedSwitchConfig> again = LoadSwitchConfig(dir + "moved/switch.ini");
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_TRUE(std::filesystem::equivalent(again->startup_script, dir + "moved/scripts/s.cli"));
  config.startup_script = again->startup_script;
  EXPECT_EQ(Joined(Differences(config, *again)), "");
  EXPECT_EQ(FormatSwitchConfig(*again, {.header = format.header,
                                        .cli_relative_to = dir + "moved"}),
            text);
}

// A header line that is not a comment would be read as a key: refused, nothing written.
TEST(SwitchConfigWriterTest, HeaderMustBeCommentLines) {
  const std::string dir = TestDir();
  const LoadedSwitchConfig config = NonDefaultConfig(dir);
  for (const std::string header : {"seed = 2\n", "# no line break", "# a\nb\n", "# a\r\n"}) {
    const std::string path = dir + "header.ini";
    Status written = WriteSwitchConfig(config, path, {.header = header, .cli_relative_to = ""});
    EXPECT_FALSE(written.ok()) << header;
    EXPECT_NE(written.message().find("header: "), std::string::npos) << written.message();
    EXPECT_FALSE(std::filesystem::exists(path)) << header;
  }
}

// The round trip would fail if the writer dropped a key: Differences names the field.
TEST(SwitchConfigWriterTest, DroppedKeyIsCaught) {
  const std::string dir = TestDir();
  const LoadedSwitchConfig config = NonDefaultConfig(dir);
  std::string text = FormatSwitchConfig(config);
  const std::size_t rate = text.find("rate = 40G\n");
  ASSERT_NE(rate, std::string::npos) << text;
  std::ofstream(dir + "dropped.ini") << text.erase(rate, 11);
  Result<LoadedSwitchConfig> again = LoadSwitchConfig(dir + "dropped.ini");
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(Joined(Differences(config, *again)), "tm.port_rates");
}

// Each field changed alone is named by Differences, and by no other name.
TEST(SwitchConfigWriterTest, DifferencesSeesEveryField) {
  const LoadedSwitchConfig base = NonDefaultConfig(TestDir());
  const std::vector<std::pair<std::string, std::function<void(LoadedSwitchConfig&)>>> changes = {
      {"name", [](LoadedSwitchConfig& c) { c.config.name += "x"; }},
      {"num_ports", [](LoadedSwitchConfig& c) { ++c.config.num_ports; }},
      {"program", [](LoadedSwitchConfig& c) { c.config.program = "l2l3"; }},
      {"seed", [](LoadedSwitchConfig& c) { ++c.config.seed; }},
      {"program_options", [](LoadedSwitchConfig& c) { c.config.program_options.Set("flag", "1"); }},
      {"ingress_stages", [](LoadedSwitchConfig& c) { ++c.config.pipeline.ingress_stages; }},
      {"egress_stages", [](LoadedSwitchConfig& c) { ++c.config.pipeline.egress_stages; }},
      {"max_recirculations", [](LoadedSwitchConfig& c) { ++c.config.pipeline.max_recirculations; }},
      {"budget.sram", [](LoadedSwitchConfig& c) { ++c.config.pipeline.budget.sram_bytes; }},
      {"budget.tcam", [](LoadedSwitchConfig& c) { ++c.config.pipeline.budget.tcam_entries; }},
      {"budget.tables", [](LoadedSwitchConfig& c) { ++c.config.pipeline.budget.tables; }},
      {"budget.alus", [](LoadedSwitchConfig& c) { ++c.config.pipeline.budget.stateful_alus; }},
      {"parse_depth", [](LoadedSwitchConfig& c) { ++c.config.parser.parse_depth; }},
      {"verify_ipv4_checksum",
       [](LoadedSwitchConfig& c) { c.config.parser.verify_ipv4_checksum = true; }},
      {"max_vlan_tags", [](LoadedSwitchConfig& c) { c.config.parser.max_vlan_tags = 1; }},
      {"zero_udp_checksum",
       [](LoadedSwitchConfig& c) { c.config.deparser.zero_udp_checksum = false; }},
      {"cpu", [](LoadedSwitchConfig& c) { ++c.config.cpu.latency_ns; }},
      {"interfaces", [](LoadedSwitchConfig& c) { c.config.interfaces.emplace_back(); }},
      {"tm.num_ports", [](LoadedSwitchConfig& c) { ++c.config.tm.num_ports; }},
      {"tm.shared_buffer", [](LoadedSwitchConfig& c) { ++c.config.tm.shared_buffer_bytes; }},
      {"tm.port_buffer", [](LoadedSwitchConfig& c) { ++c.config.tm.port_buffer_bytes; }},
      {"tm.port_rate", [](LoadedSwitchConfig& c) { ++c.config.tm.port_rate_bps; }},
      {"tm.wire_overhead", [](LoadedSwitchConfig& c) { ++c.config.tm.wire_overhead_bytes; }},
      {"tm.quantum", [](LoadedSwitchConfig& c) { ++c.config.tm.quantum_bytes; }},
      {"tm.scheduler",
       [](LoadedSwitchConfig& c) { c.config.tm.scheduler = SchedulerKind::kStrict; }},
      {"tm.pushout", [](LoadedSwitchConfig& c) { c.config.tm.pushout = true; }},
      {"tm.queue_depth", [](LoadedSwitchConfig& c) { ++c.config.tm.queue.depth_pkts; }},
      {"tm.ecn_threshold", [](LoadedSwitchConfig& c) { ++c.config.tm.queue.ecn_threshold_bytes; }},
      {"tm.drop_threshold",
       [](LoadedSwitchConfig& c) { ++c.config.tm.queue.drop_threshold_bytes; }},
      {"tm.queue.weight", [](LoadedSwitchConfig& c) { ++c.config.tm.queue.weight; }},
      {"tm.queue.rate_pps", [](LoadedSwitchConfig& c) { ++c.config.tm.queue.rate_pps; }},
      {"tm.alpha", [](LoadedSwitchConfig& c) { c.config.tm.queue.alpha = 0.25; }},
      {"tm.guaranteed_min", [](LoadedSwitchConfig& c) { ++c.config.tm.queue.guaranteed_min_bytes; }},
      {"tm.port_queues.alpha", [](LoadedSwitchConfig& c) { c.config.tm.port_queues[7].alpha = 2; }},
      {"tm.port_queues.guaranteed_min_bytes",
       [](LoadedSwitchConfig& c) { c.config.tm.port_queues[7].guaranteed_min_bytes.reset(); }},
      {"tm.port_rates", [](LoadedSwitchConfig& c) { ++c.config.tm.port_rates[1].bps; }},
      {"tm.port_queues.depth_pkts",
       [](LoadedSwitchConfig& c) { ++*c.config.tm.port_queues[3].depth_pkts; }},
      {"tm.port_queues.depth_pkts",
       [](LoadedSwitchConfig& c) { c.config.tm.port_queues[9].depth_pkts = 1024; }},
      {"tm.port_queues.ecn_threshold_bytes",
       [](LoadedSwitchConfig& c) { ++*c.config.tm.port_queues[3].ecn_threshold_bytes; }},
      {"tm.port_queues.ecn_threshold_bytes",
       [](LoadedSwitchConfig& c) { c.config.tm.port_queues[15].ecn_threshold_bytes.reset(); }},
      {"tm.port_queues.drop_threshold_bytes",
       [](LoadedSwitchConfig& c) { ++*c.config.tm.port_queues[9].drop_threshold_bytes; }},
      {"startup_script", [](LoadedSwitchConfig& c) { c.startup_script.clear(); }},
      {"eal_args", [](LoadedSwitchConfig& c) { c.eal_args += " -n 4"; }},
      {"mbufs", [](LoadedSwitchConfig& c) { ++c.mbufs; }},
      {"mbuf_cache", [](LoadedSwitchConfig& c) { ++c.mbuf_cache; }},
      {"workers", [](LoadedSwitchConfig& c) { ++c.workers; }},
      {"cut_through", [](LoadedSwitchConfig& c) { c.cut_through = true; }},
      {"port_devargs", [](LoadedSwitchConfig& c) { c.port_devargs[1].second += ",x=1"; }},
      {"port_effects", [](LoadedSwitchConfig& c) { c.port_effects[2].delay_ns += 1; }},
  };
  for (const auto& change : changes) {
    LoadedSwitchConfig changed = base;
    change.second(changed);
    EXPECT_EQ(Joined(Differences(base, changed)), change.first);
  }
}

TEST(SwitchConfigWriterTest, WriteRefusesWhatCannotBeReadBack) {
  const std::string dir = TestDir();
  const std::vector<std::function<void(LoadedSwitchConfig&)>> breaks = {
      [](LoadedSwitchConfig& c) { c.port_devargs[0].second += "#1"; },
      [](LoadedSwitchConfig& c) { c.config.name = ""; },
      [](LoadedSwitchConfig& c) { c.eal_args = "-l 0\n-n 4"; },
      [](LoadedSwitchConfig& c) { c.config.program_options.Set("a=b", "1"); },
      [](LoadedSwitchConfig& c) { c.config.program_options.Set("key", " padded"); },
      [](LoadedSwitchConfig& c) {
        c.port_effects[16] = {0.1, 0};
      },
      [](LoadedSwitchConfig& c) { c.config.tm.queue.depth_pkts = 0; },
      [](LoadedSwitchConfig& c) { c.config.tm.port_queues[2].depth_pkts = 0; },
      [](LoadedSwitchConfig& c) { c.config.tm.port_queues[16].ecn_threshold_bytes = 1; },
      [](LoadedSwitchConfig& c) { c.config.tm.queue.alpha = 5000; },
      [](LoadedSwitchConfig& c) { c.config.tm.port_queues[2].guaranteed_min_bytes = 1'000'001; },
      [](LoadedSwitchConfig& c) { c.config.tm.port_queues[5] = {}; },  // reads back as none
  };
  for (std::size_t i = 0; i < breaks.size(); ++i) {
    LoadedSwitchConfig config = NonDefaultConfig(dir);
    breaks[i](config);
    const std::string path = dir + std::to_string(i) + ".ini";
    Status written = WriteSwitchConfig(config, path);
    EXPECT_FALSE(written.ok()) << i;
    EXPECT_NE(written.message().find("cannot write " + path + ": "), std::string::npos)
        << written.message();
    EXPECT_FALSE(std::filesystem::exists(path)) << i;
  }
}

}  // namespace
}  // namespace swemu
