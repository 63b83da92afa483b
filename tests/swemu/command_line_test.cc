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

}  // namespace
}  // namespace swemu
