// swemu-plink as users run it. probe: probes through the emulated datacenter, the embedding, the
// groups and 2LHA's cross-rack bytes (Table 1's count for the racks' groups). experiment: Figure
// 8's reductions on packets (a short run), on the default tree, on the bundled topology file that
// is that tree, and on another system's topology. Bad options end with one line, exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {

const std::string kPlink = SWEMU_BINARY_DIR "/tools/swemu-plink";
const std::string kConfigs = SWEMU_SOURCE_DIR "/configs/";

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

// probe --topology: probe's default tree written as a topology file (switches, links and hosts
// in the tree's order) gives the default run's figures and groups to the byte; only the first
// line names the file where the tree's says its hosts per rack. A tree option beside the file,
// or a file that is not there, is one line.
TEST(PlinkTool, ProbeOnTheDefaultTreeWrittenAsATopologyIsTheDefaultRun) {
  const std::string dir = Dir();
  std::string topo = "[topology]\n";
  const std::pair<std::string, int> switches[] = {
      {"core", 2}, {"l1s0", 3}, {"l1s1", 3}, {"l2s0", 5}, {"l2s1", 5}, {"l2s2", 5}, {"l2s3", 5}};
  for (const auto& [name, ports] : switches) {
    std::ofstream(dir + name + ".ini") << "[switch]\nname = " << name << "\nports = " << ports
                                       << "\nprogram = l2l3\n\n[tm]\nport_rate = 10G\n";
    topo += "switch = " + name + " " + name + ".ini\n";
  }
  topo += "link = l1s0:2 core:0 rate=10G delay=16us\nlink = l1s1:2 core:1 rate=10G delay=16us\n";
  for (int r = 0; r < 4; ++r) {
    topo += "link = l2s" + std::to_string(r) + ":4 l1s" + std::to_string(r / 2) + ":" +
            std::to_string(r % 2) + " rate=10G delay=4us\n";
  }
  for (int h = 0; h < 16; ++h) {
    topo += "host = l2s" + std::to_string(h / 4) + ":" + std::to_string(h % 4) +
            " delay=1us name=h" + std::to_string(h) + "\n";
  }
  std::ofstream(dir + "tree.topo") << topo;
  RunResult tree = RunCommandIn(dir, kPlink + " probe");
  RunResult file = RunCommandIn(dir, kPlink + " probe --topology " + dir + "tree.topo");
  ASSERT_EQ(tree.status, 0) << tree.err;
  ASSERT_EQ(file.status, 0) << file.err;
  const std::string named = "swemu-plink probe: 16 hosts in 4 racks of " + dir + "tree.topo, 15";
  EXPECT_EQ(tree.out.rfind("swemu-plink probe: 16 hosts in 4 racks (4 per rack), 15", 0), 0u)
      << tree.out;
  EXPECT_EQ(file.out.rfind(named, 0), 0u) << file.out;
  EXPECT_EQ(file.out.substr(file.out.find('\n')), tree.out.substr(tree.out.find('\n')));
  for (const auto& [args, says] :
       {std::pair<std::string, std::string>{
            " --fanout 2,2",
            "swemu-plink probe: --fanout: not with --topology (a topology replaces the shape "
            "options)\n"},
        {" --tier-delays 1us,1us,1us", "swemu-plink probe: --tier-delays: not with --topology"}}) {
    RunResult run = RunCommandIn(dir, kPlink + " probe --topology " + dir + "tree.topo" + args);
    EXPECT_EQ(run.status, 2) << args;
    EXPECT_EQ(run.err.rfind(says, 0), 0u) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_EQ(run.out, "") << args;
  }
  RunResult none = RunCommandIn(dir, kPlink + " probe --topology " + dir + "none.topo");
  EXPECT_EQ(none.status, 2);
  EXPECT_EQ(none.err.rfind("swemu-plink probe: --topology " + dir + "none.topo: cannot open", 0),
            0u)
      << none.err;
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

// configs/plink_datacenter.topo is the default tree: the same figures to the byte (a short run:
// two assignments of a smaller buffer), the CSV too.
TEST(PlinkTool, ExperimentOnTheBundledTopologyIsTheDefaultRun) {
  const std::string dir = Dir();
  const std::string args = " experiment --assignments 2 --buffer 128KB --csv " + dir;
  RunResult tree = RunCommandIn(dir, kPlink + args + "tree.csv");
  ASSERT_EQ(tree.status, 0) << tree.err;
  RunResult file = RunCommandIn(
      dir, kPlink + args + "file.csv --topology " + kConfigs + "plink_datacenter.topo");
  ASSERT_EQ(file.status, 0) << file.err;
  EXPECT_NE(file.out.find("64 hosts in 8 racks (3 tiers)"), std::string::npos) << file.out;
  EXPECT_EQ(file.out, tree.out);
  EXPECT_EQ(ReadText(dir + "file.csv"), ReadText(dir + "tree.csv"));
}

// Another system's topology (two leaves of two hosts under a spine, the leaves' own files):
// the racks are the leaves, ProbeEmbed's groups find them, every sum is exact (else exit 1).
TEST(PlinkTool, ExperimentOnTheLeafSpineTopologyFindsTheRacks) {
  const std::string dir = Dir();
  RunResult run = RunCommandIn(dir, kPlink + " experiment --assignments 2 --buffer 256KB "
                                             "--topology " + kConfigs + "leaf_spine.topo");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("4 hosts in 2 racks (2 tiers)"), std::string::npos) << run.out;
  // The racks' groups move 2(C-1)S = 2 x 1 x 256000 B across racks.
  EXPECT_NE(run.out.find("2LHA racks "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("AMI 1.000   512000 B"), std::string::npos) << run.out;
  EXPECT_EQ(Number(run.out, "2LHA ProbeEmbed +[0-9.]+ +[0-9.]+ +[0-9.]+ +AMI ([0-9.]+)"), 1.0)
      << run.out;
}

// A topology PLink cannot run: one line naming the problem, exit 2, nothing on stdout.
TEST(PlinkTool, TopologiesWithoutTwoHostsThatReachEachOtherAreRefused) {
  const std::string dir = Dir();
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + name) << text;
    return dir + name;
  };
  write("s.ini", "[switch]\nname = s\nports = 4\nprogram = l2l3\n");
  const std::string one = write("one.topo", "[topology]\nswitch = a s.ini\nhost = a:0 name=x\n");
  const std::string apart = write("apart.topo",
                                  "[topology]\nswitch = a s.ini\nswitch = b s.ini\n"
                                  "host = a:0 name=x\nhost = a:1 name=y\nhost = b:0 name=z\n");
  const std::string port = write("port.topo",
                                 "[topology]\nswitch = a s.ini\nhost = a:0 name=x\n"
                                 "host = a:7 name=y\n");
  const std::pair<std::string, std::string> cases[] = {
      {"--topology " + one, "PLink needs at least two hosts, not 1"},
      {"--topology " + port, "host y: a has 4 ports, no port 7"},
      {"--topology " + apart, "hosts x and z cannot reach each other (no links from a to b)"},
      {"--topology " + dir + "none.topo", "--topology " + dir + "none.topo: cannot open topology"},
      {"--topology " + apart + " --fanout 2,2",
       "--fanout: not with --topology (a topology replaces the shape options)\n"},
      {"--topology " + apart + " --rack-hosts 2,2", "--rack-hosts: not with --topology"},
      {"--topology " + apart + " --tier-delays 1us,1us,1us", "--tier-delays: not with --topology"},
      {"--topology " + apart + " --tier-rates 1G,1G,1G", "--tier-rates: not with --topology"}};
  for (const auto& [args, says] : cases) {
    RunResult run = RunCommandIn(dir, kPlink + " experiment " + args);
    EXPECT_EQ(run.status, 2) << args << ": " << run.err;
    EXPECT_EQ(run.out, "") << args;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << ": " << run.err;
    EXPECT_NE(run.err.find(says), std::string::npos) << args << ": " << run.err;
  }
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
