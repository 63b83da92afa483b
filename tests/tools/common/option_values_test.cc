// tools/option_values.h: the checks every tool's option parser shares, on options parsed as a
// tool parses them (Boost.Program_options, defaults declared).
#include "tools/option_values.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace swemu {
namespace {

namespace po = boost::program_options;

// The options of a tool with a shape (two with defaults, one without) and --topology.
po::variables_map Parse(std::vector<std::string> args) {
  po::options_description desc;
  desc.add_options()("topology", po::value<std::string>())(
      "tors", po::value<std::string>()->default_value("3"))(
      "spines", po::value<std::string>()->default_value("2"))("memory", po::value<std::string>())(
      "seed", po::value<std::string>()->default_value("1"));
  std::vector<const char*> argv = {"tool"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  po::variables_map vm;
  po::store(po::parse_command_line(static_cast<int>(argv.size()), argv.data(), desc), vm);
  po::notify(vm);
  return vm;
}

Status Refuse(std::vector<std::string> args) {
  return opt::RefuseWithTopology(Parse(std::move(args)), {"tors", "spines", "memory"});
}

TEST(RefuseWithTopology, WithoutATopologyEveryShapeOptionIsFine) {
  EXPECT_TRUE(Refuse({"--tors", "4", "--spines", "1", "--memory", "1MB"}).ok());
}

TEST(RefuseWithTopology, ATopologyAloneOrWithOtherOptionsIsFine) {
  // --memory has no default: not given, it is not there at all.
  EXPECT_TRUE(Refuse({"--topology", "a.topo"}).ok());
  EXPECT_TRUE(Refuse({"--topology", "a.topo", "--seed", "7"}).ok());
}

TEST(RefuseWithTopology, AShapeOptionBesideATopologyIsOneLineNamingIt) {
  Status s = Refuse({"--topology", "a.topo", "--spines", "4"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "--spines: not with --topology (a topology replaces the shape options)");
  s = Refuse({"--memory", "1MB", "--topology", "a.topo"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().substr(0, s.message().find(':')), "--memory");
}

TEST(RefuseWithTopology, AShapeOptionGivenAtItsDefaultIsStillRefused) {
  Status s = Refuse({"--topology", "a.topo", "--tors", "3"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("--tors: not with --topology", 0), 0u) << s.message();
}

TEST(RefuseWithTopology, OfSeveralTheFirstOfTheToolsListIsNamed) {
  Status s = Refuse({"--topology", "a.topo", "--memory", "1MB", "--spines", "4"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("--spines:", 0), 0u) << s.message();
}

}  // namespace
}  // namespace swemu
