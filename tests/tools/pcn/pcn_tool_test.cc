// swemu-pcn threshold as users run it: the paper's link gives 40 and 10 and the START byte 0x8A;
// bad options end with one line and exit 2. tools/pcn/pcn_report.py on a sim run's files prints
// the figures the sim printed. swemu-pcn sim --topology on the bundled file prints what the
// default run prints; a topology without its roles, or with a shape option, is refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {

const std::string kPcn = SWEMU_BINARY_DIR "/tools/swemu-pcn";

std::string Dir() {
  const std::string dir = TestDirFor("pcn_tool_");
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(PcnTool, ThePapersLinkGivesFortyAndTen) {
  RunResult run = RunCommandIn(Dir(), kPcn + " threshold --rtt 7690us --rate 100M");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("= 37.00 packets"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("h_initial = 40 packets"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("-> 10 packets"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("PCN-START TOS: 0x8A with ECT(0)"), std::string::npos) << run.out;
  RunResult half = RunCommandIn(Dir(), kPcn + " threshold --rtt 7690us --rate 100M --k 0.5");
  EXPECT_NE(half.out.find("-> 20 packets"), std::string::npos) << half.out;
}

TEST(PcnTool, BadOptionsEndWithOneLine) {
  for (const std::string& args :
       {std::string(""), std::string("bogus"), std::string("threshold"),
        std::string("threshold --rtt 1ms"), std::string("threshold --rtt 0 --rate 1G"),
        std::string("threshold --rtt 1ms --rate fast"), std::string("threshold --rtt 1ms --rate 1G --k 1"),
        std::string("threshold --rtt 1ms --rate 1G --k x"), std::string("threshold --rtt 1ms --rate 1G --flows 0"),
        std::string("threshold --rtt 1ms --rate 1G stray"), std::string("threshold --rtt 1s --rate 10G --k 0.9"),
        std::string("sim --alpha 3^2"), std::string("sim --alpha -1"),
        std::string("sim --threads 0"), std::string("sim --threads 2x")}) {
    RunResult run = RunCommandIn(Dir(), kPcn + " " + args);
    EXPECT_EQ(run.status, 2) << args;
    if (!args.empty()) {
      EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << ": " << run.err;
      EXPECT_EQ(run.err.rfind("swemu-pcn", 0), 0u) << run.err;
    }
  }
}

// swemu's columns of a comparison table: what follows " | " on each of its lines.
std::vector<std::string> SwemuColumns(const std::string& table) {
  std::vector<std::string> columns;
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t bar = line.find(" | ");
    if (bar != std::string::npos) columns.push_back(line.substr(bar + 3));
  }
  return columns;
}

// The report reads the queue figures the sim computed from its 10-us depth samples
// (summary.json), not the 1-ms telemetry rows, so both print the same table.
TEST(PcnTool, ReportOfASimRunPrintsTheSimsFigures) {
  const std::string dir = Dir();
  RunResult sim =
      RunCommandIn(dir, kPcn + " sim --out " + dir +
                            "run --duration 12s --ddl-start 3s --idle 1s --iterations 2");
  ASSERT_EQ(sim.status, 0) << sim.err;
  const std::vector<std::string> want = SwemuColumns(sim.out);
  ASSERT_EQ(want.size(), 7u) << sim.out;  // the header and six metrics
  RunResult report =
      RunCommandIn(dir, "/usr/bin/python3 " SWEMU_SOURCE_DIR "/tools/pcn/pcn_report.py --without " +
                            dir + "run/without --with " + dir + "run/with");
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_EQ(SwemuColumns(report.out), want) << sim.out << report.out;
}

// --threads 2 runs without and with PCN at once: every file and the table as from one thread.
TEST(PcnTool, TheTwoRunsAtOnceWriteWhatOneThreadWrites) {
  const std::string dir = Dir();
  const std::string sim =
      "cd " + dir + " && " + kPcn + " sim --duration 12s --ddl-start 3s --idle 1s --iterations 2 --out ";
  RunResult one = RunCommandIn(dir, sim + "one --threads 1");
  RunResult two = RunCommandIn(dir, sim + "two --threads 2");
  ASSERT_EQ(one.status, 0) << one.err;
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_EQ(two.out.substr(0, two.out.find("wrote ")), one.out.substr(0, one.out.find("wrote ")));
  for (const char* file : {"comparison.txt", "without/telemetry.csv", "without/summary.json",
                           "with/telemetry.csv", "with/summary.json"}) {
    const std::string a = ReadText(dir + "one/" + file);
    EXPECT_GT(a.size(), 100u) << file;
    EXPECT_EQ(ReadText(dir + "two/" + file), a) << file;
  }
}

// Shortened (2 bursts per worker in 6 s) but every part of the network as in the default run.
TEST(PcnTool, TheBundledTopologyPrintsTheDefaultRun) {
  const std::string shortened = " --duration 6s --ddl-start 1s --idle 1s --iterations 2";
  RunResult defaults = RunCommandIn(Dir(), kPcn + " sim" + shortened);
  RunResult file = RunCommandIn(
      Dir(), kPcn + " sim --topology " SWEMU_SOURCE_DIR "/configs/pcn_experiment.topo" + shortened);
  ASSERT_EQ(defaults.status, 0) << defaults.err;
  ASSERT_EQ(file.status, 0) << file.err;
  EXPECT_NE(defaults.out.find("root + 2 leaves, 3 background hosts per leaf"), std::string::npos);
  EXPECT_EQ(file.out, defaults.out);
}

TEST(PcnTool, BadTopologiesEndWithOneLine) {
  const std::string dir = Dir();
  const std::string ini = SWEMU_SOURCE_DIR "/configs/pcn_experiment/";
  const std::string head = "[topology]\nswitch = root " + ini + "root.ini\nswitch = leaf1 " +
                           ini + "leaf1.ini\nlink = root:0 leaf1:0 rate=1G delay=1ms\n";
  struct Case {
    std::string name, hosts, error;
  };
  for (const Case& c : std::vector<Case>{
           {"no_ps", "host = leaf1:1 name=w0 role=worker\n", "no PS: one host should say role=ps"},
           {"two_ps",
            "host = root:2 name=a role=ps\nhost = leaf1:1 name=b role=ps\n"
            "host = leaf1:2 name=w0 role=worker\n",
            "more than one host says role=ps (a, b); PCN has one PS"},
           {"unreachable",
            "switch = leaf2 " + ini + "leaf2.ini\nhost = root:2 name=ps role=ps\n"
            "host = leaf2:1 name=w0 role=worker\n",
            "worker w0 on leaf2 cannot reach the PS's switch root"},
       }) {
    std::ofstream(dir + c.name + ".topo") << head << c.hosts;
    RunResult run = RunCommandIn(dir, kPcn + " sim --topology " + dir + c.name + ".topo");
    EXPECT_EQ(run.status, 2) << c.name;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_EQ(run.err.rfind("swemu-pcn sim: --topology " + dir + c.name + ".topo: ", 0), 0u)
        << run.err;
    EXPECT_NE(run.err.find(c.error), std::string::npos) << run.err;
    EXPECT_EQ(run.out, "");
  }
  for (const char* shape : {"--workers 3", "--background 1", "--rtt 1ms", "--rate 10M",
                            "--edge-rate 10G", "--queue 30"}) {
    RunResult run = RunCommandIn(dir, kPcn + " sim --topology " SWEMU_SOURCE_DIR
                                             "/configs/pcn_experiment.topo " + shape);
    EXPECT_EQ(run.status, 2) << shape;
    const std::string option = std::string(shape).substr(0, std::string(shape).find(' '));
    EXPECT_EQ(run.err, "swemu-pcn sim: " + option +
                           ": not with --topology (a topology replaces the shape options)\n");
  }
}

}  // namespace
}  // namespace swemu::testing
