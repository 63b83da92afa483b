// The merge rules programs declare beside their commands (CommandSpec::merge): how the answers
// of N replicas of a switch ([dpdk] workers = N) become one. Commands that change state and
// those that show configuration declare none: replica 0's answer stands.
#include <gtest/gtest.h>

#include "pipeline/control/answer_merge.h"
#include "tests/pipeline/switch_harness.h"

namespace swemu {
namespace {

using testing::SwitchHarness;

SwitchConfig Config(const std::string& program) {
  SwitchConfig config;
  config.num_ports = 4;
  config.program = program;
  return config;
}

// The merge `line`'s command declares in a switch running `program`, applied to `answers`.
std::string Merged(const std::string& program, const std::string& line,
                   const std::vector<std::string>& answers) {
  SwitchHarness h(Config(program));
  EXPECT_TRUE(h.ok()) << h.error();
  if (!h.ok()) return "";
  const AnswerMerge* merge = h.sw().commands().MergeOf(line);
  EXPECT_NE(merge, nullptr) << line;
  return merge == nullptr ? "(none)" : (*merge)(answers);
}

bool Declares(const std::string& program, const std::string& line) {
  SwitchHarness h(Config(program));
  return h.ok() && h.sw().commands().MergeOf(line) != nullptr;
}

TEST(ProgramReplicaMergeTest, ChangesAndConfigurationDeclareNoMerge) {
  EXPECT_FALSE(Declares("pcn", "pcn_initial all 10"));
  EXPECT_FALSE(Declares("flow_ecn", "show flow_ecn"));
  EXPECT_FALSE(Declares("dlcp", "show dlcp"));
  EXPECT_FALSE(Declares("pcn", "no_such_command"));
}

TEST(ProgramReplicaMergeTest, AResetAnsweredByEveryReplicaStaysEmpty) {
  EXPECT_EQ(Merged("pcn", "pcn_stats reset", {"", ""}), "");
}

// Each slot has one owner, so counters and slots in use add up; slots and elements are kept.
TEST(ProgramReplicaMergeTest, GoatCountersAndSlotsAreSummedTheConfigurationKept) {
  const std::vector<std::string> stats = {
      R"({"claimed": 4, "slots_in_use": 2, "slots": 64, "elements": 8})",
      R"({"claimed": 6, "slots_in_use": 1, "slots": 64, "elements": 8})"};
  EXPECT_EQ(Merged("goat", "goat_stats", stats),
            R"({"claimed": 10, "slots_in_use": 3, "slots": 64, "elements": 8})");
  EXPECT_EQ(Merged("goat", "show goat", {"goat: " + stats[0] + "\n", "goat: " + stats[1] + "\n"}),
            R"(goat: {"claimed": 10, "slots_in_use": 3, "slots": 64, "elements": 8})"
            "\n");
}

// Each aggregator is owned by one lcore (ATP's shard key is its index).
TEST(ProgramReplicaMergeTest, AtpCountersAndAggregatorsInUseAreSummed) {
  const std::vector<std::string> show = {
      "atp: 3/1024 aggregators in use, 64 elements\nclaimed 10, aggregated 20\n",
      "atp: 4/1024 aggregators in use, 64 elements\nclaimed 1, aggregated 2\n"};
  EXPECT_EQ(Merged("atp", "show atp", show),
            "atp: 7/1024 aggregators in use, 64 elements\nclaimed 11, aggregated 22\n");
  const std::vector<std::string> stats = {
      R"({"claimed": 10, "aggregators_in_use": 3, "aggregators": 1024, "elements": 64})",
      R"({"claimed": 5, "aggregators_in_use": 4, "aggregators": 1024, "elements": 64})"};
  EXPECT_EQ(Merged("atp", "atp_stats", stats),
            R"({"claimed": 15, "aggregators_in_use": 7, "aggregators": 1024, "elements": 64})");
}

TEST(ProgramReplicaMergeTest, PcnCountersAreSummed) {
  const std::vector<std::string> stats = {R"({"starts": 2, "bursts_arrived": 1, "marked_pcn": 7})",
                                          R"({"starts": 1, "bursts_arrived": 2, "marked_pcn": 0})"};
  EXPECT_EQ(Merged("pcn", "pcn_stats", stats),
            R"({"starts": 3, "bursts_arrived": 3, "marked_pcn": 7})");
}

// Port P's line from replica P % N, where its egress ran; a line of the same port on another
// replica (configuration only, no jobs) is left out.
TEST(ProgramReplicaMergeTest, ShowPcnTakesEachPortFromItsOwnerAndSumsTheCounters) {
  const std::string header = "pcn: udp_port 9200, timeout 8 ms, 4 job lanes per port\n";
  const std::string port1 = "port 1: initial 64, active 12, job 0: 3 pending, threshold 12;\n";
  const std::vector<std::string> answers = {
      header + "port 0: initial 64, active 9, job 1: 1 pending, threshold 9;\n" +
          "port 1: initial 64, active 64\n" + R"({"starts": 1, "bursts_arrived": 0})" + "\n",
      header + "port 0: initial 64, active 64\n" + port1 + R"({"starts": 9, "bursts_arrived": 8})" +
          "\n"};
  EXPECT_EQ(Merged("pcn", "show pcn", answers),
            header + "port 0: initial 64, active 9, job 1: 1 pending, threshold 9;\n" + port1 +
                R"({"starts": 10, "bursts_arrived": 8})" + "\n");
}

}  // namespace
}  // namespace swemu
