// Runs the built swemu-atp as users do: the ATP job in virtual time through the two-rack
// topologies (both racks running ATP; one of them a plain l2l3 switch), with loss, with bad
// input, and in real time through one swemu process (one rack, or two racks joined by a ring
// link, swemu --also-switch) and through a topology's swemu processes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {

const std::string kAtp = SWEMU_BINARY_DIR "/tools/swemu-atp";
const std::string kConfigs = SWEMU_SOURCE_DIR "/configs/";

RunResult RunAtp(const std::string& args) {
  const std::string dir = TestDirFor("atp-tool-");
  std::filesystem::create_directories(dir);
  return RunCommandIn(dir, kAtp + " " + args);
}

struct Pass {
  std::string mode;
  double in_switch = 0;  // percent
};

// The per-pass lines: "in-network     1   1.0   2.705   98.6%  ..."
std::vector<Pass> Passes(const std::string& out) {
  std::vector<Pass> passes;
  const std::regex line(R"((in-network|at-PS)\s+\d+\s+[\d.]+\s+[\d.]+\s+([\d.]+)%)");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator();
       ++it) {
    passes.push_back(Pass{(*it)[1], std::stod((*it)[2])});
  }
  return passes;
}

TEST(AtpToolTest, TwoRacksInVirtualTimeAggregateInTheSwitchesAndLeaveNoAggregator) {
  const RunResult run = RunAtp("sim --topology " + kConfigs + "atp_two_rack.topo --job " +
                               kConfigs + "atp_two_rack.job --layers 4 --iterations 2");
  ASSERT_EQ(run.status, 0) << run.err << run.out;
  const std::vector<Pass> passes = Passes(run.out);
  ASSERT_EQ(passes.size(), 4u) << run.out;
  for (const Pass& pass : passes) {
    if (pass.mode == "in-network") {
      EXPECT_GT(pass.in_switch, 90.0) << run.out;
    } else {
      EXPECT_EQ(pass.in_switch, 0.0) << run.out;
    }
  }
  // Both racks aggregated, and every aggregator was freed again.
  EXPECT_NE(run.out.find("rack_a: atp: 0/16384 aggregators in use"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("rack_b: atp: 0/16384 aggregators in use"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("speed ratio in-network / at-PS"), std::string::npos);
}

TEST(AtpToolTest, ARackWithoutAtpForwardsAtpPacketsAndTheJobStillCompletes) {
  const RunResult run = RunAtp("sim --topology " + kConfigs + "atp_two_rack_plain.topo --job " +
                               kConfigs + "atp_two_rack.job --layers 3 --iterations 1");
  ASSERT_EQ(run.status, 0) << run.err << run.out;
  EXPECT_EQ(Passes(run.out).size(), 2u) << run.out;
  EXPECT_NE(run.out.find("rack_a: atp"), std::string::npos);
  EXPECT_EQ(run.out.find("rack_b: atp"), std::string::npos);  // rack_b is l2l3
}

TEST(AtpToolTest, LossOnEveryHostLinkStillGivesResultsWithinTheBound) {
  // swemu-atp fails (status 1) when any result is off the exact float sum by more than the
  // quantisation bound.
  const RunResult run = RunAtp("sim --topology " + kConfigs + "atp_two_rack.topo --job " +
                               kConfigs + "atp_two_rack.job --layers 3 --iterations 1 --loss 0.01");
  ASSERT_EQ(run.status, 0) << run.err << run.out;
  EXPECT_NE(run.out.find("rack_a: atp: 0/16384 aggregators in use"), std::string::npos) << run.out;
}

// Figure 7a's runs: loss on worker 0's link only, congestion control off. ATP's recovery needs
// no timeout there; the timeout-only baseline recovers every loss by one.
TEST(AtpToolTest, OneLossyWorkerIsRecoveredWithoutTimeoutsAndTheBaselineTimesOut) {
  const std::string args = "sim --topology " + kConfigs + "atp_two_rack.topo --job " + kConfigs +
                           "atp_two_rack.job --layers 6 --iterations 1 --in-network-only "
                           "--congestion-control off --loss 0.01 --lossy-worker 0 --recovery ";
  const std::regex pass(R"(in-network\s+1\s+[\d.]+\s+[\d.]+\s+\S+\s+\S+\s+\S+\s+(\d+)\s+(\d+))");
  std::smatch m;
  const RunResult atp = RunAtp(args + "atp");
  ASSERT_EQ(atp.status, 0) << atp.err << atp.out;
  ASSERT_TRUE(std::regex_search(atp.out, m, pass)) << atp.out;
  EXPECT_GT(std::stoi(m[1]), 0) << atp.out;   // retransmissions
  EXPECT_EQ(std::stoi(m[2]), 0) << atp.out;   // timeouts
  EXPECT_EQ(Passes(atp.out).size(), 1u) << atp.out;  // no at-PS pass
  const RunResult base = RunAtp(args + "timeout");
  ASSERT_EQ(base.status, 0) << base.err << base.out;
  ASSERT_TRUE(std::regex_search(base.out, m, pass)) << base.out;
  EXPECT_GT(std::stoi(m[2]), 0) << base.out;
}

TEST(AtpToolTest, BadInputGivesOneLineAndStatus2) {
  const std::string sim = "sim --topology " + kConfigs + "atp_two_rack.topo ";
  const std::string dir = TestDirFor("atp-tool-");
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "bad.job") << "[job]\nid = 1\nworker = w0 nonsense 10.0.0.1 rack_a:0\n";
  std::ofstream(dir + "elsewhere.job")
      << "[job]\nid = 1\ngroup = 239.1.0.1\nps = ps 02:00:00:00:00:10 10.0.0.16 rack_a:2\n"
         "worker = w0 02:00:00:00:00:01 10.0.0.1 rack_c:0\n";
  for (const std::string& args :
       {std::string("nonsense"), sim, sim + "--job " + dir + "missing.job",
        sim + "--job " + dir + "bad.job", sim + "--job " + dir + "elsewhere.job",
        sim + "--job " + kConfigs + "atp_two_rack.job --model gpt9",
        sim + "--job " + kConfigs + "atp_two_rack.job --loss 2",
        sim + "--job " + kConfigs + "atp_two_rack.job --loss -1",
        sim + "--job " + kConfigs + "atp_two_rack.job --loss nan", sim + "--job " + kConfigs,
        sim + "--job /dev/zero",
        sim + "--job " + kConfigs + "atp_two_rack.job --loss 0.01 --lossy-worker 4",
        sim + "--job " + kConfigs + "atp_two_rack.job --lossy-worker 0",
        sim + "--job " + kConfigs + "atp_two_rack.job --recovery switchml",
        sim + "--job " + kConfigs + "atp_two_rack.job --recovery timeout --timeout-rto 0",
        sim + "--job " + kConfigs + "atp_two_rack.job --congestion-control maybe",
        std::string("demo --workers 0"), std::string("demo --racks 3"),
        std::string("demo --timeout -5"), std::string("demo --timeout 0"),
        std::string("demo --link-rate fast"), std::string("demo stray"),
        sim + "--job " + kConfigs + "atp_two_rack.job stray",
        "demo --topology " + kConfigs + "atp_two_rack.topo",
        "demo --job " + kConfigs + "atp_two_rack.job",
        "demo --topology " + kConfigs + "atp_two_rack.topo --job " + kConfigs +
            "atp_two_rack.job --racks 2",
        "demo --topology " + kConfigs + "atp_two_rack.topo --job " + dir + "elsewhere.job " +
            "--out-dir " + dir + "demo-elsewhere"}) {
    const RunResult run = RunAtp(args);
    EXPECT_EQ(run.status, 2) << args << "\n" << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << "\n" << run.err;
    EXPECT_EQ(run.err.rfind("swemu-atp: ", 0), 0u) << run.err;
  }
}

// A shape option beside --topology, and a topology file that cannot be read: the line names the
// option, as every tool's does (tools/option_values.h).
TEST(AtpToolTest, AShapeOptionBesideATopologyIsRefusedNamingIt) {
  const std::string files =
      " --topology " + kConfigs + "atp_two_rack.topo --job " + kConfigs + "atp_two_rack.job";
  for (const char* shape :
       {"--racks 2", "--workers 2", "--elements 16", "--aggregators 8", "--link-rate 10G"}) {
    const RunResult run = RunAtp(std::string("demo") + files + " " + shape);
    EXPECT_EQ(run.status, 2) << shape;
    const std::string option = std::string(shape).substr(0, std::string(shape).find(' '));
    EXPECT_EQ(run.err, "swemu-atp: " + option +
                           ": not with --topology (a topology replaces the shape options)\n");
    EXPECT_EQ(run.out, "") << shape;
  }
  for (const std::string mode : {"sim", "demo"}) {
    const RunResult run =
        RunAtp(mode + " --topology /nonexistent.topo --job " + kConfigs + "atp_two_rack.job");
    EXPECT_EQ(run.status, 2) << mode;
    EXPECT_EQ(run.err.rfind("swemu-atp: --topology /nonexistent.topo: cannot open topology", 0), 0u)
        << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
}

// Each of these once ran for ever printing nothing: the engine did not move its clock to the
// end of a slice when the next event lay beyond it, so the 60 s virtual-time limit never came.
// Every run must end, naming what could not finish.
TEST(AtpToolTest, RunsThatCannotCompleteEndWithAnErrorNamingWhatWasLeft) {
  const std::string dir = TestDirFor("atp-tool-");
  std::filesystem::create_directories(dir);
  // A job whose packets the switches refuse (they aggregate 64 elements).
  std::ifstream job_in(kConfigs + "atp_two_rack.job");
  std::string job((std::istreambuf_iterator<char>(job_in)), std::istreambuf_iterator<char>());
  job.replace(job.find("elements = 64"), 13, "elements = 65");
  std::ofstream(dir + "e65.job") << job;
  // A topology whose racks are not linked: rack_b's workers never reach the PS.
  std::ofstream(dir + "unlinked.topo")
      << "[topology]\nswitch = rack_a " << kConfigs << "atp_two_rack/rack_a.ini\n"
      << "switch = rack_b " << kConfigs << "atp_two_rack/rack_b.ini\n"
      << "host = rack_a:0\nhost = rack_a:1\nhost = rack_a:2\nhost = rack_b:0\nhost = rack_b:1\n";
  const std::string job2 = " --job " + kConfigs + "atp_two_rack.job";
  const std::string topo = "sim --topology " + kConfigs + "atp_two_rack.topo";
  for (const std::string& args :
       {topo + job2 + " --layers 1 --loss 1", topo + " --job " + dir + "e65.job --layers 1",
        "sim --topology " + dir + "unlinked.topo" + job2 + " --layers 1"}) {
    const RunResult run = RunAtp(args);
    EXPECT_EQ(run.status, 1) << args << "\n" << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << "\n" << run.err;
    EXPECT_NE(run.err.find("in-network pass, iteration 1: "), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("all-reduce calls done"), std::string::npos) << run.err;
  }
}

TEST(AtpToolTest, RealTimeOneRackOverVirtioUser) {
  const std::string dir = TestDirFor("atp-tool-rt-");
  const RunResult run =
      RunAtp("demo --workers 3 --layers 2 --iterations 1 --backoff --out-dir " + dir + "demo");
  ASSERT_EQ(run.status, 0) << run.err << run.out;
  const std::vector<Pass> passes = Passes(run.out);
  ASSERT_EQ(passes.size(), 2u) << run.out;
  EXPECT_GT(passes[0].in_switch, 50.0) << run.out;
  EXPECT_NE(run.out.find("rack0 aggregators: atp: 0/16384 aggregators in use"), std::string::npos)
      << run.out;
}

TEST(AtpToolTest, RealTimeTwoRacksAreTwoSwitchesOfOneSwemuJoinedByARingLink) {
  const std::string dir = TestDirFor("atp-tool-rt-");
  const RunResult run = RunAtp(
      "demo --workers 4 --racks 2 --layers 2 --iterations 1 --backoff "
      "--out-dir " +
      dir + "demo");
  ASSERT_EQ(run.status, 0) << run.err << run.out;
  ASSERT_EQ(Passes(run.out).size(), 2u) << run.out;
  EXPECT_NE(run.out.find("rack0 aggregators: atp:"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("rack1 aggregators: atp:"), std::string::npos) << run.out;
  const std::string log = testing::ReadText(dir + "demo/swemu.log");
  EXPECT_NE(log.find("swl_racks_1"), std::string::npos) << log;  // rack 1's end of the link
  // rack1 aggregated its two workers' gradients before sending them up the link.
  const std::regex completed(
      R"(rack1 aggregators: atp: \d+/\d+ aggregators in use, \d+ elements\s+claimed \d+, aggregated \d+, completed (\d+))");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.out, m, completed)) << run.out;
  EXPECT_GT(std::stoul(m[1]), 0u);
}

// The files `sim` runs in virtual time, in real time: the topology's switches as swemu
// processes (the testbed's processes back end), the job's hosts over virtio_user.
TEST(AtpToolTest, RealTimeRunsTheSimsOwnTopologyAndJobFiles) {
  const std::string dir = TestDirFor("atp-tool-topo-");
  const RunResult run =
      RunAtp("demo --topology " + kConfigs + "atp_two_rack.topo --job " + kConfigs +
             "atp_two_rack.job --layers 2 --iterations 1 --backoff --out-dir " + dir + "demo");
  ASSERT_EQ(run.status, 0) << run.err << run.out;
  EXPECT_NE(run.out.find("2 swemu processes of " + kConfigs + "atp_two_rack.topo (vhost-user)"),
            std::string::npos)
      << run.out;
  const std::vector<Pass> passes = Passes(run.out);
  ASSERT_EQ(passes.size(), 2u) << run.out;
  EXPECT_GT(passes[0].in_switch, 50.0) << run.out;
  // rack_b aggregated its two workers before sending them up, as in virtual time.
  const std::regex completed(
      R"(rack_b aggregators: atp: \d+/\d+ aggregators in use, \d+ elements\s+claimed \d+, aggregated \d+, completed (\d+))");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.out, m, completed)) << run.out;
  EXPECT_GT(std::stoul(m[1]), 0u);
  EXPECT_TRUE(std::filesystem::exists(dir + "demo/rack_a.ini"));
  EXPECT_FALSE(std::filesystem::exists(dir + "demo/rack_a-p0.sock"));  // removed by swemu
}

}  // namespace
}  // namespace swemu::testing
