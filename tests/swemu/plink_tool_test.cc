// swemu-plink probe as users run it: probes through the emulated datacenter, the embedding, the
// groups and 2LHA's cross-rack bytes (Table 1's count for the racks' groups); bad options end
// with one line, exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {

const std::string kPlink = SWEMU_BINARY_DIR "/tools/swemu-plink";

std::string Dir() {
  const std::string dir = TestDirFor("plink_tool_");
  std::filesystem::create_directories(dir);
  return dir;
}

double Number(const std::string& out, const std::string& re_text) {
  std::smatch m;
  const std::regex re(re_text);
  return std::regex_search(out, m, re) ? std::stod(m[1].str()) : -1;
}

TEST(PlinkTool, ProbeEmbedGroupsAndTheirCrossRackBytes) {
  const std::string dir = Dir();
  RunResult run = RunCommandIn(dir, kPlink + " probe --json " + dir + "probe.json");
  ASSERT_EQ(run.status, 0) << run.err;
  const double raw = Number(run.out, "raw probes ([0-9.]+)");
  const double embedded = Number(run.out, "embedded \\(alpha 2.0, 3 dims\\) ([0-9.]+)");
  EXPECT_GT(raw, 0.5) << run.out;
  EXPECT_LT(raw, 0.97) << run.out;
  EXPECT_GT(embedded, raw) << run.out;  // seed 1
  EXPECT_GT(Number(run.out, "ProbeEmbed ([0-9.]+), Balanced"), 0.5) << run.out;
  // Table 1 with the racks as groups: 2(C-1)S = 2 x 3 x 100 MB across racks, 2(NC-1)S in all.
  EXPECT_EQ(Number(run.out, "2LHA, the racks +([0-9]+)"), 600e6) << run.out;
  EXPECT_EQ(Number(run.out, "flat aggregation +([0-9]+)"), 2400e6) << run.out;
  EXPECT_EQ(Number(run.out, "2LHA, the racks +[0-9]+  \\(([0-9]+)\\)"), 3000e6) << run.out;
  EXPECT_LT(Number(run.out, "2LHA, ProbeEmbed groups +([0-9]+)"),
            Number(run.out, "2LHA, Balanced Random +([0-9]+)"))
      << run.out;
  EXPECT_NE(ReadText(dir + "probe.json").find("\"ami_racks\""), std::string::npos);
  RunResult again = RunCommandIn(dir, kPlink + " probe");
  EXPECT_EQ(again.out.substr(0, again.out.find("wrote")), run.out.substr(0, run.out.find("wrote")));
}

// The README's 64-host example runs as printed.
TEST(PlinkTool, SixtyFourHostsInEightRacks) {
  RunResult run = RunCommandIn(Dir(), kPlink +
                                          " probe --fanout 2,2,2 --per-rack 8 --tier-delays "
                                          "32us,16us,4us,1us");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("64 hosts in 8 racks"), std::string::npos) << run.out;
  EXPECT_EQ(Number(run.out, "2LHA, the racks +([0-9]+)"), 2.0 * 7 * 100e6) << run.out;
}

TEST(PlinkTool, BadOptionsEndWithOneLine) {
  const std::string dir = Dir();
  for (const std::string& args :
       {std::string(""), std::string("bogus"), std::string("probe --bogus"),
        std::string("probe --fanout 0"), std::string("probe --fanout 2,x"),
        std::string("probe --tier-delays 1us"), std::string("probe --alpha 3"),
        std::string("probe --elasticity 0.5"), std::string("probe --chunk 3"),
        std::string("probe --buffer 0"), std::string("probe --json " + dir),
        std::string("probe --per-rack 0"), std::string("probe stray")}) {
    RunResult run = RunCommandIn(dir, kPlink + " " + args);
    EXPECT_EQ(run.status, 2) << args << ": " << run.err;
    if (!args.empty()) {
      EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << ": " << run.err;
    }
  }
}

}  // namespace
}  // namespace swemu::testing
