// swemu-plink as users run it. probe: probes through the emulated datacenter, the embedding, the
// groups and 2LHA's cross-rack bytes (Table 1's count for the racks' groups). experiment: Figure
// 8's reductions on packets (a short run). Bad options end with one line, exit 2.
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

// Figure 8, short: 16 hosts in four unbalanced racks under two pods, background traffic, three
// assignments. Every reduction's sums are checked by the tool (exit 1 otherwise).
TEST(PlinkTool, ExperimentRanksTheMethodsAsFigure8) {
  const std::string dir = Dir();
  const std::string args =
      " experiment --fanout 2,2 --rack-hosts 7,2,4,3 --assignments 3 --buffer 256KB --chunk 8KB "
      "--background 4 --csv " +
      dir + "fig8.csv";
  RunResult run = RunCommandIn(dir, kPlink + args);
  ASSERT_EQ(run.status, 0) << run.err;
  const double fa = Number(run.out, "  FA +([0-9.]+)");
  const double random = Number(run.out, "2LHA Balanced Random +([0-9.]+)");
  const double racks = Number(run.out, "2LHA racks +([0-9.]+)");
  const double probe_embed = Number(run.out, "2LHA ProbeEmbed +([0-9.]+)");
  EXPECT_GT(probe_embed, 0) << run.out;
  EXPECT_LT(probe_embed, random) << run.out;
  EXPECT_LT(probe_embed, fa) << run.out;
  EXPECT_LT(racks, fa) << run.out;
  const double consistency = Number(run.out, "agree with each other at a mean AMI of ([-0-9.]+)");
  EXPECT_GT(consistency, 0.0) << run.out;
  EXPECT_LE(consistency, 1.0) << run.out;
  // The racks' groups move 2(C-1)S = 2 x 3 x 256000 B across racks, whatever their sizes.
  EXPECT_NE(run.out.find("AMI 1.000   1536000 B"), std::string::npos) << run.out;
  const std::string csv = ReadText(dir + "fig8.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 3 * 4) << csv;
  EXPECT_EQ(csv.find("assignment,method,latency_ms,cross_rack_bytes,retransmissions,ami_racks\n"),
            0u);
  // Deterministic: the same seed, the same figures.
  RunResult again = RunCommandIn(dir, kPlink + args);
  EXPECT_EQ(again.out, run.out);
}

// --progress (for plink_figure8.py's ETA): one stderr line per assignment as it ends, and
// nothing on stderr without it; the figures on stdout are the same either way.
TEST(PlinkTool, ExperimentProgressLinesOnlyWhenAsked) {
  const std::string dir = Dir();
  const std::string args =
      " experiment --fanout 2,2 --rack-hosts 2,1,2,1 --assignments 3 --buffer 64KB --chunk 8KB "
      "--background 0";
  RunResult quiet = RunCommandIn(dir, kPlink + args);
  ASSERT_EQ(quiet.status, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
  RunResult shown = RunCommandIn(dir, kPlink + args + " --progress");
  ASSERT_EQ(shown.status, 0) << shown.err;
  EXPECT_EQ(shown.err, "assignment 1/3\nassignment 2/3\nassignment 3/3\n");
  EXPECT_EQ(shown.out, quiet.out);
}

TEST(PlinkTool, BadOptionsEndWithOneLine) {
  const std::string dir = Dir();
  for (const std::string& args : {std::string(""),
                                  std::string("bogus"),
                                  std::string("probe --bogus"),
                                  std::string("probe --fanout 0"),
                                  std::string("probe --fanout 2,x"),
                                  std::string("probe --tier-delays 1us"),
                                  std::string("probe --alpha 3"),
                                  std::string("probe --elasticity 0.5"),
                                  std::string("probe --chunk 3"),
                                  std::string("probe --buffer 0"),
                                  std::string("probe --json " + dir),
                                  std::string("probe --per-rack 0"),
                                  std::string("probe stray"),
                                  std::string("experiment --rack-hosts 3,3"),
                                  std::string("experiment --rack-hosts 0,1"),
                                  std::string("experiment --tier-rates 1G,0,1G"),
                                  std::string("experiment --tier-rates x"),
                                  std::string("experiment --assignments 0"),
                                  std::string("experiment --buffer 6"),
                                  std::string("experiment --background-period 0"),
                                  std::string("experiment --csv " + dir),
                                  std::string("experiment --background-max fast"),
                                  std::string("experiment --alpha 0.5")}) {
    RunResult run = RunCommandIn(dir, kPlink + " " + args);
    EXPECT_EQ(run.status, 2) << args << ": " << run.err;
    if (!args.empty()) {
      EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << ": " << run.err;
    }
  }
}

}  // namespace
}  // namespace swemu::testing
