// swemu --offline under mpirun (Open MPI), as users start it: the ranks write the same files as
// one process in one partition, bad runs end with one line and no output, and a rank that dies
// ends the whole run without output.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu {
namespace {

using testing::ReadText;
using testing::RunCommandIn;
using testing::RunResult;

const std::string kSwemu = SWEMU_BINARY_DIR "/swemu/swemu";
const std::string kGen = SWEMU_BINARY_DIR "/tools/swemu-gen";
const std::string kConfigs = SWEMU_SOURCE_DIR "/configs/";
const std::string kPcaps = SWEMU_SOURCE_DIR "/configs/pcap/";
// As root (CI) Open MPI wants both; --oversubscribe: a 2-core machine may count 1 slot, and
// oversubscribed ranks yield the core while they wait. Under AddressSanitizer, leak checks are
// off for the ranks: Open MPI's plugins leave their allocations at MPI_Finalize (not swemu's: the
// same partitions on threads run leak-checked in SwemuBinaryTest and the engine's tests).
const std::string kMpirun =
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=detect_leaks=0 "
    "mpirun -q --oversubscribe ";

std::string TestDir() {
  const std::string dir = testing::TestDirFor("swemu_mpi_test_");
  std::filesystem::create_directories(dir + "run/");
  return dir;
}

// The test's directory, emptied: nothing an earlier run wrote counts.
std::string FreshTestDir() {
  std::filesystem::remove_all(testing::TestDirFor("swemu_mpi_test_"));
  return TestDir();
}

RunResult RunShell(const std::string& command) { return RunCommandIn(TestDir() + "run/", command); }

std::string FabricInputs() {
  std::string args;
  for (const char* in : {"leaf1:0=h0", "leaf1:1=h1", "leaf2:0=h2", "leaf2:1=h3"}) {
    const std::string text = in;
    args += " --in " + text.substr(0, text.find('=') + 1) + kPcaps + text.substr(text.find('=') + 1) +
            "_to_all.pcap";
  }
  return args;
}

const char* const kFabricFiles[] = {"leaf1-port0.pcap", "leaf1-port1.pcap", "leaf2-port0.pcap",
                                    "leaf2-port1.pcap", "counters.json"};

std::string Outputs(const std::string& out) {
  std::string all;
  for (const char* file : kFabricFiles) all += ReadText(out + "/" + file);
  return all + ReadText(out + "/telemetry.csv");
}

// The telemetry of every switch every microsecond, written by rank 0 from every rank's samples.
std::string WithTelemetry(const std::string& out) {
  return " --out-dir " + out + " --telemetry " + out + "/telemetry.csv --telemetry-period 1us";
}

// Two ranks (one partition each), and two ranks running three partitions (rank 0 two of them
// on threads): the same files, telemetry and summary as one process in one partition.
TEST(SwemuMpiTest, RanksWriteTheFilesOfOnePartition) {
  const std::string dir = FreshTestDir();
  const std::string args = "--topology " + kConfigs + "leaf_spine.topo --offline" + FabricInputs();
  RunResult one = RunShell(kSwemu + " " + args + " --partitions 1" + WithTelemetry(dir + "one"));
  ASSERT_EQ(one.status, 0) << one.err;
  const std::string reference = Outputs(dir + "one");
  ASSERT_GT(ReadText(dir + "one/telemetry.csv").size(), 1000u);
  for (const std::string partitions : {"", " --partitions 3"}) {
    const std::string out = dir + "ranks" + std::to_string(partitions.size());
    RunResult ranks =
        RunShell(kMpirun + "-np 2 " + kSwemu + " " + args + partitions + WithTelemetry(out));
    ASSERT_EQ(ranks.status, 0) << partitions << "\n" << ranks.err;
    EXPECT_EQ(ranks.err, "");
    EXPECT_TRUE(Outputs(out) == reference) << "mpirun -np 2" << partitions << " differs";
    EXPECT_EQ(ranks.out, one.out) << partitions;  // rank 0 alone prints the whole summary
  }
}

void ExpectOneLineAndNoOutput(const std::string& args, const std::string& expected,
                              const std::string& out) {
  RunResult run = RunShell(kMpirun + "-np 2 " + kSwemu + " " + args + " --out-dir " + out);
  EXPECT_EQ(run.status, 2) << args;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << "\n" << run.err;
  EXPECT_EQ(run.err.rfind("swemu: ", 0), 0u) << run.err;
  EXPECT_NE(run.err.find(expected), std::string::npos) << args << "\n" << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_FALSE(std::filesystem::exists(out)) << args;
}

TEST(SwemuMpiTest, BadRunsEndWithOneLineFromOneRank) {
  const std::string dir = FreshTestDir();
  const std::string fabric = "--topology " + kConfigs + "leaf_spine.topo --offline";
  const std::string out = dir + "never";
  ExpectOneLineAndNoOutput("--config " + kConfigs + "leaf.ini --offline",
                           "mpirun -np 2: more ranks than the 1 switch to run", out);
  ExpectOneLineAndNoOutput(fabric + " --partitions 1", "--partitions 1: fewer than the 2 ranks",
                           out);
  ExpectOneLineAndNoOutput(fabric + " --in leaf2:1=/nonexistent/in.pcap",
                           "/nonexistent/in.pcap", out);
  ExpectOneLineAndNoOutput(fabric + " --max-events 200" + FabricInputs(),
                           "events, the run's limit", out);
  ExpectOneLineAndNoOutput("--topology " + kConfigs + "leaf_spine.topo --show-resources",
                           "only an --offline run spreads over ranks", out);
}

// A rank killed mid-run: mpirun ends the others, the run fails, and no file is moved into place
// (a killed rank's own staging directory may stay behind, hidden).
TEST(SwemuMpiTest, ARankThatDiesEndsTheRunWithoutOutput) {
  const std::string dir = FreshTestDir();
  RunResult gen = RunShell(kGen + " --out " + dir + "many.pcap -n 300000 --rate 5G --src-mac "
                      "00:00:00:00:01:01 --dst-mac 00:00:00:00:01:fe --src-ip 10.0.1.1 "
                      "--dst-ip 10.0.2.1 --flows 8");
  ASSERT_EQ(gen.status, 0) << gen.err;
  const std::string out = dir + "out";
  const std::string tag = dir + "many.pcap";  // names this test's ranks in `ps`
  std::thread run_thread([&] {
    RunResult run = RunShell(kMpirun + "-np 2 " + kSwemu + " --topology " + kConfigs +
                        "leaf_spine.topo --offline --quiet --in leaf1:0=" + tag +
                        " --out-dir " + out);
    std::ofstream(dir + "result") << run.status << "\n" << run.err;
  });
  // The ranks have staged their outputs (the run is about to start): kill the second one.
  pid_t victim = 0;
  for (int i = 0; i < 3000 && victim == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::error_code ignored;
    std::vector<pid_t> ranks;
    if (std::filesystem::exists(out, ignored)) {
      for (const auto& entry : std::filesystem::directory_iterator(out, ignored)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind(".swemu-staging-", 0) == 0) ranks.push_back(std::stoi(name.substr(15)));
      }
    }
    if (ranks.size() == 2) victim = *std::max_element(ranks.begin(), ranks.end());
  }
  if (victim != 0) ::kill(victim, SIGKILL);
  run_thread.join();
  ASSERT_NE(victim, 0) << "the ranks never staged their outputs: " << ReadText(dir + "result");
  const std::string result = ReadText(dir + "result");
  EXPECT_NE(result.rfind("0\n", 0), 0u) << result;
  EXPECT_NE(result.find("under mpirun: a rank ended before the run did"), std::string::npos)
      << result;
  for (const char* file : kFabricFiles) {
    EXPECT_FALSE(std::filesystem::exists(out + "/" + file)) << file;
  }
}

// The experiment tools run as one process: under mpirun they say so once and end, rather than
// each rank running the whole experiment and printing it again.
TEST(SwemuMpiTest, ToolsThatRunAsOneProcessSaySoOnce) {
  FreshTestDir();
  for (const char* tool : {"swemu-pcn sim", "swemu-dlcp sim", "swemu-goat plan"}) {
    RunResult run = RunShell(kMpirun + "-np 2 " + SWEMU_BINARY_DIR "/tools/" + tool);
    EXPECT_EQ(run.status, 2) << tool;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << tool << "\n" << run.err;
    EXPECT_NE(run.err.find("runs as one process, not 2 under mpirun"), std::string::npos)
        << tool << "\n" << run.err;
    EXPECT_EQ(run.out, "") << tool;
  }
}

}  // namespace
}  // namespace swemu
