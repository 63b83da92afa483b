#include "swemu/command_line.h"

#include <gtest/gtest.h>

namespace swemu {
namespace {

Result<CommandLine> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "swemu");
  return ParseCommandLine(static_cast<int>(args.size()), args.data());
}

TEST(CommandLineTest, ReadsEveryOption) {
  Result<CommandLine> cmd =
      Parse({"--config", "a.ini", "--offline", "--in", "0=x.pcap", "-i", "sw:3=y.pcap", "--out-dir",
             "out", "--seed", "9", "--quiet", "--show-resources"});
  ASSERT_TRUE(cmd.ok()) << cmd.message();
  EXPECT_EQ(cmd->config, "a.ini");
  EXPECT_TRUE(cmd->offline);
  EXPECT_TRUE(cmd->quiet);
  EXPECT_TRUE(cmd->show_resources);
  EXPECT_EQ(cmd->out_dir, "out");
  ASSERT_TRUE(cmd->seed.has_value());
  EXPECT_EQ(*cmd->seed, 9u);
  ASSERT_EQ(cmd->inputs.size(), 2u);
  EXPECT_EQ(cmd->inputs[0].sw, "");
  EXPECT_EQ(cmd->inputs[0].port, 0);
  EXPECT_EQ(cmd->inputs[0].file, "x.pcap");
  EXPECT_EQ(cmd->inputs[1].sw, "sw");
  EXPECT_EQ(cmd->inputs[1].port, 3);
  EXPECT_EQ(cmd->inputs[1].file, "y.pcap");
}

TEST(CommandLineTest, BadOptionsAreOneLineErrors) {
  for (auto args : std::vector<std::vector<const char*>>{{"--bogus"},
                                                         {"--config"},
                                                         {"--seed", "x"},
                                                         {"--in", "3"},
                                                         {"--in", "=a.pcap"},
                                                         {"--in", "p=a.pcap"},
                                                         {"--in", "sw:x=a.pcap"},
                                                         {"--in", "1="},
                                                         {"stray"}}) {
    Result<CommandLine> cmd = Parse(args);
    ASSERT_FALSE(cmd.ok()) << args[0];
    EXPECT_FALSE(cmd.message().empty());
    EXPECT_EQ(cmd.message().find('\n'), std::string::npos) << cmd.message();
  }
  EXPECT_NE(Parse({"--in", "p=a.pcap"}).message().find("--in p=a.pcap"), std::string::npos);
  EXPECT_NE(Parse({"--seed", "x"}).message().find("--seed"), std::string::npos);
}

TEST(CommandLineTest, ReadsPcapRecording) {
  Result<CommandLine> cmd = Parse(
      {"--config", "a.ini", "--pcap-dir", "rec", "--pcap-ports", "0,2", "--pcap-snaplen", "128"});
  ASSERT_TRUE(cmd.ok()) << cmd.message();
  EXPECT_EQ(cmd->pcap_dir, "rec");
  EXPECT_EQ(cmd->pcap_ports, (std::vector<uint16_t>{0, 2}));
  EXPECT_EQ(cmd->pcap_snaplen, 128u);
  EXPECT_EQ(cmd->pcap_max_bytes, 0u);
  Result<CommandLine> capped =
      Parse({"--config", "a.ini", "--pcap-dir", "rec", "--pcap-max-bytes", "2GB"});
  ASSERT_TRUE(capped.ok()) << capped.message();
  EXPECT_EQ(capped->pcap_max_bytes, 2'000'000'000u);
  Result<CommandLine> plain = Parse({"--config", "a.ini", "--pcap-dir", "rec"});
  ASSERT_TRUE(plain.ok()) << plain.message();
  EXPECT_TRUE(plain->pcap_ports.empty());
  EXPECT_EQ(plain->pcap_snaplen, 256u);
}

TEST(CommandLineTest, BadPcapRecordingOptionsNameTheOption) {
  const std::pair<std::vector<const char*>, std::string> cases[] = {
      {{"--config", "a.ini", "--pcap-ports", "0"}, "--pcap-ports: only with --pcap-dir"},
      {{"--config", "a.ini", "--pcap-dir", "r", "--pcap-ports", "0,x"}, "--pcap-ports: port "},
      {{"--config", "a.ini", "--pcap-dir", "r", "--pcap-ports", "1,1"},
       "--pcap-ports: port 1 given twice"},
      {{"--config", "a.ini", "--pcap-dir", "r", "--pcap-snaplen", "5"}, "--pcap-snaplen: "},
      {{"--config", "a.ini", "--offline", "--pcap-dir", "r"}, "--pcap-dir: only in real time"},
      {{"--config", "a.ini", "--pcap-max-bytes", "1MB"}, "--pcap-max-bytes: only with --pcap-dir"},
      {{"--config", "a.ini", "--pcap-dir", "r", "--pcap-max-bytes", "0"},
       "--pcap-max-bytes: must be above 0"},
      {{"--config", "a.ini", "--pcap-dir", "r", "--pcap-max-bytes", "lots"}, "--pcap-max-bytes: "},
  };
  for (const auto& [args, expected] : cases) {
    Result<CommandLine> cmd = Parse(args);
    ASSERT_FALSE(cmd.ok()) << expected;
    EXPECT_EQ(cmd.message().rfind(expected, 0), 0u) << cmd.message();
  }
}

// --also-switch: more switches in the same process, each with its control socket, in order.
TEST(CommandLineTest, ReadsAlsoSwitches) {
  Result<CommandLine> cmd = Parse({"--config", "a.ini", "--also-switch", "b.ini=b.sock",
                                   "--also-switch", "c.ini=none", "--busy-poll"});
  ASSERT_TRUE(cmd.ok()) << cmd.message();
  ASSERT_EQ(cmd->also_switches.size(), 2u);
  EXPECT_EQ(cmd->also_switches[0].config, "b.ini");
  EXPECT_EQ(cmd->also_switches[0].control_socket, "b.sock");
  EXPECT_EQ(cmd->also_switches[1].config, "c.ini");
  EXPECT_EQ(cmd->also_switches[1].control_socket, "none");
  EXPECT_TRUE(Parse({"--config", "a.ini"})->also_switches.empty());
}

TEST(CommandLineTest, BadAlsoSwitchesNameTheOption) {
  const std::pair<std::vector<const char*>, std::string> cases[] = {
      {{"--config", "a.ini", "--also-switch", "b.ini"},
       "--also-switch b.ini: expected CONFIG=SOCKET"},
      {{"--config", "a.ini", "--also-switch", "=b.sock"},
       "--also-switch =b.sock: expected CONFIG=SOCKET"},
      {{"--also-switch", "b.ini=b.sock"}, "--also-switch: needs --config"},
      {{"--config", "a.ini", "--also-switch", "b.ini=s", "--pcap-dir", "r"},
       "--also-switch: not with --pcap-dir"},
      {{"--config", "a.ini", "--also-switch", "b.ini=s", "--offline"},
       "--also-switch: not with --offline"},
      {{"--config", "a.ini", "--also-switch", "b.ini=s", "--stats-interval", "1"},
       "--also-switch: not with --stats-interval"},
  };
  for (const auto& [args, expected] : cases) {
    Result<CommandLine> cmd = Parse(args);
    ASSERT_FALSE(cmd.ok()) << expected;
    EXPECT_EQ(cmd.message().rfind(expected, 0), 0u) << cmd.message();
  }
}

TEST(CommandLineTest, WorkersOnlyWithABackend) {
  Result<CommandLine> cmd = Parse({"--topology", "t.topo", "--backend", "netns", "--workers", "2"});
  ASSERT_TRUE(cmd.ok()) << cmd.message();
  EXPECT_EQ(cmd->workers, 2u);
  EXPECT_EQ(Parse({"--topology", "t.topo", "--backend", "netns"})->workers, 1u);
  const std::pair<std::vector<const char*>, std::string> cases[] = {
      {{"--config", "a.ini", "--workers", "2"}, "--workers: only with --backend"},
      {{"--topology", "t.topo", "--backend", "netns", "--workers", "0"}, "--workers: "},
      {{"--topology", "t.topo", "--backend", "netns", "--workers", "x"}, "--workers: "},
  };
  for (const auto& [args, expected] : cases) {
    Result<CommandLine> bad = Parse(args);
    ASSERT_FALSE(bad.ok()) << expected;
    EXPECT_EQ(bad.message().rfind(expected, 0), 0u) << bad.message();
  }
}

}  // namespace
}  // namespace swemu
